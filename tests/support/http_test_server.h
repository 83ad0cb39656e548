// HttpTestServer: the one scriptable HTTP/1.1 server of the tests, on a free loopback port, for
// tests of HTTP clients (the Prometheus client, the Kubernetes REST client, the adapter against a
// misbehaving Prometheus). It plays whatever the test scripts, including the faults real servers
// show on no cue: slow answers, 429 with Retry-After, chunked bodies and watch streams that break
// or send 410 part way, peers that accept and never answer, garbage.
//
// A test answers either with a whole HttpTestResponse (status, body, delay, chunked, close) or,
// for streams and hang-ups, through the Exchange of each request. Keep-alive is supported; each
// connection has its own thread and its requests are served in order.
//
// Thread safety: handlers run concurrently on connection threads; the accessors are thread-safe.
// stop() (and the destructor) ends delays and waits, closes every connection and joins the threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace gpuscale::test {

struct HttpTestRequest {
  std::string method;
  std::string target;  // path and query, as sent
  std::string path;
  std::string query;                           // raw, without '?'
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  // The decoded value of query parameter `key` ("" when absent).
  std::string param(const std::string& key) const;
};

struct HttpTestResponse {
  int status = 200;
  std::string body;
  std::string contentType = "application/json";
  // Wait this long before answering (ended early by stop(), which then closes the connection).
  std::chrono::milliseconds delay{0};
  // Send the body with chunked transfer encoding (no Content-Length).
  bool chunked = false;
  // Close the connection instead of answering.
  bool close = false;
};

// Decodes `a=b&c=d` (form or query string; '+' is a space). Repeated keys keep every value in
// order.
std::multimap<std::string, std::string> decodeForm(const std::string& text);

class HttpTestServer {
 public:
  // How a handler answers one request when a whole response will not do.
  class Exchange {
   public:
    virtual ~Exchange() = default;
    // A whole response; Content-Type is application/json unless `headers` name one.
    virtual void respond(int status, const std::string& body,
                         const std::vector<std::pair<std::string, std::string>>& headers = {}) = 0;
    // A chunked response: begin, any number of chunks, then end (or hangUp part way).
    virtual void beginStream(int status = 200,
                             const std::string& contentType = "application/json") = 0;
    virtual bool chunk(const std::string& data) = 0;
    virtual void endStream() = 0;
    // Closes the connection without (finishing) a response.
    virtual void hangUp() = 0;
    // Waits up to `d` or until the server stops; returns false if it stopped.
    virtual bool waitFor(std::chrono::milliseconds d) = 0;
  };
  using ExchangeHandler = std::function<void(const HttpTestRequest&, Exchange&)>;
  using ResponseHandler = std::function<HttpTestResponse(const HttpTestRequest&)>;

  // Listens on 127.0.0.1 at a free port and serves until stop() or destruction.
  explicit HttpTestServer(ExchangeHandler handler);
  explicit HttpTestServer(ResponseHandler handler);
  ~HttpTestServer();
  HttpTestServer(const HttpTestServer&) = delete;
  HttpTestServer& operator=(const HttpTestServer&) = delete;

  uint16_t port() const { return port_; }
  // "http://127.0.0.1:<port>".
  std::string url() const;
  // Requests received so far, in arrival order.
  std::vector<HttpTestRequest> requests() const;
  size_t requestCount() const;
  void stop();

 private:
  class SocketExchange;
  void acceptLoop();
  void serve(int fd);

  ExchangeHandler handler_;
  int listenFd_ = -1;
  uint16_t port_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable stopped_;
  bool stopping_ = false;
  std::vector<HttpTestRequest> requests_;
  std::vector<int> connections_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace gpuscale::test
