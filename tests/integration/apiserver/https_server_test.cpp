// HttpsServer in-process on a loopback port: TLS and client certificates, keep-alive, limits,
// deadlines, bad bytes, concurrency and graceful shutdown.
#include "gpuscale/apiserver/https_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <future>
#include <map>
#include <thread>

#include <prometheus/registry.h>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/tls_client.h"
#include "support/wait_until.h"

namespace gpuscale::apiserver {
namespace https_server_test {

using namespace std::chrono_literals;
using testing::ClientCertificate;
using testing::ClientOptions;
using testing::TlsClient;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Echoes what the server saw: method, path, query and the peer certificate's verdict. "/slow"
// sleeps,
// "/throw" throws.
std::atomic<int> slowRequestsEntered{0};

HttpResponse echo(const HttpRequest& request) {
  if (request.path == "/slow") {
    ++slowRequestsEntered;
    std::this_thread::sleep_for(700ms);
  }
  if (request.path == "/throw") throw std::runtime_error("handler bug");
  if (request.path == "/big") {  // 3 MiB: many TLS records, writes that block on a full socket
    HttpResponse big;
    big.body.reserve(3 << 20);
    for (int i = 0; big.body.size() < (3u << 20); ++i) big.body += std::to_string(i) + ",";
    return big;
  }
  HttpResponse response;
  response.contentType = "text/plain";
  response.body = request.method + " " + request.path + " " + request.rawQuery;
  if (request.peer) {
    response.body += " peer=" + request.peer->commonName +
                     (request.peer->verified ? " verified" : " unverified");
    for (const auto& o : request.peer->organizations) response.body += " O=" + o;
  }
  return response;
}

class HttpsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.bindAddress = "127.0.0.1";
    options_.securePort = 0;
    options_.certDir = dir_.file("certs");
    options_.workerThreads = 2;
    options_.requestReadTimeout = 600ms;
    options_.idleTimeout = 5s;
    options_.requestLimits.headerBytes = 64 * 1024;
  }

  void start(HttpHandler handler = echo) {
    auto tls = loadServingTls(options_);
    ASSERT_TRUE(tls.ok()) << tls.status().toString();
    server_ = std::make_unique<HttpsServer>(options_, std::move(*tls), std::move(handler),
                                            [](const HttpRequest&) {
                                              HttpResponse r;
                                              r.body = "plain";
                                              return r;
                                            });
    server_->setMetricsRegistry(registry_);
    const auto started = server_->start();
    ASSERT_TRUE(started.ok()) << started.toString();
    port_ = server_->securePort();
  }

  // A client CA and a client certificate (clientAuth) signed by it, made with the openssl CLI.
  ClientCertificate clientCertificate(const std::string& name, const std::string& cn) {
    const std::string ca = dir_.file(name + "-ca");
    const std::string leaf = dir_.file(name + "-leaf");
    const auto run = [](std::vector<std::string> argv) {
      const auto result = testing::runProcess(argv);
      EXPECT_EQ(result.exitCode, 0) << result.err;
    };
    run({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-keyout", ca + ".key", "-out", ca + ".crt", "-subj", "/CN=" + name + "-ca",
         "-days", "1"});
    run({"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
         "-keyout", leaf + ".key", "-out", leaf + ".csr", "-subj",
         "/O=system:masters/O=team-b/CN=" + cn});
    std::ofstream(leaf + ".ext") << "extendedKeyUsage=clientAuth\n";
    run({"openssl", "x509", "-req", "-in", leaf + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
         "-CAcreateserial", "-out", leaf + ".crt", "-days", "1", "-extfile", leaf + ".ext"});
    return {slurp(leaf + ".crt"), slurp(leaf + ".key")};
  }

  // The value of the counter `name` with exactly `labels` in the server's registry (0: absent).
  double counter(const std::string& name, const std::map<std::string, std::string>& labels) const {
    for (const auto& family : registry_->Collect()) {
      if (family.name != name) continue;
      for (const auto& metric : family.metric) {
        std::map<std::string, std::string> have;
        for (const auto& label : metric.label) have[label.name] = label.value;
        if (have == labels) return metric.counter.value;
      }
    }
    return 0;
  }

