#include "gpuscale/apiserver/server_options.h"

#include <gtest/gtest.h>

namespace gpuscale::apiserver {
namespace server_options_test {

TEST(ServingFlags, ParsesEveryServingFlag) {
  ServerOptions options;
  const auto rest = parseServingFlags(
      {"/adapter", "--secure-port=6443", "--bind-address", "127.0.0.1", "--cert-dir=/tmp/c",
       "--tls-min-version=VersionTLS13", "--client-ca-file=a.pem",
       "--requestheader-client-ca-file=b.pem", "--worker-threads=4", "--shutdown-timeout=1m30s",
       "--request-read-timeout=2s", "--idle-timeout=500ms", "--disable-http2",
       "--metrics-bind-address=127.0.0.1:9100", "--max-connections=10", "--max-requests-inflight=0",
       "--request-timeout=0s", "--tls-reload-interval=1m"},
      options);
  ASSERT_TRUE(rest.ok()) << rest.status().toString();
  EXPECT_EQ(*rest, std::vector<std::string>{"/adapter"});
  EXPECT_EQ(options.securePort, 6443);
  EXPECT_EQ(options.bindAddress, "127.0.0.1");
  EXPECT_EQ(options.certDir, "/tmp/c");
  EXPECT_EQ(options.tlsMinVersion, TlsMinVersion::kTls13);
  EXPECT_EQ(options.clientCaFiles, (std::vector<std::string>{"a.pem", "b.pem"}));
  EXPECT_EQ(options.workerThreads, 4u);
  EXPECT_EQ(options.shutdownTimeout, std::chrono::seconds(90));
  EXPECT_EQ(options.requestReadTimeout, std::chrono::seconds(2));
  EXPECT_EQ(options.idleTimeout, std::chrono::milliseconds(500));
  EXPECT_EQ(options.metricsBindAddress, "127.0.0.1:9100");
  EXPECT_EQ(options.maxConnections, 10u);
  EXPECT_EQ(options.maxRequestsInFlight, 0u);
  EXPECT_EQ(options.requestTimeout, std::chrono::milliseconds(0));
  EXPECT_EQ(options.tlsReloadInterval, std::chrono::minutes(1));
}

TEST(ServingFlags, WorkersIsAnotherNameOfWorkerThreadsAndOtherFlagsAreErrors) {
  ServerOptions options;
  ASSERT_TRUE(parseServingFlags({"--workers=3"}, options).ok());
  EXPECT_EQ(options.workerThreads, 3u);
  auto unknown = parseServingFlags({"--config=x.yaml"}, options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "unknown flag: --config");
}

TEST(ServingFlags, UsageListsEveryFlagWithItsDefault) {
  ServerOptions options;
  options.workerThreads = 8;
  core::FlagSet flags("serve");
  options.addFlags(flags);
  const std::string usage = flags.usage();
  for (const char* line : {"--secure-port int", "(default 443)", "--worker-threads int",
                           "(also --workers)", "(default 8)", "--request-timeout duration",
                           "(default 1m0s)", "--disable-http2", "ignored: the server speaks"}) {
    EXPECT_NE(usage.find(line), std::string::npos) << line << "\n" << usage;
  }
}

TEST(ServingFlags, CipherSuitesUseGoNames) {
  ServerOptions options;
  // The list prometheus-adapter's manifests pass; TLS 1.3 names are accepted and do not restrict
  // anything.
  ASSERT_TRUE(parseServingFlags({"--tls-cipher-suites=TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,"
                                 "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256"},
                                options)
                  .ok());
  EXPECT_EQ(options.tlsCipherList, "ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256");
  EXPECT_FALSE(parseServingFlags({"--tls-cipher-suites=TLS_RSA_WITH_RC4_128_SHA"}, options).ok());
}

TEST(ServingFlags, CbcAndRsaKeyExchangeSuitesAreAcceptedButNotOffered) {
  ServerOptions options;
  ASSERT_TRUE(parseServingFlags({"--tls-cipher-suites=TLS_RSA_WITH_AES_128_GCM_SHA256,"
                                 "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,"
                                 "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"},
                                options)
                  .ok());
  EXPECT_EQ(options.tlsCipherList, "ECDHE-RSA-AES128-GCM-SHA256");
  EXPECT_EQ(options.tlsCipherSuitesNotOffered,
            (std::vector<std::string>{"TLS_RSA_WITH_AES_128_GCM_SHA256",
                                      "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"}));
  // Nothing offerable named: the default (every forward-secret AEAD suite) applies.
  ASSERT_TRUE(
      parseServingFlags({"--tls-cipher-suites=TLS_RSA_WITH_AES_256_CBC_SHA"}, options).ok());
  EXPECT_EQ(options.tlsCipherList, "");
  EXPECT_EQ(options.tlsCipherSuitesNotOffered,
            (std::vector<std::string>{"TLS_RSA_WITH_AES_256_CBC_SHA"}));
}

TEST(ServingFlags, Defaults) {
  const ServerOptions options;
  EXPECT_EQ(options.securePort, 443);
  EXPECT_EQ(options.bindAddress, "0.0.0.0");
  EXPECT_EQ(options.certDir, "apiserver.local.config/certificates");
  EXPECT_EQ(options.tlsMinVersion, TlsMinVersion::kTls12);
}

struct BadFlagRow {
  const char* what;
  const char* arg;
};

class BadFlagTest : public ::testing::TestWithParam<BadFlagRow> {};

TEST_P(BadFlagTest, IsAnError) {
  ServerOptions options;
  const auto rest = parseServingFlags({GetParam().arg}, options);
  ASSERT_FALSE(rest.ok()) << GetParam().what;
  EXPECT_EQ(rest.status().httpCode(), 400) << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadFlagTest,
    ::testing::Values(BadFlagRow{"port out of range", "--secure-port=70000"},
                      BadFlagRow{"port not a number", "--secure-port=https"},
                      BadFlagRow{"unknown TLS version", "--tls-min-version=VersionTLS10"},
                      BadFlagRow{"zero workers", "--worker-threads=0"},
                      BadFlagRow{"duration without unit", "--shutdown-timeout=30"},
                      BadFlagRow{"negative duration", "--idle-timeout=-1s"},
                      BadFlagRow{"metrics address without port",
                                 "--metrics-bind-address=localhost"},
                      BadFlagRow{"value missing at the end", "--cert-dir"},
                      BadFlagRow{"empty bind address", "--bind-address="},
                      BadFlagRow{"zero reload interval", "--tls-reload-interval=0s"}));

TEST(ServingFlags, RequestAndConnectionLimits) {
  ServerOptions options;
  const auto rest = parseServingFlags(
      {"--max-request-header-bytes=65536", "--max-request-header-field-bytes", "8192",
       "--max-request-headers=100", "--max-request-target-bytes=4096", "--max-request-body-bytes=0",
       "--max-connections=10", "--max-connections-per-source=3", "--metrics-max-connections=9",
       "--probe-connections=2", "--first-request-timeout=1500ms"},
      options);
  ASSERT_TRUE(rest.ok()) << rest.status().toString();
  EXPECT_TRUE(rest->empty());
  EXPECT_EQ(options.requestLimits.headerBytes, 65536u);
  EXPECT_EQ(options.requestLimits.fieldBytes, 8192u);
  EXPECT_EQ(options.requestLimits.headerCount, 100u);
  EXPECT_EQ(options.requestLimits.targetBytes, 4096u);
  EXPECT_EQ(options.requestLimits.bodyBytes, 0u);
  EXPECT_EQ(options.firstRequestTimeout, std::chrono::milliseconds(1500));
  const ListenerLimits secure = secureListenerLimits(options);
  EXPECT_EQ(secure.maxConnections, 10u);
  EXPECT_EQ(secure.maxPerSource, 3u);
  EXPECT_EQ(secure.probeReserve, 2u);
  const ListenerLimits plain = plainListenerLimits(options);
  EXPECT_EQ(plain.maxConnections, 9u);
  EXPECT_EQ(plain.maxPerSource, 2u);  // a quarter, at least one
  EXPECT_EQ(plain.probeReserve, 2u);

  EXPECT_TRUE(options.inlineCacheHits);
  ASSERT_TRUE(parseServingFlags({"--inline-cache-hits=false"}, options).ok());
  EXPECT_FALSE(options.inlineCacheHits);
  ASSERT_TRUE(parseServingFlags({"--inline-cache-hits"}, options).ok());
  EXPECT_TRUE(options.inlineCacheHits);

  const ServerOptions defaults;
  EXPECT_EQ(defaults.requestLimits.headerBytes, 32u << 10);
  EXPECT_EQ(defaults.requestLimits.bodyBytes, 4u << 10);
  EXPECT_EQ(plainListenerLimits(defaults).maxPerSource, 16u);
  for (const char* bad :
       {"--max-request-header-bytes=0", "--max-request-headers=x", "--max-connections=-1",
        "--first-request-timeout=0s", "--max-request-target-bytes=99999999999"}) {
    ServerOptions o;
    EXPECT_FALSE(parseServingFlags({bad}, o).ok()) << bad;
  }
}

TEST(SplitHostPort, Forms) {
  EXPECT_EQ(*splitHostPort("127.0.0.1:9100"),
            std::make_pair(std::string("127.0.0.1"), uint16_t{9100}));
  EXPECT_EQ(*splitHostPort("[::1]:80"), std::make_pair(std::string("::1"), uint16_t{80}));
  EXPECT_EQ(*splitHostPort(":8080"), std::make_pair(std::string("0.0.0.0"), uint16_t{8080}));
  EXPECT_FALSE(splitHostPort("host").ok());
  EXPECT_FALSE(splitHostPort("host:x").ok());
}

}  // namespace server_options_test
}  // namespace gpuscale::apiserver
