#include "support/victoriametrics.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/prometheus_server.h"

namespace gpuscale::test {
namespace {

using core::Status;

std::string fileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string victoriaMetricsBinary() {
  const char* dir = std::getenv("GPUSCALE_VICTORIAMETRICS_DIR");
  return std::string(dir != nullptr ? dir : "") + "/victoria-metrics";
}

std::vector<std::string> victoriaMetricsArgs(const std::string& scrapeConfigFile,
                                             const std::string& storageDir, uint16_t port) {
  return {
      victoriaMetricsBinary(),
      "-httpListenAddr=127.0.0.1:" + std::to_string(port),
      "-storageDataPath=" + storageDir,
      "-promscrape.config=" + scrapeConfigFile,
      "-retentionPeriod=30d",
      // Prometheus answers with a sample as soon as it is scraped; VictoriaMetrics hides the last
      // 30 s by default.
      "-search.latencyOffset=0s",
      "-search.disableCache",
      "-loggerLevel=WARN",
  };
}

Status openMetricsToImportText(std::istream& in, std::ostream& out) {
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    // The value and timestamp follow the labels (after the last '}') or the bare metric name.
    size_t close = line.rfind('}');
    size_t rest = close != std::string::npos ? close + 1 : line.find(' ');
    std::istringstream fields(rest == std::string::npos ? std::string() : line.substr(rest));
    std::string value, seconds;
    if (!(fields >> value)) {
      return Status::badRequest("line " + std::to_string(number) + " has no value: " + line);
    }
    out << line.substr(0, rest) << ' ' << value;
    if (fields >> seconds) {
      char* end = nullptr;
      double at = std::strtod(seconds.c_str(), &end);
      if (end == seconds.c_str() || *end != '\0') {
        return Status::badRequest("line " + std::to_string(number) + " has a bad timestamp");
      }
      out << ' ' << std::llround(at * 1000);
    }
    out << '\n';
  }
  return Status();
}

Status importOpenMetrics(const std::string& url, const std::string& openMetricsFile,
                         const std::string& workDir) {
  const std::string converted = workDir + "/import.prom";
  const std::string log = workDir + "/import.log";
  {
    std::ifstream in(openMetricsFile);
    std::ofstream out(converted);
    if (!in || !out) return Status::internal("cannot convert " + openMetricsFile);
    if (auto s = openMetricsToImportText(in, out); !s.ok()) return s;
  }
  const std::vector<std::vector<std::string>> calls = {
      {"/usr/bin/curl", "-sSf", "--noproxy", "*", "--data-binary", "@" + converted,
       url + "/api/v1/import/prometheus"},
      {"/usr/bin/curl", "-sSf", "--noproxy", "*", url + "/internal/force_flush"},
  };
  for (const auto& call : calls) {
    if (int rc = runProgram(call, log); rc != 0) {
      removeTree(converted);
      return Status::internal("curl exited with " + std::to_string(rc) + ": " + fileText(log));
    }
  }
  removeTree(converted);
  return Status();
}

}  // namespace gpuscale::test
