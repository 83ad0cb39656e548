#include "support/thanos.h"

#include <signal.h>

#include <cpprest/http_client.h>
#include <cstdlib>
#include <thread>

#include "support/backend.h"
#include "support/process.h"
#include "support/prometheus_server.h"

namespace gpuscale::test {
namespace {

using core::Status;
using testing::BackgroundProcess;

std::string address(uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// True when the query at `url` lists a sidecar that carries the external labels (the sidecar
// reports them once it has read Prometheus' configuration).
bool sidecarListed(const std::string& url) {
  try {
    web::http::client::http_client_config config;
    config.set_timeout(std::chrono::seconds(2));
    config.set_proxy(web::web_proxy(web::web_proxy::disabled));
    web::http::client::http_client client(web::uri(url), config);
    auto response = client.request(web::http::methods::GET, "/api/v1/stores").get();
    if (response.status_code() != 200) return false;
    auto body = response.extract_json().get();
    const auto& data = body.at("data");
    if (!data.has_array_field("sidecar")) return false;
    for (const auto& store : data.at("sidecar").as_array()) {
      if (!store.has_array_field("labelSets")) continue;
      for (const auto& set : store.at("labelSets").as_array()) {
        if (set.has_string_field(kThanosClusterLabel)) return true;
      }
    }
  } catch (const std::exception&) {
  }
  return false;
}

std::string tail(const std::string& text) {
  return text.size() > 1500 ? text.substr(text.size() - 1500) : text;
}

}  // namespace

std::string adapterUrl(const std::string& url) {
  return backendUnderTest() == Backend::kThanos ? url + "/?partial_response=false" : url;
}

std::string thanosBinary() {
  const char* dir = std::getenv("GPUSCALE_THANOS_DIR");
  return std::string(dir != nullptr ? dir : "") + "/thanos";
}

std::string thanosExternalLabelsYaml() {
  return std::string("  external_labels: {") + kThanosClusterLabel + ": " + kThanosClusterValue +
         ", " + kThanosReplicaLabel + ": r0}\n";
}

core::Result<std::unique_ptr<ThanosQuery>> ThanosQuery::start(const std::string& prometheusUrl,
                                                              const std::string& workDir,
                                                              uint16_t httpPort,
                                                              std::chrono::seconds timeout) {
  std::unique_ptr<ThanosQuery> thanos(new ThanosQuery());
  // A port can be taken between probing and binding; a few attempts make that race harmless.
  for (int attempt = 0; attempt < 5; ++attempt) {
    const uint16_t sidecarGrpc = freeLoopbackPort();
    thanos->port_ = httpPort != 0 ? httpPort : freeLoopbackPort();
    thanos->sidecar_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{thanosBinary(), "sidecar", "--prometheus.url=" + prometheusUrl,
                                 "--grpc-address=" + address(sidecarGrpc),
                                 "--http-address=" + address(freeLoopbackPort()),
                                 "--log.level=warn"},
        workDir + "/thanos-sidecar.log");
    thanos->query_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{
            thanosBinary(), "query", "--grpc-address=" + address(freeLoopbackPort()),
            "--http-address=" + address(thanos->port_),
            "--endpoint.sd-config=endpoints: [{address: \"" + address(sidecarGrpc) + "\"}]",
            std::string("--query.replica-label=") + kThanosReplicaLabel, "--log.level=warn"},
        workDir + "/thanos-query.log");
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline && thanos->sidecar_->running() &&
           thanos->query_->running()) {
      if (sidecarListed(thanos->url())) return thanos;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (thanos->sidecar_->running() && thanos->query_->running()) {
      return Status::internal("thanos not ready in time: " + thanos->logTail());
    }
    std::string log = thanos->logTail();
    thanos->stop();
    if (attempt == 4 || httpPort != 0) return Status::internal("thanos exited: " + log);
  }
  return Status::internal("thanos did not start");
}

ThanosQuery::~ThanosQuery() { stop(); }

std::string ThanosQuery::url() const { return "http://" + address(port_); }

std::vector<pid_t> ThanosQuery::pids() const {
  std::vector<pid_t> out;
  for (const auto* process : {sidecar_.get(), query_.get()}) {
    if (process != nullptr) out.push_back(process->pid());
  }
  return out;
}

std::string ThanosQuery::logTail() const {
  return "sidecar: " + (sidecar_ ? tail(sidecar_->log()) : std::string()) +
         "\nquery: " + (query_ ? tail(query_->log()) : std::string());
}

void ThanosQuery::stop() {
  for (auto* process : {&query_, &sidecar_}) {
    if (!*process) continue;
    (*process)->signal(SIGTERM);
    (*process)->wait(std::chrono::seconds(10));
    process->reset();
  }
}

}  // namespace gpuscale::test