  // The value of the unlabelled gauge `name` in the server's registry (-1: absent).
  double gauge(const std::string& name) const {
    for (const auto& family : registry_->Collect()) {
      if (family.name == name && !family.metric.empty()) return family.metric.front().gauge.value;
    }
    return -1;
  }

  testing::TempDir dir_;
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  ServerOptions options_;
  std::unique_ptr<HttpsServer> server_;
  uint16_t port_ = 0;
};

TEST_F(HttpsServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  start();
  TlsClient client(port_);
  for (int i = 0; i < 5; ++i) {
    auto reply = client.get("/a/%2A/b?x=" + std::to_string(i));
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, 200);
    EXPECT_EQ(reply->body, "GET /a/*/b x=" + std::to_string(i));
    EXPECT_FALSE(reply->closeRequested);
  }
  EXPECT_EQ(server_->openConnections(), 1u);
}

TEST_F(HttpsServerTest, LargeResponsesArriveWholeOverKeepAlive) {
  start();
  std::string expected;
  for (int i = 0; expected.size() < (3u << 20); ++i) expected += std::to_string(i) + ",";
  TlsClient client(port_);
  for (int round = 0; round < 3; ++round) {
    auto reply = client.get("/big");
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, 200);
    EXPECT_TRUE(reply->body == expected) << "round " << round << ": " << reply->body.size();
    EXPECT_EQ(client.get("/small")->body, "GET /small ");
  }
}

TEST_F(HttpsServerTest, PeerCertificateReachesTheHandler) {
  const auto trusted = clientCertificate("front-proxy", "front-proxy-client");
  const auto stranger = clientCertificate("other", "mallory");
  options_.clientCaFiles = {dir_.file("front-proxy-ca.crt")};
  start();
  {
    TlsClient client(port_);
    EXPECT_EQ(client.get("/")->body, "GET / ");
  }
  {
    TlsClient client(port_, trusted);
    EXPECT_EQ(client.get("/")->body,
              "GET /  peer=front-proxy-client verified O=system:masters O=team-b");
  }
  {
    TlsClient client(port_, stranger);
    EXPECT_EQ(client.get("/")->body, "GET /  peer=mallory unverified O=system:masters O=team-b");
  }
}

TEST_F(HttpsServerTest, MalformedRequestsGet400AndAClose) {
  start();
  for (const std::string bad : {"\x16\x03\x01garbage\r\n\r\n", "GET / HTTP/9.9\r\n\r\n",
                                "GET / HTTP/1.1\r\nBad Header\r\n\r\n",
                                "GET relative HTTP/1.1\r\n\r\n", "GET /%zz HTTP/1.1\r\n\r\n"}) {
    TlsClient client(port_);
    ASSERT_TRUE(client.send(bad));
    auto reply = client.readReply();
    ASSERT_TRUE(reply) << bad;
    EXPECT_EQ(reply->status, 400) << bad;
    EXPECT_EQ(reply->body, "400 Bad Request");
    EXPECT_TRUE(client.closedByPeer(5s)) << bad;
  }
  TlsClient after(port_);
  EXPECT_EQ(after.get("/")->status, 200);
}

TEST_F(HttpsServerTest, PlainTextOnTheTlsPortIsDropped) {
  start();
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port_);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  const std::string request = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_GT(::write(fd, request.data(), request.size()), 0);
  char buffer[512];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) {
  }
  EXPECT_LE(n, 0);  // closed, nothing served
  ::close(fd);
  TlsClient after(port_);
  EXPECT_EQ(after.get("/")->status, 200);
}

TEST_F(HttpsServerTest, HugeHeadersAndUrlsGet431) {
  start();
  {
    TlsClient client(port_);
    auto reply = client.get("/", "X-Big: " + std::string(100 * 1024, 'a') + "\r\n");
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, 431);
  }
  {
    TlsClient client(port_);
    auto reply = client.get("/" + std::string(200 * 1024, 'b'));
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, 431);
    EXPECT_TRUE(client.closedByPeer(5s));
  }
}

