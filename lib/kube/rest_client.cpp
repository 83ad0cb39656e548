#include "gpuscale/kube/rest_client.h"

#include <cpprest/containerstream.h>
#include <cpprest/http_client.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/ssl.hpp>
#include <future>
#include <thread>

#include "gpuscale/core/api_call_tally.h"
#include "gpuscale/core/go_quote.h"
#include "gpuscale/core/no_wait.h"
#include "gpuscale/core/request_deadline.h"

namespace gpuscale::kube {
namespace http = web::http;
namespace {

struct Reply {
  int code = 0;
  std::string body;
  int retryAfterSeconds = 0;
};

using Query = std::vector<std::pair<std::string, std::string>>;
using SteadyClock = std::chrono::steady_clock;

// What a request is, for the observer's labels and the write fence.
struct Call {
  const char* verb;
  std::string resource;  // already bounded
  const char* accept = "application/json";
  bool write = false;  // asks ClientConfig::writeFence before every attempt
};

Call callFor(const char* verb, const ResourceRef& ref) {
  const std::string_view v(verb);
  const bool write = v == "create" || v == "update" || v == "patch" || v == "delete";
  return {verb, boundedResourceLabel(ref.resource), "application/json", write};
}

std::string withQuery(std::string path, const Query& query) {
  char separator = '?';
  for (const auto& [key, value] : query) {
    if (value.empty()) continue;
    path += separator;
    path += key;
    path += '=';
    path += web::uri::encode_data_string(value);
    separator = '&';
  }
  return path;
}

int retryAfter(const http::http_headers& headers) {
  const auto it = headers.find("Retry-After");
  if (it == headers.end()) return 0;
  try {
    return std::max(0, std::stoi(it->second));
  } catch (const std::exception&) {
    return 1;  // an HTTP-date or junk: retry soon rather than never
  }
}

core::Status transportError(const std::string& server, const std::exception& e) {
  if (const auto* httpError = dynamic_cast<const http::http_exception*>(&e);
      httpError != nullptr && httpError->error_code() == std::errc::timed_out) {
    return core::Status::timeout(
        fmt::format("timed out talking to the Kubernetes API at {}", server));
  }
  if (dynamic_cast<const pplx::task_canceled*>(&e) != nullptr) {
    return core::Status::unavailable("request to the Kubernetes API was cancelled");
  }
  return core::Status::unavailable(
      fmt::format("cannot reach the Kubernetes API at {}: {}", server, e.what()));
}

core::Status deadlinePassed(std::string_view what) {
  return core::Status::timeout(fmt::format("{}: the request's deadline would pass first", what));
}

core::Result<Object> parseObject(const Reply& reply) {
  if (reply.body.empty()) return Object::object();
  Object parsed = Object::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return core::Status::internal("the Kubernetes API returned a body that is not JSON");
  }
  return parsed;
}

}  // namespace

struct RestKubeClient::Impl {
  ClientConfig config;
  RateLimiter limiter;
  std::unique_ptr<http::client::http_client> rest;
  std::unique_ptr<http::client::http_client> watch;

  explicit Impl(ClientConfig c) : config(std::move(c)), limiter(config.qps, config.burst) {}

  http::client::http_client_config httpConfig(std::chrono::seconds timeout) const {
    http::client::http_client_config cfg;
    cfg.set_timeout(timeout);
    cfg.set_proxy(web::web_proxy(web::web_proxy::disabled));
    cfg.set_validate_certificates(!config.tls.insecureSkipTlsVerify);
    cfg.set_ssl_context_callback([tls = config.tls](boost::asio::ssl::context& ctx) {
      // The PEM blocks were checked in create(); a failure here leaves the context without them
      // and the handshake or the server rejects the request.
      if (core::Status s = tls.configure(ctx); !s.ok()) {
        spdlog::error("kube client: TLS configuration: {}", s.message());
      }
    });
    return cfg;
  }

