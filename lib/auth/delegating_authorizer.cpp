#include "gpuscale/auth/delegating_authorizer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace gpuscale::auth {
namespace {

bool pathAllowed(const std::vector<std::string>& patterns, std::string_view path) {
  return std::any_of(patterns.begin(), patterns.end(), [path](const std::string& pattern) {
    if (!pattern.empty() && pattern.back() == '*') {
      return path.substr(0, pattern.size() - 1) ==
             std::string_view(pattern).substr(0, pattern.size() - 1);
    }
    return path == pattern;
  });
}

// Appends `value` length-prefixed, so that no two different field lists give the same key.
void appendField(std::string& key, std::string_view value) {
  key += std::to_string(value.size());
  key += ':';
  key += value;
}

}  // namespace

std::string reviewCacheKey(const apiserver::UserInfo& user, const apiserver::RequestInfo& info) {
  std::string key;
  key.reserve(256);
  if (info.isResourceRequest) {
    for (std::string_view field :
         {std::string_view("resource"), std::string_view(info.namespaceName),
          std::string_view(info.verb), std::string_view(info.apiGroup),
          std::string_view(info.apiVersion), std::string_view(info.resource),
          std::string_view(info.subresource), std::string_view(info.name)}) {
      appendField(key, field);
    }
  } else {
    for (std::string_view field :
         {std::string_view("path"), std::string_view(info.path), std::string_view(info.verb)}) {
      appendField(key, field);
    }
  }
  appendField(key, user.name);
  appendField(key, user.uid);
  appendField(key, std::to_string(user.groups.size()));
  for (const auto& group : user.groups) appendField(key, group);
  appendField(key, std::to_string(user.extra.size()));
  for (const auto& [name, values] : user.extra) {
    appendField(key, name);
    appendField(key, std::to_string(values.size()));
    for (const auto& value : values) appendField(key, value);
  }
  return key;
}

nlohmann::ordered_json subjectAccessReview(const apiserver::UserInfo& user,
                                           const apiserver::RequestInfo& info) {
  nlohmann::ordered_json spec;
  if (info.isResourceRequest) {
    spec["resourceAttributes"] = {{"namespace", info.namespaceName},
                                  {"verb", info.verb},
                                  {"group", info.apiGroup},
                                  {"version", info.apiVersion},
                                  {"resource", info.resource},
                                  {"subresource", info.subresource},
                                  {"name", info.name}};
  } else {
    spec["nonResourceAttributes"] = {{"path", info.path}, {"verb", info.verb}};
  }
  spec["user"] = user.name;
  spec["groups"] = user.groups;
  if (!user.extra.empty()) spec["extra"] = user.extra;
  spec["uid"] = user.uid;
  return {{"apiVersion", "authorization.k8s.io/v1"},
          {"kind", "SubjectAccessReview"},
          {"spec", std::move(spec)}};
}

namespace {

core::Result<apiserver::AuthorizationDecision> decisionOf(
    const std::string& userName, const core::Result<kube::Object>& response) {
  if (!response) {
    spdlog::warn("SubjectAccessReview for {:?} failed: {}", userName, response.status().toString());
    return core::Status::internal(
        fmt::format("unable to authorize the request: SubjectAccessReview failed: {}",
                    response.status().message()));
  }
  const auto status = response->value("status", kube::Object::object());
  if (!status.is_object() || !status.contains("allowed") || !status["allowed"].is_boolean()) {
    return core::Status::internal(
        "unable to authorize the request: SubjectAccessReview answer has no status.allowed");
  }
  return apiserver::AuthorizationDecision{status["allowed"].get<bool>(),
                                          status.value("reason", "")};
}

CachedReviewOptions cacheOptions(const AuthorizerOptions& options) {
  CachedReviewOptions out;
  out.review = Review::kSubjectAccess;
  out.passedTtl = options.allowedTtl;
  out.failedTtl = options.deniedTtl;
  out.passedEntries = options.cacheSize;
  out.failedEntries = options.cacheSize;
  out.limiter = options.limiter;
  out.metrics = options.metrics;
  out.clock = options.clock;
  return out;
}

}  // namespace

DelegatingAuthorizer::DelegatingAuthorizer(std::shared_ptr<kube::KubeClient> client,
                                           AuthorizerOptions options)
    : client_(std::move(client)),
      options_(std::move(options)),
      cache_(cacheOptions(options_),
             [](const apiserver::AuthorizationDecision& decision) { return decision.allowed; }) {}

std::optional<apiserver::AuthorizationDecision> DelegatingAuthorizer::withoutReview(
    const apiserver::UserInfo& user, const apiserver::RequestInfo& info) const {
  for (const auto& group : user.groups) {
    if (std::find(options_.alwaysAllowGroups.begin(), options_.alwaysAllowGroups.end(), group) !=
        options_.alwaysAllowGroups.end()) {
      return apiserver::AuthorizationDecision{true, ""};
    }
  }
  if (!info.isResourceRequest && pathAllowed(options_.alwaysAllowPaths, info.path)) {
    return apiserver::AuthorizationDecision{true, ""};
  }
  if (!client_) return apiserver::AuthorizationDecision{false, ""};
  return std::nullopt;
}

core::Result<apiserver::AuthorizationDecision> DelegatingAuthorizer::authorize(
    const apiserver::UserInfo& user, const apiserver::RequestInfo& info) {
  return waitFor<core::Result<apiserver::AuthorizationDecision>>(
      [&](std::function<void(core::Result<apiserver::AuthorizationDecision>)> done) {
        authorizeAsync(user, info, std::chrono::steady_clock::time_point::max(), std::move(done));
      });
}

void DelegatingAuthorizer::authorizeAsync(
    const apiserver::UserInfo& user, const apiserver::RequestInfo& info,
    std::chrono::steady_clock::time_point /*deadline*/,
    std::function<void(core::Result<apiserver::AuthorizationDecision>)> done) {
  if (auto decided = withoutReview(user, info)) return done(*decided);
  const auto send =
      [&](std::function<void(core::Result<apiserver::AuthorizationDecision>)> answered) {
        const auto review = subjectAccessReview(user, info);
        client_->createAsync(
            kube::ResourceRef::collection("authorization.k8s.io", "v1", "subjectaccessreviews"),
            kube::Object::parse(review.dump()),
            [name = user.name, answered = std::move(answered)](
                core::Result<kube::Object> response) { answered(decisionOf(name, response)); });
      };
  cache_.get(reviewCacheKey(user, info), send, std::move(done));
}

}  // namespace gpuscale::auth
