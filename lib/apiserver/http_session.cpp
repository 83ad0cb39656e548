#include "http_session.h"

#include <exception>

#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/apiserver/url.h"
#include "gpuscale/core/duration.h"

namespace gpuscale::apiserver::detail {

uint64_t ConnectionRegistry::add(std::weak_ptr<ConnectionBase> connection) {
  std::lock_guard lock(mutex_);
  const uint64_t id = nextId_++;
  connections_.emplace(id, std::move(connection));
  if (metrics_) metrics_->setOpenConnections(connections_.size());
  return id;
}

void ConnectionRegistry::remove(uint64_t id) {
  std::lock_guard lock(mutex_);
  connections_.erase(id);
  if (metrics_) metrics_->setOpenConnections(connections_.size());
  if (connections_.empty()) empty_.notify_all();
}

void ConnectionRegistry::closeAll() {
  std::vector<std::shared_ptr<ConnectionBase>> open;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, weak] : connections_) {
      if (auto connection = weak.lock()) open.push_back(std::move(connection));
    }
  }
  for (auto& connection : open) connection->requestClose();
}

bool ConnectionRegistry::waitUntilEmpty(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return empty_.wait_until(lock, deadline, [this] { return connections_.empty(); });
}

size_t ConnectionRegistry::size() const {
  std::lock_guard lock(mutex_);
  return connections_.size();
}

std::optional<HttpRequest> toHttpRequest(http::request<http::string_body>&& parsed, bool secure,
                                         std::string remoteAddress,
                                         std::shared_ptr<const PeerCertificates> peer) {
  HttpRequest request;
  request.method = std::string(parsed.method_string());
  request.target = std::string(parsed.target());
  if (request.target.empty() || request.target.front() != '/') return std::nullopt;
  const size_t question = request.target.find('?');
  auto path = decodePath(std::string_view(request.target).substr(0, question));
  if (!path) return std::nullopt;
  request.path = std::move(*path);
  if (question != std::string::npos) request.rawQuery = request.target.substr(question + 1);
  request.headers.reserve(8);
  for (const auto& field : parsed) {
    request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  request.body = std::move(parsed.body());
  request.secure = secure;
  request.remoteAddress = std::move(remoteAddress);
  request.peer = std::move(peer);
  return request;
}

HttpResponse callHandler(const HttpHandler& handler, const HttpRequest& request) {
  try {
    return handler(request);
  } catch (const std::exception& error) {
    HttpResponse response;
    response.status = 500;
    response.contentType = "text/plain; charset=utf-8";
    response.body = std::string("internal server error: ") + error.what() + "\n";
    return response;
  } catch (...) {
    HttpResponse response;
    response.status = 500;
    response.contentType = "text/plain; charset=utf-8";
    response.body = "internal server error\n";
    return response;
  }
}

bool isHealthProbe(const HttpRequest& request) {
  const std::string& path = request.path;
  return (path == "/healthz" || path == "/livez" || path == "/readyz") &&
         !request.header("Authorization").has_value();
}

HttpResponse tooManyRequestsResponse() {
  core::StatusDetails details;
  details.present = true;
  const core::Status status(429, "TooManyRequests", "Too many requests, please try again later.",
                            details);
  auto document = status.toKubernetesJson();
  document["details"]["retryAfterSeconds"] = 1;
  HttpResponse response = jsonTextResponse(429, document.dump());
  response.headers.emplace_back("Retry-After", "1");
  return response;
}

HttpResponse requestTimeoutResponse(std::chrono::milliseconds timeout) {
  return statusResponse(
      core::Status::timeout("request did not complete within the allotted timeout of " +
                            core::formatGoDuration(timeout)),
      false);
}

http::response<http::string_body> protocolError(http::status status) {
  http::response<http::string_body> response{status, 11};
  response.set(http::field::content_type, "text/plain; charset=utf-8");
  response.set(http::field::connection, "close");
  response.body() = std::to_string(static_cast<unsigned>(status)) + " " +
                    std::string(http::obsolete_reason(status));
  response.prepare_payload();
  return response;
}

http::response<http::string_body> toBeastResponse(HttpResponse&& response, bool head) {
  http::response<http::string_body> out{static_cast<http::status>(response.status), 11};
  if (!response.contentType.empty()) out.set(http::field::content_type, response.contentType);
  for (auto& [name, value] : response.headers) out.insert(name, value);
  out.body() = std::move(response.body);
  out.prepare_payload();
  // HEAD: keep Content-Length of the body that a GET would get, send no body.
  if (head) out.body().clear();
  return out;
}

}  // namespace gpuscale::apiserver::detail
