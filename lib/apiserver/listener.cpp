#include "listener.h"

#include <exception>

namespace gpuscale::apiserver::detail {

IoLoop::IoLoop(std::shared_ptr<ServerMetrics> metrics)
    : metrics_(std::move(metrics)), registry_(std::make_shared<ConnectionRegistry>(metrics_)) {}

IoLoop::~IoLoop() {
  stop([] {}, std::chrono::milliseconds(0));
}

void IoLoop::start(unsigned threads) {
  work_.emplace(io_.get_executor());
  for (unsigned i = 0; i < threads; ++i) {
    threads_.emplace_back([this] {
      for (;;) {
        try {
          io_.run();
          return;
        } catch (const std::exception& error) {
          metrics_->internalError("I/O", error.what());
        } catch (...) {
          metrics_->internalError("I/O", "unknown exception");
        }
      }
    });
  }
}

void IoLoop::stop(const std::function<void()>& closeListeners, std::chrono::milliseconds deadline) {
  if (threads_.empty()) return;
  const auto until = std::chrono::steady_clock::now() + deadline;
  registry_->stopping.store(true);
  closeListeners();
  registry_->closeAll();
  registry_->waitUntilEmpty(until);
  // Whatever is still open after the deadline is dropped with the io_context's pending work.
  work_.reset();
  io_.stop();
  for (auto& thread : threads_) thread.join();
  threads_.clear();
}

}  // namespace gpuscale::apiserver::detail
