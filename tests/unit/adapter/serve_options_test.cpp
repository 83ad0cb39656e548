#include "gpuscale/adapter/serve_options.h"

#include <gtest/gtest.h>

namespace gpuscale::adapter {
namespace {

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

TEST(ParseServeFlags, DefaultsMatchPrometheusAdapter) {
  auto options = parseServeFlags({"--config=c"});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->relist.interval, std::chrono::minutes(10));
  EXPECT_EQ(options->relist.maxAge, core::Duration::zero());
  EXPECT_FALSE(options->standalone);
  EXPECT_EQ(options->prometheus.url, "https://localhost");
  EXPECT_EQ(options->server.securePort, 443);
}

}  // namespace
}  // namespace gpuscale::adapter
