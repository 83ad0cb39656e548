// Retried writes as Events: 409s re-applied by patchWithRetry and 429s that the real Kubernetes
// client (RestKubeClient against a loopback HTTP server) waited out end as one Event per object
// and reason, with the number of occurrences; /metrics counts each one.
#include "gpuscale/reconciler/retried_writes.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <atomic>

#include "fakes/fake_kube_client.h"
#include "gpuscale/kube/rest_client.h"
#include "gpuscale/reconciler/optimistic_write.h"
#include "support/http_test_server.h"

namespace gpuscale::reconciler {
namespace retried_writes_test {

using gpuscale::test::HttpTestRequest;
using gpuscale::test::HttpTestServer;
using gpuscale::testing::FakeKubeClient;
using nlohmann::json;
using Exchange = HttpTestServer::Exchange;

const kube::ResourceRef kNodes = kube::ResourceRef::collection("", "v1", "nodes");

core::Result<std::optional<kube::Object>> setLabel(const kube::Object&) {
  return std::optional<kube::Object>(json{{"metadata", {{"labels", {{"example.com/x", "y"}}}}}});
}

std::string metricsText(const std::shared_ptr<prometheus::Registry>& registry) {
  return prometheus::TextSerializer().Serialize(registry->Collect());
}

std::string statusBody(int code, const std::string& reason) {
  return json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
              {"reason", reason}, {"code", code},       {"message", reason}}
      .dump();
}

TEST(RetriedWritesTest, ConflictsOnOneObjectAreOneEventWithTheirCount) {
  auto fake = std::make_shared<FakeKubeClient>();
  ASSERT_TRUE(fake->create(kNodes, {{"metadata", {{"name", "gpu-0"}}}}).ok());
  auto registry = std::make_shared<prometheus::Registry>();
  auto retried = std::make_shared<RetriedWrites>(std::make_shared<ReconcilerMetrics>(registry));
  RetryNotingClient client(fake, retried);
  fake->failNext("patch", core::Status(409, "Conflict", "the object has been modified"), 3);

  auto r = patchWithRetry(client, kNodes.named("gpu-0"), setLabel);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->conflicts, 3);

  MemoryEventRecorder events;
  retried->flush(events);
  auto conflicts = events.withReason("WriteConflictRetried");
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_EQ(conflicts[0].count, 3);
  EXPECT_EQ(conflicts[0].target.kind, "Node");
  EXPECT_EQ(conflicts[0].target.name, "gpu-0");
  EXPECT_TRUE(conflicts[0].warning);
  EXPECT_NE(metricsText(registry).find("gpuscale_reconciler_write_retries_total{reason=\"conflict\""
                                       ",resource=\"nodes\"} 3"),
            std::string::npos)
      << metricsText(registry);

  // Flushed once: the next pass has nothing to report.
  retried->flush(events);
  EXPECT_EQ(events.events().size(), 1u);
}

TEST(RetriedWritesTest, ThrottledWritesThroughTheRealClientAreCountedPerObject) {
  struct Row {
    const char* what;
    int throttledAnswers;  // 429s before the write goes through (or for ever, when > retries)
    bool succeeds;
    int eventCount;  // ThrottledRetried occurrences (0: no Event)
  };
  const std::vector<Row> rows{
      {"no throttling: no Event", 0, true, 0},
      {"two 429s, then accepted: two retries", 2, true, 2},
      {"throttled beyond the client's retries: the last 429 was not retried", 100, false, 3},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.what);
    std::atomic<int> patches{0};
    HttpTestServer server([&](const HttpTestRequest& request, Exchange& exchange) {
      const json node{{"kind", "Node"},
                      {"apiVersion", "v1"},
                      {"metadata", {{"name", "gpu-0"}, {"resourceVersion", "7"}}}};
      if (request.method == "PATCH" && ++patches <= row.throttledAnswers) {
        exchange.respond(429, statusBody(429, "TooManyRequests"), {{"Retry-After", "1"}});
        return;
      }
      exchange.respond(200, node.dump());
    });
    auto registry = std::make_shared<prometheus::Registry>();
    kube::ClientConfig config;
    config.server = server.url();
    config.qps = 0;
    config.maxRetries = 3;
    config.maxRetryAfter = std::chrono::seconds(0);  // retry at once: the count is what matters
    config.observer = std::make_shared<ThrottleNotingObserver>(registry);
    auto rest = kube::RestKubeClient::create(config);
    ASSERT_TRUE(rest.ok()) << rest.status().toString();
    auto retried = std::make_shared<RetriedWrites>(std::make_shared<ReconcilerMetrics>(registry));
    RetryNotingClient client(*rest, retried);

    auto r = patchWithRetry(client, kNodes.named("gpu-0"), setLabel);
    EXPECT_EQ(r.ok(), row.succeeds);
    // Reads are not writes: a throttled GET would not count (none here), and neither does the
    // same client used without the decorator.
    MemoryEventRecorder events;
    retried->flush(events);
    auto throttled = events.withReason("ThrottledRetried");
    if (row.eventCount == 0) {
      EXPECT_TRUE(throttled.empty());
      continue;
    }
    ASSERT_EQ(throttled.size(), 1u);
    EXPECT_EQ(throttled[0].count, row.eventCount);
    EXPECT_EQ(throttled[0].target.name, "gpu-0");
    EXPECT_NE(metricsText(registry).find("gpuscale_reconciler_write_retries_total{reason="
                                         "\"throttled\",resource=\"nodes\"} " +
                                         std::to_string(row.eventCount)),
              std::string::npos)
        << metricsText(registry);
  }
}

