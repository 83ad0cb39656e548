#include "gpuscale/prom/wire.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gpuscale/prom/errors.h"

namespace gpuscale::prom {
namespace wire_test {

using std::chrono::milliseconds;

Timestamp at(long long ms) { return Timestamp(milliseconds(ms)); }

TEST(WireTest, FormatTime) {
  struct Row {
    const char* what;
    long long ms;
    const char* want;
  } rows[] = {
      {"whole seconds have no decimals", 1545384635000, "1545384635"},
      {"milliseconds keep three digits", 1545384635773, "1545384635.773"},
      {"trailing zeros are dropped", 1545384635700, "1545384635.7"},
      {"leading zeros of the fraction stay", 1545384635005, "1545384635.005"},
      {"zero", 0, "0"},
      {"before the epoch", -1500, "-1.5"},
  };
  for (const auto& row : rows) EXPECT_EQ(formatTime(at(row.ms)), row.want) << row.what;
}

TEST(WireTest, FormatTimeout) {
  EXPECT_EQ(formatTimeout(std::chrono::seconds(2)), "2s") << "whole seconds";
  EXPECT_EQ(formatTimeout(milliseconds(1500)), "1500ms") << "fractions in ms";
  EXPECT_EQ(formatTimeout(std::chrono::microseconds(10)), "1ms") << "at least 1ms";
}

TEST(WireTest, Escaping) {
  EXPECT_EQ(queryEscape("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9") << "query escape as Go";
  EXPECT_EQ(queryEscape("-_.~AZaz09"), "-_.~AZaz09") << "unreserved kept";
  EXPECT_EQ(pathEscape("a b/c"), "a%20b%2Fc") << "path segment escape";
}

TEST(WireTest, EncodeParamsSortsKeysStably) {
  Params params = {{"start", "1"}, {"match[]", "up{a=\"b\"}"}, {"match[]", "x"}};
  EXPECT_EQ(encodeParams(params), "match%5B%5D=up%7Ba%3D%22b%22%7D&match%5B%5D=x&start=1");
}

TEST(WireTest, JoinPath) {
  struct Row {
    const char* base;
    const char* path;
    const char* want;
  } rows[] = {
      {"", "/api/v1/query", "/api/v1/query"},
      {"/", "/api/v1/query", "/api/v1/query"},
      {"/prometheus", "/api/v1/query", "/prometheus/api/v1/query"},
      {"/prometheus/", "api/v1/query", "/prometheus/api/v1/query"},
      {"prom", "/-/ready", "/prom/-/ready"},
  };
  for (const auto& row : rows) {
    EXPECT_EQ(joinPath(row.base, row.path), row.want) << row.base << " + " << row.path;
  }
}

TEST(WireTest, QueryAndMatchParams) {
  auto q = queryParams("up", at(1500), std::chrono::seconds(3));
  EXPECT_EQ(encodeParams(q), "query=up&time=1.5&timeout=3s");
  TimeRange window{at(1000), std::nullopt};
  EXPECT_EQ(encodeParams(matchParams({"up"}, window)), "match%5B%5D=up&start=1")
      << "absent end is not sent";
}

TEST(WireTest, DecodesEveryResultType) {
  auto vector = decodeQueryResponse(200, R"({"status":"success","data":{"resultType":"vector",
      "result":[{"metric":{"pod":"a","__name__":"m"},"value":[1700000000.5,"2.25"]},
                {"metric":{},"value":[1700000000,"NaN"]},
                {"metric":{"pod":"b"},"value":[1700000000,"+Inf"]},
                {"metric":{"pod":"c"},"value":[1700000000,"-Inf"]}]},
      "warnings":["w1"]})");
  ASSERT_TRUE(vector.ok()) << vector.status().toString();
  const QueryResult& v = **vector;
  EXPECT_EQ(v.type, ResultType::kVector);
  ASSERT_EQ(v.vector.size(), 4u);
  EXPECT_EQ(v.vector[0].metric.at("pod"), "a");
  EXPECT_EQ(v.vector[0].metric.at("__name__"), "m");
  EXPECT_EQ(v.vector[0].point.value, 2.25);
  EXPECT_EQ(v.vector[0].point.timestamp, at(1700000000500));
  EXPECT_TRUE(std::isnan(v.vector[1].point.value)) << "NaN kept";
  EXPECT_EQ(v.vector[2].point.value, std::numeric_limits<double>::infinity()) << "+Inf kept";
  EXPECT_EQ(v.vector[3].point.value, -std::numeric_limits<double>::infinity()) << "-Inf kept";
  EXPECT_EQ(v.warnings, std::vector<std::string>{"w1"});

