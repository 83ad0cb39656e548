#include "gpuscale/auth/delegating_authorizer.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "fakes/fake_kube_client.h"

namespace gpuscale::auth {
namespace delegating_authorizer_test {

using apiserver::parseRequestInfo;
using apiserver::QueryParams;
using apiserver::UserInfo;
using testing::FakeKubeClient;

apiserver::RequestInfo infoFor(const std::string& path) {
  return parseRequestInfo("GET", path, QueryParams());
}

struct Fixture {
  std::shared_ptr<FakeKubeClient> kube = std::make_shared<FakeKubeClient>();
  std::vector<kube::Object> reviews;
  DelegatingAuthorizer authorizer;

  explicit Fixture(AuthorizerOptions options = {}) : authorizer(kube, options) {
    // RBAC stand-in: "hpa" may get custom metrics, nobody else may do anything.
    kube->setCreateHook("subjectaccessreviews", [this](const kube::Object& review) {
      reviews.push_back(review);
      kube::Object answer = review;
      const auto& spec = review["spec"];
      const bool allowed = spec["user"] == "hpa" && spec.contains("resourceAttributes") &&
                           spec["resourceAttributes"]["group"] == "custom.metrics.k8s.io";
      answer["status"] = {{"allowed", allowed}};
      if (!allowed) answer["status"]["reason"] = "no RBAC policy matched";
      return core::Result<kube::Object>(answer);
    });
  }
};

TEST(DelegatingAuthorizerTest, ResourceRequestSendsExactAttributes) {
  Fixture f;
  const UserInfo hpa{"hpa", "uid-7", {"system:authenticated"}, {{"scopes", {"a"}}}};
  auto decision = f.authorizer.authorize(
      hpa, infoFor("/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/http_requests"));
  ASSERT_TRUE(decision.ok());
  EXPECT_TRUE(decision->allowed);
  ASSERT_EQ(f.reviews.size(), 1u);
  EXPECT_EQ(f.reviews[0]["spec"], kube::Object::parse(R"({
    "resourceAttributes": {"namespace": "default", "verb": "get", "group": "custom.metrics.k8s.io",
      "version": "v1beta2", "resource": "pods", "subresource": "http_requests", "name": "*"},
    "user": "hpa", "groups": ["system:authenticated"], "extra": {"scopes": ["a"]}, "uid": "uid-7"})"));
  EXPECT_EQ(f.reviews[0]["kind"], "SubjectAccessReview");
  EXPECT_EQ(f.reviews[0]["apiVersion"], "authorization.k8s.io/v1");
}

TEST(DelegatingAuthorizerTest, ExternalAndNonResourceAttributes) {
  Fixture f;
  const UserInfo user{"u", "", {}, {}};
  ASSERT_TRUE(
      f.authorizer
          .authorize(user,
                     infoFor("/apis/external.metrics.k8s.io/v1beta1/namespaces/ns/queue_depth"))
          .ok());
  ASSERT_TRUE(f.authorizer.authorize(user, infoFor("/apis/custom.metrics.k8s.io/v1beta1")).ok());
  ASSERT_EQ(f.reviews.size(), 2u);
  const auto& external = f.reviews[0]["spec"]["resourceAttributes"];
  EXPECT_EQ(external["verb"], "list");
  EXPECT_EQ(external["resource"], "queue_depth");
  EXPECT_EQ(external["namespace"], "ns");
  EXPECT_EQ(external["name"], "");
  EXPECT_EQ(
      f.reviews[1]["spec"]["nonResourceAttributes"],
      kube::Object::parse(R"({"path": "/apis/custom.metrics.k8s.io/v1beta1", "verb": "get"})"));
}

struct ShortcutCase {
  const char* what;
  UserInfo user;
  std::string path;
  bool allowed;
  size_t reviews;
};

class ShortcutTest : public ::testing::TestWithParam<ShortcutCase> {};

TEST_P(ShortcutTest, Decides) {
  const auto& c = GetParam();
  AuthorizerOptions options;
  options.alwaysAllowPaths = {"/healthz", "/readyz", "/livez", "/debug/*"};
  Fixture f(options);
  auto decision = f.authorizer.authorize(c.user, infoFor(c.path));
  ASSERT_TRUE(decision.ok()) << c.what;
  EXPECT_EQ(decision->allowed, c.allowed) << c.what;
  EXPECT_EQ(f.reviews.size(), c.reviews) << c.what;
}

const UserInfo kAnonymous{"system:anonymous", "", {"system:unauthenticated"}, {}};
const UserInfo kMaster{"system:kube-aggregator", "", {"system:masters"}, {}};

INSTANTIATE_TEST_SUITE_P(
    Cases, ShortcutTest,
    ::testing::Values(
        ShortcutCase{"system:masters bypasses review", kMaster,
                     "/apis/custom.metrics.k8s.io/v1beta1/namespaces/x/pods/*/m", true, 0},
        ShortcutCase{"/healthz always allowed", kAnonymous, "/healthz", true, 0},
        ShortcutCase{"/livez always allowed", kAnonymous, "/livez", true, 0},
        ShortcutCase{"/readyz always allowed", kAnonymous, "/readyz", true, 0},
        ShortcutCase{"/healthz/ping is not an exact match", kAnonymous, "/healthz/ping", false, 1},
        ShortcutCase{"trailing * is a prefix", kAnonymous, "/debug/pprof", true, 0},
        ShortcutCase{"/metrics needs a review", kAnonymous, "/metrics", false, 1},
        ShortcutCase{"discovery needs a review", kAnonymous, "/apis", false, 1}));

TEST(DelegatingAuthorizerTest, DenialCarriesReasonAndIsCached) {
  Fixture f;
  const UserInfo user{"mallory", "", {"system:authenticated"}, {}};
  const auto info = infoFor("/apis/custom.metrics.k8s.io/v1beta1/namespaces/a/pods/*/m");
  for (int i = 0; i < 3; ++i) {
    auto decision = f.authorizer.authorize(user, info);
    ASSERT_TRUE(decision.ok());
    EXPECT_FALSE(decision->allowed);
    EXPECT_EQ(decision->reason, "no RBAC policy matched");
  }
  EXPECT_EQ(f.reviews.size(), 1u);
  const auto forbidden = apiserver::forbiddenStatus(user, info, "");
  EXPECT_EQ(forbidden.toKubernetesJson().dump(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
            R"("pods.custom.metrics.k8s.io \"*\" is forbidden: User \"mallory\" cannot get )"
            R"(resource \"pods/m\" in API group \"custom.metrics.k8s.io\" in the namespace \"a\"",)"
            R"("reason":"Forbidden","details":{"name":"*","group":"custom.metrics.k8s.io",)"
            R"("kind":"pods"},"code":403})");
}

TEST(DelegatingAuthorizerTest, ZeroTtlDisablesTheCache) {
  AuthorizerOptions options;
  options.allowedTtl = std::chrono::milliseconds(0);
  Fixture f(options);
  const UserInfo hpa{"hpa", "", {}, {}};
  const auto info = infoFor("/apis/custom.metrics.k8s.io/v1beta1/namespaces/a/pods/*/m");
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(f.authorizer.authorize(hpa, info)->allowed);
  EXPECT_EQ(f.reviews.size(), 2u);
}

// Allowed and denied answers each live for their own TTL on the cache's clock; hits and misses are
// counted.
TEST(DelegatingAuthorizerTest, AnswersExpireAfterTheirTtlAndLookupsAreCounted) {
  struct Case {
    const char* what;
    const char* user;
    int advanceSeconds;  // between the first and the second request
    size_t reviews;      // SubjectAccessReviews sent for both requests
  };
  const Case cases[] = {
      {"an allowed answer is reused within its TTL", "hpa", 9, 1},
      {"an allowed answer is asked again after its TTL", "hpa", 10, 2},
      {"a denied answer is reused within its shorter TTL", "mallory", 4, 1},
      {"a denied answer is asked again after its shorter TTL", "mallory", 5, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto now = std::chrono::steady_clock::time_point{};
    auto registry = std::make_shared<prometheus::Registry>();
    AuthorizerOptions options;
    options.allowedTtl = std::chrono::seconds(10);
    options.deniedTtl = std::chrono::seconds(5);
    options.clock = [&now] { return now; };
    options.metrics = std::make_shared<ReviewCacheMetrics>(registry);
    Fixture f(options);
    const UserInfo user{c.user, "", {}, {}};
    const auto info = infoFor("/apis/custom.metrics.k8s.io/v1beta1/namespaces/a/pods/*/m");
    ASSERT_TRUE(f.authorizer.authorize(user, info).ok());
    now += std::chrono::seconds(c.advanceSeconds);
    ASSERT_TRUE(f.authorizer.authorize(user, info).ok());
    EXPECT_EQ(f.reviews.size(), c.reviews);
    const std::string text = prometheus::TextSerializer().Serialize(registry->Collect());
    const size_t hits = 2 - c.reviews;
    EXPECT_NE(text.find("gpuscale_auth_review_cache_lookups_total{result=\"hit\",review=\"subject_"
                        "access\"} " +
                        std::to_string(hits)),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("gpuscale_auth_review_cache_lookups_total{result=\"miss\",review=\"subject_"
                        "access\"} " +
                        std::to_string(c.reviews)),
              std::string::npos)
        << text;
  }
}

// The cache key tells apart every two requests whose reviews differ, however fields are split.
TEST(DelegatingAuthorizerTest, CacheKeysDifferWhenReviewsDiffer) {
  const auto resource = infoFor("/apis/custom.metrics.k8s.io/v1beta1/namespaces/a/pods/*/m");
  const auto other = infoFor("/apis/custom.metrics.k8s.io/v1beta1/namespaces/b/pods/*/m");
  const auto path = infoFor("/metrics");
  struct Case {
    const char* what;
    UserInfo userA;
    apiserver::RequestInfo infoA;
    UserInfo userB;
    apiserver::RequestInfo infoB;
    bool same;
  };
  const UserInfo hpa{"hpa", "u", {"g1", "g2"}, {{"k", {"v"}}}};
  const Case cases[] = {
      {"identical requests share a key", hpa, resource, hpa, resource, true},
      {"another namespace", hpa, resource, hpa, other, false},
      {"a non-resource path", hpa, resource, hpa, path, false},
      {"groups split differently",
       {"hpa", "u", {"g1,g2"}, {}},
       resource,
       {"hpa", "u", {"g1", "g2"}, {}},
       resource,
       false},
      {"a group moved into the name",
       {"hpag", "u", {}, {}},
       resource,
       {"hpa", "u", {"g"}, {}},
       resource,
       false},
      {"extra values split differently",
       {"hpa", "", {}, {{"k", {"a", "b"}}}},
       resource,
       {"hpa", "", {}, {{"k", {"ab"}}}},
       resource,
       false},
      {"another uid", hpa, resource, {"hpa", "v", {"g1", "g2"}, {{"k", {"v"}}}}, resource, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(reviewCacheKey(c.userA, c.infoA) == reviewCacheKey(c.userB, c.infoB), c.same);
  }
}

TEST(DelegatingAuthorizerTest, ReviewFailureFailsClosedAndIsNotCached) {
  Fixture f;
  const UserInfo hpa{"hpa", "", {}, {}};
  const auto info = infoFor("/apis/custom.metrics.k8s.io/v1beta1/namespaces/a/pods/*/m");
  f.kube->failNext("create", core::Status::timeout("timed out talking to the Kubernetes API"));
  auto failed = f.authorizer.authorize(hpa, info);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().httpCode(), 500);
  EXPECT_EQ(failed.status().reason(), "InternalError");
  EXPECT_NE(failed.status().message().find("SubjectAccessReview failed"), std::string::npos);
  auto retried = f.authorizer.authorize(hpa, info);
  ASSERT_TRUE(retried.ok());
  EXPECT_TRUE(retried->allowed);
}

TEST(DelegatingAuthorizerTest, MalformedAnswerFailsClosed) {
  Fixture f;
  f.kube->setCreateHook("subjectaccessreviews", [](const kube::Object&) {
    return core::Result<kube::Object>(kube::Object{{"status", {{"allowed", "yes"}}}});
  });
  auto decision = f.authorizer.authorize(
      {"hpa", "", {}, {}}, infoFor("/apis/custom.metrics.k8s.io/v1beta1/namespaces/a/pods/*/m"));
  ASSERT_FALSE(decision.ok());
  EXPECT_EQ(decision.status().httpCode(), 500);
}

TEST(DelegatingAuthorizerTest, NoClientDeniesWhatNeedsAReview) {
  DelegatingAuthorizer authorizer(nullptr, {});
  auto decision = authorizer.authorize(kAnonymous, infoFor("/apis"));
  ASSERT_TRUE(decision.ok());
  EXPECT_FALSE(decision->allowed);
  EXPECT_TRUE(authorizer.authorize(kAnonymous, infoFor("/healthz"))->allowed);
}

}  // namespace delegating_authorizer_test
}  // namespace gpuscale::auth