TEST(RetriedWritesTest, AnEventThatCannotBeWrittenIsWrittenAtTheNextFlush) {
  auto fake = std::make_shared<FakeKubeClient>();
  KubeEventRecorder recorder(fake, "replica-a");
  RetriedWrites retried;
  const auto ref = kNodes.named("gpu-0");
  const auto events = kube::ResourceRef::collection("", "v1", "events", "default");
  auto counts = [&] {
    std::vector<int> out;
    auto list = fake->list(events, {});
    EXPECT_TRUE(list.ok());
    if (list) {
      for (const auto& e : list->items) out.push_back(e.value("count", 0));
    }
    return out;
  };

  retried.throttled(ref, 2);
  fake->failNext("create", core::Status(503, "ServiceUnavailable", "connection refused"));
  retried.flush(recorder);
  EXPECT_TRUE(counts().empty());
  retried.flush(recorder);
  EXPECT_EQ(counts(), std::vector<int>{2});

  // Growing the Event fails once (kube-apiserver away): no second Event, the count catches up.
  retried.throttled(ref, 3);
  fake->failNext("patch", core::Status(503, "ServiceUnavailable", "connection refused"));
  retried.flush(recorder);
  EXPECT_EQ(counts(), std::vector<int>{2});
  retried.throttled(ref);
  retried.flush(recorder);
  EXPECT_EQ(counts(), std::vector<int>{6});
}

TEST(KubeEventRecorderTest, RepeatsFoldIntoOneEventWhoseCountGrows) {
  auto fake = std::make_shared<FakeKubeClient>();
  KubeEventRecorder recorder(fake, "replica-a");
  const auto events = kube::ResourceRef::collection("", "v1", "events", "default");
  const auto node = EventTarget::node("gpu-0");

  recorder.recordRepeated(node, true, "ThrottledRetried", "throttled", 3);
  recorder.record(node, true, "ThrottledRetried", "throttled");
  recorder.record(node, true, "ThrottledRetried", "another message");
  recorder.record(EventTarget::node("gpu-1"), true, "ThrottledRetried", "throttled");

  auto list = fake->list(events, {});
  ASSERT_TRUE(list.ok());
  std::map<std::pair<std::string, std::string>, int> counts;  // (object, message) -> count
  for (const auto& e : list->items) {
    counts[{e["involvedObject"].value("name", ""), e.value("message", "")}] += e.value("count", 0);
  }
  EXPECT_EQ(list->items.size(), 3u);
  EXPECT_EQ((counts[{"gpu-0", "throttled"}]), 4);
  EXPECT_EQ((counts[{"gpu-0", "another message"}]), 1);
  EXPECT_EQ((counts[{"gpu-1", "throttled"}]), 1);

  // The folded Event is gone (expired): the next repeat starts a new one.
  for (const auto& e : list->items) {
    if (e["involvedObject"].value("name", "") == "gpu-1") {
      ASSERT_TRUE(fake->remove(events.named(e["metadata"].value("name", ""))).ok());
    }
  }
  recorder.record(EventTarget::node("gpu-1"), true, "ThrottledRetried", "throttled");
  list = fake->list(events, {});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->items.size(), 3u);
}

}  // namespace retried_writes_test
}  // namespace gpuscale::reconciler