  auto scalar = decodeQueryResponse(
      200, R"({"status":"success","data":{"resultType":"scalar","result":[12.5,"7"]}})");
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ((*scalar)->type, ResultType::kScalar);
  EXPECT_EQ((*scalar)->scalar.value, 7);
  EXPECT_EQ((*scalar)->scalar.timestamp, at(12500));

  auto matrix = decodeQueryResponse(200, R"({"status":"success","data":{"resultType":"matrix",
      "result":[{"metric":{"a":"b"},"values":[[1,"1"],[2,"2e3"]]}]}})");
  ASSERT_TRUE(matrix.ok());
  EXPECT_EQ((*matrix)->type, ResultType::kMatrix);
  ASSERT_EQ((*matrix)->matrix.size(), 1u);
  ASSERT_EQ((*matrix)->matrix[0].points.size(), 2u);
  EXPECT_EQ((*matrix)->matrix[0].points[1].value, 2000);

  auto string = decodeQueryResponse(
      200, R"({"status":"success","data":{"resultType":"string","result":[3,"hello"]}})");
  ASSERT_TRUE(string.ok());
  EXPECT_EQ((*string)->type, ResultType::kString);
  EXPECT_EQ((*string)->string, "hello");
  EXPECT_EQ(expectResultType(**string, ResultType::kVector).message(),
            "Internal error occurred: prometheus unexpected result type: string (wanted vector)");
}

TEST(WireTest, DecodingIgnoresFieldOrderAndUnknownFields) {
  auto result =
      decodeQueryResponse(200, R"({"data":{"result":[{"value":[2,"5"],"extra":{"a":[1,{}]},
      "metric":{"b":"2","a":"1"}}],"stats":{"x":[1,2,3]},"resultType":"vector"},"infos":[],
      "status":"success"})");
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ((*result)->vector.size(), 1u);
  EXPECT_EQ((*result)->vector[0].point.value, 5);
  EXPECT_EQ((*result)->vector[0].metric, (Labels{{"a", "1"}, {"b", "2"}})) << "unsorted labels";
}

TEST(WireTest, NativeHistogramSampleIsNaNNotZero) {
  auto result = decodeQueryResponse(200, R"({"status":"success","data":{"resultType":"vector",
      "result":[{"metric":{"a":"b"},"histogram":[7,{"count":"3","sum":"1","buckets":[[0,"1","2","3"]]}]}]}})");
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ((*result)->vector.size(), 1u);
  EXPECT_TRUE(std::isnan((*result)->vector[0].point.value));
  EXPECT_EQ((*result)->vector[0].point.timestamp, at(7000));
}

// Found by fuzzing: converting a sample time past 2262 to the clock overflowed (undefined
// behaviour).
TEST(WireTest, SampleTimesTheClockCannotHoldAreClamped) {
  auto result = decodeQueryResponse(200, R"({"status":"success","data":{"resultType":"vector",
      "result":[{"metric":{},"value":[1e300,"1"]},{"metric":{},"value":[-15405177414500,"2"]}]}})");
  ASSERT_TRUE(result.ok()) << result.status().toString();
  ASSERT_EQ((*result)->vector.size(), 2u);
  EXPECT_EQ((*result)->vector[0].point.timestamp, at(9'000'000'000'000));
  EXPECT_EQ((*result)->vector[1].point.timestamp, at(-9'000'000'000'000));
}

