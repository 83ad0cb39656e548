// A flood of junk bearer tokens costs an authorized caller little: the real gpuscale-adapter in
// delegated mode against a fake kube-apiserver whose TokenReview of any unknown token takes 8 s
// (the valid token's review and every SubjectAccessReview answer at once), and a Prometheus stub.
// An HPA-like caller with a valid token asks for a custom metric 20 times a second over HTTPS
// keep-alive, first alone, then while 200 distinct junk tokens a second arrive for 30 s (an
// asynchronous client: new connections when none is idle, as an attacker would).
//
// What must hold (no timing threshold: the latencies are printed, and compared in
// bench/load/auth_flood.sh and docs/benchmarks/adapter.md):
//  - every request of the caller is answered 200, also while its cached identity expires (10 s
//    TTL) during the flood (before, the slow reviews held every handler thread and the caller was
//    answered 429 or 504 nearly always);
//  - junk beyond the review limits is answered 429 (counted in /metrics), the rest 401 when their
//    reviews answer;
//  - the reviews the junk caused are bounded: each takes 8 s and at most
//    --delegated-reviews-max-waiting wait at once, so no more than that many per 8 s of flood.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "adapter_process.h"
#include "support/http_test_server.h"
#include "support/pod_rules.h"
#include "support/tls_client.h"

