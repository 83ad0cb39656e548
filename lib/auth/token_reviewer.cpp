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

TokenReviewer::Answer answerOf(const core::Result<kube::Object>& response);

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
                             std::shared_ptr<ReviewCacheMetrics> metrics,
                             std::shared_ptr<ReviewLimiter> limiter)
    : client_(std::move(client)),
      cache_(
          [&] {
            CachedReviewOptions options;
            options.review = Review::kToken;
            options.passedTtl = ttl;
            options.failedTtl = ttl;
            options.limiter = std::move(limiter);
            options.metrics = std::move(metrics);
            return options;
          }(),
          [](const std::optional<apiserver::UserInfo>& user) { return user.has_value(); }) {}

TokenReviewer::Answer TokenReviewer::review(const std::string& token) {
  return waitFor<Answer>([&](std::function<void(Answer)> done) { reviewAsync(token, done); });
}

void TokenReviewer::reviewAsync(const std::string& token, std::function<void(Answer)> done) {
  const auto send = [&](std::function<void(Answer)> answered) {
    const kube::Object request = {{"apiVersion", "authentication.k8s.io/v1"},
                                  {"kind", "TokenReview"},
                                  {"spec", {{"token", token}}}};
    client_->createAsync(
        kube::ResourceRef::collection("authentication.k8s.io", "v1", "tokenreviews"), request,
        [answered = std::move(answered)](core::Result<kube::Object> response) {
          answered(answerOf(response));
        });
  };
  cache_.get(sha256(token), send, std::move(done));
}

namespace {

TokenReviewer::Answer answerOf(const core::Result<kube::Object>& response) {
  if (!response) {
    spdlog::warn("TokenReview failed: {}", response.status().toString());
    return response.status().withContext("TokenReview failed");
  }
  const kube::Object status = response->value("status", kube::Object::object());
  if (!status.is_object() || !status.value("authenticated", false)) {
    return std::optional<apiserver::UserInfo>();
  }
  auto user = userFromObject(status.value("user", kube::Object::object()));
  if (user.name.empty()) {
    return core::Status::internal("TokenReview authenticated a token without a username");
  }
  return std::optional<apiserver::UserInfo>(std::move(user));
}

}  // namespace

}  // namespace gpuscale::auth