  http::http_request buildRequest(const http::method& method, const std::string& pathAndQuery,
                                  const std::string* body, const std::string& contentType,
                                  const char* accept = "application/json") const {
    http::http_request request(method);
    request.set_request_uri(web::uri(pathAndQuery));
    request.headers().add("Accept", accept);
    request.headers().add("User-Agent", config.userAgent);
    if (config.token) {
      if (std::string token = config.token->token(); !token.empty()) {
        request.headers().add("Authorization", "Bearer " + token);
      }
    }
    if (body != nullptr) {
      // The byte-vector overload: cpprestsdk's std::string overload makes a call through a
      // mistyped stream buffer that UBSan rejects.
      request.headers().set_content_type(contentType);
      request.set_body(std::vector<unsigned char>(body->begin(), body->end()));
    }
    return request;
  }

  static pplx::task<Reply> sendAsync(http::client::http_client& client, http::http_request request,
                                     pplx::cancellation_token cancel) {
    return client.request(std::move(request), cancel).then([](http::http_response response) {
      const int code = response.status_code();
      const int retry = retryAfter(response.headers());
      return response.extract_utf8string(true).then([code, retry](std::string body) {
        return Reply{code, std::move(body), retry};
      });
    });
  }

  // Takes a rate-limiter token for a watch, reporting the wait. False when `stop` was requested
  // first.
  bool throttle(std::stop_token stop) {
    const auto start = SteadyClock::now();
    const bool acquired = limiter.acquire(stop);
    if (config.observer) config.observer->rateLimiterWaited(SteadyClock::now() - start);
    return acquired;
  }

  // Until when `call` may be sent: the write fence's answer for a write, no end for a read.
  core::Result<SteadyClock::time_point> admit(const Call& call) const {
    if (!call.write || !config.writeFence) return SteadyClock::time_point::max();
    return config.writeFence->openUntil();
  }

  // Logs that `what` (method and path) was not sent because the write fence closed.
  static core::Status notSent(std::string_view what, const core::Status& closed) {
    spdlog::info("kube client: {} not sent: {}", what, closed.message());
    return closed;
  }

  // Takes a rate-limiter token for one attempt of `call` (`what` names it in logs), reporting the
  // wait. A write waits no longer than the fence stays open without asking it again, and asks it
  // once more with the token in hand, right before the attempt. No token that would come after
  // `deadline` is waited for. Not OK: the fence closed (a token taken first is spent), or the
  // deadline would pass first.
  core::Status takeToken(const Call& call, std::string_view what,
                         std::optional<SteadyClock::time_point> deadline) {
    const auto start = SteadyClock::now();
    core::Status closed;
    for (;;) {
      auto open = admit(call);
      if (!open) {
        closed = notSent(what, open.status());
        break;
      }
      const bool deadlineFirst = deadline && *deadline <= *open;
      if (limiter.acquireUntil(
              deadlineFirst ? *deadline : *open, {},
              deadlineFirst ? RateLimiter::Late::kGiveUp : RateLimiter::Late::kWait)) {
        if (auto still = admit(call); !still) closed = notSent(what, still.status());
        break;
      }
      if (deadlineFirst) {
        closed = deadlinePassed("waiting for the client rate limiter");
        break;
      }
    }
    if (config.observer) config.observer->rateLimiterWaited(SteadyClock::now() - start);
    return closed;
  }

  // Waits `wait` before the next attempt of `call`; a write waits no longer than the fence stays
  // open without asking it again. Not OK: the fence closed.
  core::Status pause(const Call& call, std::string_view what, SteadyClock::duration wait) {
    const auto until = SteadyClock::now() + wait;
    for (;;) {
      auto open = admit(call);
      if (!open) return notSent(what, open.status());
      if (SteadyClock::now() >= until) return {};
      std::this_thread::sleep_until(std::min(until, *open));
    }
  }

