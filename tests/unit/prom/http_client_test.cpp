#include "gpuscale/prom/http_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>

#include "gpuscale/prom/errors.h"
#include "support/http_test_server.h"
#include "support/prometheus_server.h"

namespace gpuscale::prom {
namespace http_client_test {

using test::HttpTestRequest;
using test::HttpTestResponse;
using test::HttpTestServer;

constexpr const char* kVector =
    R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"a"},"value":[1700000000,"4.5"]}]}})";

HttpTestResponse json(std::string body, int status = 200) {
  HttpTestResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

std::unique_ptr<HttpClient> makeClient(PrometheusOptions options) {
  auto client = HttpClient::create(options);
  EXPECT_TRUE(client.ok()) << client.status().toString();
  return client.ok() ? std::move(*client) : nullptr;
}

PrometheusOptions optionsFor(const HttpTestServer& server, std::string suffix = "") {
  PrometheusOptions options;
  options.url = server.url() + suffix;
  options.timeout = std::chrono::seconds(20);
  return options;
}

Timestamp at(long long ms) { return Timestamp(std::chrono::milliseconds(ms)); }

TEST(HttpClientTest, GetQuerySendsParametersHeadersAndDecodes) {
  HttpTestServer server([](const HttpTestRequest&) { return json(kVector); });
  auto options = optionsFor(server, "/prom/");
  options.headers = {{"X-Scope-OrgID", "t1"}};
  options.timeout = std::chrono::milliseconds(2500);
  auto client = makeClient(options);
  auto result = client->query("sum(up) by (pod)", at(1700000000123));
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ((*result)->vector.size(), 1u);
  EXPECT_EQ((*result)->vector[0].point.value, 4.5);

  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].path, "/prom/api/v1/query") << "path prefix kept";
  EXPECT_EQ(requests[0].query, "query=sum%28up%29+by+%28pod%29&time=1700000000.123&timeout=2500ms");
  EXPECT_EQ(requests[0].headers["x-scope-orgid"], "t1");
  EXPECT_EQ(requests[0].headers.count("authorization"), 0u);
}

TEST(HttpClientTest, PostSendsAFormBody) {
  HttpTestServer server([](const HttpTestRequest&) { return json(kVector); });
  auto options = optionsFor(server);
  options.verb = HttpVerb::kPost;
  auto client = makeClient(options);
  ASSERT_TRUE(client->query("up", at(2000)).ok());
  auto request = server.requests().at(0);
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.target, "/api/v1/query") << "no query string with POST";
  EXPECT_EQ(request.headers["content-type"], "application/x-www-form-urlencoded");
  auto form = test::decodeForm(request.body);
  EXPECT_EQ(form.find("query")->second, "up");
  EXPECT_EQ(form.find("time")->second, "2");
}

TEST(HttpClientTest, SeriesAndLabelCalls) {
  HttpTestServer server([](const HttpTestRequest& request) {
    if (request.path == "/api/v1/series") {
      return json(R"({"status":"success","data":[{"__name__":"up","job":"x"}]})");
    }
    return json(R"({"status":"success","data":["a","b"]})");
  });
  auto client = makeClient(optionsFor(server));
  TimeRange window{at(1000), at(2500)};
  auto series = client->series({"up", "{job=\"x\"}"}, window);
  ASSERT_TRUE(series.ok()) << series.status().toString();
  EXPECT_EQ(series->at(0).at("job"), "x");
  auto values = client->labelValues("__name__", {"{pod!=\"\"}"}, {at(1000), std::nullopt});
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*values, (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(client->labelNames({"up"}, {}).ok());

  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].target,
            "/api/v1/series?end=2.5&match%5B%5D=up&match%5B%5D=%7Bjob%3D%22x%22%7D&start=1");
  EXPECT_EQ(requests[1].target,
            "/api/v1/label/__name__/values?match%5B%5D=%7Bpod%21%3D%22%22%7D&start=1");
  EXPECT_EQ(requests[2].target, "/api/v1/labels?match%5B%5D=up");
}

