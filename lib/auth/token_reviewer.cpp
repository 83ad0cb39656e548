#include "gpuscale/auth/token_reviewer.h"

#include <openssl/sha.h>
#include <spdlog/spdlog.h>

namespace gpuscale::auth {
namespace {

std::string sha256(const std::string& text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  return std::string(reinterpret_cast<char*>(digest), sizeof digest);
}

std::vector<std::string> stringList(const kube::Object& value) {
  std::vector<std::string> out;
  if (!value.is_array()) return out;
  for (const auto& item : value) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

apiserver::UserInfo userFromObject(const kube::Object& user) {
  apiserver::UserInfo info;
  if (!user.is_object()) return info;
  info.name = user.value("username", "");
  info.uid = user.value("uid", "");
  info.groups = stringList(user.value("groups", kube::Object::array()));
  if (const auto extra = user.find("extra"); extra != user.end() && extra->is_object()) {
    for (const auto& [key, values] : extra->items()) info.extra[key] = stringList(values);
  }
  return info;
}

TokenReviewer::TokenReviewer(std::shared_ptr<kube::KubeClient> client,
                             std::chrono::milliseconds ttl,
                             std::shared_ptr<ReviewCacheMetrics> metrics)
    : client_(std::move(client)), ttl_(ttl), metrics_(std::move(metrics)) {}

core::Result<std::optional<apiserver::UserInfo>> TokenReviewer::review(const std::string& token) {
  const std::string key = sha256(token);
  auto cached = cache_.get(key);
  if (metrics_) metrics_->lookup(Review::kToken, cached.has_value());
  if (cached) return *cached;
  const kube::Object request = {{"apiVersion", "authentication.k8s.io/v1"},
                                {"kind", "TokenReview"},
                                {"spec", {{"token", token}}}};
  auto response = client_->create(
      kube::ResourceRef::collection("authentication.k8s.io", "v1", "tokenreviews"), request);
  if (!response) {
    spdlog::warn("TokenReview failed: {}", response.status().toString());
    return response.status().withContext("TokenReview failed");
  }
  const kube::Object status = response->value("status", kube::Object::object());
  std::optional<apiserver::UserInfo> answer;
  if (status.value("authenticated", false)) {
    answer = userFromObject(status.value("user", kube::Object::object()));
    if (answer->name.empty()) {
      return core::Status::internal("TokenReview authenticated a token without a username");
    }
  }
  cache_.put(key, answer, ttl_);
  return answer;
}

}  // namespace gpuscale::auth
