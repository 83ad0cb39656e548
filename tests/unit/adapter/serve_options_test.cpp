#include "gpuscale/adapter/serve_options.h"

#include <gtest/gtest.h>

namespace gpuscale::adapter {
namespace serve_options_test {

using Args = std::vector<std::string>;

TEST(ParseServeFlags, AcceptsPrometheusAdapterCommandLines) {
  auto options = parseServeFlags({"/adapter", "--secure-port=6443", "--cert-dir=/tmp/cert",
                                  "--logtostderr=true", "--prometheus-url=http://prom:9090/",
                                  "--metrics-relist-interval=1m", "--v=6", "--config",
                                  "/etc/adapter/config.yaml", "--standalone", "--workers", "3"});
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_EQ(options->configFile, "/etc/adapter/config.yaml");
  EXPECT_EQ(options->server.securePort, 6443);
  EXPECT_EQ(options->prometheus.url, "http://prom:9090/");
  EXPECT_EQ(options->relist.interval, std::chrono::minutes(1));
  EXPECT_EQ(options->verbosity, 6);
  EXPECT_TRUE(options->standalone);
  EXPECT_EQ(options->server.workerThreads, 3u);
  EXPECT_EQ(options->discoveryInterval, std::chrono::minutes(1));
  ASSERT_EQ(options->warnings.size(), 1u);
  EXPECT_NE(options->warnings[0].find("--logtostderr"), std::string::npos);
}

TEST(ParseServeFlags, Table) {
  struct Case {
    std::string what;
    Args args;
    bool ok;
    std::string text;  // in the error, or in the first warning
  };
  const std::vector<Case> cases = {
      {"--config is mandatory",
       {"--standalone"},
       false,
       "no metrics discovery configuration file specified (make sure to use --config)"},
      {"unknown flag", {"--config=c", "--frobnicate=1"}, false, "unknown flag: --frobnicate"},
      {"bad duration",
       {"--config=c", "--metrics-relist-interval=soon"},
       false,
       "--metrics-relist-interval"},
      {"missing value", {"--config"}, false, "flag needs an argument"},
      {"--discovery-interval is honoured, not ignored",
       {"--config=c", "--discovery-interval=30s"},
       true,
       ""},
      {"--discovery-backend victoriametrics",
       {"--config=c", "--discovery-backend=victoriametrics"},
       true,
       ""},
      {"--discovery-backend thanos", {"--config=c", "--discovery-backend=thanos"}, true, ""},
      {"--discovery-backend unknown",
       {"--config=c", "--discovery-backend=mimir"},
       false,
       "prometheus, victoriametrics or thanos"},
      {"--thanos-replica-label needs a name",
       {"--config=c", "--thanos-replica-label=a,,b"},
       false,
       "empty label name"},
      {"--discovery-interval must be positive",
       {"--config=c", "--discovery-interval=0s"},
       false,
       "--discovery-interval"},
      {"removed flag with a value",
       {"--config=c", "--rate-interval", "5m"},
       true,
       "--rate-interval"},
      {"klog flag", {"--config=c", "--alsologtostderr"}, true, "--alsologtostderr"},
      {"audit flag", {"--config=c", "--audit-log-path=-"}, true, "--audit-log-path"},
      {"shorthand -v", {"--config=c", "-v", "4"}, true, ""},
      {"unknown shorthand", {"--config=c", "-x"}, false, "unknown shorthand flag"},
      {"positional arguments are ignored", {"/adapter", "--config=c"}, true, ""},
      {"--workers must be positive", {"--config=c", "--workers=0"}, false, "--workers"},
      {"RSA key exchange is accepted but not offered",
       {"--config=c", "--tls-cipher-suites=TLS_RSA_WITH_AES_128_GCM_SHA256"},
       true,
       "--tls-cipher-suites: TLS_RSA_WITH_AES_128_GCM_SHA256 is not offered"},
      {"bad in-flight limit",
       {"--config=c", "--max-requests-inflight=x"},
       false,
       "--max-requests-inflight"},
      {"negative request timeout",
       {"--config=c", "--request-timeout=-1s"},
       false,
       "--request-timeout"},
      {"bad cache cap",
       {"--config=c", "--metrics-cache-max-bytes=1G"},
       false,
       "--metrics-cache-max-bytes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto options = parseServeFlags(c.args);
    ASSERT_EQ(options.ok(), c.ok) << (options.ok() ? "" : options.status().message());
    if (!c.ok) {
      EXPECT_NE(options.status().message().find(c.text), std::string::npos)
          << options.status().message();
    } else if (!c.text.empty()) {
      ASSERT_FALSE(options->warnings.empty());
      EXPECT_NE(options->warnings[0].find(c.text), std::string::npos);
    }
  }
}

TEST(ParseServeFlags, KlogFlagsInBothSpellingsAndFormsWarnOncePerFlag) {
  auto options = parseServeFlags(
      {"--config=c", "--logtostderr=true", "--logtostderr", "--alsologtostderr=false", "--log_dir",
       "/var/log", "--log-dir=/tmp", "--log_file=/tmp/a.log", "--stderrthreshold", "2",
       "--skip_headers", "--vmodule=foo=3", "--one_output=true", "--log_file_max_size", "1800",
       "--logging-format=text", "--v", "2"});
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_EQ(options->verbosity, 2);
  const std::vector<std::string> flags = {
      "--logtostderr",       "--alsologtostderr", "--log_dir", "--log_file",
      "--stderrthreshold",   "--skip_headers",    "--vmodule", "--one_output",
      "--log_file_max_size", "--logging-format"};
  ASSERT_EQ(options->warnings.size(), flags.size());
  for (size_t i = 0; i < flags.size(); ++i) {
    EXPECT_NE(options->warnings[i].find("flag " + flags[i] + " is ignored"), std::string::npos)
        << options->warnings[i];
  }
}

TEST(ParseServeFlags, ExternalMetricsFallback) {
  auto options = parseServeFlags(
      {"--config=c", "--external-metrics-fallback-url=https://keda-metrics.keda.svc:443",
       "--external-metrics-fallback-ca-file", "/ca.crt",
       "--external-metrics-fallback-client-cert-file=/front.crt",
       "--external-metrics-fallback-client-key-file=/front.key",
       "--external-metrics-fallback-token-file=/token",
       "--external-metrics-fallback-insecure-skip-tls-verify",
       "--external-metrics-fallback-timeout=2s", "--external-metrics-fallback-discovery-ttl",
       "1m"});
  ASSERT_TRUE(options.ok()) << options.status().message();
  const ExternalFallbackOptions& fallback = options->externalFallback;
  EXPECT_TRUE(fallback.enabled());
  EXPECT_EQ(fallback.url, "https://keda-metrics.keda.svc:443");
  EXPECT_EQ(fallback.caFile, "/ca.crt");
  EXPECT_EQ(fallback.clientCertFile, "/front.crt");
  EXPECT_EQ(fallback.clientKeyFile, "/front.key");
  EXPECT_EQ(fallback.tokenFile, "/token");
  EXPECT_TRUE(fallback.insecureSkipTlsVerify);
  EXPECT_EQ(fallback.timeout, std::chrono::seconds(2));
  EXPECT_EQ(fallback.discoveryTtl, std::chrono::minutes(1));
  EXPECT_TRUE(options->warnings.empty());

  auto defaults = parseServeFlags({"--config=c"});
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->externalFallback.enabled());
  EXPECT_EQ(defaults->externalFallback.timeout, std::chrono::seconds(5));
  EXPECT_EQ(defaults->externalFallback.discoveryTtl, std::chrono::seconds(30));

  for (Args bad : {Args{"--config=c", "--external-metrics-fallback-timeout=0s"},
                   Args{"--config=c", "--external-metrics-fallback-insecure-skip-tls-verify=yes"},
                   Args{"--config=c", "--external-metrics-fallback-urll=https://x"}}) {
    EXPECT_FALSE(parseServeFlags(bad).ok()) << bad[1];
  }
}

TEST(ParseServeFlags, AllowedCredentialDirsRepeatAndDefaultToNone) {
  EXPECT_TRUE(parseServeFlags({"--config=c"})->allowedCredentialDirs.empty());
  auto options = parseServeFlags({"--config=c", "--allowed-credential-dir=/var/run/secrets/a",
                                  "--allowed-credential-dir", "/etc/gpuscale/tokens"});
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_EQ(options->allowedCredentialDirs, (Args{"/var/run/secrets/a", "/etc/gpuscale/tokens"}));
  EXPECT_FALSE(parseServeFlags({"--config=c", "--allowed-credential-dir="}).ok());
  EXPECT_FALSE(parseServeFlags({"--config=c", "--allowed-credential-dir"}).ok());
}

TEST(ParseServeFlags, DiscoveryBackendSetsTheRelistersDiscoveryOptions) {
  for (auto backend :
       {prom::DiscoveryBackend::kPrometheus, prom::DiscoveryBackend::kVictoriaMetrics}) {
    const char* name =
        backend == prom::DiscoveryBackend::kPrometheus ? "prometheus" : "victoriametrics";
    auto options =
        parseServeFlags({"/adapter", "--config=c", std::string("--discovery-backend=") + name});
    ASSERT_TRUE(options.ok()) << options.status().message();
    auto want = prom::discoveryOptionsFor(backend);
    EXPECT_EQ(options->relist.discovery.strategy, want.strategy) << name;
    EXPECT_EQ(options->relist.discovery.nameShards, want.nameShards) << name;
  }
  auto defaults = parseServeFlags({"/adapter", "--config=c"});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->relist.discovery.nameShards, prom::DiscoveryOptions().nameShards);
  EXPECT_TRUE(defaults->relist.discovery.replicaLabels.empty());
}

TEST(ParseServeFlags, ThanosReplicaLabelsAddUpWhicheverComesFirst) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"/adapter", "--config=c", "--thanos-replica-label=replica,prometheus_replica",
            "--discovery-backend=thanos", "--thanos-replica-label", "rule_replica"},
           {"/adapter", "--config=c", "--discovery-backend=thanos",
            "--thanos-replica-label=replica", "--thanos-replica-label=prometheus_replica",
            "--thanos-replica-label=rule_replica"}}) {
    auto options = parseServeFlags(args);
    ASSERT_TRUE(options.ok()) << options.status().message();
    EXPECT_EQ(options->relist.discovery.replicaLabels,
              (std::vector<std::string>{"replica", "prometheus_replica", "rule_replica"}));
  }
}