TEST(WireTest, DecodeFailuresNameTheirClass) {
  struct Row {
    const char* what;
    int status;
    const char* body;
    FailureKind kind;
    int httpCode;
    const char* messagePart;
  } rows[] = {
      {"garbage JSON", 200, "<html>oops", FailureKind::kBadJson, 500, "not a JSON object"},
      {"truncated JSON", 200, R"({"status":"success","data":{)", FailureKind::kBadJson, 500,
       "not a JSON object"},
      {"no status field", 200, R"({"data":{}})", FailureKind::kBadJson, 500, "no \"status\""},
      {"unknown result type", 200,
       R"({"status":"success","data":{"resultType":"weird","result":[]}})",
       FailureKind::kUnexpectedResultType, 500, "\"weird\""},
      {"value not a string", 200,
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,2]}]}})",
       FailureKind::kBadJson, 500, "not [<time>"},
      {"value not a number", 200,
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"x1"]}]}})",
       FailureKind::kBadJson, 500, "sample value \"x1\""},
      {"bad_data error on 400", 400,
       R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})",
       FailureKind::kPrometheusError, 500, "bad_data: parse error at char 3"},
      {"execution error on 422", 422,
       R"({"status":"error","errorType":"execution","error":"many-to-many"})",
       FailureKind::kPrometheusError, 500, "execution: many-to-many"},
      {"timeout error on 503 is transient", 503,
       R"({"status":"error","errorType":"timeout","error":"query timed out"})",
       FailureKind::kPrometheusError, 503, "timeout: query timed out"},
      {"HTTP 500 is an unknown response code", 500, "internal", FailureKind::kHttpStatus, 500,
       "unknown response code 500"},
      {"HTTP 502 is transient", 502, "bad gateway", FailureKind::kHttpStatus, 503,
       "unknown response code 502"},
      {"HTTP 503 without JSON", 503, "Service Unavailable", FailureKind::kHttpStatus, 503,
       "without a JSON body"},
      {"vector element that is not an object", 200,
       R"({"status":"success","data":{"resultType":"vector","result":[1]}})", FailureKind::kBadJson,
       500, "not an object"},
      {"vector element without value", 200,
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{}}]}})",
       FailureKind::kBadJson, 500, "has no value"},
      {"scalar with a third item", 200,
       R"({"status":"success","data":{"resultType":"scalar","result":[1,"2",3]}})",
       FailureKind::kBadJson, 500, "not [<time>"},
      {"label value that is a number", 200,
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"1"]}]}})",
       FailureKind::kBadJson, 500, "label \"a\""},
      {"no data", 200, R"({"status":"success"})", FailureKind::kBadJson, 500, "no \"data\""},
      {"a JSON array body", 200, "[1,2]", FailureKind::kBadJson, 500, "not a JSON object"},
      {"HTTP 404 (wrong path prefix)", 404, "404 page not found", FailureKind::kHttpStatus, 500,
       "unknown response code 404"},
  };
  for (const auto& row : rows) {
    auto result = decodeQueryResponse(row.status, row.body);
    ASSERT_FALSE(result.ok()) << row.what;
    EXPECT_EQ(failureKindOf(result.status()), row.kind) << row.what;
    EXPECT_EQ(result.status().httpCode(), row.httpCode) << row.what;
    EXPECT_NE(result.status().message().find(row.messagePart), std::string::npos)
        << row.what << ": " << result.status().message();
  }
}

TEST(WireTest, DecodesSeriesAndStringLists) {
  auto series = decodeSeriesResponse(
      200, R"({"status":"success","data":[{"__name__":"up","job":"a"},{"__name__":"x"}]})");
  ASSERT_TRUE(series.ok());
  ASSERT_EQ(series->size(), 2u);
  EXPECT_EQ((*series)[0].at("job"), "a");
  auto labels = decodeStringListResponse(200, R"({"status":"success","data":["a","b"]})");
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ(*labels, (std::vector<std::string>{"a", "b"}));
  auto none = decodeStringListResponse(200, R"({"status":"success","data":null})");
  ASSERT_TRUE(none.ok()) << "null data is an empty list";
  EXPECT_TRUE(none->empty());
  auto bad = decodeSeriesResponse(200, R"({"status":"success","data":[{"a":1}]})");
  EXPECT_EQ(failureKindOf(bad.status()), FailureKind::kBadJson) << "non-string label value";
  EXPECT_FALSE(decodeSeriesResponse(200, R"({"status":"success","data":{}})").ok())
      << "series data must be an array";
  EXPECT_FALSE(decodeSeriesResponse(200, R"({"status":"success","data":["x"]})").ok())
      << "series must be objects";
  EXPECT_FALSE(decodeStringListResponse(200, R"({"status":"success","data":[1]})").ok())
      << "names must be strings";
}

// The pieces of `body`, `size` bytes each (the last one shorter), as a BodyPieces source.
BodyPieces piecesOf(const std::string& body, size_t size, size_t* calls = nullptr) {
  auto at = std::make_shared<size_t>(0);
  return [&body, size, at, calls] {
    if (calls) ++*calls;
    std::string_view piece = std::string_view(body).substr(std::min(*at, body.size()), size);
    *at += piece.size();
    return piece;
  };
}

