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

DelegatingAuthorizer::DelegatingAuthorizer(std::shared_ptr<kube::KubeClient> client,
                                           AuthorizerOptions options)
    : client_(std::move(client)),
      options_(std::move(options)),
      cache_(options_.cacheSize, options_.clock) {}

core::Result<apiserver::AuthorizationDecision> DelegatingAuthorizer::authorize(
    const apiserver::UserInfo& user, const apiserver::RequestInfo& info) {
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

  const std::string key = reviewCacheKey(user, info);
  auto cached = cache_.get(key);
  if (options_.metrics) options_.metrics->lookup(Review::kSubjectAccess, cached.has_value());
  if (cached) return *cached;

  const auto review = subjectAccessReview(user, info);
  auto response = client_->create(
      kube::ResourceRef::collection("authorization.k8s.io", "v1", "subjectaccessreviews"),
      kube::Object::parse(review.dump()));
  if (!response) {
    spdlog::warn("SubjectAccessReview for {:?} failed: {}", user.name,
                 response.status().toString());
    return core::Status::internal(
        fmt::format("unable to authorize the request: SubjectAccessReview failed: {}",
                    response.status().message()));
  }
  const auto status = response->value("status", kube::Object::object());
  if (!status.is_object() || !status.contains("allowed") || !status["allowed"].is_boolean()) {
    return core::Status::internal(
        "unable to authorize the request: SubjectAccessReview answer has no status.allowed");
  }
  apiserver::AuthorizationDecision decision{status["allowed"].get<bool>(),
                                            status.value("reason", "")};
  cache_.put(key, decision, decision.allowed ? options_.allowedTtl : options_.deniedTtl);
  return decision;
}

}  // namespace gpuscale::auth
