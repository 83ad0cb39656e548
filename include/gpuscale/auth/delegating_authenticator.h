// DelegatingAuthenticator: the apiserver::Authenticator of an aggregated API server
// (k8s.io/apiserver's delegating authenticator), trying in order and taking the first success:
//   1. front proxy: a client certificate that verifies against the request-header CA (and whose CN
//      is in allowed-names, if any) vouches for the X-Remote-User / X-Remote-Group /
//      X-Remote-Extra-* headers (names configurable). Without such a certificate these headers are
//      ignored, so forging them gains nothing.
//   2. x509: a client certificate that verifies against the client CA: user = CN, groups = O.
//   3. bearer token (Authorization: Bearer ...): a TokenReview (cached).
// A presented credential that fails (a certificate that does not verify, a CN that is not
// allowed, a rejected token, a review that could not be done) is remembered; if nothing succeeds
// the request gets 401 Unauthorized (the body Kubernetes sends, the cause only logged at debug
// level), except when the TokenReview was refused for want of capacity: then 429. Only a
// request with no credentials at all becomes system:anonymous (group system:unauthenticated).
// Authenticated users get the group system:authenticated added.
//
// Thread safety: thread-safe; authenticate() may block for a TokenReview on a cache miss,
// authenticateAsync() never blocks.
#pragma once

#include <memory>

#include "gpuscale/apiserver/auth.h"
#include "gpuscale/auth/authentication_config.h"
#include "gpuscale/auth/token_reviewer.h"

namespace gpuscale::auth {

class DelegatingAuthenticator final : public apiserver::Authenticator {
 public:
  // `tokens` may be null (bearer tokens are then a credential that fails).
  DelegatingAuthenticator(std::shared_ptr<AuthenticationConfigSource> config,
                          std::shared_ptr<TokenReviewer> tokens);

  core::Result<apiserver::UserInfo> authenticate(const apiserver::HttpRequest& request) override;
  // Certificates are judged at once; a bearer token's review is not waited for (TokenReviewer::
  // reviewAsync), and a review refused by the limiter is a 429.
  void authenticateAsync(const apiserver::HttpRequest& request,
                         std::chrono::steady_clock::time_point deadline,
                         std::function<void(core::Result<apiserver::UserInfo>)> done) override;

 private:
  struct Progress;
  Progress withoutReview(const apiserver::HttpRequest& request) const;
  static core::Result<apiserver::UserInfo> conclude(Progress progress,
                                                    const TokenReviewer::Answer* reviewed);

  std::shared_ptr<AuthenticationConfigSource> config_;
  std::shared_ptr<TokenReviewer> tokens_;
};

// Front-proxy step alone: nullopt when it does not apply (no certificate, no CA, no username
// header), an Unauthorized error when the certificate is bad or its CN not allowed.
core::Result<std::optional<apiserver::UserInfo>> authenticateRequestHeader(
    const RequestHeaderConfig& config, const apiserver::HttpRequest& request);

}  // namespace gpuscale::auth