TEST_F(HttpsServerTest, OversizedBodyGets413) {
  options_.requestLimits.bodyBytes = 1024;
  start();
  TlsClient client(port_);
  ASSERT_TRUE(client.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n" +
                          std::string(4096, 'x')));
  auto reply = client.readReply();
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 413);
}

TEST_F(HttpsServerTest, SlowlorisConnectionIsDroppedAfterTheRequestDeadline) {
  start();
  TlsClient slow(port_);
  ASSERT_TRUE(slow.send("GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n"));
  // The server must hang up on the half-sent request by itself (deadline 600 ms; allow generously
  // more).
  EXPECT_TRUE(slow.closedByPeer(10s));
  TlsClient other(port_);
  EXPECT_EQ(other.get("/")->status, 200);
}

TEST_F(HttpsServerTest, IdleKeepAliveConnectionIsClosed) {
  options_.idleTimeout = 300ms;
  start();
  TlsClient client(port_);
  EXPECT_EQ(client.get("/")->status, 200);
  EXPECT_TRUE(client.closedByPeer(10s));
}

TEST_F(HttpsServerTest, ConnectionCloseAndHttp10AreHonoured) {
  start();
  TlsClient client(port_);
  auto reply = client.get("/", "Connection: close\r\n");
  ASSERT_TRUE(reply);
  EXPECT_TRUE(reply->closeRequested);
  EXPECT_TRUE(client.closedByPeer(5s));
  TlsClient old(port_);
  ASSERT_TRUE(old.send("GET /x HTTP/1.0\r\n\r\n"));
  EXPECT_EQ(old.readReply()->body, "GET /x ");
  EXPECT_TRUE(old.closedByPeer(5s));
}

TEST_F(HttpsServerTest, HandlerExceptionIs500AndHeadKeepsContentLength) {
  start();
  TlsClient client(port_);
  auto thrown = client.get("/throw");
  ASSERT_TRUE(thrown);
  EXPECT_EQ(thrown->status, 500);
  EXPECT_EQ(thrown->body, "internal server error: handler bug\n");
  const auto head =
      testing::runProcess({"curl", "-skI", "https://127.0.0.1:" + std::to_string(port_) + "/h"});
  EXPECT_EQ(head.exitCode, 0);
  EXPECT_EQ(head.out.substr(0, 15), "HTTP/1.1 200 OK");
  EXPECT_NE(head.out.find("Content-Length: 8"), std::string::npos) << head.out;
}

TEST_F(HttpsServerTest, ManyConcurrentKeepAliveClients) {
  options_.workerThreads = 2;
  start();
  constexpr int kClients = 32;
  constexpr int kRequests = 40;
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      TlsClient client(port_);
      for (int i = 0; i < kRequests; ++i) {
        const std::string query = std::to_string(c) + "-" + std::to_string(i);
        auto reply = client.get("/c?" + query);
        if (reply && reply->status == 200 && reply->body == "GET /c " + query) ++ok;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), kClients * kRequests);
}

TEST_F(HttpsServerTest, GracefulShutdownFinishesInFlightRequests) {
  start();
  TlsClient idle(port_);
  EXPECT_EQ(idle.get("/")->status, 200);
  TlsClient busy(port_);
  const int entered = slowRequestsEntered.load();
  ASSERT_TRUE(busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(testing::waitUntil([&] { return slowRequestsEntered.load() > entered; }, 10s, 1ms));
  auto stopped = std::async(std::launch::async, [this] { server_->shutdown(10s); });
  auto reply = busy.readReply();
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->body, "GET /slow ");
  EXPECT_TRUE(reply->closeRequested);
  EXPECT_TRUE(idle.closedByPeer(5s));
  stopped.get();
  EXPECT_THROW(TlsClient refused(port_), std::runtime_error);
}