TEST(HttpClientTest, PostGoesToTheEndpointsThatAcceptItAndLabelValuesStayGet) {
  HttpTestServer server([](const HttpTestRequest& request) {
    if (request.path == "/api/v1/query") return json(kVector);
    if (request.path == "/api/v1/series") {
      return json(R"({"status":"success","data":[{"__name__":"up","job":"x"}]})");
    }
    return json(R"({"status":"success","data":["a"]})");
  });
  auto options = optionsFor(server);
  options.verb = HttpVerb::kPost;
  auto client = makeClient(options);
  const Matchers match{"{pod!=\"\"}"};
  ASSERT_TRUE(client->query(match[0], at(0)).ok());
  ASSERT_TRUE(client->series(match, {}).ok());
  ASSERT_TRUE(client->seriesLabelNames(match, {}).ok());
  ASSERT_TRUE(client->labelNames(match, {}).ok());
  ASSERT_TRUE(client->labelValues("__name__", match, {}).ok());
  struct Want {
    const char* target;
    const char* method;
  } want[] = {{"/api/v1/query", "POST"},
              {"/api/v1/series", "POST"},
              {"/api/v1/series", "POST"},
              {"/api/v1/labels", "POST"},
              {"/api/v1/label/__name__/values?match%5B%5D=%7Bpod%21%3D%22%22%7D", "GET"}};
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), std::size(want));
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(requests[i].target, want[i].target);
    EXPECT_EQ(requests[i].method, want[i].method) << want[i].target;
    if (requests[i].method == "POST") {
      EXPECT_NE(requests[i].body.find("%7Bpod%21%3D%22%22%7D"), std::string::npos)
          << "the selector travels in the body of " << want[i].target;
    } else {
      EXPECT_TRUE(requests[i].body.empty());
    }
  }
}

// A /api/v1/series body of `count` series over three metric names.
std::string seriesBody(size_t count) {
  std::string body = R"({"status":"success","data":[)";
  for (size_t i = 0; i < count; ++i) {
    if (i) body += ',';
    body += R"({"__name__":"m)" + std::to_string(i % 3) + R"(","pod":"pod-)" + std::to_string(i) +
            R"(","namespace":"ns"})";
  }
  return body + "]}";
}

// Answers every request with the JSON `body`, chunked or with a Content-Length.
HttpTestServer::ResponseHandler answering(const std::string& body, bool chunked) {
  return [body, chunked](const HttpTestRequest&) {
    HttpTestResponse r = json(body);
    r.chunked = chunked;
    return r;
  };
}

TEST(HttpClientTest, SeriesLabelNamesAreDecodedWhileTheBodyArrives) {
  const std::string body = seriesBody(20000);  // ~1 MB: many 64 KiB chunks
  for (bool chunked : {false, true}) {
    SCOPED_TRACE(chunked ? "chunked" : "Content-Length");
    HttpTestServer server(answering(body, chunked));
    auto options = optionsFor(server);
    options.maxBodyBytes = 1000;  // the buffered cap does not apply to the streamed call
    auto client = makeClient(options);
    auto view = client->seriesLabelNames({"{pod!=\"\"}"}, {});
    ASSERT_TRUE(view.ok()) << view.status().toString();
    const std::vector<std::string> labels{"namespace", "pod"};
    EXPECT_EQ(*view, (MetricLabelNames{{"m0", labels}, {"m1", labels}, {"m2", labels}}));
    EXPECT_EQ(client->stats().bodyBytes, body.size());
    EXPECT_EQ(client->stats().failures, 0u);
    EXPECT_EQ(server.requests().at(0).headers["accept-encoding"], "gzip")
        << "asks for a compressed body, which Prometheus sends in small chunks";
  }
}

TEST(HttpClientTest, StreamedSeriesBodyOverItsCapIsAnErrorNamingTheFlag) {
  const std::string body = seriesBody(20000);
  for (bool chunked : {false, true}) {
    SCOPED_TRACE(chunked ? "chunked" : "Content-Length");
    HttpTestServer server(answering(body, chunked));
    auto options = optionsFor(server);
    options.maxSeriesBodyBytes = 200000;
    auto client = makeClient(options);
    auto view = client->seriesLabelNames({"up"}, {});
    EXPECT_EQ(failureKindOf(view.status()), FailureKind::kBodyTooLarge) << view.status().toString();
    EXPECT_NE(view.status().message().find("more than 200000 bytes"), std::string::npos);
    EXPECT_NE(view.status().message().find("--prometheus-max-series-body-bytes"), std::string::npos)
        << view.status().message();
    // The client still works after cutting a connection off.
    options.maxSeriesBodyBytes = body.size();
    EXPECT_TRUE(makeClient(options)->seriesLabelNames({"up"}, {}).ok());
  }
}

