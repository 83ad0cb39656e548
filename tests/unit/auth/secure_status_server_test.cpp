#include "gpuscale/auth/secure_status_server.h"

#include <gtest/gtest.h>
#include <prometheus/counter.h>

#include <atomic>

#include "fakes/fake_kube_client.h"
#include "gpuscale/auth/delegating_authenticator.h"
#include "gpuscale/auth/delegating_authorizer.h"
#include "gpuscale/auth/token_reviewer.h"
#include "support/tls_client.h"

namespace gpuscale::auth {
namespace secure_status_server_test {

using testing::FakeKubeClient;
using testing::TlsClient;

// kube-apiserver stand-in: the token "scraper" is system:serviceaccount:monitoring:prometheus, who
// RBAC lets get /metrics only; the token "operator" may get /metrics, /plan and /leader; any other
// token is not authenticated.
class SecureStatusServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kube_->setCreateHook("tokenreviews", [this](const kube::Object& review) {
      ++tokenReviews_;
      const std::string token = review["spec"]["token"];
      kube::Object answer = review;
      const bool known = token == "scraper" || token == "operator";
      answer["status"] = {{"authenticated", known}};
      if (known) {
        answer["status"]["user"] = {
            {"username",
             token == "scraper" ? "system:serviceaccount:monitoring:prometheus" : "operator"},
            {"groups", {"system:authenticated"}}};
      }
      return core::Result<kube::Object>(answer);
    });
    kube_->setCreateHook("subjectaccessreviews", [this](const kube::Object& review) {
      ++accessReviews_;
      const auto& spec = review["spec"];
      const std::string user = spec["user"];
      bool allowed = false;
      if (spec.contains("nonResourceAttributes") &&
          spec["nonResourceAttributes"]["verb"] == "get") {
        const std::string path = spec["nonResourceAttributes"]["path"];
        allowed =
            (user == "system:serviceaccount:monitoring:prometheus" && path == "/metrics") ||
            (user == "operator" && (path == "/metrics" || path == "/plan" || path == "/leader"));
      }
      kube::Object answer = review;
      answer["status"] = {{"allowed", allowed}};
      return core::Result<kube::Object>(answer);
    });

    DelegatedAuth auth;
    auth.config = std::make_shared<AuthenticationConfigSource>(AuthenticationConfig{});
    auth.authenticator = std::make_shared<DelegatingAuthenticator>(
        auth.config, std::make_shared<TokenReviewer>(kube_, std::chrono::seconds(10)));
    auth.authorizer = std::make_shared<DelegatingAuthorizer>(kube_, AuthorizerOptions{});

    auto registry = std::make_shared<prometheus::Registry>();
    prometheus::BuildCounter()
        .Name("gpuscale_reconciler_test_total")
        .Help("a family of the program")
        .Register(*registry)
        .Add({})
        .Increment();
    StatusPages pages;
    pages.registry = registry;
    pages.routes["/plan"] = [](const apiserver::HttpRequest&, const apiserver::QueryParams&,
                               const apiserver::UserInfo&) {
      apiserver::HttpResponse response;
      response.contentType = "application/json";
      response.body = R"({"actions":[]})";
      return response;
    };
    apiserver::ServerOptions server;
    server.bindAddress = "127.0.0.1";
    server.securePort = 0;
    server.certDir.clear();  // generated in memory
    server.shutdownTimeout = std::chrono::seconds(1);
    auto started = SecureStatusServer::start(server, std::move(pages), std::move(auth));
    ASSERT_TRUE(started.ok()) << started.status().message();
    server_ = std::move(*started);
  }

  apiserver::HttpResponse get(const std::string& path, const std::string& token = "") {
    TlsClient client(server_->port());
    auto reply = client.get(path, token.empty() ? "" : "Authorization: Bearer " + token + "\r\n");
    apiserver::HttpResponse out;
    if (!reply) return out;
    out.status = reply->status;
    out.body = reply->body;
    return out;
  }

  std::shared_ptr<FakeKubeClient> kube_ = std::make_shared<FakeKubeClient>();
  std::atomic<int> tokenReviews_{0};
  std::atomic<int> accessReviews_{0};
  std::unique_ptr<SecureStatusServer> server_;
};

TEST_F(SecureStatusServerTest, ProbesNeedNoCredentialsAndNoReview) {
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    EXPECT_EQ(get(path).status, 200) << path;
  }
  EXPECT_EQ(tokenReviews_.load(), 0);
  EXPECT_EQ(accessReviews_.load(), 0);
}

TEST_F(SecureStatusServerTest, AnonymousCallersAreForbidden) {
  for (const char* path : {"/plan", "/metrics"}) {
    const auto reply = get(path);
    EXPECT_EQ(reply.status, 403) << path;
    EXPECT_NE(reply.body.find("system:anonymous"), std::string::npos) << reply.body;
    EXPECT_EQ(reply.body.find("actions"), std::string::npos);
  }
}

TEST_F(SecureStatusServerTest, RejectedTokenIsUnauthorized) {
  EXPECT_EQ(get("/plan", "stolen").status, 401);
  EXPECT_EQ(get("/metrics", "stolen").status, 401);
}

TEST_F(SecureStatusServerTest, EachPathIsAuthorizedForTheCaller) {
  const auto metrics = get("/metrics", "scraper");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("gpuscale_reconciler_test_total 1"), std::string::npos)
      << metrics.body;
  const auto plan = get("/plan", "scraper");
  EXPECT_EQ(plan.status, 403);
  EXPECT_NE(plan.body.find(R"(cannot get path \"/plan\")"), std::string::npos) << plan.body;

  const auto allowed = get("/plan", "operator");
  EXPECT_EQ(allowed.status, 200);
  EXPECT_EQ(allowed.body, R"({"actions":[]})");
}

TEST_F(SecureStatusServerTest, ReviewsAreCached) {
  ASSERT_EQ(get("/metrics", "scraper").status, 200);
  const int tokens = tokenReviews_.load();
  const int accesses = accessReviews_.load();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(get("/metrics", "scraper").status, 200);
  EXPECT_EQ(tokenReviews_.load(), tokens);
  EXPECT_EQ(accessReviews_.load(), accesses);
}

}  // namespace secure_status_server_test
}  // namespace gpuscale::auth