  void observe(const Call& call, int code, SteadyClock::time_point start) const {
    core::ApiCallTally::note();
    if (config.observer) {
      config.observer->requestDone(call.verb, call.resource, code, SteadyClock::now() - start);
    }
  }

  // One exchange; with a deadline, waiting for the answer ends there (the request is cancelled).
  core::Result<Reply> exchange(http::http_request request,
                               std::optional<SteadyClock::time_point> deadline) {
    try {
      if (!deadline)
        return sendAsync(*rest, std::move(request), pplx::cancellation_token::none()).get();
      pplx::cancellation_token_source cancel;
      auto task = sendAsync(*rest, std::move(request), cancel.get_token());
      auto ready = std::make_shared<std::promise<void>>();
      auto answered = ready->get_future();
      task.then([ready](const pplx::task<Reply>&) { ready->set_value(); });
      if (answered.wait_until(*deadline) == std::future_status::timeout) {
        cancel.cancel();
        return deadlinePassed("waiting for the Kubernetes API's answer");
      }
      return task.get();
    } catch (const std::exception& e) {
      return transportError(config.server, e);
    }
  }

  core::Result<Reply> send(const Call& call, const http::method& method,
                           const std::string& pathAndQuery, const std::string* body = nullptr,
                           const std::string& contentType = "application/json") {
    // A thread that may not wait (core/no_wait.h) never calls kube-apiserver.
    if (!core::mayWait()) return core::wouldBlock();
    // Waits on behalf of a request end with the request (core::RequestDeadline).
    const auto deadline = core::RequestDeadline::current();
    const auto what = fmt::format("{} {}", method, pathAndQuery);
    for (int attempt = 0;; ++attempt) {
      if (auto s = takeToken(call, what, deadline); !s.ok()) return s;
      const auto start = SteadyClock::now();
      auto reply =
          exchange(buildRequest(method, pathAndQuery, body, contentType, call.accept), deadline);
      observe(call, reply ? reply->code : 0, start);
      if (!reply) return reply.status();
      const bool throttled =
          reply->code == 429 || (reply->code == 503 && reply->retryAfterSeconds > 0);
      if (!throttled || attempt >= config.maxRetries) return reply;
      const auto wait = std::min<std::chrono::seconds>(
          std::chrono::seconds(std::max(1, reply->retryAfterSeconds)), config.maxRetryAfter);
      if (deadline && SteadyClock::now() + wait > *deadline) return reply;
      spdlog::warn("kube client: {} {} throttled (HTTP {}), retrying in {}s", method, pathAndQuery,
                   reply->code, wait.count());
      if (auto s = pause(call, what, wait); !s.ok()) return s;
    }
  }

  // A call that never waits: no token from the rate limiter is a 429 at once, and `done` runs on
  // the client's I/O thread with the outcome.
  void callAsync(const Call& what, const http::method& method, const std::string& pathAndQuery,
                 const std::string& body, std::function<void(core::Result<Object>)> done) {
    if (!limiter.tryAcquire()) {
      if (config.observer) config.observer->rateLimiterWaited(SteadyClock::duration::zero());
      return done(core::Status(429, "TooManyRequests",
                               "client-side rate limit of the Kubernetes API client reached"));
    }
    const auto start = SteadyClock::now();
    auto request = buildRequest(method, pathAndQuery, &body, "application/json", what.accept);
    sendAsync(*rest, std::move(request), pplx::cancellation_token::none())
        .then([what, start, server = config.server, observer = config.observer,
               done = std::move(done)](const pplx::task<Reply>& task) {
          Reply reply;
          try {
            reply = task.get();
          } catch (const std::exception& e) {
            if (observer)
              observer->requestDone(what.verb, what.resource, 0, SteadyClock::now() - start);
            return done(transportError(server, e));
          }
          if (observer) {
            observer->requestDone(what.verb, what.resource, reply.code, SteadyClock::now() - start);
          }
          if (reply.code < 200 || reply.code >= 300) {
            return done(statusFromResponse(reply.code, reply.body, reply.retryAfterSeconds));
          }
          done(parseObject(reply));
        });
  }

