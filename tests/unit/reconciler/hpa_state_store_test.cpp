// HpaStateStore against the fake API: records bound to an HPA's uid, caps that refuse growth but
// never shrinking, pruning, no empty ConfigMap for nothing, and writes only through the client
// it was given (the fence).
#include "gpuscale/reconciler/hpa_state_store.h"

#include <gtest/gtest.h>

#include "cluster_fixture.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/reconciler/fenced_client.h"

namespace gpuscale::reconciler {
namespace hpa_state_store_test {

using nlohmann::json;
using namespace std::chrono_literals;

const TimePoint kT0 = *core::parseRfc3339("2026-11-22T01:00:00Z");

class HpaStateStoreTest : public ::testing::Test {
 protected:
  HpaStateStore store(StateStoreOptions o = {}) { return HpaStateStore(client_, o); }
  std::optional<json> configMap() {
    auto cm = fake_->get(testing::stateStoreRef());
    if (!cm) return std::nullopt;
    return *cm;
  }
  static void raise(HpaRecord& r) {
    r.lastChange = kT0;
    r.originalMaxReplicas = 7;
  }
  // Records hpa-0 and hpa-1 of `ns` (uid-0, uid-1), then asks for hpa-2: the status of that third
  // update (a store capped at two entries refuses it).
  static core::Status thirdEntry(HpaStateStore& s, const std::string& ns) {
    for (int i = 0; i < 2; ++i) {
      const std::string n = std::to_string(i);
      EXPECT_TRUE(s.update(ns, "hpa-" + n, "uid-" + n, raise).ok()) << ns << "/hpa-" << n;
    }
    auto third = s.update(ns, "hpa-2", "uid-2", raise);
    EXPECT_FALSE(third.ok());
    return third.status();
  }

