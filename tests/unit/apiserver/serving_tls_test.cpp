#include "gpuscale/apiserver/serving_tls.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <prometheus/registry.h>

#include <boost/asio/ssl/context.hpp>
#include <mutex>

#include "fakes/test_pki.h"
#include "support/wait_until.h"

namespace gpuscale::apiserver {
namespace serving_tls_test {

GeneratedCertificate generate(const std::string& host) {
  auto generated = generateSelfSignedCertificate(host, {host}, {"127.0.0.1"});
  EXPECT_TRUE(generated.ok()) << generated.status().toString();
  return *generated;
}

// The CN of the CA that signed a generated pair is "<host>-ca@<time>"; tests compare prefixes.
std::vector<std::string> clientCaNames(const boost::asio::ssl::context& context) {
  std::vector<std::string> names;
  const STACK_OF(X509_NAME)* list =
      SSL_CTX_get_client_CA_list(const_cast<boost::asio::ssl::context&>(context).native_handle());
  for (int i = 0; list != nullptr && i < sk_X509_NAME_num(list); ++i) {
    char text[256] = {};
    X509_NAME_get_text_by_NID(sk_X509_NAME_value(list, i), NID_commonName, text, sizeof text);
    const std::string name = text;
    names.push_back(name.substr(0, name.find('@')));
  }
  return names;
}

std::string servingCommonName(const boost::asio::ssl::context& context) {
  X509* cert =
      SSL_CTX_get0_certificate(const_cast<boost::asio::ssl::context&>(context).native_handle());
  char text[256] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, text, sizeof text);
  const std::string name = text;
  return name.substr(0, name.find('@'));
}

// What the loader returns; the test changes it between reloads (the poller reads it concurrently).
class Material {
 public:
  void set(core::Result<TlsConfig> next) {
    std::lock_guard lock(mu_);
    config_ = std::move(next);
  }
  TlsConfigLoader loader() {
    return [this] {
      std::lock_guard lock(mu_);
      return config_;
    };
  }

 private:
  std::mutex mu_;
  core::Result<TlsConfig> config_ = TlsConfig{};
};

TlsConfig config(const GeneratedCertificate& serving, std::vector<std::string> clientCas) {
  TlsConfig tls;
  tls.certificateChainPem = serving.certificateChainPem;
  tls.privateKeyPem = serving.privateKeyPem;
  tls.clientCaPems = std::move(clientCas);
  return tls;
}

double sample(prometheus::Registry& registry, const std::string& name,
              const std::string& result = "") {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) {
      const bool matches =
          result.empty() || (!metric.label.empty() && metric.label.front().value == result);
      if (!matches) continue;
      return family.type == prometheus::MetricType::Counter ? metric.counter.value
                                                            : metric.gauge.value;
    }
  }
  return -1;
}

TEST(ServingTlsTest, NewClientCasGiveANewContextAndTheOldOneStaysIntact) {
  const auto serving = generate("server");
  const auto frontProxy = generate("front-proxy");
  const auto rotated = generate("rotated");
  const auto clients = generate("clients");
  Material material;
  material.set(config(serving, {frontProxy.caPem, clients.caPem}));
  auto tls = ServingTls::create(material.loader());
  ASSERT_TRUE(tls.ok()) << tls.status().toString();
  const auto first = (*tls)->current();
  EXPECT_EQ((*tls)->generation(), 1u);
  EXPECT_EQ(clientCaNames(*first), (std::vector<std::string>{"front-proxy-ca", "clients-ca"}));

  material.set(config(serving, {rotated.caPem, clients.caPem}));
  ASSERT_TRUE((*tls)->reload().ok());
  const auto second = (*tls)->current();
  EXPECT_EQ((*tls)->generation(), 2u);
  EXPECT_NE(first, second);
  EXPECT_EQ(clientCaNames(*second), (std::vector<std::string>{"rotated-ca", "clients-ca"}));
  // A connection accepted before the swap holds `first`: still usable, still the old list.
  EXPECT_EQ(clientCaNames(*first), (std::vector<std::string>{"front-proxy-ca", "clients-ca"}));
  EXPECT_EQ((*tls)->currentConfig().clientCaPems,
            (std::vector<std::string>{rotated.caPem, clients.caPem}));

  // Nothing changed: no rebuild.
  ASSERT_TRUE((*tls)->reload().ok());
  EXPECT_EQ((*tls)->generation(), 2u);
  EXPECT_EQ((*tls)->current(), second);
}

TEST(ServingTlsTest, ServingCertificateRotationGivesANewContext) {
  const auto before = generate("before");
  const auto after = generate("after");
  Material material;
  material.set(config(before, {}));
  auto tls = ServingTls::create(material.loader());
  ASSERT_TRUE(tls.ok());
  EXPECT_EQ(servingCommonName(*(*tls)->current()), "before");
  material.set(config(after, {}));
  ASSERT_TRUE((*tls)->reload().ok());
  EXPECT_EQ(servingCommonName(*(*tls)->current()), "after");
}

