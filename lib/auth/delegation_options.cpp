#include "gpuscale/auth/delegation_options.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

#include "gpuscale/auth/delegating_authenticator.h"
#include "gpuscale/auth/token_reviewer.h"

namespace gpuscale::auth {
namespace {

// A review client: `timeout` per request, no 429 retries (the caller fails closed instead), and the
// rate limits k8s.io/apiserver uses for delegation (200 QPS, burst 400).
core::Result<std::shared_ptr<kube::KubeClient>> reviewClient(
    const std::string& kubeconfig, std::chrono::seconds timeout, const char* purpose,
    const std::shared_ptr<kube::ClientObserver>& observer) {
  auto config = kubeconfig.empty() ? kube::inClusterConfig() : kube::loadKubeconfig(kubeconfig);
  if (!config) {
    if (!kubeconfig.empty()) return config.status().withContext(purpose);
    spdlog::warn("no {} kubeconfig and not in a cluster ({}): delegated {} is off", purpose,
                 config.status().message(), purpose);
    return std::shared_ptr<kube::KubeClient>();
  }
  config->requestTimeout = timeout;
  config->maxRetries = 0;
  config->qps = 200;
  config->burst = 400;
  config->observer = observer;
  auto client = kube::RestKubeClient::create(std::move(*config));
  if (!client) return client.status().withContext(purpose);
  return std::shared_ptr<kube::KubeClient>(*client);
}

}  // namespace

void DelegationOptions::addFlags(core::FlagSet& flags) {
  flags.addString("lister-kubeconfig", &listerKubeconfig,
                  "kubeconfig for listing and watching objects (default in-cluster, then "
                  "$KUBECONFIG)");
  flags.addFloat("client-qps", &clientQps, "client-side requests per second to the Kubernetes API");
  flags.addInt("client-burst", &clientBurst, "client-side burst", 0);
  addReviewFlags(flags);
}

void DelegationOptions::addReviewFlags(core::FlagSet& flags) {
  using core::ListForm;
  AuthenticationFlags& authn = authentication;
  flags.addString("authentication-kubeconfig", &authenticationKubeconfig,
                  "kubeconfig for TokenReviews (default in-cluster)");
  flags.addDuration("authentication-token-webhook-cache-ttl", &tokenCacheTtl,
                    "how long TokenReview answers are cached");
  flags.addBool("authentication-skip-lookup", &skipLookup,
                "do not read kube-system/extension-apiserver-authentication");
  flags.addBool("authentication-tolerate-lookup-failure", &tolerateLookupFailure,
                "start even if that ConfigMap cannot be read");
  flags.addString("client-ca-file", &authn.clientCaFile, "CA bundle for x509 client certificates");
  flags.addString("requestheader-client-ca-file", &authn.requestHeaderClientCaFile,
                  "CA bundle for front-proxy client certificates");
  flags.addStringList("requestheader-allowed-names", &authn.requestHeaderAllowedNames,
                      "front-proxy certificate common names accepted (default any)",
                      ListForm::kCommaSeparated);
  flags.addStringList("requestheader-username-headers", &authn.requestHeaderUsernameHeaders,
                      "headers carrying the user name", ListForm::kCommaSeparated);
  flags.addStringList("requestheader-group-headers", &authn.requestHeaderGroupHeaders,
                      "headers carrying the groups", ListForm::kCommaSeparated);
  flags.addStringList("requestheader-extra-headers-prefix", &authn.requestHeaderExtraHeaderPrefixes,
                      "prefixes of the headers carrying extra user information",
                      ListForm::kCommaSeparated);
  flags.addString("authorization-kubeconfig", &authorizationKubeconfig,
                  "kubeconfig for SubjectAccessReviews (default in-cluster)");
  flags.addDuration("authorization-webhook-cache-authorized-ttl", &authorization.allowedTtl,
                    "how long allowing SubjectAccessReview answers are cached");
  flags.addDuration("authorization-webhook-cache-unauthorized-ttl", &authorization.deniedTtl,
                    "how long denying SubjectAccessReview answers are cached");
  flags.addStringList("authorization-always-allow-paths", &authorization.alwaysAllowPaths,
                      "paths allowed without a review", ListForm::kCommaSeparated);
  flags
      .addCustom("delegated-reviews-per-second", "float",
                 "TokenReviews + SubjectAccessReviews started per second, burst twice that; "
                 "beyond: 429 (0 = no limit)",
                 [this](std::string_view value) {
                   double number = 0;
                   const auto [end, ec] =
                       std::from_chars(value.data(), value.data() + value.size(), number);
                   if (ec != std::errc() || end != value.data() + value.size() || number < 0) {
                     return core::Status::badRequest("must be a number >= 0");
                   }
                   reviewLimits.reviewsPerSecond = number;
                   reviewLimits.burst = std::max(1, static_cast<int>(2 * number));
                   return core::Status();
                 })
      .defaultText(fmt::format("{}", reviewLimits.reviewsPerSecond));
  flags.addInt("delegated-reviews-max-waiting", &reviewLimits.maxWaiting,
               "requests waiting for reviews at once; beyond: 429", 1, 1000000);
}

core::Result<DelegatedAuth> buildDelegatedAuth(const DelegationOptions& options) {
  auto base = configFromFlags(options.authentication);
  if (!base) return base.status();
  auto authnClient = reviewClient(options.authenticationKubeconfig, options.reviewTimeout,
                                  "authentication", options.observer);
  if (!authnClient) return authnClient.status();
  auto authzClient = reviewClient(options.authorizationKubeconfig, options.reviewTimeout,
                                  "authorization", options.observer);
  if (!authzClient) return authzClient.status();

  DelegatedAuth out;
  out.config = std::make_shared<AuthenticationConfigSource>(*base, options.authentication);
  const bool needsLookup = options.authentication.clientCaFile.empty() ||
                           options.authentication.requestHeaderClientCaFile.empty();
  if (!options.skipLookup && needsLookup) {
    core::Status lookup = *authnClient
                              ? out.config->startWatching(*authnClient, options.authentication)
                              : core::Status::unavailable("no authentication kubeconfig");
    if (!lookup.ok()) {
      if (!options.tolerateLookupFailure) {
        return lookup.withContext(
            "authentication config lookup (use "
            "--authentication-tolerate-lookup-failure to start anyway)");
      }
      spdlog::warn("authentication config lookup failed, continuing with flags only: {}",
                   lookup.message());
    }
  }
  // One limiter for both kinds of review: together they are what callers cost kube-apiserver.
  auto limiter = options.reviewLimiter ? options.reviewLimiter
                                       : std::make_shared<ReviewLimiter>(options.reviewLimits);
  std::shared_ptr<TokenReviewer> tokens;
  if (*authnClient) {
    tokens = std::make_shared<TokenReviewer>(*authnClient, options.tokenCacheTtl,
                                             options.reviewCacheMetrics, limiter);
  }
  out.authenticator = std::make_shared<DelegatingAuthenticator>(out.config, std::move(tokens));
  AuthorizerOptions authorization = options.authorization;
  authorization.metrics = options.reviewCacheMetrics;
  authorization.limiter = limiter;
  out.authorizer = std::make_shared<DelegatingAuthorizer>(*authzClient, std::move(authorization));
  return out;
}

core::Result<std::shared_ptr<kube::RestKubeClient>> buildListerClient(
    const DelegationOptions& options) {
  auto config = kube::loadClientConfig(options.listerKubeconfig);
  if (!config) return config.status().withContext("--lister-kubeconfig");
  config->qps = options.clientQps;
  config->burst = options.clientBurst;
  config->observer = options.observer;
  return kube::RestKubeClient::create(std::move(*config));
}

}  // namespace gpuscale::auth
