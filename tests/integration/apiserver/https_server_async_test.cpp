// HttpsServer with an asynchronous handler (pending_request.h): a parked request holds neither
// its handler thread nor its in-flight slot, resumes on a handler thread, and is still bound by
// the request deadline; a handler that drops a request gets it answered 500.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "gpuscale/apiserver/https_server.h"
#include "support/temp_dir.h"
#include "support/tls_client.h"
#include "support/wait_until.h"

namespace gpuscale::apiserver {
namespace https_server_async_test {

using namespace std::chrono_literals;
using testing::TlsClient;

HttpResponse text(std::string body) {
  HttpResponse response;
  response.contentType = "text/plain";
  response.body = std::move(body);
  return response;
}

// "/park" is parked until release(); "/drop" is dropped unanswered; anything else is answered at
// once. A released request resumes on a handler thread, which it names in its answer.
class ParkingHandler {
 public:
  AsyncHttpHandler handler() {
    return [this](std::shared_ptr<const HttpRequest> request,
                  std::shared_ptr<PendingRequest> pending) {
      handlerThread_ = std::this_thread::get_id();
      if (request->path == "/drop") return;
      if (request->path != "/park") return pending->respond(text("now " + request->path));
      std::lock_guard lock(mutex_);
      parked_.push_back(std::move(pending));
    };
  }

  size_t parked() {
    std::lock_guard lock(mutex_);
    return parked_.size();
  }

  // Resumes every parked request from this (non-handler) thread.
  void release() {
    std::vector<std::shared_ptr<PendingRequest>> parked;
    {
      std::lock_guard lock(mutex_);
      parked.swap(parked_);
    }
    for (auto& pending : parked) {
      pending->resume([this, pending] {
        pending->respond(text(std::this_thread::get_id() == handlerThread_
                                  ? "resumed on the handler thread"
                                  : "resumed elsewhere"));
      });
    }
  }

 private:
  std::mutex mutex_;
  std::vector<std::shared_ptr<PendingRequest>> parked_;
  std::atomic<std::thread::id> handlerThread_;
};

class HttpsServerAsyncTest : public ::testing::Test {
 protected:
  void start(ParkingHandler& parking) {
    options_.bindAddress = "127.0.0.1";
    options_.securePort = 0;
    options_.certDir = dir_.file("certs");
    options_.workerThreads = 1;
    auto tls = loadServingTls(options_);
    ASSERT_TRUE(tls.ok()) << tls.status().toString();
    server_ = std::make_unique<HttpsServer>(options_, std::move(*tls),
                                            [](const HttpRequest&) { return text("sync"); });
    server_->setAsyncHandler(parking.handler());
    ASSERT_TRUE(server_->start().ok());
    port_ = server_->securePort();
  }

  testing::TempDir dir_;
  ServerOptions options_;
  std::unique_ptr<HttpsServer> server_;
  uint16_t port_ = 0;
};

TEST_F(HttpsServerAsyncTest, ParkedRequestsHoldNoThreadAndNoSlot) {
  ParkingHandler parking;
  options_.maxRequestsInFlight = 2;
  start(parking);
  // Three parked requests: more than the one handler thread and the two slots.
  std::vector<std::unique_ptr<TlsClient>> parkedClients;
  for (int i = 0; i < 3; ++i) {
    parkedClients.push_back(std::make_unique<TlsClient>(port_));
    ASSERT_TRUE(parkedClients.back()->send("GET /park HTTP/1.1\r\nHost: x\r\n\r\n"));
    ASSERT_TRUE(testing::waitUntil([&] { return parking.parked() == size_t(i + 1); }, 30s, 5ms));
  }
  // Other requests are served meanwhile, by the same single handler thread.
  TlsClient other(port_);
  for (int i = 0; i < 5; ++i) {
    auto reply = other.get("/other");
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, 200);
    EXPECT_EQ(reply->body, "now /other");
  }
  // Health probes take the synchronous handler.
  EXPECT_EQ(other.get("/healthz")->body, "sync");

  parking.release();
  for (auto& client : parkedClients) {
    auto reply = client->readReply();
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->body, "resumed on the handler thread");
    EXPECT_EQ(client->get("/after")->body, "now /after");  // the connection goes on
  }
  server_->shutdown(30s);
}

TEST_F(HttpsServerAsyncTest, ParkedRequestPastTheDeadlineGets504AndIsNotResumed) {
  ParkingHandler parking;
  options_.requestTimeout = 200ms;
  start(parking);
  TlsClient client(port_);
  auto reply = client.get("/park");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 504);
  parking.release();  // too late: the work is dropped
  auto next = client.get("/next");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, "now /next");
  server_->shutdown(30s);
}

TEST_F(HttpsServerAsyncTest, DroppedRequestIsAnswered500) {
  ParkingHandler parking;
  start(parking);
  TlsClient client(port_);
  auto reply = client.get("/drop");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 500);
  EXPECT_EQ(client.get("/next")->status, 200);
  server_->shutdown(30s);
}

}  // namespace https_server_async_test
}  // namespace gpuscale::apiserver
