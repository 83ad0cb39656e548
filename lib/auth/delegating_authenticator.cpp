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

core::Result<UserInfo> DelegatingAuthenticator::authenticate(const HttpRequest& request) {
  const auto config = config_->current();
  std::vector<core::Status> failures;

  auto proxied = authenticateRequestHeader(config->requestHeader, request);
  if (!proxied) {
    failures.push_back(proxied.status());
  } else if (proxied->has_value()) {
    UserInfo user = std::move(**proxied);
    addAuthenticatedGroup(user);
    return user;
  }

  if (config->clientCa && hasCertificate(request)) {
    auto identity = config->clientCa->verify(*request.peer);
    if (identity) {
      UserInfo user{identity->commonName, "", identity->organizations, {}};
      addAuthenticatedGroup(user);
      return user;
    }
    failures.push_back(identity.status());
  }

  if (auto token = bearerToken(request)) {
    if (!tokens_) {
      failures.push_back(core::Status::unauthorized("bearer tokens are not accepted"));
    } else if (auto reviewed = tokens_->review(*token); !reviewed) {
      failures.push_back(reviewed.status());
    } else if (reviewed->has_value()) {
      UserInfo user = std::move(**reviewed);
      addAuthenticatedGroup(user);
      return user;
    } else {
      failures.push_back(core::Status::unauthorized("invalid bearer token"));
    }
  }

  if (failures.empty() && !hasCertificate(request)) {
    return UserInfo{"system:anonymous", "", {"system:unauthenticated"}, {}};
  }
  if (failures.empty()) {
    // A certificate that no configured authenticator could judge is a credential, not anonymity.
    failures.push_back(core::Status::unauthorized("client certificate presented but not accepted"));
  }
  for (const auto& failure : failures) {
    spdlog::info("authentication failed from {}: {}", request.remoteAddress, failure.message());
  }
  return core::Status::unauthorized();
}

}  // namespace gpuscale::auth