TEST(ParseServeFlags, ThanosTurnsPartialResponsesOffUnlessTheUrlChose) {
  struct Case {
    std::string what;
    Args args;
    std::string wantUrl;
    bool warned;
  };
  const std::vector<Case> cases = {
      {"thanos: added",
       {"--config=c", "--discovery-backend=thanos", "--prometheus-url=http://q:9090/"},
       "http://q:9090/?partial_response=false",
       true},
      {"thanos, the URL says false already",
       {"--config=c", "--discovery-backend=thanos",
        "--prometheus-url=http://q:9090/?partial_response=false"},
       "http://q:9090/?partial_response=false",
       false},
      {"thanos, the operator keeps partial responses",
       {"--config=c", "--prometheus-url=http://q:9090/?partial_response=true",
        "--discovery-backend=thanos"},
       "http://q:9090/?partial_response=true",
       false},
      {"prometheus: the URL as given",
       {"--config=c", "--prometheus-url=http://p:9090/"},
       "http://p:9090/",
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto options = parseServeFlags(c.args);
    ASSERT_TRUE(options.ok()) << options.status().message();
    EXPECT_EQ(options->prometheus.url, c.wantUrl);
    const bool warned =
        std::any_of(options->warnings.begin(), options->warnings.end(),
                    [](const std::string& w) { return w.find("partial_response") != w.npos; });
    EXPECT_EQ(warned, c.warned);
  }
}

TEST(ParseServeFlags, ResourceMetrics) {
  struct Case {
    std::string what;
    Args args;
    std::optional<bool> want;
  };
  const std::vector<Case> cases = {
      {"default: decided by the rule file", {"--config=c"}, std::nullopt},
      {"bare flag", {"--config=c", "--resource-metrics"}, true},
      {"off (metrics-server keeps the group)", {"--config=c", "--resource-metrics=false"}, false},
  };
  for (const Case& c : cases) {
    auto options = parseServeFlags(c.args);
    ASSERT_TRUE(options.ok()) << c.what << ": " << options.status().message();
    EXPECT_EQ(options->resourceMetrics, c.want) << c.what;
  }
  EXPECT_FALSE(parseServeFlags({"--config=c", "--resource-metrics=maybe"}).ok());
}

TEST(ParseServeFlags, StandaloneIgnoresTheDelegationFlagsButServesTheClientCa) {
  auto options = parseServeFlags({"--config=c", "--standalone", "--lister-kubeconfig=/k",
                                  "--authentication-skip-lookup", "--client-ca-file=/ca.pem",
                                  "--client-qps", "50"});
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_EQ(options->server.bindAddress, "127.0.0.1");
  EXPECT_EQ(options->server.clientCaFiles, Args{"/ca.pem"});
  EXPECT_EQ(options->warnings,
            (Args{"flag --lister-kubeconfig is ignored (needs the Kubernetes client, not used in "
                  "this mode)",
                  "flag --client-qps is ignored (needs the Kubernetes client, not used in this "
                  "mode)",
                  "flag --authentication-skip-lookup is ignored (needs the Kubernetes client, not "
                  "used in this mode)"}));

  auto bound = parseServeFlags({"--config=c", "--standalone", "--bind-address=0.0.0.0"});
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ(bound->server.bindAddress, "0.0.0.0");
}

TEST(ParseServeFlags, InClusterTheClientCaGoesToServingAndToAuthentication) {
  auto options =
      parseServeFlags({"--config=c", "--client-ca-file=/ca.pem", "--requestheader-client-ca-file",
                       "/fp.pem", "--client-qps=50", "--authentication-skip-lookup"});
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_EQ(options->server.bindAddress, "0.0.0.0");
  EXPECT_EQ(options->server.clientCaFiles, (Args{"/ca.pem", "/fp.pem"}));
  EXPECT_EQ(options->delegation.authentication.clientCaFile, "/ca.pem");
  EXPECT_EQ(options->delegation.authentication.requestHeaderClientCaFile, "/fp.pem");
  EXPECT_EQ(options->delegation.clientQps, 50);
  EXPECT_TRUE(options->delegation.skipLookup);
  EXPECT_TRUE(options->warnings.empty());
}

TEST(ParseServeFlags, UsageListsEveryFlagOnce) {
  const std::string usage = serveUsage();
  for (const char* flag :
       {"--config string", "--prometheus-url string", "--external-metrics-fallback-url string",
        "--secure-port int", "--lister-kubeconfig string", "--client-ca-file string", "-v, --v int",
        "--logtostderr", "--audit-*"}) {
    const size_t at = usage.find(flag);
    EXPECT_NE(at, std::string::npos) << flag;
    EXPECT_EQ(usage.find(flag, at + 1), std::string::npos) << flag << " listed twice";
  }
}

TEST(ParseServeFlags, DefaultsMatchPrometheusAdapter) {
  auto options = parseServeFlags({"--config=c"});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->relist.interval, std::chrono::minutes(10));
  EXPECT_EQ(options->relist.maxAge, core::Duration::zero());
  EXPECT_FALSE(options->standalone);
  EXPECT_EQ(options->prometheus.url, "https://localhost");
  EXPECT_EQ(options->server.securePort, 443);
  EXPECT_EQ(options->server.maxRequestsInFlight, 400u);
  EXPECT_EQ(options->server.requestTimeout, std::chrono::minutes(1));
  EXPECT_EQ(options->prometheus.cacheMaxBytes, size_t{64} << 20);
  EXPECT_EQ(options->server.workerThreads, 8u);
}

}  // namespace serve_options_test
}  // namespace gpuscale::adapter
