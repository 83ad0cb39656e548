#include "gpuscale/prom/options.h"

#include <gtest/gtest.h>

namespace gpuscale::prom {
namespace options_test {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Parses `args` with the Prometheus flags only.
Result<PrometheusOptions> parse(const std::vector<std::string>& args,
                                std::vector<std::string>* rest = nullptr) {
  PrometheusOptions options;
  core::FlagSet flags("test");
  options.addFlags(flags);
  auto positional = flags.parse(args);
  if (!positional) return positional.status();
  if (rest != nullptr) *rest = std::move(*positional);
  return options;
}

TEST(OptionsTest, ParsesEveryFlag) {
  std::vector<std::string> rest;
  auto options = parse({"--prometheus-url=http://prom:9090/prefix",
                        "--prometheus-verb",
                        "POST",
                        "--prometheus-timeout=1m30s",
                        "--metrics-cache-ttl=500ms",
                        "--metrics-cache-max-bytes",
                        "4096",
                        "--prometheus-auth-config=/a",
                        "--prometheus-token-file=/t",
                        "--prometheus-ca-file=/ca",
                        "--prometheus-client-tls-cert-file=/c",
                        "--prometheus-client-key=/k",
                        "--prometheus-header=X-Scope-OrgID=t1",
                        "--prometheus-header",
                        "X-Other: a=b",
                        "--prometheus-insecure-skip-tls-verify",
                        "--prometheus-max-body-bytes=1000",
                        "--prometheus-max-series-body-bytes",
                        "2000",
                        "positional"},
                       &rest);
  ASSERT_TRUE(options.ok()) << options.status().toString();
  EXPECT_EQ(options->url, "http://prom:9090/prefix");
  EXPECT_EQ(options->verb, HttpVerb::kPost);
  EXPECT_EQ(options->timeout, seconds(90));
  EXPECT_EQ(options->cacheTtl, milliseconds(500));
  EXPECT_EQ(options->cacheMaxBytes, 4096u);
  EXPECT_EQ(options->authConfigFile, "/a");
  EXPECT_EQ(options->tokenFile, "/t");
  EXPECT_EQ(options->caFile, "/ca");
  EXPECT_EQ(options->clientCertFile, "/c");
  EXPECT_EQ(options->clientKeyFile, "/k");
  using Header = std::pair<std::string, std::string>;
  EXPECT_EQ(options->headers, (std::vector<Header>{{"X-Scope-OrgID", "t1"}, {"X-Other", "a=b"}}));
  EXPECT_TRUE(options->insecureSkipTlsVerify);
  EXPECT_EQ(options->maxBodyBytes, 1000u);
  EXPECT_EQ(options->maxSeriesBodyBytes, 2000u);
  EXPECT_EQ(rest, std::vector<std::string>{"positional"});
  EXPECT_TRUE(options->validate().ok());
}

TEST(OptionsTest, Defaults) {
  PrometheusOptions options;
  EXPECT_EQ(options.url, "https://localhost");
  EXPECT_EQ(options.verb, HttpVerb::kGet);
  EXPECT_EQ(options.maxBodyBytes, 50u << 20);
  EXPECT_EQ(options.cacheMaxBytes, size_t{64} << 20);
  EXPECT_TRUE(options.validate().ok());
}

TEST(OptionsTest, RejectsBadValues) {
  struct Row {
    const char* what;
    std::vector<std::string> args;
  } rows[] = {
      {"verb PUT", {"--prometheus-verb=PUT"}},
      {"lowercase verb", {"--prometheus-verb=get"}},
      {"timeout without unit", {"--prometheus-timeout=5"}},
      {"negative TTL", {"--metrics-cache-ttl=-1s"}},
      {"header without separator", {"--prometheus-header=NoValue"}},
      {"header with an empty name", {"--prometheus-header==v"}},
      {"header value with a line break", {"--prometheus-header=X-A=1\r\nX-B: 2"}},
      {"bool with junk", {"--prometheus-auth-incluster=maybe"}},
      {"missing value", {"--prometheus-url"}},
      {"zero body cap", {"--prometheus-max-body-bytes=0"}},
      {"series body cap that is not a number", {"--prometheus-max-series-body-bytes=1G"}},
      {"cache cap with a unit", {"--metrics-cache-max-bytes=64Mi"}},
      {"negative cache cap", {"--metrics-cache-max-bytes=-1"}},
      {"zero timeout", {"--prometheus-timeout=0s"}},
      {"an old client certificate name without its value", {"--prometheus-client-cert"}},
  };
  for (const auto& row : rows) {
    EXPECT_FALSE(parse(row.args).ok()) << row.what;
  }
}

TEST(OptionsTest, ValidateCombinations) {
  struct Row {
    const char* what;
    std::function<void(PrometheusOptions&)> change;
    bool ok;
  } rows[] = {
      {"path prefix is fine", [](PrometheusOptions& o) { o.url = "http://h:1/p/q"; }, true},
      {"no host", [](PrometheusOptions& o) { o.url = "http:///p"; }, false},
      {"key without cert", [](PrometheusOptions& o) { o.clientKeyFile = "/k"; }, false},
      {"incluster and auth config",
       [](PrometheusOptions& o) {
         o.authInCluster = true;
         o.authConfigFile = "/a";
       },
       false},
  };
  for (const auto& row : rows) {
    PrometheusOptions options;
    row.change(options);
    EXPECT_EQ(options.validate().ok(), row.ok) << row.what;
  }
}

}  // namespace options_test
}  // namespace gpuscale::prom
