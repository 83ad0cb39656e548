#include "gpuscale/auth/delegating_authenticator.h"

#include <gtest/gtest.h>

#include "fakes/deferred_kube_client.h"
#include "fakes/fake_kube_client.h"
#include "fakes/test_pki.h"

namespace gpuscale::auth {
namespace delegating_authenticator_test {

using apiserver::HttpRequest;
using apiserver::PeerCertificates;
using testing::CertificateSpec;
using testing::FakeKubeClient;
using testing::makeCa;
using testing::makeCertificate;
using testing::TestCertificate;

struct Pki {
  TestCertificate frontProxyCa = makeCa("front-proxy-ca");
  TestCertificate clientCa = makeCa("client-ca");
  TestCertificate otherCa = makeCa("other-ca");

  TestCertificate cert(const std::string& cn, const TestCertificate& issuer,
                       std::vector<std::string> orgs = {},
                       std::chrono::seconds notAfter = std::chrono::seconds(3600),
                       bool clientAuth = true) {
    CertificateSpec spec;
    spec.commonName = cn;
    spec.organizations = std::move(orgs);
    spec.notAfter = notAfter;
    spec.clientAuth = clientAuth;
    return makeCertificate(spec, &issuer);
  }
};

Pki& pki() {
  static Pki instance;
  return instance;
}

enum class Cert {
  kNone,
  kProxy,
  kProxyWrongCn,
  kProxyExpired,
  kProxyWrongCa,
  kProxyServerOnly,
  kUser,
  kUserExpired,
  kGarbage
};

std::shared_ptr<const PeerCertificates> peerFor(Cert which) {
  static const std::map<Cert, TestCertificate> certs = {
      {Cert::kProxy, pki().cert("front-proxy-client", pki().frontProxyCa)},
      {Cert::kProxyWrongCn, pki().cert("intruder", pki().frontProxyCa)},
      {Cert::kProxyExpired,
       pki().cert("front-proxy-client", pki().frontProxyCa, {}, std::chrono::seconds(-60))},
      {Cert::kProxyWrongCa, pki().cert("front-proxy-client", pki().otherCa)},
      {Cert::kProxyServerOnly,
       pki().cert("front-proxy-client", pki().frontProxyCa, {}, std::chrono::seconds(3600), false)},
      {Cert::kUser, pki().cert("alice", pki().clientCa, {"dev", "ops"})},
      {Cert::kUserExpired, pki().cert("alice", pki().clientCa, {}, std::chrono::seconds(-60))},
  };
  if (which == Cert::kNone) return nullptr;
  auto peer = std::make_shared<PeerCertificates>();
  // The server's own verdict says "verified" for every case: the authenticator must not trust it.
  peer->verified = true;
  peer->commonName = "front-proxy-client";
  peer->chainDer = {which == Cert::kGarbage ? std::string("not a certificate")
                                            : certs.at(which).certificateDer};
  return peer;
}

std::shared_ptr<DelegatingAuthenticator> makeAuthenticator(
    std::shared_ptr<FakeKubeClient> kube, std::shared_ptr<kube::KubeClient> reviews = nullptr,
    std::shared_ptr<ReviewLimiter> limiter = nullptr) {
  AuthenticationConfig config;
  config.clientCa = *CaBundle::fromPem(pki().clientCa.certificatePem);
  config.requestHeader.ca = *CaBundle::fromPem(pki().frontProxyCa.certificatePem);
  config.requestHeader.allowedNames = {"front-proxy-client"};
  kube->setCreateHook("tokenreviews", [](const kube::Object& review) -> core::Result<kube::Object> {
    const std::string token = review["spec"]["token"];
    if (token == "down") return core::Status::unavailable("connection refused");
    kube::Object answer = review;
    answer["status"] = {{"authenticated", token == "good"}};
    if (token == "good") {
      answer["status"]["user"] = {{"username", "system:serviceaccount:ns:sa"},
                                  {"uid", "u-1"},
                                  {"groups", {"system:serviceaccounts"}},
                                  {"extra", {{"authentication.kubernetes.io/pod-name", {"p"}}}}};
    }
    return answer;
  });
  return std::make_shared<DelegatingAuthenticator>(
      std::make_shared<AuthenticationConfigSource>(config),
      std::make_shared<TokenReviewer>(reviews ? reviews : kube, std::chrono::seconds(10), nullptr,
                                      std::move(limiter)));
}

struct Case {
  const char* what;
  Cert cert;
  std::vector<apiserver::Header> headers;
  int code;  // 200 or 401
  std::string user;
  std::vector<std::string> groups;
};

class AuthenticateTest : public ::testing::TestWithParam<Case> {};

TEST_P(AuthenticateTest, Decides) {
  const Case& c = GetParam();
  auto kube = std::make_shared<FakeKubeClient>();
  auto authenticator = makeAuthenticator(kube);
  HttpRequest request;
  request.method = "GET";
  request.path = "/apis/custom.metrics.k8s.io/v1beta1";
  request.headers = c.headers;
  request.peer = peerFor(c.cert);
  auto user = authenticator->authenticate(request);
  if (c.code == 401) {
    ASSERT_FALSE(user.ok()) << c.what << " let through as " << user->name;
    EXPECT_EQ(user.status().httpCode(), 401);
    EXPECT_EQ(user.status().reason(), "Unauthorized");
    EXPECT_EQ(user.status().message(), "Unauthorized");  // Kubernetes' body; the cause is logged
    return;
  }
  ASSERT_TRUE(user.ok()) << c.what << ": " << user.status().toString();
  EXPECT_EQ(user->name, c.user) << c.what;
  EXPECT_EQ(user->groups, c.groups) << c.what;
}

const std::vector<apiserver::Header> kForged = {{"X-Remote-User", "admin"},
                                                {"X-Remote-Group", "system:masters"}};

INSTANTIATE_TEST_SUITE_P(
    Cases, AuthenticateTest,
    ::testing::Values(
        Case{"no credentials is anonymous",
             Cert::kNone,
             {},
             200,
             "system:anonymous",
             {"system:unauthenticated"}},
        Case{"forged X-Remote-* without a certificate are ignored",
             Cert::kNone,
             kForged,
             200,
             "system:anonymous",
             {"system:unauthenticated"}},
        Case{"forged X-Remote-* with a client-CA certificate: the certificate's user",
             Cert::kUser,
             kForged,
             200,
             "alice",
             {"dev", "ops", "system:authenticated"}},
        Case{"front proxy with allowed CN vouches for the headers",
             Cert::kProxy,
             {{"X-Remote-User", "bob"},
              {"X-Remote-Group", "g1"},
              {"x-remote-group", "g2"},
              {"X-Remote-Group", ""}},
             200,
             "bob",
             {"g1", "g2", "system:authenticated"}},
        Case{"front proxy CN not in allowed names", Cert::kProxyWrongCn, kForged, 401, "", {}},
        Case{"front proxy certificate expired", Cert::kProxyExpired, kForged, 401, "", {}},
        Case{"front proxy certificate from another CA", Cert::kProxyWrongCa, kForged, 401, "", {}},
        Case{"front proxy certificate without clientAuth usage",
             Cert::kProxyServerOnly,
             kForged,
             401,
             "",
             {}},
        Case{"front proxy certificate without X-Remote-User is not a user",
             Cert::kProxy,
             {},
             401,
             "",
             {}},
        Case{"garbage certificate bytes", Cert::kGarbage, kForged, 401, "", {}},
        Case{"client certificate: CN and O",
             Cert::kUser,
             {},
             200,
             "alice",
             {"dev", "ops", "system:authenticated"}},
        Case{"expired client certificate", Cert::kUserExpired, {}, 401, "", {}},
        Case{"valid bearer token",
             Cert::kNone,
             {{"Authorization", "Bearer good"}},
             200,
             "system:serviceaccount:ns:sa",
             {"system:serviceaccounts", "system:authenticated"}},
        Case{"bearer token wins over forged headers",
             Cert::kNone,
             {{"Authorization", "Bearer good"}, {"X-Remote-User", "admin"}},
             200,
             "system:serviceaccount:ns:sa",
             {"system:serviceaccounts", "system:authenticated"}},
        Case{"rejected bearer token", Cert::kNone, {{"Authorization", "Bearer bad"}}, 401, "", {}},
        Case{"TokenReview endpoint down fails closed",
             Cert::kNone,
             {{"Authorization", "Bearer down"}},
             401,
             "",
             {}},
        Case{"expired client certificate with a good token: the token",
             Cert::kUserExpired,
             {{"Authorization", "Bearer good"}},
             200,
             "system:serviceaccount:ns:sa",
             {"system:serviceaccounts", "system:authenticated"}}));

TEST(RequestHeaderTest, ExtraHeadersAreLowercasedAndUnescaped) {
  RequestHeaderConfig config;
  config.ca = *CaBundle::fromPem(pki().frontProxyCa.certificatePem);
  HttpRequest request;
  request.peer = peerFor(Cert::kProxy);
  request.headers = {{"X-Remote-User", "bob"},
                     {"X-Remote-Extra-Scopes", "a"},
                     {"x-remote-extra-scopes", "b"},
                     {"X-Remote-Extra-Example.com%2fKey", "v"}};
  auto user = authenticateRequestHeader(config, request);
  ASSERT_TRUE(user.ok());
  ASSERT_TRUE(user->has_value());
  const auto& extra = (*user)->extra;
  EXPECT_EQ(extra.at("scopes"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(extra.at("example.com/key"), (std::vector<std::string>{"v"}));
}

TEST(TokenReviewerTest, CachesAnswersButNotErrors) {
  auto kube = std::make_shared<FakeKubeClient>();
  auto authenticator = makeAuthenticator(kube);
  HttpRequest good;
  good.headers = {{"Authorization", "Bearer good"}};
  HttpRequest down;
  down.headers = {{"Authorization", "Bearer down"}};
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(authenticator->authenticate(good).ok());
  EXPECT_EQ(kube->calls("create"), 1);
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(authenticator->authenticate(down).ok());
  EXPECT_EQ(kube->calls("create"), 4);
}

TEST(TokenReviewerTest, UnavailableApiFailsClosed) {
  auto kube = std::make_shared<FakeKubeClient>();
  kube->failNext("create", core::Status::timeout("timed out talking to the Kubernetes API"));
  TokenReviewer reviewer(kube, std::chrono::seconds(10));
  auto answer = reviewer.review("good");
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().httpCode(), 504);
}

TEST(DelegatingAuthenticatorTest, AsynchronousReviewsAreNotWaitedFor) {
  auto fake = std::make_shared<FakeKubeClient>();
  auto deferred = std::make_shared<testing::DeferredKubeClient>(fake);
  auto authenticator = makeAuthenticator(fake, deferred);
  std::vector<core::Result<apiserver::UserInfo>> answers;
  const auto record = [&](core::Result<apiserver::UserInfo> user) { answers.push_back(user); };
  const auto deadline = std::chrono::steady_clock::time_point::max();
  HttpRequest good;
  good.headers = {{"Authorization", "Bearer good"}};
  HttpRequest junk;
  junk.headers = {{"Authorization", "Bearer junk"}};

  authenticator->authenticateAsync(good, deadline, record);
  authenticator->authenticateAsync(junk, deadline, record);
  EXPECT_TRUE(answers.empty());  // both wait for kube-apiserver, on nobody's thread
  EXPECT_EQ(deferred->pending(), 2u);
  // A client certificate needs no review: answered before the call returns.
  HttpRequest withCertificate;
  withCertificate.peer = peerFor(Cert::kUser);
  authenticator->authenticateAsync(withCertificate, deadline, record);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0]->name, "alice");