TEST(HttpClientTest, StreamedSeriesFaultsAreNamedErrors) {
  struct Row {
    const char* what;
    HttpTestResponse response;
    FailureKind kind;
  };
  HttpTestResponse garbage =
      json(R"({"status":"success","data":[{"__name__":"a"},<html>)" + std::string(300000, ' '));
  garbage.chunked = true;
  HttpTestResponse slow = json(seriesBody(10));
  slow.delay = std::chrono::minutes(5);
  HttpTestResponse closed;
  closed.close = true;
  const std::vector<Row> rows = {
      {"garbage in the middle", garbage, FailureKind::kBadJson},
      {"HTTP 500", json("oops", 500), FailureKind::kHttpStatus},
      {"slow", slow, FailureKind::kTimeout},
      {"connection closed", closed, FailureKind::kConnection},
  };
  for (const auto& row : rows) {
    HttpTestServer server([&](const HttpTestRequest&) { return row.response; });
    auto options = optionsFor(server);
    options.timeout = std::chrono::milliseconds(row.kind == FailureKind::kTimeout ? 300 : 20000);
    auto client = makeClient(options);
    auto view = client->seriesLabelNames({"up"}, {});
    EXPECT_EQ(failureKindOf(view.status()), row.kind)
        << row.what << ": " << view.status().toString();
  }
}

TEST(HttpClientTest, BearerTokenIsTrimmedAndReReadWhenItChanges) {
  HttpTestServer server([](const HttpTestRequest&) { return json(kVector); });
  std::string dir = test::makeTempDir("gpuscale-token-");
  std::string path = dir + "/token";
  std::ofstream(path) << "  first-token\n";
  auto options = optionsFor(server);
  options.tokenFile = path;
  auto client = makeClient(options);
  ASSERT_TRUE(client->query("up", at(0)).ok());
  std::ofstream(path, std::ios::trunc) << "second-token-longer\n";
  ASSERT_TRUE(client->query("up", at(0)).ok());
  auto requests = server.requests();
  EXPECT_EQ(requests[0].headers["authorization"], "Bearer first-token");
  EXPECT_EQ(requests[1].headers["authorization"], "Bearer second-token-longer");
  test::removeTree(dir);
}

TEST(HttpClientTest, ExplicitAuthorizationHeaderWinsOverToken) {
  HttpTestServer server([](const HttpTestRequest&) { return json(kVector); });
  std::string dir = test::makeTempDir("gpuscale-token-");
  std::ofstream(dir + "/token") << "tok";
  auto options = optionsFor(server);
  options.tokenFile = dir + "/token";
  options.headers = {{"Authorization", "Basic dTpw"}};
  auto client = makeClient(options);
  ASSERT_TRUE(client->query("up", at(0)).ok());
  EXPECT_EQ(server.requests().at(0).headers["authorization"], "Basic dTpw");
  test::removeTree(dir);
}

TEST(HttpClientTest, MissingTokenFileIsACredentialsError) {
  HttpTestServer server([](const HttpTestRequest&) { return json(kVector); });
  auto options = optionsFor(server);
  options.tokenFile = "/nonexistent/token";
  auto client = makeClient(options);
  auto result = client->query("up", at(0));
  EXPECT_EQ(failureKindOf(result.status()), FailureKind::kCredentials);
  EXPECT_EQ(server.requestCount(), 0u) << "nothing sent without the token";
}

struct FaultRow {
  const char* what;
  std::function<HttpTestResponse()> respond;
  FailureKind kind;
  int httpCode;
};

TEST(HttpClientTest, ServerFaultsBecomeNamedErrors) {
  FaultRow rows[] = {
      {"garbage JSON", [] { return json("}{ not json"); }, FailureKind::kBadJson, 500},
      {"HTTP 500 with text", [] { return json("boom", 500); }, FailureKind::kHttpStatus, 500},
      {"status error 422",
       [] { return json(R"({"status":"error","errorType":"execution","error":"x"})", 422); },
       FailureKind::kPrometheusError, 500},
      {"status error 503 unavailable",
       [] { return json(R"({"status":"error","errorType":"unavailable","error":"x"})", 503); },
       FailureKind::kPrometheusError, 503},
      {"connection closed without an answer",
       [] {
         HttpTestResponse r;
         r.close = true;
         return r;
       },
       FailureKind::kConnection, 503},
  };
  for (const auto& row : rows) {
    HttpTestServer server([&](const HttpTestRequest&) { return row.respond(); });
    auto client = makeClient(optionsFor(server));
    auto result = client->query("up", at(0));
    ASSERT_FALSE(result.ok()) << row.what;
    EXPECT_EQ(failureKindOf(result.status()), row.kind)
        << row.what << ": " << result.status().toString();
    EXPECT_EQ(result.status().httpCode(), row.httpCode) << row.what;
  }
}

