// Clients that hold a server's connections: silent ones (connected, never sending) and slow ones
// (sending a request one byte at a time, a byte every `pause`), for tests that check that such
// clients hold only their own connection and never a probe or a shutdown.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/tls_client.h"

namespace gpuscale::testing {

class SlowClients {
 public:
  // `silent` plain TCP connections that send nothing and `slow` ones that trickle a request, to
  // 127.0.0.1:`port` (TLS is never started: the server waits for a ClientHello or a request).
  SlowClients(uint16_t port, int silent, int slow, std::chrono::milliseconds pause) {
    for (int i = 0; i < silent; ++i) {
      silent_.push_back(std::make_unique<TlsClient>(port, ClientOptions{false, std::nullopt, ""}));
    }
    for (int i = 0; i < slow; ++i) {
      threads_.emplace_back([this, port, pause] {
        TlsClient client(port, ClientOptions{false, std::nullopt, ""});
        const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n\r\n";
        for (char c : request) {
          if (stop_.load() || !client.send(std::string(1, c))) return;
          for (auto waited = std::chrono::milliseconds(0); waited < pause && !stop_.load();
               waited += std::chrono::milliseconds(10)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
        }
      });
    }
  }
  ~SlowClients() {
    stop_.store(true);
    for (auto& thread : threads_) thread.join();
  }
  SlowClients(const SlowClients&) = delete;
  SlowClients& operator=(const SlowClients&) = delete;

  // The silent connections (e.g. to see whether the server closed them).
  std::vector<std::unique_ptr<TlsClient>>& silent() { return silent_; }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::unique_ptr<TlsClient>> silent_;
  std::vector<std::thread> threads_;
};

}  // namespace gpuscale::testing
