// FakeHttpServer: a tiny plain-HTTP/1.1 server on 127.0.0.1 for client tests that need faults a
// real server will not produce on cue: 429 with Retry-After, a watch stream that breaks or sends
// 410 in the middle, a peer that accepts and then never answers.
//
// Each connection gets its own thread; requests on a connection are served in order (keep-alive).
// The handler writes the response through the Exchange: a whole response, a chunked stream, or
// nothing (stall/hang up).
//
// Thread safety: the handler runs concurrently on connection threads; stop() (and the destructor)
// closes every socket and joins the threads.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpuscale::testing {

struct FakeRequest {
  std::string method;
  std::string target;                          // path?query as sent
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;

  std::string path() const { return target.substr(0, target.find('?')); }
  // Decoded query parameter value ("" when absent).
  std::string query(const std::string& key) const;
};

class FakeHttpServer {
 public:
  class Exchange {
   public:
    virtual ~Exchange() = default;
    virtual void respond(int status, const std::string& body,
                         const std::vector<std::pair<std::string, std::string>>& headers = {}) = 0;
    // A chunked 200 response: begin, any number of chunks, then end (or hangUp mid-stream).
    virtual void beginStream(int status = 200) = 0;
    virtual bool chunk(const std::string& data) = 0;
    virtual void endStream() = 0;
    // Closes the connection without (finishing) a response.
    virtual void hangUp() = 0;
    // Waits up to `d` or until the server stops; returns false if it stopped.
    virtual bool waitFor(std::chrono::milliseconds d) = 0;
  };
  using Handler = std::function<void(const FakeRequest&, Exchange&)>;

  explicit FakeHttpServer(Handler handler);
  ~FakeHttpServer();

  uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_.load(); }
  void stop();

  struct State;  // shared with the connection threads (defined in the .cpp)

 private:
  void serve(int fd);

  Handler handler_;
  uint16_t port_ = 0;
  int listenFd_ = -1;
  std::atomic<int> requests_{0};
  std::shared_ptr<State> state_;
  std::thread acceptor_;
};

}  // namespace gpuscale::testing
