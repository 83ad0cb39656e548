// Private: the PendingRequest (gpuscale/apiserver/pending_request.h) HttpsServer gives an
// AsyncHttpHandler: resume() posts to the HandlerPool, respond() hands the response to the
// connection (`deliver`, which posts it to the connection's strand).
//
// A parked request may be released long after the server is gone (a review answering after
// shutdown), so it holds the pool and the connection weakly: what comes too late is dropped. The
// connection keeps itself alive while a request is parked (its deadline timer's wait).
//
// Thread safety: thread-safe (pending_request.h).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

#include "gpuscale/apiserver/pending_request.h"
#include "handler_pool.h"

namespace gpuscale::apiserver::detail {

class PooledPendingRequest final : public PendingRequest,
                                   public std::enable_shared_from_this<PooledPendingRequest> {
 public:
  using Deliver = std::function<void(HttpResponse)>;

  PooledPendingRequest(std::weak_ptr<HandlerPool> pool,
                       std::chrono::steady_clock::time_point deadline, Deliver deliver);
  ~PooledPendingRequest() override;

  std::chrono::steady_clock::time_point deadline() const override { return deadline_; }
  void respond(HttpResponse response) override;
  void resume(std::function<void()> work) override;

 private:
  std::weak_ptr<HandlerPool> pool_;
  const std::chrono::steady_clock::time_point deadline_;
  Deliver deliver_;
  std::atomic<bool> answered_{false};
};

// Calls `handler` with a PooledPendingRequest for `request` (an exception becomes a 500).
void startAsyncHandler(const AsyncHttpHandler& handler, HttpRequest&& request, HandlerPool& pool,
                       std::chrono::steady_clock::time_point deadline,
                       PooledPendingRequest::Deliver deliver);

}  // namespace gpuscale::apiserver::detail
