#include "pooled_pending_request.h"

#include <exception>
#include <string>

namespace gpuscale::apiserver::detail {
namespace {

HttpResponse internalError(std::string_view what) {
  HttpResponse response;
  response.status = 500;
  response.contentType = "text/plain; charset=utf-8";
  response.body = "internal server error: " + std::string(what) + "\n";
  return response;
}

}  // namespace

PooledPendingRequest::PooledPendingRequest(std::weak_ptr<HandlerPool> pool,
                                           std::chrono::steady_clock::time_point deadline,
                                           Deliver deliver)
    : pool_(std::move(pool)), deadline_(deadline), deliver_(std::move(deliver)) {}

PooledPendingRequest::~PooledPendingRequest() {
  if (!answered_.exchange(true)) deliver_(internalError("the request was dropped unanswered"));
}

void PooledPendingRequest::respond(HttpResponse response) {
  if (!answered_.exchange(true)) deliver_(std::move(response));
}

void PooledPendingRequest::resume(std::function<void()> work) {
  auto pool = pool_.lock();
  if (!pool) return;  // the server is gone
  pool->post([self = shared_from_this(), work = std::move(work)] {
    if (self->answered_.load() || std::chrono::steady_clock::now() >= self->deadline_) return;
    try {
      work();
    } catch (const std::exception& error) {
      self->respond(internalError(error.what()));
    } catch (...) {
      self->respond(internalError("unknown exception"));
    }
  });
}

void startAsyncHandler(const AsyncHttpHandler& handler, HttpRequest&& request, HandlerPool& pool,
                       std::chrono::steady_clock::time_point deadline,
                       PooledPendingRequest::Deliver deliver) {
  auto pending =
      std::make_shared<PooledPendingRequest>(pool.weak_from_this(), deadline, std::move(deliver));
  try {
    handler(std::make_shared<const HttpRequest>(std::move(request)), pending);
  } catch (const std::exception& error) {
    pending->respond(internalError(error.what()));
  } catch (...) {
    pending->respond(internalError("unknown exception"));
  }
}

}  // namespace gpuscale::apiserver::detail
