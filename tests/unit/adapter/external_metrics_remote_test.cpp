#include "gpuscale/adapter/external_metrics_remote.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "support/free_port.h"

namespace gpuscale::adapter {
namespace external_metrics_remote_test {

using Headers = std::vector<std::pair<std::string, std::string>>;

TEST(AggregatorIdentityHeaders, OneHeaderPerGroupAndExtraValueAsKubeAggregatorSendsThem) {
  apiserver::UserInfo user;
  user.name = "system:serviceaccount:kube-system:horizontal-pod-autoscaler";
  user.uid = "42";
  user.groups = {"system:serviceaccounts", "system:authenticated"};
  user.extra = {{"authentication.kubernetes.io/pod-name", {"hpa-1"}}, {"scopes", {"a", "b c"}}};
  EXPECT_EQ(aggregatorIdentityHeaders(user),
            (Headers{{"X-Remote-User", user.name},
                     {"X-Remote-Uid", "42"},
                     {"X-Remote-Group", "system:serviceaccounts"},
                     {"X-Remote-Group", "system:authenticated"},
                     {"X-Remote-Extra-authentication.kubernetes.io%2Fpod-name", "hpa-1"},
                     {"X-Remote-Extra-scopes", "a"},
                     {"X-Remote-Extra-scopes", "b c"}}));
  // No uid, no groups: just the user.
  EXPECT_EQ(aggregatorIdentityHeaders({"system:anonymous", "", {}, {}}),
            (Headers{{"X-Remote-User", "system:anonymous"}}));
}

TEST(DecodeExternalMetricReply, ValuesComeBackCanonical) {
  auto values = decodeExternalMetricReply(
      200,
      R"({"kind":"ExternalMetricValueList","apiVersion":"external.metrics.k8s.io/v1beta1","metadata":{},"items":[{"metricName":"q","metricLabels":{"topic":"t1"},"timestamp":"2024-05-01T10:00:00Z","value":"1500m"},{"metricName":"q","metricLabels":null,"timestamp":"2024-05-01T10:00:01Z","window":30,"value":"0.5"}]})");
  ASSERT_TRUE(values.ok()) << values.status().message();
  ASSERT_EQ(values->size(), 2u);
  EXPECT_EQ((*values)[0].metricName, "q");
  ASSERT_TRUE((*values)[0].metricLabels.has_value());
  EXPECT_EQ((*values)[0].metricLabels->at("topic"), "t1");
  EXPECT_EQ((*values)[0].value.toString(), "1500m");
  EXPECT_EQ((*values)[0].timestamp,
            apiserver::Timestamp(std::chrono::seconds(1714557600)));  // 2024-05-01T10:00:00Z
  EXPECT_FALSE((*values)[1].metricLabels.has_value());
  EXPECT_EQ((*values)[1].value.toString(), "500m");
  EXPECT_EQ((*values)[1].windowSeconds, 30);

  auto empty = decodeExternalMetricReply(
      200, R"({"kind":"ExternalMetricValueList","metadata":{},"items":[]})");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(DecodeExternalMetricReply, ErrorsArePassedThroughOrNamed) {
  struct Case {
    std::string what;
    int http;
    std::string body;
    int code;
    std::string reason;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"a remote Status passes through", 404,
       R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the metric x for namespaces","reason":"NotFound","code":404})",
       404, "NotFound", "the server could not find the metric x for namespaces"},
      {"a Status with causes", 500,
       R"({"kind":"Status","status":"Failure","message":"Internal error occurred: unable to fetch metrics","reason":"InternalError","details":{"causes":[{"message":"unable to fetch metrics"}]},"code":500})",
       500, "InternalError", "Internal error occurred: unable to fetch metrics"},
      {"a plain-text error keeps its code", 503, "upstream connect error", 503, "",
       "external metrics fallback answered HTTP 503: upstream connect error"},
      {"not a list", 200, R"({"kind":"Status"})", 500, "InternalError",
       "not an ExternalMetricValueList"},
      {"bad quantity", 200,
       R"({"kind":"ExternalMetricValueList","items":[{"metricName":"q","timestamp":"2024-05-01T10:00:00Z","value":"1..5"}]})",
       500, "InternalError", "bad value"},
      {"bad timestamp", 200,
       R"({"kind":"ExternalMetricValueList","items":[{"metricName":"q","timestamp":"yesterday","value":"1"}]})",
       500, "InternalError", "bad timestamp"},
      {"not JSON", 200, "<html>", 500, "InternalError", "not an ExternalMetricValueList"},
      // What a remote puts in its Status never makes the adapter throw or send a code outside
      // 400-599.
      {"a Status whose fields have other types", 500,
       R"({"kind":"Status","reason":5,"message":["m"],"details":{"name":1,"causes":[{"message":2}]},"code":"500"})",
       500, "", ""},
      {"a Status with a code out of range", 404,
       R"({"kind":"Status","reason":"NotFound","code":99999})", 404, "NotFound", ""},
      {"a Status with a code of 200", 503,
       R"({"kind":"Status","reason":"ServiceUnavailable","code":200})", 503, "ServiceUnavailable",
       ""},
      {"an HTTP code beyond 599", 799, R"({"kind":"Status","code":700})", 500, "", ""},
      {"a kind that is not a string", 200, R"({"kind":7})", 500, "InternalError",
       "not an ExternalMetricValueList"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto values = decodeExternalMetricReply(c.http, c.body);
    ASSERT_FALSE(values.ok());
    EXPECT_EQ(values.status().httpCode(), c.code);
    EXPECT_EQ(values.status().reason(), c.reason);
    EXPECT_NE(values.status().message().find(c.message), std::string::npos)
        << values.status().message();
  }
  // Causes survive the trip (the body we write is the remote's).
  auto status = decodeExternalMetricReply(500, cases[1].body).status();
  ASSERT_EQ(status.details().causes.size(), 1u);
  EXPECT_EQ(status.details().causes[0], "unable to fetch metrics");
}

TEST(DecodeExternalResourceList, NamesAndScope) {
  auto metrics = decodeExternalResourceList(
      200,
      R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"external.metrics.k8s.io/v1beta1","resources":[{"name":"s0-prometheus","singularName":"","namespaced":true,"kind":"ExternalMetricValueList","verbs":["get"]},{"name":"global","namespaced":false}]})");
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_EQ(*metrics, (std::vector<apiserver::ExternalMetricInfo>{{"s0-prometheus", true},
                                                                  {"global", false}}));
  EXPECT_FALSE(decodeExternalResourceList(503, "unavailable").ok());
  EXPECT_FALSE(
      decodeExternalResourceList(200, R"({"kind":"APIResourceList","resources":[{}]})").ok());
  // A `namespaced` that is not a boolean counts as true (the default), never throws.
  auto odd = decodeExternalResourceList(
      200, R"({"kind":"APIResourceList","resources":[{"name":"m","namespaced":"no"}]})");
  ASSERT_TRUE(odd.ok()) << odd.status().message();
  EXPECT_TRUE(odd->front().namespaced);
}

TEST(DecodeExternalMetricReply, WindowsThatDoNotFitAreLeftOut) {
  auto values = decodeExternalMetricReply(
      200,
      R"({"kind":"ExternalMetricValueList","items":[)"
      R"({"metricName":"a","timestamp":"2024-05-01T10:00:00Z","value":"1","window":120},)"
      R"({"metricName":"b","timestamp":"2024-05-01T10:00:00Z","value":"1","window":18446744073709551615},)"
      R"({"metricName":"c","timestamp":"2024-05-01T10:00:00Z","value":"1","window":"60"}]})");
  ASSERT_TRUE(values.ok()) << values.status().message();
  ASSERT_EQ(values->size(), 3u);
  EXPECT_EQ((*values)[0].windowSeconds, 120);
  EXPECT_FALSE((*values)[1].windowSeconds.has_value());
  EXPECT_FALSE((*values)[2].windowSeconds.has_value());
}

TEST(ExternalMetricsRemote, CreateRejectsBadFlags) {
  struct Case {
    std::string what;
    ExternalFallbackOptions options;
    std::string message;
  };
  auto with = [](std::string url) {
    ExternalFallbackOptions options;
    options.url = std::move(url);
    return options;
  };
  ExternalFallbackOptions halfPair = with("https://127.0.0.1:6443");
  halfPair.clientCertFile = "/front.crt";
  ExternalFallbackOptions missingCa = with("https://127.0.0.1:6443");
  missingCa.caFile = "/nonexistent/ca.crt";
  ExternalFallbackOptions missingToken = with("https://127.0.0.1:6443");
  missingToken.tokenFile = "/nonexistent/token";
  const std::vector<Case> cases = {
      {"plain http", with("http://127.0.0.1:6443"), "must start with https://"},
      {"no host", with("https://:6443"), "no host"},
      {"bad port", with("https://127.0.0.1:99999"), "bad port"},
      {"certificate without key", halfPair, "go together"},
      {"unreadable CA", missingCa, "--external-metrics-fallback-ca-file"},
      {"unreadable token", missingToken, "--external-metrics-fallback-token-file"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto remote = ExternalMetricsRemote::create(c.options);
    ASSERT_FALSE(remote.ok());
    EXPECT_NE(remote.status().message().find(c.message), std::string::npos)
        << remote.status().message();
  }
  auto ok = ExternalMetricsRemote::create(with("https://[::1]:6443/keda/"));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
}

TEST(ExternalMetricsRemote, UnreachableIs503NamingTheFallback) {
  ExternalFallbackOptions options;
  options.url = "https://127.0.0.1:" + std::to_string(gpuscale::testing::freeLoopbackPort());
  options.timeout = std::chrono::seconds(2);
  auto remote = ExternalMetricsRemote::create(options);
  ASSERT_TRUE(remote.ok());
  auto values = (*remote)->getExternalMetric({"u", "", {}, {}}, "", "default", "q");
  ASSERT_FALSE(values.ok());
  EXPECT_EQ(values.status().httpCode(), 503);
  EXPECT_NE(values.status().message().find("external metrics fallback " + options.url +
                                           " unreachable: connect"),
            std::string::npos)
      << values.status().message();
}

TEST(ExternalMetricsRemote, APeerThatNeverAnswersIs504) {
  // A listening socket nobody accepts on: the TCP connection completes, the TLS handshake never
  // does.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ExternalFallbackOptions options;
  options.url = "https://127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  options.timeout = std::chrono::seconds(1);
  auto remote = ExternalMetricsRemote::create(options);
  ASSERT_TRUE(remote.ok());
  auto values = (*remote)->getExternalMetric({"u", "", {}, {}}, "", "default", "q");
  ::close(fd);
  ASSERT_FALSE(values.ok());
  EXPECT_EQ(values.status().httpCode(), 504);
  EXPECT_EQ(values.status().reason(), "Timeout");
  EXPECT_NE(values.status().message().find("timed out after 1s"), std::string::npos)
      << values.status().message();
}

}  // namespace external_metrics_remote_test
}  // namespace gpuscale::adapter
