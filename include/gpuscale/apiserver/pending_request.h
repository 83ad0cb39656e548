// PendingRequest: a request whose handler answers later, so that waiting for a remote review (a
// TokenReview or SubjectAccessReview) holds no handler thread.
//
// HttpsServer calls an AsyncHttpHandler on a handler thread with the request and a PendingRequest.
// The handler either answers at once (respond() before it returns) or parks the request: it starts
// something asynchronous and returns, freeing the thread; when the answer comes (on whatever thread
// delivered it), it calls resume() to get back onto a handler thread for the rest of the work, or
// respond() directly.
//
// Contract:
//  - respond() sends the response; only the first call counts, later ones are ignored. Any thread.
//  - resume(work) queues `work` on the server's handler threads, behind requests already waiting;
//    it is dropped if the request's deadline has passed by the time a thread takes it (the server
//    has answered 504 by then). An exception from `work` is answered 500. Any thread.
//  - deadline(): when the server stops waiting and answers 504 (steady clock); every wait on the
//    request's behalf (a rate limiter, a review, a remote call) should end by then.
//  - A PendingRequest released without any respond() answers 500, so a handler that loses a
//    request never leaves its caller waiting for the deadline.
//  - A parked request holds no in-flight slot of the server (https_server.h): what parks it must
//    bound how many requests it parks (auth::ReviewLimiter does for reviews).
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "gpuscale/apiserver/http_message.h"

namespace gpuscale::apiserver {

class PendingRequest {
 public:
  virtual ~PendingRequest() = default;
  virtual std::chrono::steady_clock::time_point deadline() const = 0;
  virtual void respond(HttpResponse response) = 0;
  virtual void resume(std::function<void()> work) = 0;
};

using AsyncHttpHandler =
    std::function<void(std::shared_ptr<const HttpRequest>, std::shared_ptr<PendingRequest>)>;

// Calls `start(callback)`, which calls `callback(value)` exactly once: before `start` returns (an
// answer from a cache) or later from another thread (a remote answer). `next(value)` then runs on
// this thread in the first case, and through `pending.resume()` on a handler thread in the second,
// so that what follows never runs on the thread that delivered a remote answer.
template <typename T, typename Start, typename Next>
void continueOnHandlerThread(const std::shared_ptr<PendingRequest>& pending, Start&& start,
                             Next next) {
  // Whoever comes second (start returning, or the value arriving) runs `next`.
  struct Rendezvous {
    explicit Rendezvous(Next n) : next(std::move(n)) {}
    std::atomic<int> state{0};  // 1: start returned; 2: the value arrived
    std::optional<T> value;
    Next next;
  };
  auto rendezvous = std::make_shared<Rendezvous>(std::move(next));
  start([rendezvous, pending](T value) {
    rendezvous->value.emplace(std::move(value));
    if (rendezvous->state.exchange(2) == 1) {
      pending->resume([rendezvous] { rendezvous->next(std::move(*rendezvous->value)); });
    }
  });
  if (rendezvous->state.exchange(1) == 2) rendezvous->next(std::move(*rendezvous->value));
}

}  // namespace gpuscale::apiserver