  deferred->answerAll();
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(answers[1]->name, "system:serviceaccount:ns:sa");
  EXPECT_EQ(answers[2].status().httpCode(), 401);
  // Both answers are cached: valid and invalid tokens alike come back at once.
  authenticator->authenticateAsync(good, deadline, record);
  authenticator->authenticateAsync(junk, deadline, record);
  EXPECT_EQ(answers.size(), 5u);
  EXPECT_EQ(deferred->pending(), 0u);
}

TEST(DelegatingAuthenticatorTest, AReviewTheLimiterRefusesIs429NotUnauthorized) {
  auto fake = std::make_shared<FakeKubeClient>();
  auto deferred = std::make_shared<testing::DeferredKubeClient>(fake);
  auto authenticator =
      makeAuthenticator(fake, deferred, std::make_shared<ReviewLimiter>(ReviewLimits{0, 1, 2, 0}));
  std::vector<core::Result<apiserver::UserInfo>> answers;
  const auto record = [&](core::Result<apiserver::UserInfo> user) { answers.push_back(user); };
  for (int i = 0; i < 3; ++i) {
    HttpRequest junk;
    junk.headers = {{"Authorization", "Bearer junk-" + std::to_string(i)}};
    authenticator->authenticateAsync(junk, std::chrono::steady_clock::time_point::max(), record);
  }
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].status().httpCode(), 429);
  deferred->answerAll();
  EXPECT_EQ(answers.size(), 3u);
}

}  // namespace delegating_authenticator_test
}  // namespace gpuscale::auth