TEST_F(HttpsServerTest, PlainMetricsListener) {
  options_.metricsBindAddress = "127.0.0.1:0";
  start();
  ASSERT_NE(server_->plainPort(), 0);
  const auto result = testing::runProcess(
      {"curl", "-s", "http://127.0.0.1:" + std::to_string(server_->plainPort()) + "/metrics"});
  EXPECT_EQ(result.out, "plain");
}

TEST_F(HttpsServerTest, Tls13OnlyRejectsTls12Clients) {
  options_.tlsMinVersion = TlsMinVersion::kTls13;
  start();
  const std::string url = "https://127.0.0.1:" + std::to_string(port_) + "/";
  const auto old = testing::runProcess({"curl", "-sk", "--tls-max", "1.2", "-o", "/dev/null", url});
  EXPECT_NE(old.exitCode, 0);
  const auto modern = testing::runProcess({"curl", "-sk", "--tlsv1.3", url});
  EXPECT_EQ(modern.exitCode, 0);
  EXPECT_EQ(modern.out, "GET / ");
}

TEST_F(HttpsServerTest, CipherSuitesRestrictTls12) {
  auto parsed =
      parseServingFlags({"--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}, options_);
  ASSERT_TRUE(parsed.ok());
  start();
  const std::string url = "https://127.0.0.1:" + std::to_string(port_) + "/";
  const auto allowed = testing::runProcess(
      {"curl", "-sk", "--tls-max", "1.2", "--ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256", url});
  EXPECT_EQ(allowed.out, "GET / ");
  const auto refused = testing::runProcess(
      {"curl", "-sk", "--tls-max", "1.2", "--ciphers", "ECDHE-ECDSA-AES256-GCM-SHA384", url});
  EXPECT_NE(refused.exitCode, 0);
}

// A handler whose "/hold" requests wait until release(); everything else is echoed.
class HoldingHandler {
 public:
  HttpHandler handler() {
    return [this](const HttpRequest& request) {
      if (request.path == "/hold") {
        std::unique_lock lock(mutex_);
        ++holding_;
        changed_.notify_all();
        changed_.wait_for(lock, 120s, [this] { return released_; });
        --holding_;
      }
      return echo(request);
    };
  }
  bool waitForHolding(int count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 60s, [&] { return holding_ >= count; });
  }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }
  ~HoldingHandler() { release(); }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int holding_ = 0;
  bool released_ = false;
};

