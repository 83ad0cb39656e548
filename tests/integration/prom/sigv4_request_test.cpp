// The HTTP client with --prometheus-sigv4-region, against a recording stand-in for Amazon Managed
// Prometheus: each request it sends (GET and POST, with temporary credentials) is checked by an
// independent implementation of AWS Signature Version 4 (botocore's, in verify_sigv4.py), which
// recomputes the Authorization header from what arrived on the wire. Skipped without botocore.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gpuscale/prom/http_client.h"
#include "support/http_test_server.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace gpuscale::prom {
namespace sigv4_request_test {

using test::HttpTestRequest;
using test::HttpTestResponse;
using test::HttpTestServer;

constexpr char kVector[] =
    R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"a"},"value":[1700000000,"4.5"]}]}})";

std::string source(const std::string& path) {
  const char* dir = std::getenv("GPUSCALE_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/" + path;
}

bool botocoreAvailable() {
  return gpuscale::testing::runProcess({"python3", "-c", "import botocore"}).exitCode == 0;
}

class SigV4RequestTest : public ::testing::TestWithParam<HttpVerb> {};

TEST_P(SigV4RequestTest, BotocoreAcceptsTheSignature) {
  if (!botocoreAvailable()) GTEST_SKIP() << "python3 botocore not installed";
  setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 1);
  setenv("AWS_SESSION_TOKEN", "session/token+with=chars", 1);
  HttpTestServer server([](const HttpTestRequest&) {
    HttpTestResponse response;
    response.body = kVector;
    return response;
  });
  PrometheusOptions options;
  options.url = server.url() + "/workspaces/ws-0123/";
  options.verb = GetParam();
  options.sigv4Region = "eu-west-1";
  auto client = HttpClient::create(options);
  ASSERT_TRUE(client.ok()) << client.status().toString();
  auto result = (*client)->query("sum by (pod) (rate(x{a=~\"b.*\", c!=\"d e\"}[1m]))",
                                 Timestamp(std::chrono::milliseconds(1700000000123)));
  ASSERT_TRUE(result.ok()) << result.status().toString();

  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  const HttpTestRequest& request = requests[0];
  EXPECT_EQ(request.headers.count("x-amz-date"), 1u);
  EXPECT_EQ(request.headers.at("x-amz-security-token"), "session/token+with=chars");
  nlohmann::json wire = {{"method", request.method}, {"path", request.path},
                         {"query", request.query},   {"headers", request.headers},
                         {"body", request.body},     {"region", "eu-west-1"},
                         {"service", "aps"}};
  gpuscale::testing::TempDir dir;
  std::ofstream(dir.file("request.json")) << wire.dump();
  auto verified = gpuscale::testing::runProcess(
      {"python3", source("tests/integration/prom/verify_sigv4.py"), dir.file("request.json")});
  EXPECT_EQ(verified.exitCode, 0) << verified.out << verified.err;
  unsetenv("AWS_SESSION_TOKEN");
}

INSTANTIATE_TEST_SUITE_P(Verbs, SigV4RequestTest,
                         ::testing::Values(HttpVerb::kGet, HttpVerb::kPost));

TEST(SigV4Options, MissingKeysAndOtherAuthorizationAreRefused) {
  unsetenv("AWS_ACCESS_KEY_ID");
  PrometheusOptions options;
  options.url = "https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-0123";
  options.sigv4Region = "eu-west-1";
  auto client = HttpClient::create(options);
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);

  options.tokenFile = "/var/run/token";
  EXPECT_NE(options.validate().message().find("does not go with a bearer token"),
            std::string::npos);
}

}  // namespace sigv4_request_test
}  // namespace gpuscale::prom