TEST(WireTest, StreamedSeriesLabelNamesEqualTheWholeBodysForEveryPieceSize) {
  const std::string body =
      R"({"warnings":["w"],"status":"success","data":[{"__name__":"up","job":"a\"\u00e9"},)"
      R"({"__name__":"up","pod":"p","instance":"i"},{"__name__":"x","z":"1"},{"job":"no name"}]})";
  auto whole = decodeSeriesLabelNamesResponse(200, body);
  ASSERT_TRUE(whole.ok()) << whole.status().toString();
  const MetricLabelNames want{{"up", {"instance", "job", "pod"}}, {"x", {"z"}}};
  EXPECT_EQ(*whole, want);
  for (size_t size = 1; size <= body.size(); ++size) {
    auto streamed = decodeSeriesLabelNamesResponse(200, piecesOf(body, size));
    ASSERT_TRUE(streamed.ok()) << "pieces of " << size << ": " << streamed.status().toString();
    EXPECT_EQ(*streamed, want) << "pieces of " << size;
  }
}

TEST(WireTest, StreamedDecodingFailsLikeTheWholeBodyAndStopsReading) {
  struct Row {
    const char* what;
    int status;
    std::string body;
    FailureKind kind;
    const char* messagePart;
  };
  const std::string tail(1 << 20, ' ');  // a long rest the decoder must not read
  const std::vector<Row> rows = {
      {"garbage", 200, "<html>" + tail, FailureKind::kBadJson, "body is not a JSON object: <html>"},
      {"truncated", 200, R"({"status":"success","data":[{"__name__":)", FailureKind::kBadJson,
       "not a JSON object"},
      {"label value that is a number", 200,
       R"({"status":"success","data":[{"__name__":"a","b":1},)" + tail, FailureKind::kBadJson,
       "label \"b\""},
      {"Prometheus error", 422, R"({"status":"error","errorType":"execution","error":"boom"})",
       FailureKind::kPrometheusError, "execution: boom"},
      {"HTTP 500 shows the first bytes", 500, "internal" + tail, FailureKind::kHttpStatus,
       "unknown response code 500: internal"},
      {"series data that is an object", 200, R"({"status":"success","data":{}})",
       FailureKind::kBadJson, "not an array"},
  };
  for (const auto& row : rows) {
    size_t calls = 0;
    auto streamed = decodeSeriesLabelNamesResponse(row.status, piecesOf(row.body, 16, &calls));
    auto whole = decodeSeriesLabelNamesResponse(row.status, row.body);
    ASSERT_FALSE(streamed.ok()) << row.what;
    EXPECT_EQ(failureKindOf(streamed.status()), row.kind) << row.what;
    EXPECT_NE(streamed.status().message().find(row.messagePart), std::string::npos)
        << row.what << ": " << streamed.status().message();
    EXPECT_EQ(streamed.status().message(), whole.status().message()) << row.what;
    EXPECT_LT(calls, 64u) << row.what << ": read on after the error";
  }
}

TEST(ErrorsTest, FailureKindRoundTrips) {
  for (auto kind :
       {FailureKind::kConnection, FailureKind::kTimeout, FailureKind::kHttpStatus,
        FailureKind::kPrometheusError, FailureKind::kBadJson, FailureKind::kBodyTooLarge,
        FailureKind::kUnexpectedResultType, FailureKind::kCredentials}) {
    Status status = failure(kind, "detail");
    EXPECT_EQ(failureKindOf(status), kind) << failureKindName(kind);
    EXPECT_EQ(failureKindOf(status.withContext("unable to fetch metrics")), kind)
        << "survives added context";
  }
  EXPECT_EQ(failure(FailureKind::kTimeout, "x").httpCode(), 503) << "timeouts are transient";
  EXPECT_EQ(failure(FailureKind::kConnection, "x").httpCode(), 503) << "connection is transient";
  EXPECT_EQ(failure(FailureKind::kBadJson, "x").httpCode(), 500);
  EXPECT_FALSE(failureKindOf(Status::notFound("x")).has_value()) << "foreign statuses";
}

}  // namespace wire_test
}  // namespace gpuscale::prom
