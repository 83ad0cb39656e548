// Discovery cost against a real Prometheus, three ways: label presence for override rules
// (discoverLabelPresence), all label names per metric for template rules (discoverLabelNames), and
// prometheus-adapter's `/api/v1/series` relist. Backfills N series over M metric names with
// promtool (each series has pod, namespace and container labels), starts the Debian Prometheus on
// it, and prints one Markdown table row per approach: time (min and median of the runs), response
// bytes, calls, and Prometheus' RSS before and after.
//
//   prom_discovery_bench --series 100000 --metrics 1000 [--runs 3] [--concurrency 4]
//       [--series-query '{namespace!="",pod!=""}'] [--keep-data DIR]
//
// With --keep-data the backfilled storage is kept in (or reused from) DIR.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpuscale/prom/discovery.h"
#include "gpuscale/prom/http_client.h"
#include "support/prometheus_server.h"

namespace {

using namespace gpuscale;
using Clock = std::chrono::steady_clock;

struct Args {
  long series = 10000;
  long metrics = 100;
  int runs = 3;
  size_t concurrency = 4;
  std::string seriesQuery = R"({namespace!="",pod!=""})";
  std::string keepData;
};

Args parseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string name = argv[i];
    if (name == "--series") args.series = std::stol(argv[i + 1]);
    if (name == "--metrics") args.metrics = std::stol(argv[i + 1]);
    if (name == "--runs") args.runs = std::stoi(argv[i + 1]);
    if (name == "--concurrency") args.concurrency = std::stoul(argv[i + 1]);
    if (name == "--series-query") args.seriesQuery = argv[i + 1];
    if (name == "--keep-data") args.keepData = argv[i + 1];
  }
  return args;
}

// OpenMetrics text: `metrics` gauge families, series spread evenly, one sample 20 minutes ago each.
void writeOpenMetrics(const std::string& path, const Args& args) {
  std::ofstream out(path);
  auto sampleTime = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count() -
                    20 * 60;
  long perMetric = std::max(1L, args.series / args.metrics);
  std::string line;
  for (long m = 0; m < args.metrics; ++m) {
    std::string name = "gpuscale_bench_metric_" + std::to_string(m);
    out << "# TYPE " << name << " gauge\n";
    for (long s = 0; s < perMetric; ++s) {
      out << name << "{namespace=\"ns-" << (s % 50) << "\",pod=\"pod-" << s << "\",container=\"c-"
          << (s % 3) << "\"} " << s << ' ' << sampleTime << '\n';
    }
  }
  out << "# EOF\n";
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

struct Measurement {
  std::vector<double> times;
  uint64_t bytes = 0;
  uint64_t calls = 0;
  size_t metrics = 0;
  uint64_t rssAfter = 0;
  bool ok = true;
  std::string error;
};

template <typename Run>
Measurement measure(const Args& args, const test::PrometheusServer& server,
                    prom::HttpClient& client, Run run) {
  Measurement m;
  for (int i = 0; i < args.runs; ++i) {
    auto before = client.stats();
    auto start = Clock::now();
    auto result = run();
    m.times.push_back(seconds(Clock::now() - start));
    auto after = client.stats();
    if (!result.ok()) {
      m.ok = false;
      m.error = result.status().toString();
      break;
    }
    m.metrics = result->size();
    m.bytes = after.bodyBytes - before.bodyBytes;
    m.calls = after.requests - before.requests;
  }
  m.rssAfter = server.rssBytes();
  std::sort(m.times.begin(), m.times.end());
  return m;
}

void printRow(const char* approach, const Args& args, uint64_t rssBefore, const Measurement& m) {
  if (!m.ok) {
    std::printf("| %ld | %ld | %s | failed: %s |\n", args.series, args.metrics, approach,
                m.error.c_str());
    return;
  }
  std::printf("| %ld | %ld | %s | %.3f | %.3f | %.1f KB | %llu | %zu | %.0f MB | %.0f MB |\n",
              args.series, args.metrics, approach, m.times.front(), m.times[m.times.size() / 2],
              m.bytes / 1024.0, static_cast<unsigned long long>(m.calls), m.metrics,
              rssBefore / 1048576.0, m.rssAfter / 1048576.0);
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parseArgs(argc, argv);
  if (!test::PrometheusServer::available()) {
    std::fprintf(stderr, "prometheus/promtool not installed\n");
    return 77;
  }
  std::string storage = args.keepData;
  bool temporary = storage.empty();
  if (temporary) storage = test::makeTempDir("gpuscale-discovery-");
  std::filesystem::create_directories(storage);
  bool reuse = !temporary && std::filesystem::exists(storage + "/.backfilled");
  if (!reuse) {
    std::string input = storage + "/input.om";
    auto start = Clock::now();
    writeOpenMetrics(input, args);
    auto written = Clock::now();
    if (auto s = test::backfillOpenMetrics(input, storage); !s.ok()) {
      std::fprintf(stderr, "backfill failed: %s\n", s.toString().c_str());
      return 1;
    }
    std::filesystem::remove(input);
    std::ofstream(storage + "/.backfilled") << "ok\n";
    std::fprintf(stderr, "generated in %.1fs, backfilled in %.1fs\n", seconds(written - start),
                 seconds(Clock::now() - written));
  }
  test::PrometheusServerOptions options;
  options.storageDir = storage;
  options.readyTimeout = std::chrono::seconds(600);
  auto started = Clock::now();
  auto server = test::PrometheusServer::start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().toString().c_str());
    return 1;
  }
  std::fprintf(stderr, "prometheus ready in %.1fs\n", seconds(Clock::now() - started));
  prom::PrometheusOptions clientOptions;
  clientOptions.url = (*server)->url();
  clientOptions.timeout = std::chrono::minutes(5);
  clientOptions.maxBodyBytes = size_t{2} << 30;
  auto client = prom::HttpClient::create(clientOptions);
  if (!client.ok()) return 1;
  const std::string& seriesQuery = args.seriesQuery;
  prom::TimeRange window{std::chrono::system_clock::now() - std::chrono::hours(1), std::nullopt};
  uint64_t rssBefore = (*server)->rssBytes();

  auto presence = measure(args, **server, **client, [&] {
    return prom::discoverLabelPresence(**client, seriesQuery, {"namespace", "pod"}, window);
  });
  prom::DiscoveryOptions discovery;
  discovery.concurrency = args.concurrency;
  auto labels = measure(args, **server, **client, [&] {
    return prom::discoverLabelNames(**client, seriesQuery, window, discovery);
  });
  uint64_t rssMiddle = labels.rssAfter;
  auto series = measure(args, **server, **client, [&] {
    return prom::discoverLabelNamesFromSeries(**client, seriesQuery, window);
  });
  std::printf("\nseries query: `%s`\n\n", seriesQuery.c_str());
  std::printf(
      "| series | metrics | approach | time min (s) | time median (s) | bytes | calls | metrics "
      "found | Prometheus RSS before | after |\n|---|---|---|---|---|---|---|---|---|---|\n");
  printRow("label presence (overrides)", args, rssBefore, presence);
  printRow("label names", args, presence.rssAfter, labels);
  printRow("/api/v1/series", args, rssMiddle, series);
  (*server)->stop();
  if (temporary) test::removeTree(storage);
  return presence.ok && labels.ok && series.ok ? 0 : 1;
}