  core::Result<Object> call(const Call& what, const http::method& method,
                            const std::string& pathAndQuery, const std::string* body = nullptr,
                            const std::string& contentType = "application/json") {
    auto reply = send(what, method, pathAndQuery, body, contentType);
    if (!reply) return reply.status();
    if (reply->code < 200 || reply->code >= 300) {
      return statusFromResponse(reply->code, reply->body, reply->retryAfterSeconds);
    }
    return parseObject(*reply);
  }

  core::Result<ObjectList> listOnce(const ResourceRef& ref, const ListOptions& options) {
    ObjectList out;
    std::string continueToken;
    do {
      const Query query = {
          {"labelSelector", options.labelSelector},
          {"fieldSelector", options.fieldSelector},
          {"limit", options.limit > 0 ? std::to_string(options.limit) : ""},
          {"continue", continueToken},
          {"resourceVersion", continueToken.empty() ? options.resourceVersion : ""}};
      Call call = callFor("list", ref);
      if (options.metadataOnly) call.accept = kPartialMetadataListAccept;
      auto reply = send(call, http::methods::GET, withQuery(ref.path(), query));
      if (!reply) return reply.status();
      if (reply->code < 200 || reply->code >= 300) {
        return statusFromResponse(reply->code, reply->body, reply->retryAfterSeconds);
      }
      auto page = decodeListPage(reply->body);
      if (!page) return page.status();
      reply->body = std::string();  // the decoded page replaces the text
      out.items.reserve(out.items.size() + page->items.size());
      for (auto& item : page->items) {
        out.items.push_back(options.transform ? options.transform(std::move(item))
                                              : std::move(item));
        item = Object();  // frees the whole item now, not when the page goes
      }
      out.resourceVersion = std::move(page->resourceVersion);
      continueToken = std::move(page->continueToken);
    } while (!continueToken.empty());
    return out;
  }
};

core::Result<std::shared_ptr<RestKubeClient>> RestKubeClient::create(ClientConfig config) {
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return core::Status::invalid(
        fmt::format("server {} is not an http(s) URL", core::goQuote(config.server)));
  }
  if (!config.tlsServerName.empty()) {
    return core::Status::invalid("tls-server-name is not supported by this client");
  }
  if (core::Status tls = config.tls.check(); !tls.ok()) return tls;
  auto impl = std::make_unique<Impl>(std::move(config));
  try {
    const web::uri base(impl->config.server);
    impl->rest = std::make_unique<http::client::http_client>(
        base, impl->httpConfig(impl->config.requestTimeout));
    impl->watch = std::make_unique<http::client::http_client>(
        base, impl->httpConfig(impl->config.watchReadTimeout));
  } catch (const std::exception& e) {
    return core::Status::invalid(
        fmt::format("server {}: {}", core::goQuote(impl->config.server), e.what()));
  }
  return std::shared_ptr<RestKubeClient>(new RestKubeClient(std::move(impl)));
}

RestKubeClient::RestKubeClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RestKubeClient::~RestKubeClient() = default;

const ClientConfig& RestKubeClient::config() const { return impl_->config; }

std::shared_ptr<ClientObserver> RestKubeClient::observer() const { return impl_->config.observer; }

core::Result<Object> RestKubeClient::get(const ResourceRef& ref) {
  return impl_->call(callFor("get", ref), http::methods::GET, ref.path());
}

core::Result<Object> RestKubeClient::getPath(std::string_view path) {
  return impl_->call({"get", "discovery"}, http::methods::GET, std::string(path));
}

