#include "gpuscale/rules/backend.h"

#include <gtest/gtest.h>

#include "gpuscale/rules/loader.h"

namespace gpuscale::rules {
namespace backend_test {

core::Result<std::vector<BackendSpec>> compileText(const std::string& yaml) {
  core::Result<RuleConfig> config = parseRuleConfig(yaml + "rules:\n- seriesQuery: up\n", "b.yaml");
  if (!config) return config.status();
  std::vector<BackendSpec> out;
  if (core::Status status = compileBackends(*config, out); !status.ok()) return status;
  return out;
}

struct ErrorRow {
  const char* what;
  const char* yaml;
  const char* message;  // exact
};

const ErrorRow kErrorRows[] = {
    {"no name", "backends:\n- url: http://a\n",
     "b.yaml:2:3: backends[0].name: backend name \"\" must be a DNS label (lower-case letters, "
     "digits and '-')"},
    {"name with a dot", "backends:\n- {name: a.b, url: 'http://a'}\n",
     "b.yaml:2:10: backends[0].name: backend name \"a.b\" must be a DNS label (lower-case letters, "
     "digits and '-')"},
    {"the reserved name", "backends:\n- {name: default, url: 'http://a'}\n",
     "b.yaml:2:10: backends[0].name: the name \"default\" is reserved for the backend the "
     "--prometheus-* flags describe"},
    {"a name twice", "backends:\n- {name: a, url: 'http://a'}\n- name: a\n  url: http://b\n",
     "b.yaml:3:9: backends[1].name: backend \"a\" is declared twice"},
    {"no url", "backends:\n- name: a\n",
     "b.yaml:2:3: backends[0].url: invalid url \"\": want http(s)://host[:port][/prefix]"},
    {"url without scheme", "backends:\n- name: a\n  url: thanos:9090\n",
     "b.yaml:3:8: backends[0].url: invalid url \"thanos:9090\": want "
     "http(s)://host[:port][/prefix]"},
    {"url without host", "backends:\n- name: a\n  url: http:///api\n",
     "b.yaml:3:8: backends[0].url: invalid url \"http:///api\": want "
     "http(s)://host[:port][/prefix]"},
    {"timeout is not a duration", "backends:\n- {name: a, url: 'http://a', timeout: 10}\n",
     "b.yaml:2:39: backends[0].timeout: invalid timeout \"10\": want a positive Go duration such "
     "as \"10s\""},
    {"timeout is zero", "backends:\n- {name: a, url: 'http://a', timeout: 0s}\n",
     "b.yaml:2:39: backends[0].timeout: invalid timeout \"0s\": want a positive Go duration such "
     "as \"10s\""},
    {"verb", "backends:\n- {name: a, url: 'http://a', verb: PUT}\n",
     "b.yaml:2:36: backends[0].verb: invalid verb \"PUT\": want GET or POST"},
    {"certificate without key", "backends:\n- {name: a, url: 'http://a', clientCertFile: /c}\n",
     "b.yaml:2:46: backends[0].clientCertFile: clientCertFile and clientKeyFile go together"},
    {"key without certificate", "backends:\n- {name: a, url: 'http://a', clientKeyFile: /k}\n",
     "b.yaml:2:45: backends[0].clientKeyFile: clientCertFile and clientKeyFile go together"},
};

TEST(CompileBackendsErrors, Table) {
  for (const ErrorRow& row : kErrorRows) {
    SCOPED_TRACE(row.what);
    auto backends = compileText(row.yaml);
    ASSERT_FALSE(backends.ok());
    EXPECT_EQ(backends.status().httpCode(), 422);
    EXPECT_EQ(backends.status().message(), row.message);
  }
}

TEST(CompileBackends, EveryFieldAndDefaults) {
  auto backends = compileText(
      "backends:\n"
      "- name: mimir\n"
      "  url: https://mimir.example:8080/prometheus\n"
      "  headers: {X-Scope-OrgID: team-a}\n"
      "  bearerTokenFile: /t\n"
      "  caFile: /ca\n"
      "  clientCertFile: /c\n"
      "  clientKeyFile: /k\n"
      "  insecureSkipTLSVerify: true\n"
      "  timeout: 1m30s\n"
      "  verb: GET\n"
      "- {name: thanos-2, url: 'http://127.0.0.1:9091'}\n");
  ASSERT_TRUE(backends.ok()) << backends.status().message();
  ASSERT_EQ(backends->size(), 2u);
  const BackendSpec& mimir = (*backends)[0];
  EXPECT_EQ(mimir.name, "mimir");
  EXPECT_EQ(mimir.path, "backends[0]");
  EXPECT_EQ(mimir.url, "https://mimir.example:8080/prometheus");
  ASSERT_EQ(mimir.headers.size(), 1u);
  EXPECT_EQ(mimir.headers[0], (std::pair<std::string, std::string>{"X-Scope-OrgID", "team-a"}));
  EXPECT_EQ(mimir.bearerTokenFile, "/t");
  EXPECT_EQ(mimir.caFile, "/ca");
  EXPECT_EQ(mimir.clientCertFile, "/c");
  EXPECT_EQ(mimir.clientKeyFile, "/k");
  EXPECT_TRUE(mimir.insecureSkipTlsVerify);
  EXPECT_EQ(mimir.timeout, std::chrono::seconds(90));
  EXPECT_EQ(mimir.post, false);
  const BackendSpec& thanos = (*backends)[1];
  EXPECT_EQ(thanos.name, "thanos-2");
  EXPECT_FALSE(thanos.timeout.has_value());
  EXPECT_FALSE(thanos.post.has_value());
  EXPECT_FALSE(thanos.insecureSkipTlsVerify);
  EXPECT_TRUE(thanos.headers.empty());
}

}  // namespace backend_test
}  // namespace gpuscale::rules
