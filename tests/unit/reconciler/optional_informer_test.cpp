// OptionalInformer (optional_informer.h) on a fake cluster: the states discovery and the informer's
// LISTs lead to, what is planned in each, and what /metrics says.
#include "gpuscale/reconciler/optional_informer.h"

#include <atomic>
#include <functional>

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "fakes/fake_kube_client.h"
#include "support/wait_until.h"

namespace gpuscale::reconciler {
namespace optional_informer_test {

using gpuscale::testing::eventually;

using nlohmann::json;
using namespace std::chrono_literals;
using State = OptionalResourceState;
using gpuscale::testing::FakeKubeClient;

const char* const kDiscovery = "/apis/resource.k8s.io/v1";

json discovery(std::initializer_list<const char*> resources) {
  json list = {{"kind", "APIResourceList"},
               {"groupVersion", "resource.k8s.io/v1"},
               {"resources", json::array()}};
  for (const char* r : resources) list["resources"].push_back({{"name", r}, {"namespaced", false}});
  return list;
}

kube::ResourceRef slices() {
  return kube::ResourceRef::collection("resource.k8s.io", "v1", "resourceslices");
}

json slice(const std::string& name) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", name}}},
          {"spec", {{"driver", "gpu.nvidia.com"}, {"nodeName", "n"}}}};
}

std::string exposition(ReconcilerMetrics& metrics) {
  return prometheus::TextSerializer().Serialize(metrics.registry()->Collect());
}

struct Fixture {
  std::shared_ptr<FakeKubeClient> fake = std::make_shared<FakeKubeClient>();
  std::shared_ptr<ReconcilerMetrics> metrics =
      std::make_shared<ReconcilerMetrics>(std::make_shared<prometheus::Registry>());
  std::atomic<int> changes{0};
  std::unique_ptr<OptionalInformer> informer;

  void start() {
    OptionalInformerOptions o;
    o.kind = "ResourceSlice";
    o.informer.resource = slices();
    o.informer.initialBackoff = 10ms;
    o.informer.maxBackoff = 20ms;
    o.recheckPeriod = 20ms;
    o.failurePoll = 5ms;
    o.onChange = [this] { ++changes; };
    informer = std::make_unique<OptionalInformer>(fake, std::move(o), metrics);
    informer->start();
  }
  bool in(State s) const { return informer->state() == s; }
  bool served(const std::string& value) const {
    return exposition(*metrics).find(
               "gpuscale_reconciler_optional_resource_served{resource=\"resourceslices.resource."
               "k8s.io\"} " +
               value) != std::string::npos;
  }
};

TEST(OptionalInformerTest, DiscoveryNamesTheResource) {
  const struct {
    const char* what;
    json document;
    bool names;
  } rows[] = {
      {"listed", discovery({"deviceclasses", "resourceslices"}), true},
      {"only a subresource-like other name", discovery({"resourceslices/status"}), false},
      {"another resource", discovery({"resourceclaims"}), false},
      {"no resources", json{{"kind", "APIResourceList"}}, false},
      {"resources not a list", json{{"resources", "resourceslices"}}, false},
      {"names not strings", json{{"resources", json::array({{{"name", 1}}, 2})}}, false},
      {"not an object", json::array(), false},
  };
  for (const auto& row : rows) {
    EXPECT_EQ(discoveryNames(row.document, "resourceslices"), row.names) << row.what;
  }
}

TEST(OptionalInformerTest, NotServedIsReadyAndEmptyLoggedOnceAndCounted) {
  Fixture f;
  f.start();
  ASSERT_TRUE(eventually([&] { return f.in(State::kAbsent); }));
  EXPECT_TRUE(f.informer->ready());
  EXPECT_TRUE(f.informer->objects().empty());
  EXPECT_EQ(f.fake->calls("list"), 0) << "nothing is listed while it is not served";
  // Rechecked, but the degraded mode is counted once, not on every recheck.
  const int asked = f.fake->calls("getPath");
  ASSERT_TRUE(eventually([&] { return f.fake->calls("getPath") > asked + 2; }));
  EXPECT_NE(exposition(*f.metrics)
                .find("gpuscale_reconciler_degraded_total{what=\"optional_resource_absent\"} 1"),
            std::string::npos)
      << exposition(*f.metrics);
  EXPECT_TRUE(f.served("0"));
  EXPECT_EQ(f.changes.load(), 1);
}