TEST_F(HttpsServerTest, HealthProbesGoAheadAndExcessRequestsGet429) {
  HoldingHandler holding;
  options_.workerThreads = 1;
  options_.maxRequestsInFlight = 2;
  start(holding.handler());
  // One request holds the only handler thread, a second waits for it: both slots are taken.
  TlsClient first(port_);
  TlsClient second(port_);
  ASSERT_TRUE(first.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(holding.waitForHolding(1));
  ASSERT_TRUE(second.send("GET /queued HTTP/1.1\r\nHost: x\r\n\r\n"));
  // The second request is admitted once the server has read it.
  ASSERT_TRUE(testing::waitUntil([&] { return gauge("gpuscale_apiserver_admitted_requests") == 2; },
                                 30s, 5ms));
  TlsClient other(port_);
  auto rejected = other.get("/x");
  ASSERT_TRUE(rejected);
  EXPECT_EQ(rejected->status, 429);
  EXPECT_NE(rejected->headers.find("Retry-After: 1"), std::string::npos) << rejected->headers;
  EXPECT_NE(rejected->body.find(R"("reason":"TooManyRequests")"), std::string::npos);
  EXPECT_FALSE(rejected->closeRequested);
  // Health probes are served on the I/O threads, although no handler thread is free.
  for (const std::string path : {"/healthz", "/livez", "/readyz"}) {
    auto probe = other.get(path);
    ASSERT_TRUE(probe) << path;
    EXPECT_EQ(probe->status, 200) << path;
  }
  // With a token they take the normal path (authenticating it may need a remote review).
  auto withToken = other.get("/healthz", "Authorization: Bearer x\r\n");
  ASSERT_TRUE(withToken);
  EXPECT_EQ(withToken->status, 429);

  holding.release();
  EXPECT_EQ(first.readReply()->body, "GET /hold ");
  EXPECT_EQ(second.readReply()->body, "GET /queued ");
  EXPECT_EQ(other.get("/after")->status, 200);
  EXPECT_EQ(gauge("gpuscale_apiserver_open_connections"), 3);
  server_->shutdown(30s);  // joins the handler threads before `holding` goes
}

// What the inline handler answers is answered on the I/O thread: no handler thread or in-flight
// slot is needed (here both are held). What it declines, or throws on, takes the handler threads.
TEST_F(HttpsServerTest, InlineAnswersNeedNoHandlerThread) {
  HoldingHandler holding;
  options_.workerThreads = 1;
  options_.maxRequestsInFlight = 1;
  std::atomic<int> inlineCalls{0};
  auto tls = loadServingTls(options_);
  ASSERT_TRUE(tls.ok());
  server_ = std::make_unique<HttpsServer>(options_, std::move(*tls), holding.handler());
  server_->setInlineHandler([&](const HttpRequest& request) -> std::optional<HttpResponse> {
    ++inlineCalls;
    if (request.path == "/inline-throws") throw std::runtime_error("bug");
    if (request.path != "/inline") return std::nullopt;
    HttpResponse response;
    response.body = "inline";
    return response;
  });
  ASSERT_TRUE(server_->start().ok());
  port_ = server_->securePort();
  TlsClient held(port_);
  ASSERT_TRUE(held.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(holding.waitForHolding(1));
  TlsClient client(port_);
  auto answered = client.get("/inline");
  ASSERT_TRUE(answered);
  EXPECT_EQ(answered->status, 200);
  EXPECT_EQ(answered->body, "inline");
  EXPECT_EQ(client.get("/declined")->status, 429);       // the one slot is held
  EXPECT_EQ(client.get("/inline-throws")->status, 429);  // fell back to the handler threads
  EXPECT_EQ(inlineCalls.load(), 4);  // /hold was offered to it first, and declined
  holding.release();
  EXPECT_EQ(held.readReply()->body, "GET /hold ");
  EXPECT_EQ(client.get("/declined")->body, "GET /declined ");
  server_->shutdown(30s);  // joins the handler threads before `holding` goes
}

TEST_F(HttpsServerTest, RequestPastTheTimeoutGets504) {
  HoldingHandler holding;
  options_.requestTimeout = 200ms;
  start(holding.handler());
  TlsClient client(port_);
  auto reply = client.get("/hold");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 504);
  EXPECT_NE(reply->body.find(R"("reason":"Timeout")"), std::string::npos) << reply->body;
  holding.release();
  // The handler's late answer is dropped; the connection serves the next request.
  auto next = client.get("/next");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, "GET /next ");
  server_->shutdown(30s);  // joins the handler threads before `holding` goes
}

TEST_F(HttpsServerTest, ConnectionsBeyondTheCapAreClosedAtOnce) {
  options_.maxConnections = 2;
  options_.probeConnections = 0;
  start();
  auto first = std::make_unique<TlsClient>(port_);
  TlsClient second(port_);
  EXPECT_EQ(first->get("/")->status, 200);
  EXPECT_EQ(second.get("/")->status, 200);
  EXPECT_THROW(TlsClient third(port_), std::runtime_error);
  first.reset();
  ASSERT_TRUE(testing::waitUntil([&] { return server_->openConnections() < 2; }, 30s, 5ms));
  TlsClient fourth(port_);
  EXPECT_EQ(fourth.get("/")->status, 200);
  EXPECT_EQ(counter("gpuscale_apiserver_rejected_connections_total",
                    {{"listener", "secure"}, {"reason", "listener_full"}}),
            1);
}

