#include "request_parser.h"

#include <gtest/gtest.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <cstring>
#include <map>

#include "support/bytes_stream.h"
#include "support/request_limit_cases.h"

namespace gpuscale::apiserver::detail {
namespace request_parser_test {

namespace beast = boost::beast;
namespace http = beast::http;

struct Parsed {
  RequestRefusal refusal = RequestRefusal::kNone;
  bool done = false;
  HttpRequest request;
  bool head = false;
  bool keepAlive = false;
};

// Reads one request as a connection does: a read buffer bounded by readBufferLimit().
Parsed parse(const std::string& bytes, const RequestLimits& limits = {}, size_t piece = 4096) {
  testing::BytesStream stream(bytes, piece);
  beast::flat_buffer buffer(readBufferLimit(limits));
  RequestParser parser(limits);
  beast::error_code ec;
  http::read(stream, buffer, parser, ec);
  Parsed out;
  if (ec) {
    out.refusal = parser.refusal(ec);
    return out;
  }
  out.done = true;
  out.head = parser.head();
  out.keepAlive = parser.keep_alive();
  out.request = parser.release();
  return out;
}

TEST(RequestParserTest, EveryLimitAtItOneByteOverAndAMegabyteOver) {
  const RequestLimits limits;
  for (const auto& row : testing::requestLimitCases(limits)) {
    for (size_t piece : {size_t{1} << 20, size_t{1000}}) {
      const Parsed parsed = parse(row.bytes, limits, piece);
      const int status = parsed.done ? 200 : static_cast<int>(refusalStatus(parsed.refusal));
      EXPECT_EQ(status, row.status) << row.name << " (reads of " << piece << " bytes)";
      if (parsed.done) {
        EXPECT_EQ(parsed.request.path, "/healthz") << row.name;
      }
    }
  }
}

TEST(RequestParserTest, OneByteOverNamesTheLimit) {
  const RequestLimits limits;
  const std::map<std::string, RequestRefusal> expected = {
      {"field name one byte over", RequestRefusal::kFieldBytes},
      {"field value one byte over", RequestRefusal::kFieldBytes},
      {"header count one over", RequestRefusal::kHeaderCount},
      {"header bytes one over", RequestRefusal::kHeaderBytes},
      {"target one byte over", RequestRefusal::kTargetBytes},
      {"body on a GET one byte over", RequestRefusal::kBodyBytes},
      {"chunked body one byte over", RequestRefusal::kBodyBytes},
      {"chunked body with a trailer over the field limit", RequestRefusal::kFieldBytes},
      {"chunk extension of a megabyte", RequestRefusal::kBodyBytes},
  };
  size_t checked = 0;
  for (const auto& row : testing::requestLimitCases(limits)) {
    auto it = expected.find(row.name);
    if (it == expected.end()) continue;
    ++checked;
    EXPECT_EQ(refusalLabel(parse(row.bytes, limits).refusal), refusalLabel(it->second)) << row.name;
  }
  EXPECT_EQ(checked, expected.size());
}

TEST(RequestParserTest, SmallerLimitsAreHonoured) {
  RequestLimits limits;
  limits.headerBytes = 2000;
  limits.fieldBytes = 500;
  limits.headerCount = 20;
  limits.targetBytes = 300;
  limits.bodyBytes = 0;
  for (const auto& row : testing::requestLimitCases(limits)) {
    const Parsed parsed = parse(row.bytes, limits);
    const int status = parsed.done ? 200 : static_cast<int>(refusalStatus(parsed.refusal));
    EXPECT_EQ(status, row.status) << row.name;
  }
}

TEST(RequestParserTest, BuildsTheRequest) {
  const Parsed parsed = parse(
      "GET /apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/m?labelSelector="
      "app%3Dx&a=b HTTP/1.1\r\nHost: x\r\nX-Remote-Group: a\r\nx-remote-group: b\r\n"
      "Content-Length: 3\r\n\r\nabc");
  ASSERT_TRUE(parsed.done);
  const HttpRequest& r = parsed.request;
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.target,
            "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/%2A/m?labelSelector="
            "app%3Dx&a=b");
  EXPECT_EQ(r.path, "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/m");
  EXPECT_EQ(r.rawQuery, "labelSelector=app%3Dx&a=b");
  ASSERT_EQ(r.headers.size(), 4u);
  EXPECT_EQ(r.headerValues("X-Remote-Group"), (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(r.body, "abc");
  EXPECT_TRUE(parsed.keepAlive);
  EXPECT_FALSE(parsed.head);
}

TEST(RequestParserTest, HeadCloseAndTrailers) {
  EXPECT_TRUE(parse("HEAD / HTTP/1.1\r\nHost: x\r\n\r\n").head);
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").keepAlive);
  EXPECT_FALSE(parse("GET / HTTP/1.0\r\n\r\n").keepAlive);
  const Parsed trailed = parse(
      "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nX-Trailer: t\r\n\r\n");
  ASSERT_TRUE(trailed.done);
  EXPECT_EQ(trailed.request.body, "ab");
  EXPECT_FALSE(trailed.request.header("X-Trailer").has_value());
}

TEST(RequestParserTest, MalformedRequestsAre400) {
  struct Row {
    const char* what;
    std::string bytes;
  };
  const Row rows[] = {
      {"TLS bytes on a plain port", std::string("\x16\x03\x01garbage\r\n\r\n")},
      {"unknown version", "GET / HTTP/9.9\r\n\r\n"},
      {"field without a colon", "GET / HTTP/1.1\r\nBad Header\r\n\r\n"},
      {"relative target", "GET relative HTTP/1.1\r\n\r\n"},
      {"absolute target", "GET http://x/ HTTP/1.1\r\n\r\n"},
      {"bad percent escape", "GET /%zz HTTP/1.1\r\n\r\n"},
      {"bad chunk size", "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"},
      {"two content lengths", "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"},
  };
  for (const auto& row : rows) {
    const Parsed parsed = parse(row.bytes);
    EXPECT_FALSE(parsed.done) << row.what;
    EXPECT_EQ(refusalStatus(parsed.refusal), 400u) << row.what;
  }
}

TEST(RequestParserTest, APeerThatStopsIsNoRefusal) {
  // Cut short: the connection just closes (nothing to answer).
  EXPECT_EQ(parse("GET / HTTP/1.1\r\nHost:").refusal, RequestRefusal::kNone);
  EXPECT_EQ(parse("").refusal, RequestRefusal::kNone);
  EXPECT_EQ(parse("GET / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc").refusal,
            RequestRefusal::kNone);
}

}  // namespace request_parser_test
}  // namespace gpuscale::apiserver::detail
