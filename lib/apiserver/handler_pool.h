// Private: the threads that run HttpsServer's request handlers, and the in-flight slots that bound
// how many requests may be running or waiting for them (https_server.h, "Dispatch").
//
// A request takes a slot with tryAdmit() on the I/O thread that read it; run() queues its work,
// which runs on one of the pool's threads in order of arrival; the slot is released when the work
// returns (or is dropped by stop()). Slots, not threads, are the limit: with `threads` handlers
// busy, up to `maxInFlight - threads` requests wait in the queue, and no more.
//
// Thread safety: thread-safe. stop() from the controlling thread, once the I/O threads are gone.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>

#include "server_metrics.h"

namespace gpuscale::apiserver::detail {

class HandlerPool : public std::enable_shared_from_this<HandlerPool> {
 public:
  // `maxInFlight` 0: no limit. `metrics` may be null.
  HandlerPool(unsigned threads, unsigned maxInFlight, std::shared_ptr<ServerMetrics> metrics);
  ~HandlerPool();
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  // Takes a slot; false (and counted as a rejected request) when every slot is taken.
  bool tryAdmit();
  // Runs `work` on a handler thread and then releases the slot tryAdmit() took.
  void run(std::function<void()> work);
  // Runs `work` on a handler thread without a slot: the rest of a request that was admitted and
  // then parked (pending_request.h bounds those by other means).
  void post(std::function<void()> work);
  // Drops queued work, waits for running work to return.
  void stop();

  unsigned maxInFlight() const { return maxInFlight_; }
  unsigned admitted() const { return admitted_.load(); }

 private:
  void release();

  const unsigned maxInFlight_;
  std::shared_ptr<ServerMetrics> metrics_;
  std::atomic<unsigned> admitted_{0};
  boost::asio::thread_pool pool_;
};

}  // namespace gpuscale::apiserver::detail
