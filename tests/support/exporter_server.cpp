#include "support/exporter_server.h"

#include <cmath>
#include <sstream>

namespace gpuscale::test {
namespace {

std::string escapeLabelValue(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string formatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

}  // namespace

ExporterServer::ExporterServer() {
  server_ = std::make_unique<PrometheusStubServer>([this](const StubRequest& request) {
    StubResponse response;
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
  Labels labels = {{"namespace", ns}, {"pod", pod}, {"model", "simple"}, {"version", "1"}};
  add("nv_inference_request_success", labels, requests);
  add("nv_inference_queue_duration_us", labels, queueMicros);
}

std::string ExporterServer::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [name, series] : families_) {
    out += "# TYPE " + name + " " + types_.at(name) + "\n";
    for (const auto& [labels, value] : series) {
      out += name;
      if (!labels.empty()) {
        out += '{';
        bool first = true;
        for (const auto& [key, text] : labels) {
          out += (first ? "" : ",") + key + "=\"" + escapeLabelValue(text) + "\"";
          first = false;
        }
        out += '}';
      }
      out += " " + formatValue(value) + "\n";
    }
  }
  return out;
}

}  // namespace gpuscale::test