  std::shared_ptr<gpuscale::testing::FakeKubeClient> fake_ =
      std::make_shared<gpuscale::testing::FakeKubeClient>();
  std::shared_ptr<testing::RecordingClient> client_ =
      std::make_shared<testing::RecordingClient>(fake_);
};

TEST(HpaRecordTest, EncodesAndDecodesAndRejectsWhatItCannotTrust) {
  HpaRecord r{"uid-1", kT0, 7, HpaIntent{"p-1", 7, 14, {"n1", "n2"}, kT0}};
  EXPECT_EQ(decodeHpaRecord(encodeHpaRecord(r)), r);
  EXPECT_EQ(decodeHpaRecord(encodeHpaRecord(HpaRecord{"u", {}, 3, {}}))->originalMaxReplicas, 3);

  struct Row {
    const char* what;
    std::string text;
  };
  const std::vector<Row> rows{
      {"not JSON", "{"},
      {"no uid", R"({"originalMaxReplicas":7})"},
      {"bad time", R"({"uid":"u","lastChange":"yesterday"})"},
      {"zero original", R"({"uid":"u","originalMaxReplicas":0})"},
      {"original not a number", R"({"uid":"u","originalMaxReplicas":"7"})"},
      {"bad intent", R"({"uid":"u","intent":{"plan":""}})"},
      {"oversized", R"({"uid":")" + std::string(kMaxIntentBytes, 'x') + R"("})"},
  };
  for (const auto& row : rows) EXPECT_FALSE(decodeHpaRecord(row.text).has_value()) << row.what;

  EXPECT_EQ(hpaRecordKey("ml", "triton.v2"), "ml.triton.v2");
  EXPECT_EQ(splitHpaRecordKey("ml.triton.v2"),
            (std::pair<std::string, std::string>{"ml", "triton.v2"}));
  EXPECT_FALSE(splitHpaRecordKey("nodot").has_value());
}

TEST_F(HpaStateStoreTest, ARecordBelongsToOneUid) {
  auto s = store();
  ASSERT_TRUE(s.update("ml", "triton", "uid-1", raise).ok());
  ASSERT_TRUE(s.load().ok());
  ASSERT_TRUE(s.get("ml", "triton", "uid-1").has_value());
  EXPECT_EQ(s.get("ml", "triton", "uid-1")->originalMaxReplicas, 7);
  EXPECT_FALSE(s.get("ml", "triton", "uid-2").has_value()) << "a recreated HPA inherits nothing";

  // An update for the new uid starts from an empty record, not from the old one.
  ASSERT_TRUE(s.update("ml", "triton", "uid-2", [](HpaRecord& r) { r.lastChange = kT0; }).ok());
  auto fresh = s.get("ml", "triton", "uid-2");
  ASSERT_TRUE(fresh.has_value());
  EXPECT_FALSE(fresh->originalMaxReplicas.has_value());
}

TEST_F(HpaStateStoreTest, NothingToRecordWritesNothing) {
  auto s = store();
  auto r = s.update("ml", "triton", "u", [](HpaRecord&) {});
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_FALSE(*r);
  EXPECT_FALSE(configMap().has_value()) << "no empty ConfigMap created";
  ASSERT_TRUE(s.update("ml", "triton", "u", raise).ok());
  const int writes = static_cast<int>(client_->writes().size());
  EXPECT_FALSE(*s.update("ml", "triton", "u", raise));
  EXPECT_EQ(static_cast<int>(client_->writes().size()), writes);
  // An empty record removes the entry.
  EXPECT_TRUE(*s.update("ml", "triton", "u", [](HpaRecord& r) { r = HpaRecord{}; }));
  EXPECT_FALSE((*configMap())["data"].contains("ml.triton"));
}

TEST_F(HpaStateStoreTest, CapsRefuseNewEntriesButNotUpdatesOrRemovals) {
  struct Row {
    const char* what;
    StateStoreOptions options;
  };
  StateStoreOptions byEntries;
  byEntries.maxEntries = 2;
  StateStoreOptions byBytes;
  byBytes.maxBytes =
      2 * (std::string("ml.hpa-0").size() + encodeHpaRecord(HpaRecord{"uid-0", kT0, 7, {}}).size());
  for (const auto& row : {Row{"entries", byEntries}, Row{"bytes", byBytes}}) {
    SCOPED_TRACE(row.what);
    fake_ = std::make_shared<gpuscale::testing::FakeKubeClient>();
    client_ = std::make_shared<testing::RecordingClient>(fake_);
    auto s = store(row.options);
    const core::Status third = thirdEntry(s, "ml");
    EXPECT_TRUE(isStateStoreFull(third)) << third.toString();
    EXPECT_EQ((*configMap())["data"].size(), 2u) << "the store did not grow";
    // An existing entry may still change in place and shrink; removal makes room again.
    EXPECT_TRUE(
        s.update("ml", "hpa-0", "uid-0", [](HpaRecord& r) { r.lastChange = kT0 + 1s; }).ok());
    EXPECT_TRUE(s.update("ml", "hpa-1", "uid-1", [](HpaRecord& r) { r = HpaRecord{}; }).ok());
    EXPECT_TRUE(s.update("ml", "hpa-2", "uid-2", raise).ok());
  }
}

// A namespace's HPAs hold at most their share of the store: one namespace at its cap is refused,
// the others still record (and grow their entries), and its own updates and removals go through.
TEST_F(HpaStateStoreTest, OneNamespaceCannotFillTheStoreForTheOthers) {
  struct Row {
    const char* what;
    StateStoreOptions options;
  };
  const std::size_t entryBytes =
      std::string("noisy.hpa-0").size() + encodeHpaRecord(HpaRecord{"uid-0", kT0, 7, {}}).size();
  StateStoreOptions byEntries;
  byEntries.maxEntriesPerNamespace = 2;
  StateStoreOptions byBytes;
  byBytes.maxBytesPerNamespace = 2 * entryBytes + 8;
  for (const auto& row : {Row{"entries", byEntries}, Row{"bytes", byBytes}}) {
    SCOPED_TRACE(row.what);
    fake_ = std::make_shared<gpuscale::testing::FakeKubeClient>();
    client_ = std::make_shared<testing::RecordingClient>(fake_);
    auto metrics = std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>());
    HpaStateStore s(client_, row.options, metrics);
    const core::Status third = thirdEntry(s, "noisy");
    EXPECT_TRUE(isStateStoreFull(third)) << third.toString();
    EXPECT_NE(third.message().find("namespace noisy"), std::string::npos) << third.message();
    // The namespace next door is not affected.
    EXPECT_TRUE(s.update("quiet", "hpa-0", "uid-q", raise).ok());
    EXPECT_TRUE(s.update("quiet", "hpa-0", "uid-q", [](HpaRecord& r) {
                   r.intent = HpaIntent{"p", 7, 9, {"n1"}, kT0};
                 }).ok());
    // The full namespace may still change its entries in place when they do not grow, and remove
    // them; removal makes room again.
    EXPECT_TRUE(
        s.update("noisy", "hpa-0", "uid-0", [](HpaRecord& r) { r.lastChange = kT0 + 1s; }).ok());
    EXPECT_TRUE(s.update("noisy", "hpa-1", "uid-1", [](HpaRecord& r) { r = HpaRecord{}; }).ok());
    EXPECT_TRUE(s.update("noisy", "hpa-2", "uid-2", raise).ok());
    EXPECT_EQ((*configMap())["data"].size(), 3u);
  }
  // A namespace whose name is a prefix of another's is its own namespace.
  fake_ = std::make_shared<gpuscale::testing::FakeKubeClient>();
  client_ = std::make_shared<testing::RecordingClient>(fake_);
  auto s = store(byEntries);
  ASSERT_TRUE(s.update("ml", "a", "u1", raise).ok());
  ASSERT_TRUE(s.update("ml", "b", "u2", raise).ok());
  EXPECT_TRUE(s.update("ml-canary", "a", "u3", raise).ok());
  EXPECT_TRUE(s.update("ml-canary", "b", "u4", raise).ok());
}

TEST_F(HpaStateStoreTest, PruneKeepsOnlyWhatTheCallerVouchesFor) {
  auto s = store();
  ASSERT_TRUE(s.update("ml", "kept", "uid-k", raise).ok());
  ASSERT_TRUE(s.update("ml", "gone", "uid-g", raise).ok());
  ASSERT_TRUE(s.update("ml", "recreated", "uid-old", raise).ok());
  ASSERT_TRUE(fake_
                  ->patch(testing::stateStoreRef(), kube::PatchType::kMerge,
                          {{"data", {{"ml.garbage", "{"}}}})
                  .ok());
  ASSERT_TRUE(s.load().ok());
  ASSERT_TRUE(s.prune([](const std::string&, const std::string& name, const std::string& uid) {
                 return (name == "kept" && uid == "uid-k") ||
                        (name == "recreated" && uid == "uid-new");
               }).ok());
  auto data = (*configMap())["data"];
  EXPECT_EQ(data.size(), 1u) << data.dump();
  EXPECT_TRUE(data.contains("ml.kept"));

  // Nothing stale: no request at all.
  const int writes = static_cast<int>(client_->writes().size());
  ASSERT_TRUE(s.prune([](const auto&, const auto&, const auto&) { return true; }).ok());
  EXPECT_EQ(static_cast<int>(client_->writes().size()), writes);
}

TEST_F(HpaStateStoreTest, WritesGoThroughTheFence) {
  bool leader = false;
  auto fenced = std::make_shared<FencedKubeClient>(client_, [&] { return leader; });
  HpaStateStore s(fenced, {});
  auto refused = s.update("ml", "triton", "u", raise);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(isNotLeader(refused.status()));
  EXPECT_TRUE(client_->writes().empty());
  leader = true;
  EXPECT_TRUE(s.update("ml", "triton", "u", raise).ok());
}

}  // namespace hpa_state_store_test
}  // namespace gpuscale::reconciler