core::Result<ObjectList> RestKubeClient::list(const ResourceRef& ref, const ListOptions& options) {
  auto result = impl_->listOnce(ref, options);
  if (!result && k8s::isGone(result.status()) && options.limit > 0) {
    spdlog::info("kube client: continue token for {} expired, listing without pages", ref.path());
    ListOptions whole = options;
    whole.limit = 0;
    return impl_->listOnce(ref, whole);
  }
  return result;
}

core::Result<Object> RestKubeClient::create(const ResourceRef& ref, const Object& object) {
  const std::string body = object.dump();
  return impl_->call(callFor("create", ref), http::methods::POST, ref.path(), &body);
}

void RestKubeClient::createAsync(const ResourceRef& ref, const Object& object,
                                 std::function<void(core::Result<Object>)> done) {
  impl_->callAsync(callFor("create", ref), http::methods::POST, ref.path(), object.dump(),
                   std::move(done));
}

core::Result<Object> RestKubeClient::update(const ResourceRef& ref, const Object& object) {
  const std::string body = object.dump();
  return impl_->call(callFor("update", ref), http::methods::PUT, ref.path(), &body);
}

core::Result<Object> RestKubeClient::patch(const ResourceRef& ref, PatchType type,
                                           const Object& patch) {
  const std::string body = patch.dump();
  return impl_->call(
      callFor("patch", ref), http::methods::PATCH, ref.path(), &body,
      type == PatchType::kMerge ? "application/merge-patch+json" : "application/json-patch+json");
}

core::Status RestKubeClient::remove(const ResourceRef& ref) {
  auto result = impl_->call(callFor("delete", ref), http::methods::DEL, ref.path());
  return result ? core::Status() : result.status();
}

core::Status RestKubeClient::watch(const ResourceRef& ref, const WatchOptions& options,
                                   const WatchHandler& handler, std::stop_token stop) {
  if (!impl_->throttle(stop)) return {};
  const Call call = callFor("watch", ref);
  const auto start = SteadyClock::now();
  bool responded = false;
  // The server must end the stream before the read timeout would.
  const auto readTimeout = static_cast<int>(impl_->config.watchReadTimeout.count());
  const int timeoutSeconds = std::max(1, std::min(options.timeoutSeconds, readTimeout * 5 / 6));
  const Query query = {{"watch", "true"},
                       {"resourceVersion", options.resourceVersion},
                       {"allowWatchBookmarks", options.allowWatchBookmarks ? "true" : ""},
                       {"timeoutSeconds", std::to_string(timeoutSeconds)},
                       {"labelSelector", options.labelSelector},
                       {"fieldSelector", options.fieldSelector}};
  pplx::cancellation_token_source cancel;
  std::stop_callback onStop(stop, [&cancel] { cancel.cancel(); });
  try {
    http::http_response response =
        impl_->watch
            ->request(impl_->buildRequest(
                          http::methods::GET, withQuery(ref.path(), query), nullptr, "",
                          options.metadataOnly ? kPartialMetadataAccept : "application/json"),
                      cancel.get_token())
            .get();
    responded = true;
    impl_->observe(call, response.status_code(), start);
    if (response.status_code() != http::status_codes::OK) {
      const int retry = retryAfter(response.headers());
      return statusFromResponse(response.status_code(), response.extract_utf8string(true).get(),
                                retry);
    }
    auto body = response.body();
    while (!stop.stop_requested()) {
      concurrency::streams::container_buffer<std::string> line;
      body.read_line(line).get();
      const std::string& text = line.collection();
      if (text.empty()) {
        if (body.is_eof()) return {};
        continue;
      }
      auto event = decodeWatchEvent(text);
      if (!event) return event.status();
      if (!handler(*event)) return {};
    }
    return {};
  } catch (const std::exception& e) {
    if (!responded) impl_->observe(call, 0, start);
    if (stop.stop_requested()) return {};
    return transportError(impl_->config.server, e);
  }
}

}  // namespace gpuscale::kube