TEST_F(HttpsServerTest, AFullListenerKeepsRoomForHealthProbes) {
  options_.maxConnections = 1;
  options_.probeConnections = 2;
  start();
  TlsClient regular(port_);
  EXPECT_EQ(regular.get("/a")->status, 200);
  // Beyond the cap: one probe per connection, then closed.
  TlsClient probe(port_);
  auto ok = probe.get("/healthz");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_TRUE(ok->closeRequested);
  EXPECT_TRUE(probe.closedByPeer(10s));
  // Anything else there gets a 503.
  TlsClient other(port_);
  auto refused = other.get("/apis");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_NE(refused->headers.find("Retry-After: 1"), std::string::npos) << refused->headers;
  EXPECT_TRUE(other.closedByPeer(10s));
  // The probe room is bounded too: two silent connections fill it, a third is closed at once.
  ASSERT_TRUE(testing::waitUntil([&] { return server_->openConnections() == 1; }, 30s, 5ms));
  TlsClient silent1(port_);
  TlsClient silent2(port_);
  EXPECT_THROW(TlsClient third(port_), std::runtime_error);
  EXPECT_EQ(regular.get("/b")->status, 200);  // the regular connection is served all along
  EXPECT_EQ(counter("gpuscale_apiserver_refused_requests_total",
                    {{"listener", "secure"}, {"limit", "not_probe"}}),
            1);
}

TEST_F(HttpsServerTest, OneSourceCannotTakeTheListener) {
  options_.maxConnections = 100;
  options_.maxConnectionsPerSource = 2;
  options_.probeConnections = 0;
  start();
  TlsClient a(port_, ClientOptions{true, std::nullopt, "127.0.0.2"});
  TlsClient b(port_, ClientOptions{true, std::nullopt, "127.0.0.2"});
  EXPECT_THROW(TlsClient c(port_, ClientOptions{true, std::nullopt, "127.0.0.2"}),
               std::runtime_error);
  TlsClient elsewhere(port_, ClientOptions{true, std::nullopt, "127.0.0.3"});
  EXPECT_EQ(elsewhere.get("/")->status, 200);
  EXPECT_EQ(a.get("/")->status, 200);
  EXPECT_EQ(counter("gpuscale_apiserver_rejected_connections_total",
                    {{"listener", "secure"}, {"reason", "source_full"}}),
            1);
}

TEST_F(HttpsServerTest, ANewConnectionMustSpeakSoon) {
  options_.firstRequestTimeout = 300ms;
  options_.idleTimeout = 60s;
  start();
  // Silent after the handshake: closed at the first-request deadline, not after idleTimeout.
  TlsClient silent(port_);
  EXPECT_TRUE(silent.closedByPeer(30s));
  // Silent before the handshake (a bare TCP connection): the same deadline.
  TlsClient bare(port_, ClientOptions{false, std::nullopt, ""});
  EXPECT_TRUE(bare.closedByPeer(30s));
  // A connection that spoke may then idle between requests.
  TlsClient speaker(port_);
  EXPECT_EQ(speaker.get("/")->status, 200);
  // Counted as their handlers see the deadline (the socket may close a moment earlier).
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        return counter("gpuscale_apiserver_connection_timeouts_total",
                       {{"listener", "secure"}, {"deadline", "first_request"}}) == 2;
      },
      30s, 5ms));
  EXPECT_FALSE(speaker.closedByPeer(500ms));
  EXPECT_EQ(speaker.get("/again")->status, 200);
}

TEST_F(HttpsServerTest, BadCertificateFailsStart) {
  std::ofstream(dir_.file("c.pem")) << "not a certificate";
  std::ofstream(dir_.file("k.pem")) << "not a key";
  options_.tlsCertFile = dir_.file("c.pem");
  options_.tlsPrivateKeyFile = dir_.file("k.pem");
  auto tls = loadServingTls(options_);
  ASSERT_TRUE(tls.ok());
  HttpsServer server(options_, std::move(*tls), echo);
  EXPECT_FALSE(server.start().ok());
}

}  // namespace https_server_test
}  // namespace gpuscale::apiserver
