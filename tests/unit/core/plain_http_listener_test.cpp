#include "gpuscale/core/plain_http_listener.h"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace gpuscale::core {
namespace {

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

http::response<http::string_body> get(std::uint16_t port, const std::string& target) {
  boost::asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  http::request<http::empty_body> request(http::verb::get, target, 11);
  http::write(socket, request);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(socket, buffer, response);
  return response;
}

TEST(ParseHostPortTest, Table) {
  struct Row {
    const char* text;
    bool ok;
    const char* host;
    std::uint16_t port;
  };
  const Row rows[] = {
      {"127.0.0.1:8081", true, "127.0.0.1", 8081},
      {"0.0.0.0:0", true, "0.0.0.0", 0},
      {"[::1]:9", true, "::1", 9},
      {"localhost", false, "", 0},
      {":80", false, "", 0},
      {"h:65536", false, "", 0},
      {"h:8x", false, "", 0},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.text);
    auto parsed = parseHostPort(row.text);
    ASSERT_EQ(parsed.has_value(), row.ok);
    if (row.ok) {
      EXPECT_EQ(parsed->first, row.host);
      EXPECT_EQ(parsed->second, row.port);
    }
  }
}

TEST(PlainHttpListenerTest, ServesThePathWithoutItsQueryAndClosesTheConnection) {
  std::string seen;
  auto listener = PlainHttpListener::start("127.0.0.1:0", [&](std::string_view path) {
    seen = std::string(path);
    PlainHttpReply reply;
    if (path == "/healthz") {
      reply.body = "ok";
    } else {
      reply.status = 404;
    }
    return reply;
  });
  ASSERT_TRUE(listener.ok()) << listener.status().toString();
  auto ok = get((*listener)->port(), "/healthz?verbose=1");
  EXPECT_EQ(ok.result_int(), 200);
  EXPECT_EQ(ok.body(), "ok");
  EXPECT_EQ(seen, "/healthz");
  EXPECT_FALSE(ok.keep_alive());
  EXPECT_EQ(get((*listener)->port(), "/nope").result_int(), 404);
  (*listener)->stop();
  (*listener)->stop();  // idempotent
}

TEST(PlainHttpListenerTest, BadAddressesAreErrors) {
  auto handler = [](std::string_view) { return PlainHttpReply{}; };
  EXPECT_FALSE(PlainHttpListener::start("nohostport", handler).ok());
  EXPECT_FALSE(PlainHttpListener::start("not-an-ip:80", handler).ok());
}

}  // namespace
}  // namespace gpuscale::core
