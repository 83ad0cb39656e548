#include "gpuscale/auth/delegation_options.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

#include "gpuscale/auth/delegating_authenticator.h"
#include "gpuscale/auth/token_reviewer.h"
#include "gpuscale/core/duration.h"
#include "gpuscale/core/flag_args.h"

namespace gpuscale::auth {
namespace {

std::vector<std::string> splitList(std::string_view value) {
  std::vector<std::string> out;
  while (!value.empty()) {
    const size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return out;
}

core::Result<std::chrono::milliseconds> duration(std::string_view name, std::string_view value) {
  auto parsed = core::parseGoDuration(value);
  if (!parsed)
    return core::Status::badRequest(fmt::format("--{}: {}", name, parsed.status().message()));
  return std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
}

core::Result<bool> boolean(std::string_view name, std::string_view value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return core::Status::badRequest(fmt::format("--{}: invalid boolean {:?}", name, value));
}

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

bool isBooleanDelegationFlag(std::string_view name) {
  return name == "authentication-skip-lookup" || name == "authentication-tolerate-lookup-failure";
}

core::Result<bool> applyDelegationFlag(DelegationOptions& options, std::string_view name,
                                       std::string_view value) {
  auto& authn = options.authentication;
  if (name == "lister-kubeconfig") {
    options.listerKubeconfig = value;
  } else if (name == "client-qps" || name == "client-burst") {
    double number = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || end != value.data() + value.size() || number < 0) {
      return core::Status::badRequest(fmt::format("--{}: invalid number {:?}", name, value));
    }
    if (name == "client-qps") {
      options.clientQps = number;
    } else {
      options.clientBurst = static_cast<int>(number);
    }
  } else if (name == "authentication-kubeconfig") {
    options.authenticationKubeconfig = value;
  } else if (name == "authentication-token-webhook-cache-ttl") {
    auto ttl = duration(name, value);
    if (!ttl) return ttl.status();
    options.tokenCacheTtl = *ttl;
  } else if (name == "client-ca-file") {
    authn.clientCaFile = value;
  } else if (name == "requestheader-client-ca-file") {
    authn.requestHeaderClientCaFile = value;
  } else if (name == "requestheader-username-headers") {
    authn.requestHeaderUsernameHeaders = splitList(value);
  } else if (name == "requestheader-group-headers") {
    authn.requestHeaderGroupHeaders = splitList(value);
  } else if (name == "requestheader-extra-headers-prefix") {
    authn.requestHeaderExtraHeaderPrefixes = splitList(value);
  } else if (name == "requestheader-allowed-names") {
    authn.requestHeaderAllowedNames = splitList(value);
  } else if (name == "authentication-skip-lookup" ||
             name == "authentication-tolerate-lookup-failure") {
    auto flag = boolean(name, value);
    if (!flag) return flag.status();
    (name == "authentication-skip-lookup" ? options.skipLookup : options.tolerateLookupFailure) =
        *flag;
  } else if (name == "authorization-kubeconfig") {
    options.authorizationKubeconfig = value;
  } else if (name == "authorization-webhook-cache-authorized-ttl" ||
             name == "authorization-webhook-cache-unauthorized-ttl") {
    auto ttl = duration(name, value);
    if (!ttl) return ttl.status();
    (name == "authorization-webhook-cache-authorized-ttl" ? options.authorization.allowedTtl
                                                          : options.authorization.deniedTtl) = *ttl;
  } else if (name == "delegated-reviews-per-second" || name == "delegated-reviews-max-waiting") {
    double number = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || end != value.data() + value.size() || number < 0 ||
        (name == "delegated-reviews-max-waiting" && (number < 1 || number > 1e6))) {
      return core::Status::badRequest(fmt::format("--{}: invalid number {:?}", name, value));
    }
    if (name == "delegated-reviews-per-second") {
      options.reviewLimits.reviewsPerSecond = number;
      options.reviewLimits.burst = std::max(1, static_cast<int>(2 * number));
    } else {
      options.reviewLimits.maxWaiting = static_cast<size_t>(number);
    }
  } else if (name == "authorization-always-allow-paths") {
    options.authorization.alwaysAllowPaths = splitList(value);
  } else {
    return false;
  }
  return true;
}

core::Result<std::vector<std::string>> parseDelegationFlags(const std::vector<std::string>& args,
                                                            DelegationOptions& options) {
  core::FlagCallbacks flags;
  flags.apply = [&options](std::string_view name, std::string_view value) {
    return applyDelegationFlag(options, name, value);
  };
  flags.isBoolean = isBooleanDelegationFlag;
  // The serving listener reads the CA files too.
  flags.passOn = [](std::string_view name) {
    return name == "client-ca-file" || name == "requestheader-client-ca-file";
  };
  return core::applyFlags(args, flags);
}

std::string delegationFlagsUsage() {
  return R"(      --lister-kubeconfig string     kubeconfig for listing and watching objects (default in-cluster)
      --client-qps float             client-side requests per second to the Kubernetes API (default 5)
      --client-burst int             client-side burst (default 10)
      --authentication-kubeconfig string   kubeconfig for TokenReviews (default in-cluster)
      --authentication-token-webhook-cache-ttl duration   TokenReview cache (default 10s)
      --authentication-skip-lookup   do not read kube-system/extension-apiserver-authentication
      --authentication-tolerate-lookup-failure   start even if that ConfigMap cannot be read
      --client-ca-file string        CA bundle for x509 client certificates
      --requestheader-client-ca-file string   CA bundle for front-proxy client certificates
      --requestheader-allowed-names strings   front-proxy certificate CNs accepted (default any)
      --requestheader-username-headers strings   (default x-remote-user)
      --requestheader-group-headers strings      (default x-remote-group)
      --requestheader-extra-headers-prefix strings   (default x-remote-extra-)
      --authorization-kubeconfig string   kubeconfig for SubjectAccessReviews (default in-cluster)
      --authorization-webhook-cache-authorized-ttl duration     (default 10s)
      --authorization-webhook-cache-unauthorized-ttl duration   (default 10s)
      --authorization-always-allow-paths strings   (default /healthz,/readyz,/livez)
      --delegated-reviews-per-second float   TokenReviews + SubjectAccessReviews started per
                                     second, burst twice that; beyond: 429 (default 100, 0 = no limit)
      --delegated-reviews-max-waiting int    requests waiting for reviews at once; beyond: 429
                                     (default 256)
)";
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
