// RestKubeClient: the KubeClient that talks HTTPS (or plain HTTP, for tests) to a kube-apiserver
// through cpprestsdk's asynchronous http_client.
//
// Requests are built as continuations (request -> extract body -> Status/Object) and the public
// methods wait for the result on the caller's thread (see client.h: never call them from a pplx
// pool thread). Each request first takes a token from the client's RateLimiter (qps/burst) and
// carries the current bearer token. Every exchange and rate-limiter wait is reported to
// ClientConfig::observer (verb, bounded resource label, code class, latency). 429 responses are
// retried after Retry-After (bounded by ClientConfig::maxRetries and maxRetryAfter); after that the
// 429 Status is returned. A write (create, update, patch, delete) asks ClientConfig::writeFence
// before every attempt, after the rate-limiter wait, and waits for neither a token nor a retry past
// the moment the fence said it stays open without asking it again (write_fence.h); a closed fence
// ends the write with its Status, unsent. A thread serving a request (core::RequestDeadline)
// waits for a token, for the answer and before a retry only until the request's deadline (no token
// that would come later is waited for), then gets a 504 Timeout. createAsync() never waits:
// without a token it answers 429 at once, and the answer is delivered on cpprestsdk's I/O thread
// (bounded by the client's request timeout).
//
// Watches use a second http_client whose per-read timeout is above the stream's server-side
// timeout plus slack for bookmarks, so a silent, dead connection ends with a 504 Timeout Status
// instead of hanging; the informer then re-watches. Stopping a watch cancels the request.
//
// Thread safety: thread-safe; one instance can serve many threads.
#pragma once

#include <memory>

#include "gpuscale/kube/client.h"
#include "gpuscale/kube/config.h"
#include "gpuscale/kube/rate_limiter.h"

namespace gpuscale::kube {

class RestKubeClient final : public KubeClient {
 public:
  // Fails on an unusable configuration (bad URL, unparsable PEM).
  static core::Result<std::shared_ptr<RestKubeClient>> create(ClientConfig config);
  ~RestKubeClient() override;

  core::Result<Object> get(const ResourceRef& ref) override;
  core::Result<ObjectList> list(const ResourceRef& ref, const ListOptions& options) override;
  core::Status watch(const ResourceRef& ref, const WatchOptions& options,
                     const WatchHandler& handler, std::stop_token stop) override;
  core::Result<Object> create(const ResourceRef& ref, const Object& object) override;
  void createAsync(const ResourceRef& ref, const Object& object,
                   std::function<void(core::Result<Object>)> done) override;
  core::Result<Object> update(const ResourceRef& ref, const Object& object) override;
  core::Result<Object> patch(const ResourceRef& ref, PatchType type, const Object& patch) override;
  core::Status remove(const ResourceRef& ref) override;
  core::Result<Object> getPath(std::string_view path) override;
  std::shared_ptr<ClientObserver> observer() const override;

  const ClientConfig& config() const;

 private:
  struct Impl;
  explicit RestKubeClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscale::kube
