// The authentication and authorization seam, called for every request before any handler
// (Kubernetes' filter order: authenticate, then authorize, then route).
//
// Authenticator: request (headers, TLS peer certificates) -> the user, or an error. An error Status
// is sent as is (normally 401 Unauthorized); "no credentials" is not an error but the anonymous
// user, decided by the implementation. Authorizer: user + RequestInfo -> allow, deny (403 with
// Kubernetes' message, see forbiddenStatus()) or an error (500 InternalError, fail closed). The
// front-proxy, x509, TokenReview and SubjectAccessReview implementations live in lib/auth;
// standalone mode uses AllowAll below.
//
// Asynchronous forms: authenticateAsync()/authorizeAsync() call `done` exactly once, either before
// they return (an answer from certificates or a cache) or later from another thread (a remote
// review's answer), so a server can park the request instead of holding a thread while a review
// is slow (pending_request.h). `deadline` is when the server stops waiting: an implementation must
// not wait past it (it fails instead). The defaults call the synchronous forms. A reason to refuse
// work (too many reviews) is a 429 Status (TooManyRequests, details.retryAfterSeconds) and is sent
// as such, with a Retry-After header.
//
// Thread safety: implementations are called concurrently from server worker threads and must be
// thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuscale/apiserver/http_message.h"
#include "gpuscale/apiserver/request_info.h"
#include "gpuscale/core/result.h"

namespace gpuscale::apiserver {

struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // `request.peer` carries the TLS client certificates, if any. May strip credential headers it
  // consumed only through its own copy; the request is read-only here.
  virtual core::Result<UserInfo> authenticate(const HttpRequest& request) = 0;
  // `request` is read only before this returns.
  virtual void authenticateAsync(const HttpRequest& request,
                                 std::chrono::steady_clock::time_point deadline,
                                 std::function<void(core::Result<UserInfo>)> done) {
    (void)deadline;
    done(authenticate(request));
  }
  // The same answer when it can be given at once (credentials checked locally, or a review's
  // answer already cached); nullopt when it would have to wait (a remote review). The default
  // never answers: such requests take the handler threads (https_server.h, "Dispatch").
  virtual std::optional<core::Result<UserInfo>> authenticateWithoutWaiting(
      const HttpRequest& request);
};

struct AuthorizationDecision {
  bool allowed = false;
  std::string reason;  // appended to the 403 message after ": " when non-empty
};

class Authorizer {
 public:
  virtual ~Authorizer() = default;
  virtual core::Result<AuthorizationDecision> authorize(const UserInfo& user,
                                                        const RequestInfo& info) = 0;
  // `user` and `info` are read only before this returns.
  virtual void authorizeAsync(const UserInfo& user, const RequestInfo& info,
                              std::chrono::steady_clock::time_point deadline,
                              std::function<void(core::Result<AuthorizationDecision>)> done) {
    (void)deadline;
    done(authorize(user, info));
  }
  // As authenticateWithoutWaiting: the decision when it needs no wait, else nullopt (the default).
  virtual std::optional<core::Result<AuthorizationDecision>> authorizeWithoutWaiting(
      const UserInfo& user, const RequestInfo& info);
};

// Standalone mode: everyone is "system:anonymous" (group system:unauthenticated) and everything is
// allowed.
class AllowAllAuthenticator final : public Authenticator {
 public:
  core::Result<UserInfo> authenticate(const HttpRequest& request) override;
  std::optional<core::Result<UserInfo>> authenticateWithoutWaiting(
      const HttpRequest& request) override {
    return authenticate(request);
  }
};

class AllowAllAuthorizer final : public Authorizer {
 public:
  core::Result<AuthorizationDecision> authorize(const UserInfo& user,
                                                const RequestInfo& info) override;
  std::optional<core::Result<AuthorizationDecision>> authorizeWithoutWaiting(
      const UserInfo& user, const RequestInfo& info) override {
    return authorize(user, info);
  }
};

// The 403 Status Kubernetes writes for a denied request, e.g.
//   pods.custom.metrics.k8s.io "*" is forbidden: User "u" cannot get resource "pods/m" in API group
//   "custom.metrics.k8s.io" in the namespace "default"
// (details name/group/kind) or `forbidden: User "u" cannot get path "/metrics"` (empty details).
core::Status forbiddenStatus(const UserInfo& user, const RequestInfo& info,
                             std::string_view reason);

}  // namespace gpuscale::apiserver
