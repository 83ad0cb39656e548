#include "support/exporter_server.h"

namespace gpuscale::test {
ExporterServer::ExporterServer() {
  server_ = std::make_unique<HttpTestServer>([this](const HttpTestRequest& request) {
    HttpTestResponse response;
    if (request.path != "/metrics") {
      response.status = 404;
      return response;
    }
    response.contentType = "text/plain; version=0.0.4";
    response.body = render();
    return response;
  });
}

std::string ExporterServer::target() const {
  return "127.0.0.1:" + std::to_string(server_->port());
}

void ExporterServer::set(const std::string& name, const Labels& labels, double value,
                         const std::string& type) {
  std::lock_guard lock(mutex_);
  types_[name] = type;
  families_[name][labels] = value;
}

void ExporterServer::add(const std::string& name, const Labels& labels, double delta,
                         const std::string& type) {
  std::lock_guard lock(mutex_);
  types_[name] = type;
  families_[name][labels] += delta;
}

void ExporterServer::clear(const std::string& name) {
  std::lock_guard lock(mutex_);
  families_.erase(name);
  types_.erase(name);
}

void ExporterServer::addTritonRequests(const std::string& ns, const std::string& pod,
                                       double requests, double queueMicros) {
  std::lock_guard lock(mutex_);
  sim::TritonPodSeries& series = triton_[{ns, pod}];
  series.namespaceName = ns;
  series.pod = pod;
  series.requestSuccess += requests;
  series.inferenceCount += requests;
  series.execCount += requests;
  series.queueDurationUs += queueMicros;
  series.requestDurationUs += queueMicros;
}

std::string ExporterServer::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [name, series] : families_) {
    out += "# TYPE " + name + " " + types_.at(name) + "\n";
    for (const auto& [labels, value] : series) {
      out += name;
      if (!labels.empty()) out += sim::formatLabelSet({labels.begin(), labels.end()});
      out += " " + sim::formatSampleValue(value) + "\n";
    }
  }
  std::vector<sim::TritonPodSeries> pods;
  for (const auto& [key, series] : triton_) pods.push_back(series);
  return out + sim::renderTritonSeries(pods);
}

}  // namespace gpuscale::test
