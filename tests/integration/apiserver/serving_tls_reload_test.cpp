// HttpsServer with a reloadable ServingTls on a loopback port: after a swap, connections opened
// before it keep their certificate and CA list, new ones get the new serving certificate and are
// asked for certificates of the new CAs, and client certificates of the new CA verify.
#include <gtest/gtest.h>

#include <mutex>

#include "fakes/test_pki.h"
#include "gpuscale/apiserver/https_server.h"
#include "gpuscale/apiserver/serving_tls.h"
#include "support/tls_client.h"

namespace gpuscale::apiserver {
namespace serving_tls_reload_test {

using testing::ClientCertificate;
using testing::TlsClient;

HttpResponse whoAmI(const HttpRequest& request) {
  HttpResponse response;
  response.contentType = "text/plain";
  response.body = !request.peer            ? "no certificate"
                  : request.peer->verified ? "verified " + request.peer->commonName
                                           : "unverified " + request.peer->commonName;
  return response;
}

std::string withoutStamp(const std::string& name) { return name.substr(0, name.find('@')); }

ClientCertificate clientOf(const testing::TestCertificate& ca, const std::string& cn) {
  testing::CertificateSpec spec;
  spec.commonName = cn;
  const auto cert = testing::makeCertificate(spec, &ca);
  return {cert.certificatePem, cert.privateKeyPem};
}

TEST(ServingTlsReloadTest, NewConnectionsUseTheNewContextOpenOnesKeepTheirs) {
  const auto before = generateSelfSignedCertificate("before", {}, {"127.0.0.1"});
  const auto after = generateSelfSignedCertificate("after", {}, {"127.0.0.1"});
  ASSERT_TRUE(before.ok() && after.ok());
  const auto oldCa = testing::makeCa("old-front-proxy-ca");
  const auto newCa = testing::makeCa("new-front-proxy-ca");

  std::mutex mu;
  TlsConfig material;
  material.certificateChainPem = before->certificateChainPem;
  material.privateKeyPem = before->privateKeyPem;
  material.clientCaPems = {oldCa.certificatePem};
  auto tls = ServingTls::create([&]() -> core::Result<TlsConfig> {
    std::lock_guard lock(mu);
    return material;
  });
  ASSERT_TRUE(tls.ok()) << tls.status().toString();
  ServerOptions options;
  options.bindAddress = "127.0.0.1";
  options.securePort = 0;
  HttpsServer server(options, *tls, whoAmI);
  ASSERT_TRUE(server.start().ok());

  TlsClient opened(server.securePort(), clientOf(oldCa, "front-proxy-client"));
  EXPECT_EQ(withoutStamp(opened.serverCommonName()), "before");
  EXPECT_EQ(opened.acceptableClientCaNames(), std::vector<std::string>{"old-front-proxy-ca"});
  EXPECT_EQ(opened.get("/")->body, "verified front-proxy-client");

  {
    std::lock_guard lock(mu);
    material.certificateChainPem = after->certificateChainPem;
    material.privateKeyPem = after->privateKeyPem;
    material.clientCaPems = {newCa.certificatePem};
  }
  ASSERT_TRUE((*tls)->reload().ok());

  // The keep-alive connection from before the swap is untouched.
  auto reply = opened.get("/");
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->body, "verified front-proxy-client");

  TlsClient fresh(server.securePort(), clientOf(newCa, "front-proxy-client"));
  EXPECT_EQ(withoutStamp(fresh.serverCommonName()), "after");
  EXPECT_EQ(fresh.acceptableClientCaNames(), std::vector<std::string>{"new-front-proxy-ca"});
  EXPECT_EQ(fresh.get("/")->body, "verified front-proxy-client");

  // A certificate of the replaced CA still completes the handshake (the authenticator decides),
  // but no longer verifies.
  TlsClient stale(server.securePort(), clientOf(oldCa, "front-proxy-client"));
  EXPECT_EQ(stale.get("/")->body, "unverified front-proxy-client");
  TlsClient anonymous(server.securePort());
  EXPECT_EQ(anonymous.get("/")->body, "no certificate");
  server.shutdown(std::chrono::seconds(5));
}

}  // namespace serving_tls_reload_test
}  // namespace gpuscale::apiserver
