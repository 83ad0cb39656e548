// A scriptable HTTP/1.1 server on a free loopback port for tests of HTTP clients: it plays a
// Prometheus (or an exporter) whose answers a test controls, including the faults real servers show
// (slow answers, huge or chunked bodies, odd status codes, garbage). Keep-alive is supported, each
// connection has its own thread.
//
// Thread safety: the handler runs on connection threads, concurrently; the accessors are
// thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace gpuscale::test {

struct StubRequest {
  std::string method;
  std::string target;  // path and query, as sent
  std::string path;
  std::string query;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

struct StubResponse {
  int status = 200;
  std::string body;
  std::string contentType = "application/json";
  // Wait this long before answering (ended early by stop()).
  std::chrono::milliseconds delay{0};
  // Send the body with chunked transfer encoding (no Content-Length).
  bool chunked = false;
  // Close the connection instead of answering.
  bool close = false;
};

// Decodes `a=b&c=d` (form or query string; '+' is a space). Repeated keys keep every value in
// order.
std::multimap<std::string, std::string> decodeForm(const std::string& text);

// What discovery asks about one metric per pod (podSumRules, support/pod_rules.h): its name among
// the __name__ values, and the labels namespace and pod; nullopt for any other request.
std::optional<StubResponse> podMetricDiscovery(const StubRequest& request,
                                               const std::string& metric);

class PrometheusStubServer {
 public:
  using Handler = std::function<StubResponse(const StubRequest&)>;

  // Listens on 127.0.0.1 at a free port and serves until stop() or destruction.
  explicit PrometheusStubServer(Handler handler);
  ~PrometheusStubServer();
  PrometheusStubServer(const PrometheusStubServer&) = delete;
  PrometheusStubServer& operator=(const PrometheusStubServer&) = delete;

  uint16_t port() const { return port_; }
  // "http://127.0.0.1:<port>".
  std::string url() const;
  // Requests received so far, in arrival order.
  std::vector<StubRequest> requests() const;
  size_t requestCount() const;
  // Stops accepting, ends delays, closes connections and joins every thread.
  void stop();

 private:
  void acceptLoop();
  void serve(int fd);

  Handler handler_;
  int listenFd_ = -1;
  uint16_t port_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable stopped_;
  bool stopping_ = false;
  std::vector<StubRequest> requests_;
  std::vector<int> connections_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace gpuscale::test
