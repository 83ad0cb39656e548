#include "handler_pool.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <exception>

namespace gpuscale::apiserver::detail {

HandlerPool::HandlerPool(unsigned threads, unsigned maxInFlight,
                         std::shared_ptr<ServerMetrics> metrics)
    : maxInFlight_(maxInFlight), metrics_(std::move(metrics)), pool_(std::max(1u, threads)) {}

HandlerPool::~HandlerPool() { stop(); }

bool HandlerPool::tryAdmit() {
  unsigned current = admitted_.load();
  do {
    if (maxInFlight_ != 0 && current >= maxInFlight_) {
      if (metrics_) metrics_->requestRejected(maxInFlight_);
      return false;
    }
  } while (!admitted_.compare_exchange_weak(current, current + 1));
  if (metrics_) metrics_->setAdmittedRequests(current + 1);
  return true;
}

void HandlerPool::release() {
  const unsigned now = admitted_.fetch_sub(1) - 1;
  if (metrics_) metrics_->setAdmittedRequests(now);
}

void HandlerPool::run(std::function<void()> work) {
  // The guard releases the slot whether the work runs, throws, or is destroyed unrun by stop().
  class Slot {
   public:
    explicit Slot(HandlerPool* pool) : pool_(pool) {}
    ~Slot() { pool_->release(); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    HandlerPool* pool_;
  };
  // An exception escaping a thread_pool handler would end the process; the work already answers
  // handler exceptions with a 500, so this is only a last guard.
  boost::asio::post(pool_, [this, work = std::move(work), slot = std::make_shared<Slot>(this)] {
    try {
      work();
    } catch (const std::exception& error) {
      if (metrics_) metrics_->internalError("handler pool", error.what());
    } catch (...) {
      if (metrics_) metrics_->internalError("handler pool", "unknown exception");
    }
  });
}

void HandlerPool::post(std::function<void()> work) { boost::asio::post(pool_, std::move(work)); }

void HandlerPool::stop() {
  pool_.stop();
  pool_.join();
}

}  // namespace gpuscale::apiserver::detail