TEST(ServingTlsTest, ExpiryMetricFollowsTheCertificateInUse) {
  const auto ca = testing::makeCa("ca");
  const auto pair = [&](std::chrono::hours validFor) {
    testing::CertificateSpec spec;
    spec.commonName = "server";
    spec.clientAuth = false;
    spec.notAfter = validFor;
    const auto leaf = testing::makeCertificate(spec, &ca);
    TlsConfig tls;
    tls.certificateChainPem = leaf.certificatePem;
    tls.privateKeyPem = leaf.privateKeyPem;
    return tls;
  };
  const auto expiresIn = [](double timestamp) {
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    return std::chrono::round<std::chrono::hours>(std::chrono::duration<double>(timestamp - now));
  };
  auto registry = std::make_shared<prometheus::Registry>();
  Material material;
  material.set(pair(std::chrono::hours(24 * 30)));
  auto tls = ServingTls::create(material.loader(), registry);
  ASSERT_TRUE(tls.ok()) << tls.status().toString();
  const std::string name = "gpuscale_serving_certificate_expiry_timestamp_seconds";
  EXPECT_EQ(expiresIn(sample(*registry, name)), std::chrono::hours(24 * 30));
  // A rotated certificate: the metric follows. A rejected one (key of another pair): it does not.
  material.set(pair(std::chrono::hours(24 * 365)));
  ASSERT_TRUE((*tls)->reload().ok());
  EXPECT_EQ(expiresIn(sample(*registry, name)), std::chrono::hours(24 * 365));
  TlsConfig mismatched = pair(std::chrono::hours(48));
  mismatched.privateKeyPem = pair(std::chrono::hours(48)).privateKeyPem;
  material.set(mismatched);
  EXPECT_FALSE((*tls)->reload().ok());
  EXPECT_EQ(expiresIn(sample(*registry, name)), std::chrono::hours(24 * 365));
}

struct BadMaterialCase {
  const char* what;
  std::function<core::Result<TlsConfig>(const GeneratedCertificate& good,
                                        const GeneratedCertificate& other)>
      make;
};

TEST(ServingTlsTest, BadMaterialKeepsTheContextInUseAndIsCounted) {
  const auto good = generate("good");
  const auto other = generate("other");
  const std::vector<BadMaterialCase> cases = {
      {"a client CA bundle that is not PEM",
       [](const auto& g, const auto&) { return config(g, {"not a certificate"}); }},
      {"a client CA bundle with a broken PEM body",
       [](const auto& g, const auto&) {
         return config(g, {"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"});
       }},
      {"a key that does not match the certificate (half-written rotation)",
       [](const auto& g, const auto& o) {
         TlsConfig tls = config(g, {});
         tls.privateKeyPem = o.privateKeyPem;
         return tls;
       }},
      {"a certificate file that is empty",
       [](const auto& g, const auto&) {
         TlsConfig tls = config(g, {});
         tls.certificateChainPem.clear();
         return tls;
       }},
      {"the loader fails (unreadable file, rejected ConfigMap)",
       [](const auto&, const auto&) -> core::Result<TlsConfig> {
         return core::Status::invalid("cannot read /rotated/tls.crt");
       }},
  };
  auto registry = std::make_shared<prometheus::Registry>();
  Material material;
  material.set(config(good, {other.caPem}));
  auto tls = ServingTls::create(material.loader(), registry);
  ASSERT_TRUE(tls.ok());
  const auto inUse = (*tls)->current();
  double failures = 0;
  for (const auto& c : cases) {
    material.set(c.make(good, other));
    EXPECT_FALSE((*tls)->reload().ok()) << c.what;
    EXPECT_EQ((*tls)->current(), inUse) << c.what;
    EXPECT_EQ((*tls)->generation(), 1u) << c.what;
    EXPECT_EQ(sample(*registry, "gpuscale_serving_tls_reloads_total", "failure"), ++failures)
        << c.what;
    EXPECT_EQ(sample(*registry, "gpuscale_serving_tls_last_reload_successful"), 0) << c.what;
  }
  material.set(config(good, {}));
  ASSERT_TRUE((*tls)->reload().ok());
  EXPECT_EQ((*tls)->generation(), 2u);
  EXPECT_EQ(sample(*registry, "gpuscale_serving_tls_reloads_total", "success"), 1);
  EXPECT_EQ(sample(*registry, "gpuscale_serving_tls_last_reload_successful"), 1);
}

TEST(ServingTlsTest, FirstLoadErrorsAreStartUpErrors) {
  Material material;
  material.set(core::Status::invalid("--tls-cert-file: cannot read x"));
  EXPECT_FALSE(ServingTls::create(material.loader()).ok());
  material.set(config(generate("x"), {"junk"}));
  EXPECT_FALSE(ServingTls::create(material.loader()).ok());
}

// Serves "server" with no client CA while polling every `period`, then announces the CA of
// `caHost` (asking for a reload at once when `requestReload`); the client CA names once the poller
// has loaded the change (empty if it did not within 30 s).
std::vector<std::string> clientCasAfterAnnouncing(const std::string& caHost,
                                                  std::chrono::milliseconds period,
                                                  bool requestReload) {
  const auto serving = generate("server");
  Material material;
  material.set(config(serving, {}));
  auto tls = ServingTls::create(material.loader());
  EXPECT_TRUE(tls.ok());
  if (!tls.ok()) return {};
  (*tls)->startPolling(period);
  material.set(config(serving, {generate(caHost).caPem}));
  if (requestReload) (*tls)->requestReload();
  const bool loaded =
      testing::waitUntil([&] { return (*tls)->generation() == 2; }, std::chrono::seconds(30));
  EXPECT_TRUE(loaded);
  (*tls)->stopPolling();
  return loaded ? clientCaNames(*(*tls)->current()) : std::vector<std::string>{};
}

TEST(ServingTlsTest, RequestReloadWakesThePoller) {
  EXPECT_EQ(clientCasAfterAnnouncing("announced", std::chrono::hours(1), true),
            (std::vector<std::string>{"announced-ca"}));
}

TEST(ServingTlsTest, PollingNoticesChangesByItself) {
  EXPECT_EQ(clientCasAfterAnnouncing("rotated", std::chrono::milliseconds(5), false),
            (std::vector<std::string>{"rotated-ca"}));
}

}  // namespace serving_tls_test
}  // namespace gpuscale::apiserver