TEST(HttpClientTest, NonVectorResultsArriveTyped) {
  struct Row {
    const char* body;
    ResultType type;
  } rows[] = {
      {R"({"status":"success","data":{"resultType":"scalar","result":[1,"2"]}})",
       ResultType::kScalar},
      {R"({"status":"success","data":{"resultType":"matrix","result":[]}})", ResultType::kMatrix},
      {R"({"status":"success","data":{"resultType":"string","result":[1,"s"]}})",
       ResultType::kString},
  };
  for (const auto& row : rows) {
    HttpTestServer server([&](const HttpTestRequest&) { return json(row.body); });
    auto client = makeClient(optionsFor(server));
    auto result = client->query("x", at(0));
    ASSERT_TRUE(result.ok()) << row.body;
    EXPECT_EQ((*result)->type, row.type) << row.body;
  }
}

TEST(HttpClientTest, BodyOverTheCapIsRejected) {
  std::string big(51u << 20,
                  ' ');  // 51 MB of whitespace: valid JSON padding, over the 50 MB default
  HttpTestServer server([&](const HttpTestRequest&) { return json(big); });
  auto client = makeClient(optionsFor(server));
  auto result = client->query("up", at(0));
  EXPECT_EQ(failureKindOf(result.status()), FailureKind::kBodyTooLarge)
      << result.status().toString();
}

TEST(HttpClientTest, ChunkedBodyOverTheCapIsCutOff) {
  std::string body = std::string(300000, ' ') + kVector;
  HttpTestServer server([&](const HttpTestRequest&) {
    HttpTestResponse r = json(body);
    r.chunked = true;
    return r;
  });
  auto options = optionsFor(server);
  options.maxBodyBytes = 100000;
  auto client = makeClient(options);
  auto result = client->query("up", at(0));
  EXPECT_EQ(failureKindOf(result.status()), FailureKind::kBodyTooLarge)
      << result.status().toString();
  options.maxBodyBytes = 1u << 20;
  auto roomy = makeClient(options);
  EXPECT_TRUE(roomy->query("up", at(0)).ok()) << "the same chunked body fits a larger cap";
}

TEST(HttpClientTest, SlowServerHitsTheTimeout) {
  HttpTestServer server([](const HttpTestRequest&) {
    HttpTestResponse r = json(kVector);
    r.delay = std::chrono::minutes(5);
    return r;
  });
  auto options = optionsFor(server);
  options.timeout = std::chrono::milliseconds(300);
  auto client = makeClient(options);
  auto result = client->query("up", at(0));
  EXPECT_EQ(failureKindOf(result.status()), FailureKind::kTimeout) << result.status().toString();
  EXPECT_NE(result.status().message().find("300ms"), std::string::npos)
      << result.status().message();
}

TEST(HttpClientTest, ConnectionRefused) {
  PrometheusOptions options;
  options.url = "http://127.0.0.1:" + std::to_string(test::freeLoopbackPort());
  auto client = makeClient(options);
  auto result = client->query("up", at(0));
  EXPECT_EQ(failureKindOf(result.status()), FailureKind::kConnection) << result.status().toString();
  EXPECT_EQ(result.status().httpCode(), 503);
}

TEST(HttpClientTest, ManyConcurrentAsyncCallsAllComplete) {
  HttpTestServer server([](const HttpTestRequest&) { return json(kVector); });
  auto client = makeClient(optionsFor(server));
  constexpr int kCalls = 200;
  std::atomic<int> ok{0};
  std::atomic<int> done{0};
  std::promise<void> all;
  for (int i = 0; i < kCalls; ++i) {
    client->queryAsync("up" + std::to_string(i), at(0), [&](Result<QueryResultPtr> r) {
      if (r.ok()) ++ok;
      if (++done == kCalls) all.set_value();
    });
  }
  all.get_future().wait();
  EXPECT_EQ(ok.load(), kCalls);
  EXPECT_EQ(server.requestCount(), static_cast<size_t>(kCalls));
}

TEST(HttpClientTest, CreateRejectsBadOptions) {
  struct Row {
    const char* what;
    std::function<void(PrometheusOptions&)> change;
  } rows[] = {
      {"no scheme", [](PrometheusOptions& o) { o.url = "127.0.0.1:9090"; }},
      {"ftp scheme", [](PrometheusOptions& o) { o.url = "ftp://x"; }},
      {"cert without key", [](PrometheusOptions& o) { o.clientCertFile = "/etc/hostname"; }},
      {"unreadable CA", [](PrometheusOptions& o) { o.caFile = "/nonexistent/ca.pem"; }},
      {"CA that is not PEM", [](PrometheusOptions& o) { o.caFile = "/etc/hostname"; }},
      {"zero timeout", [](PrometheusOptions& o) { o.timeout = {}; }},
  };
  for (const auto& row : rows) {
    PrometheusOptions options;
    options.url = "http://127.0.0.1:9";
    row.change(options);
    EXPECT_FALSE(HttpClient::create(options).ok()) << row.what;
  }
}

}  // namespace http_client_test
}  // namespace gpuscale::prom
