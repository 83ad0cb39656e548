// Discovery cost against a real Prometheus-compatible server, side by side in one run: label
// presence for override rules (discoverLabelPresence, split over parallel calls and in one call),
// all label names per metric for template rules (discoverLabelNames: probes, and the union
// strategy), and prometheus-adapter's `/api/v1/series` relist. Backfills N series over M metric
// names (each series has pod, namespace and container labels) with promtool, starts the backend
// the test support selects (Debian's Prometheus; $GPUSCALE_PROMETHEUS_DIR for another release;
// $GPUSCALE_VICTORIAMETRICS_DIR for VictoriaMetrics, loaded through its import API;
// $GPUSCALE_THANOS_DIR for a Thanos sidecar and query in front of the Prometheus) on it, and prints
// the load average and one Markdown table row per approach: wall time (min and median of the
// runs), the server's CPU time (min; with Thanos the sum over Prometheus, sidecar and query),
// response bytes, calls, metrics found, whether the view equals the series relist's, and the
// server's RSS before and after. Exits non-zero when an approach fails or disagrees with the series
// relist. bench/scale/discovery_backends.sh runs it against every backend of the test matrix.
//
//   prom_discovery_bench --series 1000000 --metrics 1000 [--runs 3] [--concurrency 4]
//       [--shards 2] [--series-query '{namespace!="",pod!=""}'] [--keep-data DIR]
//       [--server-flag FLAG]... [--help]
//
// With --keep-data the backfilled storage is kept in (or reused from) DIR; the discovery window
// starts 10 minutes before the backfilled samples, so kept data stays usable later (Prometheus
// answers from blocks without a retention cut for a few days). DIR made for other sizes is refused.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "gpuscale/prom/discovery.h"
#include "gpuscale/prom/http_client.h"
#include "support/prometheus_server.h"
#include "support/thanos.h"
#include "support/victoriametrics.h"

namespace {

using namespace gpuscale;
using Clock = std::chrono::steady_clock;

struct Args {
  long series = 10000;
  long metrics = 100;
  int runs = 3;
  size_t concurrency = 4;
  size_t shards = 2;
  std::string seriesQuery = R"({namespace!="",pod!=""})";
  std::string keepData;
  std::vector<std::string> serverFlags;
};

constexpr char kUsage[] =
    "usage: prom_discovery_bench [--series N (10000)] [--metrics M (100)] [--runs R (3)]\n"
    "           [--concurrency C (4)] [--shards S (2)] [--series-query Q ('{namespace!=\"\","
    "pod!=\"\"}')]\n"
    "           [--keep-data DIR] [--server-flag FLAG]...\n"
    "Backfills N series over M metric names into a real Prometheus (kept in DIR with --keep-data "
    "and\n"
    "reused), runs every discovery approach and the /api/v1/series relist R times with the "
    "adapter's\n"
    "client defaults, and prints one Markdown row per approach plus this process' peak RSS before\n"
    "and after the series relist. Exit 0 only when every approach gives the series relist's "
    "view. --server-flag passes FLAG to the server (e.g. VictoriaMetrics' -search.maxSeries=N).\n";

Args parseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string name = argv[i];
    if (name == "--series") args.series = std::stol(argv[i + 1]);
    if (name == "--metrics") args.metrics = std::stol(argv[i + 1]);
    if (name == "--runs") args.runs = std::stoi(argv[i + 1]);
    if (name == "--concurrency") args.concurrency = std::stoul(argv[i + 1]);
    if (name == "--shards") args.shards = std::stoul(argv[i + 1]);
    if (name == "--series-query") args.seriesQuery = argv[i + 1];
    if (name == "--keep-data") args.keepData = argv[i + 1];
    if (name == "--server-flag") args.serverFlags.push_back(argv[i + 1]);
  }
  return args;
}

