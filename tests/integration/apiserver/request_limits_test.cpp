// Every HTTPS server of the project against the request-limit table
// (support/request_limit_cases.h): the adapter's HttpsServer on its TLS port and its plain /metrics
// listener, and the reconciler's auth::SecureStatusServer. For each limit, a request at it is
// served and the connection kept; one byte over and a megabyte over are answered 431/413 and the
// connection closed; the server serves the next connection either way (before the request parser, a
// header field of 64 KiB ended the process).
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "fakes/fake_kube_client.h"
#include "gpuscale/apiserver/certificates.h"
#include "gpuscale/apiserver/https_server.h"
#include "gpuscale/apiserver/plain_http_listener.h"
#include "gpuscale/apiserver/serving_tls.h"
#include "gpuscale/auth/delegating_authenticator.h"
#include "gpuscale/auth/delegating_authorizer.h"
#include "gpuscale/auth/secure_status_server.h"
#include "support/request_limit_cases.h"
#include "support/tls_client.h"

namespace gpuscale::apiserver {
namespace request_limits_test {

using namespace std::chrono_literals;
using testing::ClientOptions;
using testing::TlsClient;

// A running server: where to connect, and how.
struct Target {
  uint16_t port = 0;
  bool tls = true;
  std::function<void()> stop;
  bool keepAlive = true;  // false: one request per connection (PlainHttpListener)
};

HttpResponse healthOnly(const HttpRequest& request) {
  HttpResponse response;
  response.status = request.path == "/healthz" ? 200 : 404;
  response.body = "ok";
  return response;
}

ServerOptions loopback() {
  ServerOptions options;
  options.bindAddress = "127.0.0.1";
  options.securePort = 0;
  options.certDir.clear();
  options.requestReadTimeout = 10s;
  options.shutdownTimeout = 1s;
  return options;
}

// The adapter's server (its TLS port, or with `plain` its /metrics listener).
Target startHttpsServer(bool plain) {
  ServerOptions options = loopback();
  options.metricsBindAddress = "127.0.0.1:0";
  static const auto generated = generateServingCertificate();
  auto tls = loadServingTls(options, &*generated);
  if (!tls.ok()) ADD_FAILURE() << tls.status().toString();
  auto server = std::make_shared<HttpsServer>(options, std::move(*tls), healthOnly, healthOnly);
  const auto started = server->start();
  if (!started.ok()) ADD_FAILURE() << started.toString();
  return {plain ? server->plainPort() : server->securePort(), !plain,
          [server] { server->shutdown(1s); }};
}

// The reconciler's status server, with the delegated authentication and authorization it runs with
// (probes need neither a TokenReview nor a SubjectAccessReview).
Target startSecureStatusServer() {
  auto kube = std::make_shared<testing::FakeKubeClient>();
  auth::DelegatedAuth auth;
  auth.config = std::make_shared<auth::AuthenticationConfigSource>(auth::AuthenticationConfig{});
  auth.authenticator = std::make_shared<auth::DelegatingAuthenticator>(auth.config, nullptr);
  auth.authorizer = std::make_shared<auth::DelegatingAuthorizer>(kube, auth::AuthorizerOptions{});
  auto started = auth::SecureStatusServer::start(loopback(), auth::StatusPages{}, std::move(auth));
  if (!started.ok()) {
    ADD_FAILURE() << started.status().toString();
    return {};
  }
  std::shared_ptr<auth::SecureStatusServer> server = std::move(*started);
  return {server->port(), true, [server] { server->stop(); }};
}

// The listener of the reconciler's probes and the emulator's endpoints.
Target startPlainHttpListener() {
  auto started = PlainHttpListener::start("127.0.0.1", 0, [](std::string_view path) {
    return core::PlainHttpReply{path == "/healthz" ? 200 : 404, "text/plain", "ok"};
  });
  if (!started.ok()) {
    ADD_FAILURE() << started.status().toString();
    return {};
  }
  std::shared_ptr<PlainHttpListener> listener = std::move(*started);
  return {listener->port(), false, [listener] { listener->stop(); }, false};
}

class RequestLimitsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string& which = GetParam();
    if (which == "adapter_tls") target_ = startHttpsServer(false);
    if (which == "adapter_plain") target_ = startHttpsServer(true);
    if (which == "secure_status") target_ = startSecureStatusServer();
    if (which == "probe_listener") target_ = startPlainHttpListener();
    ASSERT_NE(target_.port, 0);
  }
  void TearDown() override {
    if (target_.stop) target_.stop();
  }

  std::unique_ptr<TlsClient> connect() const {
    ClientOptions options;
    options.tls = target_.tls;
    return std::make_unique<TlsClient>(target_.port, options);
  }

  Target target_;
};

TEST_P(RequestLimitsTest, EachLimitAtItOneByteOverAndAMegabyteOver) {
  for (const auto& row : testing::requestLimitCases(RequestLimits{})) {
    auto client = connect();
    client->send(row.bytes);  // may fail half-way once the server answered and closed
    auto reply = client->readReply(30s);
    ASSERT_TRUE(reply) << row.name;
    EXPECT_EQ(reply->status, row.status) << row.name;
    if (row.status == 200 && !target_.keepAlive) {
      EXPECT_TRUE(reply->closeRequested) << row.name;
    } else if (row.status == 200) {
      EXPECT_FALSE(reply->closeRequested) << row.name;
      auto again = client->get("/healthz");
      ASSERT_TRUE(again) << row.name << ": the connection was not kept";
      EXPECT_EQ(again->status, 200) << row.name;
    } else {
      EXPECT_TRUE(reply->closeRequested) << row.name;
      client->shutdownSending();  // the server drains what is left, then closes
      EXPECT_TRUE(client->closedByPeer(30s)) << row.name;
    }
    // The server goes on.
    auto after = connect()->get("/healthz");
    ASSERT_TRUE(after) << "after " << row.name;
    EXPECT_EQ(after->status, 200) << "after " << row.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Servers, RequestLimitsTest,
                         ::testing::Values("adapter_tls", "adapter_plain", "secure_status",
                                           "probe_listener"));

}  // namespace request_limits_test
}  // namespace gpuscale::apiserver
