#include "gpuscale/kube/informer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "fakes/fake_kube_client.h"
#include "gpuscale/kube/forwarding_client.h"
#include "support/wait_until.h"

namespace gpuscale::kube {
namespace informer_test {

using gpuscale::testing::eventually;

using testing::FakeKubeClient;

const ResourceRef kPods = ResourceRef::collection("", "v1", "pods", "default");

Object pod(const std::string& name, const std::string& app) {
  return {{"metadata", {{"name", name}, {"namespace", "default"}, {"labels", {{"app", app}}}}}};
}

struct Recorder {
  std::mutex mu;
  std::vector<std::string> log;
  InformerHandler handler() {
    const auto name = [](const Object& o) { return o["metadata"]["name"].get<std::string>(); };
    return {.onAdd = [this, name](const Object& o) { push("add " + name(o)); },
            .onUpdate = [this, name](const Object&, const Object& o) { push("update " + name(o)); },
            .onDelete = [this, name](const Object& o) { push("delete " + name(o)); }};
  }
  void push(std::string entry) {
    std::lock_guard lock(mu);
    log.push_back(std::move(entry));
  }
  std::vector<std::string> snapshot() {
    std::lock_guard lock(mu);
    return log;
  }
  bool has(const std::string& entry) {
    auto copy = snapshot();
    return std::find(copy.begin(), copy.end(), entry) != copy.end();
  }
};

InformerOptions fastOptions() {
  InformerOptions options;
  options.resource = kPods;
  options.initialBackoff = std::chrono::milliseconds(10);
  options.maxBackoff = std::chrono::milliseconds(40);
  return options;
}

// Starts `informer` (with `recorder`'s handler when given) and waits up to 5 s for its first list.
bool startSynced(Informer& informer, Recorder* recorder = nullptr) {
  if (recorder != nullptr) informer.addHandler(recorder->handler());
  informer.start();
  return informer.waitForSync(std::chrono::seconds(5));
}

size_t count(const Informer& informer, const std::string& selector) {
  return informer.store().list(*core::LabelSelector::parse(selector)).size();
}

TEST(InformerTest, ListsThenFollowsTheWatch) {
  auto kube = std::make_shared<FakeKubeClient>();
  ASSERT_TRUE(kube->create(kPods, pod("a", "web")).ok());
  Informer informer(kube, fastOptions());
  Recorder recorder;
  ASSERT_TRUE(startSynced(informer, &recorder));
  EXPECT_EQ(count(informer, "app=web"), 1u);

  ASSERT_TRUE(kube->create(kPods, pod("b", "web")).ok());
  ASSERT_TRUE(kube->patch(kPods.named("a"), PatchType::kMerge,
                          {{"metadata", {{"labels", {{"app", "db"}}}}}})
                  .ok());
  ASSERT_TRUE(eventually([&] { return count(informer, "app=db") == 1; }));
  EXPECT_EQ(count(informer, "app=web"), 1u);
  ASSERT_TRUE(kube->remove(kPods.named("b")).ok());
  ASSERT_TRUE(eventually([&] { return recorder.has("delete b"); }));
  EXPECT_EQ(recorder.snapshot(),
            (std::vector<std::string>{"add a", "add b", "update a", "delete b"}));
  EXPECT_EQ(informer.resourceVersion(), kube->currentResourceVersion());
  EXPECT_EQ(informer.stats().lists, 1u);
}

TEST(InformerTest, MetadataOnlyAndTransformKeepOnlyWhatReadersNeed) {
  auto kube = std::make_shared<FakeKubeClient>();
  Object listed = pod("listed", "web");
  listed["spec"] = {{"containers", Object::array({{{"name", "c"}, {"image", "big"}}})}};
  ASSERT_TRUE(kube->create(kPods, listed).ok());
  InformerOptions options = fastOptions();
  options.metadataOnly = true;
  options.transform = [](Object object) {
    object["metadata"].erase("annotations");
    return object;
  };
  Informer informer(kube, options);
  ASSERT_TRUE(startSynced(informer));
  Object watched = pod("watched", "web");
  watched["metadata"]["annotations"] = {{"note", "dropped by the transform"}};
  watched["status"] = {{"phase", "Running"}};
  ASSERT_TRUE(kube->create(kPods, watched).ok());
  ASSERT_TRUE(eventually([&] { return count(informer, "app=web") == 2; }));
  for (const char* name : {"listed", "watched"}) {
    SCOPED_TRACE(name);
    const auto stored = informer.store().get("default", name);
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->value("kind", ""), "PartialObjectMetadata");
    EXPECT_FALSE(stored->contains("spec"));
    EXPECT_FALSE(stored->contains("status"));
    EXPECT_FALSE((*stored)["metadata"].contains("annotations"));
    EXPECT_EQ((*stored)["metadata"]["labels"]["app"], "web");
  }
}

// Counts the LISTs that carry a transform for the client to apply page by page.
class ListSpy final : public ForwardingKubeClient {
 public:
  using ForwardingKubeClient::ForwardingKubeClient;
  core::Result<ObjectList> list(const ResourceRef& ref, const ListOptions& options) override {
    if (options.transform) ++listsWithTransform;
    return ForwardingKubeClient::list(ref, options);
  }
  std::atomic<int> listsWithTransform = 0;
};

// The transform trims what the first LIST, the watch and the LIST after a 410 deliver alike, and
// a LIST hands it to the client, which trims each page as it is decoded.
TEST(InformerTest, TransformTrimsListedWatchedAndRelistedObjects) {
  auto kube = std::make_shared<FakeKubeClient>();
  auto spy = std::make_shared<ListSpy>(kube);
  const auto big = [](const std::string& name) {
    Object o = pod(name, "web");
    o["spec"] = {{"containers", Object::array({{{"name", "c"}, {"image", "big"}}})}};
    return o;
  };
  ASSERT_TRUE(kube->create(kPods, big("listed")).ok());
  InformerOptions options = fastOptions();
  options.transform = [](Object object) {
    object.erase("spec");
    object["metadata"]["labels"]["trimmed"] = "yes";
    return object;
  };
  Informer informer(spy, options);
  Recorder recorder;
  ASSERT_TRUE(startSynced(informer, &recorder));
  ASSERT_TRUE(eventually([&] { return kube->openWatches() == 1; }));
  ASSERT_TRUE(kube->create(kPods, big("watched")).ok());
  ASSERT_TRUE(eventually([&] { return recorder.has("add watched"); }));
  // Created while the watch cannot see it, then the stream expires: only the relist brings it.
  kube->setRecordEvents(false);
  ASSERT_TRUE(kube->create(kPods, big("relisted")).ok());
  kube->setRecordEvents(true);
  kube->endWatches(core::Status(410, "Expired", "too old resource version"));
  ASSERT_TRUE(eventually([&] { return recorder.has("add relisted"); }));
  EXPECT_EQ(informer.stats().relistsAfterGone, 1u);
  EXPECT_EQ(spy->listsWithTransform.load(), 2) << "the first list and the relist";
  EXPECT_EQ(count(informer, "trimmed=yes"), 3u);
  for (const char* name : {"listed", "watched", "relisted"}) {
    SCOPED_TRACE(name);
    const auto stored = informer.store().get("default", name);
    ASSERT_TRUE(stored);
    EXPECT_FALSE(stored->contains("spec"));
  }
}

TEST(InformerTest, ResumesFromTheLastVersionWhenAStreamEnds) {
  auto kube = std::make_shared<FakeKubeClient>();
  Informer informer(kube, fastOptions());
  ASSERT_TRUE(startSynced(informer));
  ASSERT_TRUE(eventually([&] { return kube->openWatches() == 1; }));
  kube->endWatches();  // the server closed the stream (timeoutSeconds)
  ASSERT_TRUE(kube->create(kPods, pod("during-gap", "web")).ok());
  ASSERT_TRUE(eventually([&] { return count(informer, "app=web") == 1; }));
  EXPECT_EQ(informer.stats().lists, 1u) << "a normal stream end must not relist";
  EXPECT_GE(informer.stats().watches, 2u);
}

TEST(InformerTest, BookmarksAdvanceTheResumePoint) {
  auto kube = std::make_shared<FakeKubeClient>();
  Informer informer(kube, fastOptions());
  ASSERT_TRUE(startSynced(informer));
  ASSERT_TRUE(eventually([&] { return kube->openWatches() == 1; }));
  kube->bookmark(kPods);
  ASSERT_TRUE(eventually([&] { return informer.stats().bookmarks == 1; }));
  EXPECT_EQ(informer.resourceVersion(), kube->currentResourceVersion());
}

TEST(InformerTest, GoneMidWatchRelistsAndDeliversTheDifference) {
  auto kube = std::make_shared<FakeKubeClient>();
  ASSERT_TRUE(kube->create(kPods, pod("stays", "web")).ok());
  ASSERT_TRUE(kube->create(kPods, pod("goes", "web")).ok());
  Informer informer(kube, fastOptions());
  Recorder recorder;
  ASSERT_TRUE(startSynced(informer, &recorder));
  ASSERT_TRUE(eventually([&] { return kube->openWatches() == 1; }));
  // Changes the informer cannot see through its watch (compacted history), then the stream fails.
  kube->setRecordEvents(false);
  ASSERT_TRUE(kube->remove(kPods.named("goes")).ok());
  ASSERT_TRUE(kube->create(kPods, pod("new", "web")).ok());
  kube->setRecordEvents(true);
  kube->endWatches(core::Status(410, "Expired", "too old resource version"));
  ASSERT_TRUE(eventually([&] { return recorder.has("delete goes") && recorder.has("add new"); }));
  EXPECT_EQ(informer.stats().relistsAfterGone, 1u);
  EXPECT_EQ(count(informer, "app=web"), 2u);
  EXPECT_TRUE(informer.store().get("default", "stays"));
}

TEST(InformerTest, CompactedVersionTriggersRelist) {
  auto kube = std::make_shared<FakeKubeClient>();
  Informer informer(kube, fastOptions());
  ASSERT_TRUE(startSynced(informer));
  ASSERT_TRUE(eventually([&] { return kube->openWatches() == 1; }));
  ASSERT_TRUE(kube->create(kPods, pod("x", "web")).ok());
  ASSERT_TRUE(eventually([&] { return count(informer, "") == 1; }));
  kube->setRecordEvents(false);
  ASSERT_TRUE(kube->create(kPods, pod("y", "web")).ok());
  kube->setRecordEvents(true);
  kube->compact();
  kube->endWatches(core::Status::unavailable("connection reset"));
  ASSERT_TRUE(eventually([&] { return count(informer, "") == 2; }));
  ASSERT_TRUE(eventually([&] { return informer.stats().lists >= 2; }));
}

TEST(InformerTest, FailuresBackOffAndRecover) {
  auto kube = std::make_shared<FakeKubeClient>();
  kube->failNext("list", core::Status(429, "TooManyRequests", "slow down"), 3);
  Informer informer(kube, fastOptions());
  ASSERT_TRUE(startSynced(informer));
  EXPECT_EQ(informer.stats().lists, 4u);
  EXPECT_EQ(informer.stats().failures, 3u);
  kube->failNext("watch", core::Status::unavailable("connection refused"), 2);
  kube->endWatches(core::Status::unavailable("connection reset"));
  ASSERT_TRUE(kube->create(kPods, pod("after", "web")).ok());
  ASSERT_TRUE(eventually([&] { return count(informer, "app=web") == 1; }));
}

TEST(InformerTest, ResyncRedeliversEveryObject) {
  auto kube = std::make_shared<FakeKubeClient>();
  ASSERT_TRUE(kube->create(kPods, pod("a", "web")).ok());
  auto options = fastOptions();
  options.resyncPeriod = std::chrono::milliseconds(20);
  Informer informer(kube, options);
  Recorder recorder;
  informer.addHandler(recorder.handler());
  informer.start();
  ASSERT_TRUE(eventually([&] { return recorder.has("update a"); }));
  EXPECT_EQ(kube->calls("list"), 1);
}

TEST(InformerTest, StopsWhileWatching) {
  auto kube = std::make_shared<FakeKubeClient>();
  Informer informer(kube, fastOptions());
  informer.start();
  ASSERT_TRUE(eventually([&] { return kube->openWatches() == 1; }));
  informer.stop();
  EXPECT_EQ(kube->openWatches(), 0);
}

}  // namespace informer_test
}  // namespace gpuscale::kube
