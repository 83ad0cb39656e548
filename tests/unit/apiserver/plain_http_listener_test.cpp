#include "gpuscale/apiserver/plain_http_listener.h"

#include <gtest/gtest.h>

#include <future>
#include <vector>

#include "support/slow_clients.h"
#include "support/tls_client.h"
#include "support/wait_until.h"

namespace gpuscale::apiserver {
namespace plain_http_listener_test {

using namespace std::chrono_literals;
using testing::ClientOptions;
using testing::TlsClient;

core::PlainHttpReply probes(std::string_view path) {
  if (path == "/healthz" || path == "/readyz") return {200, "text/plain", "ok"};
  return {404, "text/plain", "404 page not found"};
}

std::unique_ptr<TlsClient> plainClient(uint16_t port, const std::string& source = "") {
  return std::make_unique<TlsClient>(port, ClientOptions{false, std::nullopt, source});
}

// The value of the counter `name` whose labels include `label` (0: absent).
double counter(prometheus::Registry& registry, const std::string& name, const std::string& label,
               const std::string& value) {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) {
      for (const auto& pair : metric.label) {
        if (pair.name == label && pair.value == value) return metric.counter.value;
      }
    }
  }
  return 0;
}

TEST(PlainHttpListenerTest, ServesThePathWithoutItsQueryAndClosesTheConnection) {
  std::string seen;
  auto listener = PlainHttpListener::start("127.0.0.1:0", [&](std::string_view path) {
    seen = std::string(path);
    return probes(path);
  });
  ASSERT_TRUE(listener.ok()) << listener.status().toString();
  auto client = plainClient((*listener)->port());
  auto ok = client->get("/healthz?verbose=1");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "ok");
  EXPECT_EQ(seen, "/healthz");
  EXPECT_TRUE(ok->closeRequested);
  EXPECT_TRUE(client->closedByPeer(10s));
  EXPECT_EQ(plainClient((*listener)->port())->get("/nope")->status, 404);
  (*listener)->stop();
  (*listener)->stop();  // idempotent
}

TEST(PlainHttpListenerTest, BadAddressesAreErrors) {
  EXPECT_EQ(PlainHttpListener::start("nohostport", probes).status().httpCode(), 400);
  EXPECT_EQ(PlainHttpListener::start("not-an-ip:80", probes).status().httpCode(), 422);
}

// Before, the listener read each connection with a blocking socket on its one thread: a silent
// connection held /healthz for everyone, and stop() (SIGTERM) waited for it.
TEST(PlainHttpListenerTest, SilentAndSlowClientsHoldOnlyTheirOwnConnection) {
  auto listener = PlainHttpListener::start("127.0.0.1:0", probes);
  ASSERT_TRUE(listener.ok()) << listener.status().toString();
  const uint16_t port = (*listener)->port();
  testing::SlowClients held(port, 8, 4, 2s);
  ASSERT_TRUE(testing::waitUntil([&] { return (*listener)->openConnections() >= 12; }, 30s, 5ms));
  for (int i = 0; i < 3; ++i) {
    auto reply = plainClient(port)->get("/healthz");
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, 200);
  }
  // stop() with all of them open returns (in-flight requests get shutdownTimeout, 2 s).
  auto stopped = std::async(std::launch::async, [&] { (*listener)->stop(); });
  EXPECT_EQ(stopped.wait_for(60s), std::future_status::ready);
  for (auto& client : held.silent()) EXPECT_TRUE(client->closedByPeer(10s));
}

TEST(PlainHttpListenerTest, DeadlinesFireAndAreCounted) {
  PlainListenerOptions options;
  options.firstRequestTimeout = 200ms;
  options.requestReadTimeout = 300ms;
  options.registry = std::make_shared<prometheus::Registry>();
  auto listener = PlainHttpListener::start("127.0.0.1", 0, probes, options);
  ASSERT_TRUE(listener.ok()) << listener.status().toString();
  auto silent = plainClient((*listener)->port());
  EXPECT_TRUE(silent->closedByPeer(30s));
  auto half = plainClient((*listener)->port());
  ASSERT_TRUE(half->send("GET /healthz HTTP/1.1\r\nHost:"));
  EXPECT_TRUE(half->closedByPeer(30s));
  // Counted as their handlers see the deadline (the socket may close a moment earlier).
  for (const char* deadline : {"first_request", "request_read"}) {
    EXPECT_TRUE(testing::waitUntil(
        [&] {
          return counter(*options.registry, "gpuscale_apiserver_connection_timeouts_total",
                         "deadline", deadline) == 1;
        },
        30s, 5ms))
        << deadline;
  }
}

TEST(PlainHttpListenerTest, AFullListenerStillAnswersProbes) {
  PlainListenerOptions options;
  options.connections = {2, 0, 1};
  options.registry = std::make_shared<prometheus::Registry>();
  auto listener = PlainHttpListener::start("127.0.0.1", 0, probes, options);
  ASSERT_TRUE(listener.ok()) << listener.status().toString();
  const uint16_t port = (*listener)->port();
  auto first = plainClient(port);
  auto second = plainClient(port);
  ASSERT_TRUE(testing::waitUntil([&] { return (*listener)->openConnections() == 2; }, 30s, 5ms));
  // Full: the room kept for probes answers a probe, and only a probe (one connection at a time:
  // each waits until the previous one is gone).
  auto probe = plainClient(port)->get("/readyz");
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->status, 200);
  ASSERT_TRUE(testing::waitUntil([&] { return (*listener)->openConnections() == 2; }, 30s, 5ms));
  auto other = plainClient(port)->get("/other");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 503);
  // With the probe room held by a silent connection too, the next one is closed at once.
  ASSERT_TRUE(testing::waitUntil([&] { return (*listener)->openConnections() == 2; }, 30s, 5ms));
  auto third = plainClient(port);
  ASSERT_TRUE(testing::waitUntil([&] { return (*listener)->openConnections() == 3; }, 30s, 5ms));
  auto fourth = plainClient(port);
  EXPECT_TRUE(fourth->closedByPeer(10s));
  EXPECT_EQ(counter(*options.registry, "gpuscale_apiserver_rejected_connections_total", "reason",
                    "listener_full"),
            1);
  EXPECT_EQ(
      counter(*options.registry, "gpuscale_apiserver_refused_requests_total", "limit", "not_probe"),
      1);
}

}  // namespace plain_http_listener_test
}  // namespace gpuscale::apiserver