namespace gpuscale::adapter::testing {
namespace adapter_auth_flood_test {

using namespace std::chrono_literals;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

constexpr char kValidToken[] = "hpa-token";
constexpr int kMaxWaiting = 256;
constexpr char kMetricPath[] = "/apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/p1/m";

HttpTestResponse prometheus(const HttpTestRequest& request) {
  HttpTestResponse r;
  if (request.path == "/api/v1/label/__name__/values") {
    r.body = R"({"status":"success","data":["m"]})";
  } else if (request.path == "/api/v1/labels") {
    r.body = R"({"status":"success","data":["__name__","namespace","pod"]})";
  } else if (request.path == "/api/v1/query") {
    r.body = R"({"status":"success","data":{"resultType":"vector","result":[)"
             R"({"metric":{"namespace":"default","pod":"p1"},"value":[1714557600,"1.5"]}]}})";
  } else {
    r.status = 404;
  }
  return r;
}

// kube-apiserver for delegation: TokenReview knows kValidToken at once and takes 8 s to reject
// anything else; SubjectAccessReview allows user "hpa" everything, at once.
HttpTestResponse kubeApiServer(const HttpTestRequest& request, std::atomic<int>& junkReviews) {
  HttpTestResponse r;
  auto body = nlohmann::json::parse(request.body, nullptr, false);
  if (request.path == "/apis/authentication.k8s.io/v1/tokenreviews" && body.is_object()) {
    const bool valid = body["spec"].value("token", "") == kValidToken;
    body["status"] = {{"authenticated", valid}};
    if (valid) {
      body["status"]["user"] = {{"username", "hpa"}, {"groups", {"system:authenticated"}}};
    } else {
      ++junkReviews;
      r.delay = 8s;
    }
  } else if (request.path == "/apis/authorization.k8s.io/v1/subjectaccessreviews" &&
             body.is_object()) {
    body["status"] = {{"allowed", body["spec"].value("user", "") == "hpa"}};
  } else {
    r.status = 404;
    r.body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","code":404})";
    return r;
  }
  r.status = 201;
  r.body = body.dump();
  return r;
}

// Junk requests at a fixed rate, each with a token never seen before, over keep-alive TLS
// connections: an idle one if there is one, else a new one (up to `maxConnections`).
class JunkFlood {
 public:
  JunkFlood(uint16_t port, int perSecond, size_t maxConnections)
      : port_(port), period_(1'000'000 / perSecond), maxConnections_(maxConnections) {
    tls_.set_verify_mode(net::ssl::verify_none);
    tick();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~JunkFlood() { stop(); }

  void stop() {
    if (!thread_.joinable()) return;
    net::post(io_, [this] {
      stopping_ = true;
      ticker_.cancel();
      for (auto& connection : all_) {
        beast::error_code ec;
        beast::get_lowest_layer(connection->stream).socket().close(ec);
      }
    });
    thread_.join();
  }

  std::map<int, int> answers() {
    std::lock_guard lock(mutex_);
    return answers_;
  }
  int sent() const { return sent_; }
  int skipped() const { return skipped_; }

 private:
  struct Connection {
    explicit Connection(net::io_context& io, net::ssl::context& tls) : stream(io, tls) {}
    beast::ssl_stream<beast::tcp_stream> stream;
    http::request<http::empty_body> request;
    http::response<http::string_body> response;
    beast::flat_buffer buffer;
  };

  void tick() {
    ticker_.expires_at(next_ += period_);
    ticker_.async_wait([this](beast::error_code ec) {
      if (ec || stopping_) return;
      send();
      tick();
    });
  }

  void send() {
    std::shared_ptr<Connection> connection;
    if (!idle_.empty()) {
      connection = idle_.back();
      idle_.pop_back();
      return request(connection);
    }
    if (all_.size() >= maxConnections_) {
      ++skipped_;
      return;
    }
    connection = std::make_shared<Connection>(io_, tls_);
    all_.push_back(connection);
    beast::get_lowest_layer(connection->stream)
        .async_connect(net::ip::tcp::endpoint(net::ip::make_address("127.0.0.1"), port_),
                       [this, connection](beast::error_code ec) {
                         if (ec) return drop(connection);
                         connection->stream.async_handshake(
                             net::ssl::stream_base::client,
                             [this, connection](beast::error_code e) {
                               if (e) return drop(connection);
                               request(connection);
                             });
                       });
  }

  void request(const std::shared_ptr<Connection>& connection) {
    ++sent_;
    connection->request = {http::verb::get, kMetricPath, 11};
    connection->request.set(http::field::host, "127.0.0.1");
    connection->request.set(http::field::authorization, "Bearer junk-" + std::to_string(++tokens_));
    http::async_write(
        connection->stream, connection->request, [this, connection](beast::error_code ec, size_t) {
          if (ec) return drop(connection);
          connection->response = {};
          http::async_read(connection->stream, connection->buffer, connection->response,
                           [this, connection](beast::error_code e, size_t) {
                             if (e) return drop(connection);
                             {
                               std::lock_guard lock(mutex_);
                               ++answers_[connection->response.result_int()];
                             }
                             if (!connection->response.keep_alive()) return drop(connection);
                             idle_.push_back(connection);
                           });
        });
  }

  void drop(const std::shared_ptr<Connection>& connection) {
    all_.erase(std::remove(all_.begin(), all_.end(), connection), all_.end());
  }

  const uint16_t port_;
  const std::chrono::microseconds period_;
  const size_t maxConnections_;
  net::io_context io_;
  net::ssl::context tls_{net::ssl::context::tls_client};
  net::steady_timer ticker_{io_};
  std::chrono::steady_clock::time_point next_ = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<Connection>> all_;
  std::vector<std::shared_ptr<Connection>> idle_;
  bool stopping_ = false;
  std::atomic<int> sent_{0};
  std::atomic<int> skipped_{0};
  uint64_t tokens_ = 0;
  std::mutex mutex_;
  std::map<int, int> answers_;
  std::thread thread_;
};

// The HPA-like caller: 20 requests a second on one keep-alive connection, for `duration`.
struct CallerRun {
  std::vector<double> millis;
  int failures = 0;
  std::string lastFailure;
};

CallerRun callFor(uint16_t port, std::chrono::seconds duration) {
  CallerRun run;
  std::unique_ptr<gpuscale::testing::TlsClient> connection;
  const auto end = std::chrono::steady_clock::now() + duration;
  auto next = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < end) {
    const auto start = std::chrono::steady_clock::now();
    try {
      if (!connection) connection = std::make_unique<gpuscale::testing::TlsClient>(port);
      auto reply = connection->get(kMetricPath,
                                   std::string("Authorization: Bearer ") + kValidToken + "\r\n");
      if (reply && reply->status == 200) {
        run.millis.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
      } else {
        ++run.failures;
        run.lastFailure = reply ? std::to_string(reply->status) + " " + reply->body : "no reply";
        connection.reset();
      }
    } catch (const std::exception& error) {
      ++run.failures;
      run.lastFailure = error.what();
      connection.reset();
    }
    next += 50ms;
    std::this_thread::sleep_until(next);
  }
  return run;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

TEST(AdapterAuthFlood, JunkTokensWithSlowReviewsLeaveAnAuthorizedCallerAnswered) {
  std::atomic<int> junkReviews{0};
  HttpTestServer prom(prometheus);
  HttpTestServer kube([&junkReviews](const HttpTestRequest& request) {
    return kubeApiServer(request, junkReviews);
  });
  gpuscale::testing::TempDir dir;
  writeFile(dir.file("rules.yaml"), gpuscale::testing::podSumRules("m"));
  std::vector<std::string> flags = delegationFlags(dir.file("delegation.kubeconfig"), kube.url());
  flags.insert(flags.end(),
               {"--authentication-token-webhook-cache-ttl=10s", "--max-connections=2000",
                "--delegated-reviews-max-waiting=" + std::to_string(kMaxWaiting)});
  AdapterProcess adapter(dir.file("rules.yaml"), prom.url(), flags, false);
  ASSERT_TRUE(adapter.running()) << adapter.log();
  const std::string url = adapter.url("");
  const auto port = static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  ASSERT_TRUE(gpuscale::testing::waitUntil(
      [&] { return adapter.kubectl(kMetricPath, kValidToken).exitCode == 0; }, 60s))
      << adapter.log();

  const CallerRun idle = callFor(port, 10s);
  CallerRun flooded;
  std::map<int, int> junk;
  double floodSeconds = 0;
  {
    const auto start = std::chrono::steady_clock::now();
    JunkFlood flood(port, 200, 600);
    flooded = callFor(port, 30s);
    flood.stop();
    floodSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    junk = flood.answers();
    std::cout << "junk: " << flood.sent() << " sent, " << flood.skipped()
              << " skipped (no free connection), " << junkReviews.load() << " reviewed;";
    for (const auto& [code, count] : junk) std::cout << " " << code << ": " << count;
    std::cout << "\n";
  }
  const double idleMedian = median(idle.millis);
  const double floodedMedian = median(flooded.millis);
  std::cout << "caller median: alone " << idleMedian << " ms (" << idle.millis.size()
            << " requests), under the flood " << floodedMedian << " ms (" << flooded.millis.size()
            << " requests)\n";

  EXPECT_EQ(idle.failures, 0) << idle.lastFailure;
  EXPECT_EQ(flooded.failures, 0) << flooded.lastFailure << "\n" << adapter.log();
  EXPECT_GT(flooded.millis.size(), 10u);
  EXPECT_GT(junk[429], 1000) << "the flood was not refused";
  EXPECT_GT(junk[401], 0) << "no junk token was reviewed";
  // Reviews started during the flood, plus those the last waiting requests still started.
  EXPECT_LE(junkReviews.load(), kMaxWaiting * static_cast<int>(floodSeconds / 8 + 2));
  // A new review (the caller's first /metrics) may be refused until the junk's reviews answer.
  std::string metrics;
  ASSERT_TRUE(gpuscale::testing::waitUntil(
      [&] {
        gpuscale::testing::TlsClient client(port);
        const auto reply =
            client.get("/metrics", std::string("Authorization: Bearer ") + kValidToken + "\r\n");
        if (reply && reply->status == 200) metrics = reply->body;
        return reply && reply->status == 200;
      },
      30s));
  EXPECT_GT(sumOf(metrics, "gpuscale_auth_review_rejections_total", {R"(review="token")"}), 1000)
      << metrics;
}

}  // namespace adapter_auth_flood_test
}  // namespace gpuscale::adapter::testing
