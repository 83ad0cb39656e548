// End-to-end tests of the Kubernetes client against the REAL control plane of tests/cluster
// (started by run_e2e.sh): CRUD, pagination, typed errors, watches, informer resume, discovery of a
// new CRD.
#include <gtest/gtest.h>

#include "e2e/kube/cluster_fixture.h"

namespace gpuscale::e2e {
namespace {

TEST_F(ClusterTest, CrudPaginationPatchAndTypedErrors) {
  auto client = adminClient();
  for (int i = 0; i < 5; ++i) {
    auto created = client->create(kConfigMaps, configMap("cm-" + std::to_string(i)));
    ASSERT_TRUE(created.ok()) << created.status().toString();
  }
  kube::ListOptions options;
  options.limit = 2;  // three pages
  options.labelSelector = "app=e2e";
  auto list = client->list(kConfigMaps, options);
  ASSERT_TRUE(list.ok()) << list.status().toString();
  EXPECT_EQ(list->items.size(), 5u);
  EXPECT_FALSE(list->resourceVersion.empty());

  auto missing = client->get(kConfigMaps.named("nope"));
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(k8s::isNotFound(missing.status()));
  EXPECT_EQ(missing.status().message(), "configmaps \"nope\" not found");

  auto duplicate = client->create(kConfigMaps, configMap("cm-0"));
  ASSERT_FALSE(duplicate.ok());
  EXPECT_TRUE(k8s::isConflict(duplicate.status()));
  EXPECT_EQ(duplicate.status().reason(), "AlreadyExists");

  auto current = client->get(kConfigMaps.named("cm-0"));
  ASSERT_TRUE(current.ok());
  Object stale = *current;
  ASSERT_TRUE(
      client
          ->patch(kConfigMaps.named("cm-0"), kube::PatchType::kMerge, {{"data", {{"k", "merged"}}}})
          .ok());
  stale["data"]["k"] = "lost update";
  auto conflict = client->update(kConfigMaps.named("cm-0"), stale);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().reason(), "Conflict");

  auto patched = client->patch(
      kConfigMaps.named("cm-0"), kube::PatchType::kJson,
      Object::parse(R"([{"op":"add","path":"/metadata/labels/tier","value":"gold"}])"));
  ASSERT_TRUE(patched.ok()) << patched.status().toString();
  EXPECT_EQ((*patched)["data"]["k"], "merged");
  EXPECT_EQ((*patched)["metadata"]["labels"]["tier"], "gold");

  auto invalid = client->patch(kConfigMaps.named("cm-0"), kube::PatchType::kJson,
                               Object::parse(R"([{"op":"test","path":"/data/k","value":"x"}])"));
  EXPECT_FALSE(invalid.ok());
}

TEST_F(ClusterTest, WatchStreamsRealEventsAndOldVersionsAreGone) {
  auto client = adminClient();
  ASSERT_TRUE(client->create(kConfigMaps, configMap("watched")).ok() ||
              client->get(kConfigMaps.named("watched")).ok());
  auto list = client->list(kConfigMaps, {});
  ASSERT_TRUE(list.ok());
  std::atomic<bool> sawModified{false};
  std::stop_source stop;
  std::thread watcher([&] {
    kube::WatchOptions options;
    options.resourceVersion = list->resourceVersion;
    options.fieldSelector = "metadata.name=watched";
    // The outcome is what the handler saw (sawModified); the watch's own end status is not.
    (void)client->watch(
        kConfigMaps, options,
        [&](const kube::WatchEvent& e) {
          if (e.type == kube::WatchEvent::Type::kModified && e.object["data"]["k"] == "changed") {
            sawModified = true;
            return false;
          }
          return true;
        },
        stop.get_token());
  });
  ASSERT_TRUE(client
                  ->patch(kConfigMaps.named("watched"), kube::PatchType::kMerge,
                          {{"data", {{"k", "changed"}}}})
                  .ok());
  EXPECT_TRUE(testing::waitUntil([&] { return sawModified.load(); }, seconds(30)));
  stop.request_stop();
  watcher.join();

  // A watch from a resourceVersion long gone: kube-apiserver 1.33 answered 410 Gone; 1.36 (the
  // watch cache) starts it from the current state instead, with ADDED events.
  kube::WatchOptions ancient;
  ancient.resourceVersion = "1";
  bool replayed = false;
  const auto status = client->watch(kConfigMaps, ancient,
                                    [&](const kube::WatchEvent& e) {
                                      replayed = e.type == kube::WatchEvent::Type::kAdded;
                                      return false;
                                    },
                                    {});
  EXPECT_TRUE(k8s::isGone(status) || replayed) << status.toString();
}

TEST_F(ClusterTest, InformerFollowsAndResumesWithoutRelisting) {
  auto client = adminClient();
  kube::InformerOptions options;
  options.resource = kConfigMaps;
  options.labelSelector = "app=informer";
  options.watchTimeoutSeconds = 2;  // the server ends each stream quickly: the informer must resume
  kube::Informer informer(client, options);
  informer.start();
  ASSERT_TRUE(informer.waitForSync(seconds(30)));
  Object labelled = configMap("informed");
  labelled["metadata"]["labels"]["app"] = "informer";
  ASSERT_TRUE(client->create(kConfigMaps, labelled).ok());
  const auto selector = *core::LabelSelector::parse("app=informer");
  ASSERT_TRUE(
      testing::waitUntil([&] { return informer.store().list(selector).size() == 1; }, seconds(30)));
  std::this_thread::sleep_for(seconds(3));  // at least one stream ended and was resumed
  ASSERT_TRUE(client->remove(kConfigMaps.named("informed")).ok());
  ASSERT_TRUE(
      testing::waitUntil([&] { return informer.store().list(selector).empty(); }, seconds(30)));
  EXPECT_EQ(informer.stats().lists, 1u);
  EXPECT_GE(informer.stats().watches, 2u);
}

TEST_F(ClusterTest, DiscoveryFindsBuiltinsAndNewCrds) {
  auto client = adminClient();
  kube::DiscoveryResourceMapper mapper(client);
  ASSERT_TRUE(mapper.refresh().ok());
  EXPECT_TRUE(mapper.resourceFor({"", "pod"}).ok());
  auto deployments = mapper.resourceFor({"apps", "Deployment"});
  ASSERT_TRUE(deployments.ok());
  EXPECT_EQ(deployments->version, "v1");
  EXPECT_FALSE(mapper.resourceFor({"", "widget"}).ok());
  apply(R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.e2e.gpuscale.io}
spec:
  group: e2e.gpuscale.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
)");
  EXPECT_TRUE(testing::waitUntil(
      [&] {
        return mapper.refresh().ok() && mapper.resourceFor({"", "widget"}).ok();
      },
      seconds(60), std::chrono::milliseconds(500)));
  EXPECT_EQ(mapper.resourceFor({"", "Widget"})->groupResource.group, "e2e.gpuscale.io");
}

}  // namespace
}  // namespace gpuscale::e2e
