#include "gpuscale/reconciler/optimistic_write.h"

#include <gtest/gtest.h>

#include "fakes/fake_kube_client.h"

namespace gpuscale::reconciler {
namespace optimistic_write_test {

using nlohmann::json;

kube::ResourceRef cmRef() {
  return kube::ResourceRef::collection("", "v1", "configmaps", "gpu-operator").named("cm");
}

TEST(OptimisticWriteTest, ConcurrentWriterForcesARereadAndTheChangeIsRecomputed) {
  gpuscale::testing::FakeKubeClient fake;
  ASSERT_TRUE(
      fake.create(cmRef().named(""), {{"metadata", {{"name", "cm"}}}, {"data", {{"a", "1"}}}})
          .ok());
  int calls = 0;
  auto r = patchWithRetry(
      fake, cmRef(), [&](const kube::Object& current) -> core::Result<std::optional<kube::Object>> {
        if (++calls == 1) {  // someone else writes between our read and our write
          EXPECT_TRUE(fake.patch(cmRef(), kube::PatchType::kMerge, {{"data", {{"b", "2"}}}}).ok());
        }
        int n = static_cast<int>(current["data"].size());
        return std::optional<kube::Object>(json{{"data", {{"count", std::to_string(n)}}}});
      });
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ(r->conflicts, 1);
  EXPECT_EQ(calls, 2);
  auto cm = *fake.get(cmRef());
  EXPECT_EQ(cm["data"]["count"], "2");  // computed from the re-read object (a and b)
  EXPECT_EQ(cm["data"]["b"], "2");
}

TEST(OptimisticWriteTest, NoChangeWritesNothing) {
  gpuscale::testing::FakeKubeClient fake;
  ASSERT_TRUE(fake.create(cmRef().named(""), {{"metadata", {{"name", "cm"}}}}).ok());
  const std::string before = fake.currentResourceVersion();
  auto r = patchWithRetry(fake, cmRef(), [](const kube::Object&) {
    return core::Result<std::optional<kube::Object>>(std::optional<kube::Object>{});
  });
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->changed);
  EXPECT_EQ(fake.currentResourceVersion(), before);
}

TEST(OptimisticWriteTest, UpsertCreatesAMissingObject) {
  gpuscale::testing::FakeKubeClient fake;
  auto r = upsertWithRetry(fake, cmRef(), "v1", "ConfigMap", [](const kube::Object&) {
    return core::Result<std::optional<kube::Object>>(
        std::optional<kube::Object>(json{{"data", {{"k", "v"}}}}));
  });
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_EQ((*fake.get(cmRef()))["data"]["k"], "v");
}

TEST(OptimisticWriteTest, GivesUpAfterTheAttemptBudget) {
  gpuscale::testing::FakeKubeClient fake;
  ASSERT_TRUE(fake.create(cmRef().named(""), {{"metadata", {{"name", "cm"}}}}).ok());
  fake.failNext("patch", core::Status(409, "Conflict", "modified"), 3);
  auto r = patchWithRetry(
      fake, cmRef(),
      [](const kube::Object&) {
        return core::Result<std::optional<kube::Object>>(
            std::optional<kube::Object>(json{{"data", {{"k", "v"}}}}));
      },
      3);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(k8s::isConflict(r.status()));
}

}  // namespace optimistic_write_test
}  // namespace gpuscale::reconciler