TEST(OptionalInformerTest, ServedIsWatchedAndItsObjectsPlanned) {
  Fixture f;
  f.fake->setPath(kDiscovery, discovery({"resourceslices"}));
  ASSERT_TRUE(f.fake->create(slices(), slice("a")));
  f.start();
  ASSERT_TRUE(eventually([&] { return f.in(State::kServed); }));
  EXPECT_TRUE(f.informer->ready());
  ASSERT_EQ(f.informer->objects().size(), 1u);
  ASSERT_TRUE(f.fake->create(slices(), slice("b")));
  EXPECT_TRUE(eventually([&] { return f.informer->objects().size() == 2; }));
  EXPECT_TRUE(f.served("1"));
  // A served collection costs no discovery call in steady state.
  const int asked = f.fake->calls("getPath");
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(f.fake->calls("getPath"), asked);
}

TEST(OptionalInformerTest, AppearsLaterAndGoesAwayAgain) {
  Fixture f;
  f.start();
  ASSERT_TRUE(eventually([&] { return f.in(State::kAbsent); }));
  // DRA turned on: found by the periodic recheck.
  ASSERT_TRUE(f.fake->create(slices(), slice("a")));
  f.fake->setPath(kDiscovery, discovery({"resourceslices"}));
  ASSERT_TRUE(eventually([&] { return f.in(State::kServed); }));
  EXPECT_EQ(f.informer->objects().size(), 1u);
  EXPECT_TRUE(f.served("1"));
  // Turned off again: the watch fails, discovery no longer names it, its objects are dropped.
  f.fake->removePath(kDiscovery);
  f.fake->failNext("list", core::Status::notFound("not found"), 1000);
  f.fake->failNext("watch", core::Status::notFound("not found"), 1000);
  f.fake->endWatches(core::Status::notFound("the server could not find the requested resource"));
  ASSERT_TRUE(eventually([&] { return f.in(State::kAbsent); }));
  EXPECT_TRUE(f.informer->objects().empty());
  EXPECT_TRUE(f.informer->ready());
  EXPECT_TRUE(f.served("0"));
  EXPECT_NE(exposition(*f.metrics)
                .find("gpuscale_reconciler_degraded_total{what=\"optional_resource_absent\"} 2"),
            std::string::npos)
      << exposition(*f.metrics);
}

TEST(OptionalInformerTest, ForbiddenIsPlannedWithoutUntilItReads) {
  Fixture f;
  f.fake->setPath(kDiscovery, discovery({"resourceslices"}));
  ASSERT_TRUE(f.fake->create(slices(), slice("a")));
  f.fake->failNext("list", core::Status(403, "Forbidden", "cannot list resourceslices"), 30);
  f.start();
  ASSERT_TRUE(eventually([&] { return f.in(State::kUnreadable); }));
  EXPECT_TRUE(f.informer->ready()) << "a pass does not wait for what it may not read";
  EXPECT_TRUE(f.informer->objects().empty());
  // The informer kept retrying; once the grant exists its objects count.
  ASSERT_TRUE(eventually([&] { return f.in(State::kServed); }));
  EXPECT_EQ(f.informer->objects().size(), 1u);
  EXPECT_NE(
      exposition(*f.metrics)
          .find("gpuscale_reconciler_degraded_total{what=\"optional_resource_unreadable\"} 1"),
      std::string::npos)
      << exposition(*f.metrics);
}

TEST(OptionalInformerTest, FailedDiscoveryIsRetried) {
  Fixture f;
  f.fake->setPath(kDiscovery, discovery({"resourceslices"}));
  f.fake->failNext("getPath", core::Status::unavailable("connection refused"), 2);
  f.start();
  ASSERT_TRUE(eventually([&] { return f.in(State::kServed); }));
  EXPECT_NE(exposition(*f.metrics)
                .find("gpuscale_reconciler_degraded_total{what=\"optional_resource_unknown\"} 1"),
            std::string::npos)
      << exposition(*f.metrics);
}

TEST(OptionalInformerTest, StopsWithoutHanging) {
  Fixture f;
  f.fake->setPath(kDiscovery, discovery({"resourceslices"}));
  f.start();
  ASSERT_TRUE(eventually([&] { return f.in(State::kServed); }));
  f.informer->stop();
  f.informer->stop();
  EXPECT_EQ(f.fake->openWatches(), 0);
}

}  // namespace optional_informer_test
}  // namespace gpuscale::reconciler
