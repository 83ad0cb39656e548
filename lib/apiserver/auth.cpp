#include "gpuscale/apiserver/auth.h"

#include "gpuscale/core/go_quote.h"

namespace gpuscale::apiserver {

std::optional<core::Result<UserInfo>> Authenticator::authenticateWithoutWaiting(
    const HttpRequest& /*request*/) {
  return std::nullopt;
}

std::optional<core::Result<AuthorizationDecision>> Authorizer::authorizeWithoutWaiting(
    const UserInfo& /*user*/, const RequestInfo& /*info*/) {
  return std::nullopt;
}

core::Result<UserInfo> AllowAllAuthenticator::authenticate(const HttpRequest& /*request*/) {
  return UserInfo{"system:anonymous", "", {"system:unauthenticated"}, {}};
}

core::Result<AuthorizationDecision> AllowAllAuthorizer::authorize(const UserInfo& /*user*/,
                                                                  const RequestInfo& /*info*/) {
  return AuthorizationDecision{true, ""};
}

core::Status forbiddenStatus(const UserInfo& user, const RequestInfo& info,
                             std::string_view reason) {
  using core::goQuote;
  std::string message;
  if (!info.isResourceRequest) {
    message = "User " + goQuote(user.name) + " cannot " + info.verb + " path " + goQuote(info.path);
  } else {
    std::string resource = info.resource;
    if (!info.subresource.empty()) resource += "/" + info.subresource;
    message = "User " + goQuote(user.name) + " cannot " + info.verb + " resource " +
              goQuote(resource) + " in API group " + goQuote(info.apiGroup);
    message += info.namespaceName.empty() ? " at the cluster scope"
                                          : " in the namespace " + goQuote(info.namespaceName);
  }
  if (!reason.empty()) message += ": " + std::string(reason);

  core::StatusDetails details;
  const std::string group = info.isResourceRequest ? info.apiGroup : "";
  const std::string kind = info.isResourceRequest ? info.resource : "";
  details.group = group;
  details.kind = kind;
  details.name = info.name;
  if (group.empty() && kind.empty()) {
    message = "forbidden: " + message;
  } else {
    const std::string qualified = group.empty() ? kind : kind + "." + group;
    message = info.name.empty()
                  ? qualified + " is forbidden: " + message
                  : qualified + " " + goQuote(info.name) + " is forbidden: " + message;
  }
  return core::Status::forbidden(std::move(message), std::move(details));
}

}  // namespace gpuscale::apiserver
