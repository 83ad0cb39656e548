#include "gpuscale/auth/delegating_authenticator.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <strings.h>

#include <algorithm>

#include "gpuscale/core/percent_encoding.h"

namespace gpuscale::auth {
namespace {

using apiserver::HttpRequest;
using apiserver::UserInfo;

bool startsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         strncasecmp(text.data(), prefix.data(), prefix.size()) == 0;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// url.PathUnescape: %XX decoded; a malformed escape leaves the key as it was.
std::string pathUnescape(std::string_view text) {
  return core::percentDecode(text, false).value_or(std::string(text));
}

void addAuthenticatedGroup(UserInfo& user) {
  if (std::find(user.groups.begin(), user.groups.end(), "system:authenticated") ==
      user.groups.end()) {
    user.groups.push_back("system:authenticated");
  }
}

std::optional<std::string> bearerToken(const HttpRequest& request) {
  const auto header = request.header("Authorization");
  if (!header) return std::nullopt;
  std::string_view value = *header;
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (!startsWithIgnoreCase(value, "bearer ")) return std::nullopt;
  value.remove_prefix(7);
  while (!value.empty() && (value.front() == ' ' || value.back() == ' ')) {
    value.front() == ' ' ? value.remove_prefix(1) : value.remove_suffix(1);
  }
  if (value.empty()) return std::nullopt;
  return std::string(value);
}

bool hasCertificate(const HttpRequest& request) {
  return request.peer != nullptr && !request.peer->chainDer.empty();
}

}  // namespace

core::Result<std::optional<UserInfo>> authenticateRequestHeader(const RequestHeaderConfig& config,
                                                                const HttpRequest& request) {
  if (!config.ca || !hasCertificate(request)) return std::optional<UserInfo>();
  auto identity = config.ca->verify(*request.peer);
  if (!identity) {
    return core::Status::unauthorized(
        fmt::format("front-proxy certificate: {}", identity.status().message()));
  }
  if (!config.allowedNames.empty() &&
      std::find(config.allowedNames.begin(), config.allowedNames.end(), identity->commonName) ==
          config.allowedNames.end()) {
    return core::Status::unauthorized(fmt::format(
        "front-proxy certificate CN {:?} is not in the allowed names", identity->commonName));
  }
  UserInfo user;
  for (const auto& header : config.usernameHeaders) {
    for (const auto value : request.headerValues(header)) {
      if (!value.empty()) {
        user.name = value;
        break;
      }
    }
    if (!user.name.empty()) break;
  }
  if (user.name.empty()) return std::optional<UserInfo>();
  for (const auto& header : config.groupHeaders) {
    for (const auto value : request.headerValues(header)) {
      if (!value.empty()) user.groups.emplace_back(value);
    }
  }
  for (const auto& [name, value] : request.headers) {
    for (const auto& prefix : config.extraHeaderPrefixes) {
      if (prefix.empty() || !startsWithIgnoreCase(name, prefix)) continue;
      const std::string key = pathUnescape(lower(std::string_view(name).substr(prefix.size())));
      if (!key.empty()) user.extra[key].push_back(value);
      break;
    }
  }
  return std::optional<UserInfo>(std::move(user));
}

DelegatingAuthenticator::DelegatingAuthenticator(std::shared_ptr<AuthenticationConfigSource> config,
                                                 std::shared_ptr<TokenReviewer> tokens)
    : config_(std::move(config)), tokens_(std::move(tokens)) {}

// What the certificates decided, and the bearer token still to be reviewed, if any.
struct DelegatingAuthenticator::Progress {
  std::optional<UserInfo> user;
  std::vector<core::Status> failures;
  std::optional<std::string> token;
  bool certificate = false;
  std::string remoteAddress;
};

DelegatingAuthenticator::Progress DelegatingAuthenticator::withoutReview(
    const HttpRequest& request) const {
  const auto config = config_->current();
  Progress progress;
  progress.certificate = hasCertificate(request);
  progress.remoteAddress = request.remoteAddress;

  auto proxied = authenticateRequestHeader(config->requestHeader, request);
  if (!proxied) {
    progress.failures.push_back(proxied.status());
  } else if (proxied->has_value()) {
    progress.user = std::move(**proxied);
    return progress;
  }

  if (config->clientCa && progress.certificate) {
    auto identity = config->clientCa->verify(*request.peer);
    if (identity) {
      progress.user = UserInfo{identity->commonName, "", identity->organizations, {}};
      return progress;
    }
    progress.failures.push_back(identity.status());
  }

  if (auto token = bearerToken(request)) {
    if (!tokens_) {
      progress.failures.push_back(core::Status::unauthorized("bearer tokens are not accepted"));
    } else {
      progress.token = std::move(*token);
    }
  }
  return progress;
}

core::Result<UserInfo> DelegatingAuthenticator::conclude(Progress progress,
                                                         const TokenReviewer::Answer* reviewed) {
  if (reviewed != nullptr) {
    if (!*reviewed) {
      // Too many reviews: the caller is told to come back, not that it is unknown.
      if (reviewed->status().httpCode() == 429) return reviewed->status();
      progress.failures.push_back(reviewed->status());
    } else if ((*reviewed)->has_value()) {
      progress.user = **reviewed;
    } else {
      progress.failures.push_back(core::Status::unauthorized("invalid bearer token"));
    }
  }
  if (progress.user) {
    addAuthenticatedGroup(*progress.user);
    return std::move(*progress.user);
  }
  if (progress.failures.empty() && !progress.certificate) {
    return UserInfo{"system:anonymous", "", {"system:unauthenticated"}, {}};
  }
  if (progress.failures.empty()) {
    // A certificate that no configured authenticator could judge is a credential, not anonymity.
    progress.failures.push_back(
        core::Status::unauthorized("client certificate presented but not accepted"));
  }
  // Debug only: a flood of bad credentials must not become a flood of log lines (the requests are
  // counted in gpuscale_apiserver_requests_total{route="unauthenticated"}).
  for (const auto& failure : progress.failures) {
    spdlog::debug("authentication failed from {}: {}", progress.remoteAddress, failure.message());
  }
  return core::Status::unauthorized();
}

core::Result<UserInfo> DelegatingAuthenticator::authenticate(const HttpRequest& request) {
  Progress progress = withoutReview(request);
  if (progress.user || !progress.token) return conclude(std::move(progress), nullptr);
  const auto reviewed = tokens_->review(*progress.token);
  return conclude(std::move(progress), &reviewed);
}

void DelegatingAuthenticator::authenticateAsync(const HttpRequest& request,
                                                std::chrono::steady_clock::time_point /*deadline*/,
                                                std::function<void(core::Result<UserInfo>)> done) {
  Progress progress = withoutReview(request);
  if (progress.user || !progress.token) return done(conclude(std::move(progress), nullptr));
  const std::string token = *progress.token;
  // The review is not waited for here: the server answers 504 at the deadline, and the answer,
  // when it comes, is cached for the caller's next request.
  tokens_->reviewAsync(token, [progress = std::move(progress),
                               done = std::move(done)](TokenReviewer::Answer reviewed) mutable {
    done(conclude(std::move(progress), &reviewed));
  });
}

}  // namespace gpuscale::auth