// OpenMetrics text: `metrics` gauge families, series spread evenly, one sample 20 minutes ago each.
// Returns the samples' Unix time.
long writeOpenMetrics(const std::string& path, const Args& args) {
  std::ofstream out(path);
  long sampleTime = std::chrono::duration_cast<std::chrono::seconds>(
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
  return sampleTime;
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// CPU time (user + system) a process has used so far, 0 when unknown.
double processCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field && i <= 15; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// CPU time of every process of the backend (Prometheus and, with Thanos, the sidecar and query).
double cpuSeconds(const test::PrometheusServer& server) {
  double sum = 0;
  for (pid_t pid : server.pids()) sum += processCpuSeconds(pid);
  return sum;
}

// This process' peak resident set size (VmHWM) in bytes.
uint64_t peakRssBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

std::string loadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

struct Measurement {
  std::vector<double> times;
  double cpu = 0;  // server CPU seconds, least of the runs
  prom::MetricLabelNames view;
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
    double cpuBefore = cpuSeconds(server);
    auto start = Clock::now();
    auto result = run();
    m.times.push_back(seconds(Clock::now() - start));
    double cpu = cpuSeconds(server) - cpuBefore;
    m.cpu = i == 0 ? cpu : std::min(m.cpu, cpu);
    auto after = client.stats();
    if (!result.ok()) {
      m.ok = false;
      m.error = result.status().toString();
      break;
    }
    m.metrics = result->size();
    m.view = std::move(*result);
    m.bytes = after.bodyBytes - before.bodyBytes;
    m.calls = after.requests - before.requests;
  }
  m.rssAfter = server.rssBytes();
  std::sort(m.times.begin(), m.times.end());
  return m;
}

// The series relist's view reduced to `labels` (what label presence reports).
prom::MetricLabelNames onlyLabels(prom::MetricLabelNames view,
                                  const std::vector<std::string>& keep) {
  for (auto& [name, labels] : view) {
    std::erase_if(labels, [&](const std::string& label) {
      return std::find(keep.begin(), keep.end(), label) == keep.end();
    });
  }
  return view;
}

void printRow(const char* approach, uint64_t rssBefore, const Measurement& m, const char* agrees) {
  if (!m.ok) {
    std::printf("| %s | failed: %s |\n", approach, m.error.c_str());
    return;
  }
  std::printf("| %s | %.3f | %.3f | %.3f | %.1f KB | %llu | %zu | %s | %.0f → %.0f MB |\n",
              approach, m.times.front(), m.times[m.times.size() / 2], m.cpu, m.bytes / 1024.0,
              static_cast<unsigned long long>(m.calls), m.metrics, agrees, rssBefore / 1048576.0,
              m.rssAfter / 1048576.0);
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
  const std::string stamp = storage + "/.backfilled";
  long sampleTime = 0;
  bool reuse = !temporary && std::filesystem::exists(stamp);
  if (reuse) {
    long series = 0, metrics = 0;
    std::ifstream(stamp) >> series >> metrics >> sampleTime;
    if (series != args.series || metrics != args.metrics || sampleTime == 0) {
      std::fprintf(stderr, "%s holds other data (%ld series, %ld metrics): use another folder\n",
                   storage.c_str(), series, metrics);
      return 2;
    }
  } else {
    std::string input = storage + "/input.om";
    auto start = Clock::now();
    sampleTime = writeOpenMetrics(input, args);
    auto written = Clock::now();
    if (auto s = test::backfillOpenMetrics(input, storage); !s.ok()) {
      std::fprintf(stderr, "backfill failed: %s\n", s.toString().c_str());
      return 1;
    }
    std::filesystem::remove(input);
    std::ofstream(stamp) << args.series << ' ' << args.metrics << ' ' << sampleTime << '\n';
    std::fprintf(stderr, "generated in %.1fs, backfilled in %.1fs\n", seconds(written - start),
                 seconds(Clock::now() - written));
  }
  test::PrometheusServerOptions options;
  options.storageDir = storage;
  options.extraArgs = args.serverFlags;
  options.readyTimeout = std::chrono::seconds(600);
  auto started = Clock::now();
  auto server = test::PrometheusServer::start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().toString().c_str());
    return 1;
  }
  const std::string backend(test::backendName(test::backendUnderTest()));
  std::fprintf(stderr, "%s ready in %.1fs\n", backend.c_str(), seconds(Clock::now() - started));
  prom::PrometheusOptions clientOptions;
  clientOptions.url = (*server)->url();
  clientOptions.timeout = std::chrono::minutes(5);
  auto client = prom::HttpClient::create(clientOptions);
  if (!client.ok()) return 1;
  const std::string& seriesQuery = args.seriesQuery;
  prom::TimeRange window{
      std::chrono::system_clock::time_point(std::chrono::seconds(sampleTime - 10 * 60)),
      std::nullopt};

  std::string load = loadAverage();
  const std::vector<std::string> overrides{"namespace", "pod"};
  prom::DiscoveryOptions split;
  // As an operator runs the adapter in front of Thanos: its replica label left out.
  if (test::thanosUnderTest()) split.replicaLabels = {test::kThanosReplicaLabel};
  split.concurrency = args.concurrency;
  split.nameShards = args.shards;
  prom::DiscoveryOptions single = split;
  single.nameShards = 1;
  prom::DiscoveryOptions unionOptions = split;
  unionOptions.strategy = prom::LabelNamesStrategy::kUnion;
  unionOptions.nameShards = 1;
  struct Approach {
    const char* name;
    std::function<prom::Result<prom::MetricLabelNames>()> run;
    bool presence;
  };
  std::vector<Approach> approaches{
      {"label presence (overrides), split",
       [&] { return prom::discoverLabelPresence(**client, seriesQuery, overrides, window, split); },
       true},
      {"label presence (overrides), one call",
       [&] {
         return prom::discoverLabelPresence(**client, seriesQuery, overrides, window, single);
       },
       true},
      {"label names (template), probes",
       [&] { return prom::discoverLabelNames(**client, seriesQuery, window, split); }, false},
      {"label names (template), union (before)",
       [&] { return prom::discoverLabelNames(**client, seriesQuery, window, unionOptions); },
       false},
  };
  std::vector<Measurement> measured;
  std::vector<uint64_t> rssBefore;
  for (const auto& approach : approaches) {
    rssBefore.push_back((*server)->rssBytes());
    measured.push_back(measure(args, **server, **client, approach.run));
  }
  uint64_t seriesRssBefore = (*server)->rssBytes();
  uint64_t selfPeakBefore = peakRssBytes();
  auto series = measure(args, **server, **client, [&] {
    return prom::discoverLabelNamesFromSeries(**client, seriesQuery, window);
  });
  uint64_t selfPeakAfter = peakRssBytes();
  std::printf("\n%s: %ld series, %ld metric names; series query `%s`; load average before: %s\n\n",
              backend.c_str(), args.series, args.metrics, seriesQuery.c_str(), load.c_str());
  std::printf(
      "| approach | wall min (s) | wall median (s) | server CPU (s) | bytes | calls | metrics "
      "| same as series relist | server RSS |\n|---|---|---|---|---|---|---|---|---|\n");
  bool ok = series.ok && series.metrics > 0;
  for (size_t i = 0; i < approaches.size(); ++i) {
    bool same = series.ok && measured[i].ok &&
                measured[i].view ==
                    (approaches[i].presence ? onlyLabels(series.view, overrides) : series.view);
    ok = ok && measured[i].ok && same;
    printRow(approaches[i].name, rssBefore[i], measured[i], same ? "yes" : "NO");
  }
  printRow("/api/v1/series", seriesRssBefore, series, "—");
  std::printf("\nbenchmark process peak RSS: %.0f MB before the series relist, %.0f MB after\n",
              selfPeakBefore / 1048576.0, selfPeakAfter / 1048576.0);
  (*server)->stop();
  if (temporary) test::removeTree(storage);
  return ok ? 0 : 1;
}
