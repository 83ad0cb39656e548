#include "http_session.h"

#include <exception>

#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/core/duration.h"

namespace gpuscale::apiserver::detail {

uint64_t ConnectionRegistry::add(std::weak_ptr<ConnectionBase> connection,
                                 std::string_view listener) {
  std::lock_guard lock(mutex_);
  const uint64_t id = nextId_++;
  connections_.emplace(id, Entry{std::move(connection), listener});
  const size_t open = ++perListener_[listener];
  if (metrics_) metrics_->setOpenConnections(listener, open);
  return id;
}

void ConnectionRegistry::remove(uint64_t id) {
  std::lock_guard lock(mutex_);
  auto found = connections_.find(id);
  if (found == connections_.end()) return;
  const size_t open = --perListener_[found->second.listener];
  if (metrics_) metrics_->setOpenConnections(found->second.listener, open);
  connections_.erase(found);
  if (connections_.empty()) empty_.notify_all();
}

void ConnectionRegistry::closeAll() {
  std::vector<std::shared_ptr<ConnectionBase>> open;
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, entry] : connections_) {
      if (auto connection = entry.connection.lock()) open.push_back(std::move(connection));
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

std::optional<HttpResponse> callInlineHandler(const InlineHandler& handler,
                                              const HttpRequest& request) {
  try {
    return handler(request);
  } catch (...) {
    return std::nullopt;
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

HttpResponse listenerFullResponse() {
  HttpResponse response = plainTextResponse(503, "503 Service Unavailable: too many connections");
  response.headers.emplace_back("Retry-After", "1");
  response.closeConnection = true;
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
