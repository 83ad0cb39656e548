#include "gpuscale/kube/object_store.h"

#include <gtest/gtest.h>

#include <functional>

namespace gpuscale::kube {
namespace object_store_test {

Object pod(const std::string& ns, const std::string& name, Object labels) {
  return {{"metadata", {{"namespace", ns}, {"name", name}, {"labels", std::move(labels)}}}};
}

void fillSample(ObjectStore& store) {
  store.replace({pod("a", "web-1", {{"app", "web"}, {"tier", "front"}}),
                 pod("a", "web-2", {{"app", "web"}, {"tier", "back"}}),
                 pod("a", "db-1", {{"app", "db"}}), pod("b", "web-3", {{"app", "web"}}),
                 pod("b", "bare", Object::object())});
}

struct Case {
  const char* what;
  std::string selector;
  std::string ns;
  std::vector<std::string> expect;  // ns/name, sorted
};

class ListTest : public ::testing::TestWithParam<Case> {};

TEST_P(ListTest, Selects) {
  const auto& c = GetParam();
  ObjectStore store;
  fillSample(store);
  auto selector = core::LabelSelector::parse(c.selector);
  ASSERT_TRUE(selector.ok()) << c.what;
  std::vector<std::string> names;
  for (const auto& object : store.list(*selector, c.ns))
    names.push_back(ObjectStore::keyOf(*object));
  EXPECT_EQ(names, c.expect) << c.what;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ListTest,
    ::testing::Values(
        Case{"everything", "", "", {"a/db-1", "a/web-1", "a/web-2", "b/bare", "b/web-3"}},
        Case{"one namespace", "", "b", {"b/bare", "b/web-3"}},
        Case{"equality across namespaces", "app=web", "", {"a/web-1", "a/web-2", "b/web-3"}},
        Case{"equality in a namespace", "app=web", "a", {"a/web-1", "a/web-2"}},
        Case{"set membership", "app in (db,web),tier!=back", "a", {"a/db-1", "a/web-1"}},
        Case{"index narrows, the rest still filters", "app=web,tier=front", "", {"a/web-1"}},
        Case{"exists", "tier", "", {"a/web-1", "a/web-2"}},
        Case{"does not exist", "!app", "", {"b/bare"}},
        Case{"notin", "app notin (web)", "", {"a/db-1", "b/bare"}},
        Case{"no match", "app=cache", "", {}}, Case{"unknown namespace", "", "zzz", {}}));

TEST(ObjectStoreTest, ReplaceReportsTheDifference) {
  ObjectStore store;
  fillSample(store);
  auto changes = store.replace({pod("a", "web-1", {{"app", "web"}, {"tier", "front"}}),
                                pod("a", "web-2", {{"app", "web"}, {"tier", "middle"}}),
                                pod("c", "new", {{"app", "web"}})});
  int adds = 0, updates = 0, deletes = 0;
  for (const auto& change : changes) {
    if (change.before && change.after)
      ++updates;
    else if (change.after)
      ++adds;
    else
      ++deletes;
  }
  EXPECT_EQ(adds, 1);     // c/new
  EXPECT_EQ(updates, 1);  // a/web-2 (a/web-1 is unchanged and not reported)
  EXPECT_EQ(deletes, 3);  // a/db-1, b/web-3, b/bare
  EXPECT_EQ(store.size(), 3u);
  EXPECT_TRUE(store.list(*core::LabelSelector::parse("tier=back")).empty()) << "stale index entry";
  EXPECT_EQ(store.list(*core::LabelSelector::parse("tier=middle")).size(), 1u);
}

TEST(ObjectStoreTest, UpsertAndEraseKeepIndexesInStep) {
  ObjectStore store;
  fillSample(store);
  auto change = store.upsert(pod("a", "web-1", {{"app", "api"}}));
  ASSERT_TRUE(change.before && change.after);
  EXPECT_EQ((*change.before)["metadata"]["labels"]["app"], "web");
  EXPECT_EQ(store.list(*core::LabelSelector::parse("app=web"), "a").size(), 1u);
  EXPECT_EQ(store.list(*core::LabelSelector::parse("app=api")).size(), 1u);
  EXPECT_TRUE(store.erase(pod("a", "web-1", {})).before);
  EXPECT_FALSE(store.erase(pod("a", "web-1", {})).before);
  EXPECT_TRUE(store.list(*core::LabelSelector::parse("app=api")).empty());
  EXPECT_EQ(store.get("a", "web-1"), nullptr);
  EXPECT_NE(store.get("a", "web-2"), nullptr);
}

TEST(ObjectStoreTest, GenerationMovesOnlyWhenTheStoreChanges) {
  struct Step {
    const char* what;
    std::function<void(ObjectStore&)> write;
    bool moves;
  };
  const Step steps[] = {
      {"a relist that adds", [](ObjectStore& s) { fillSample(s); }, true},
      {"the same relist again", [](ObjectStore& s) { fillSample(s); }, false},
      {"an update",
       [](ObjectStore& s) {
         s.upsert(pod("a", "db-1", {{"app", "cache"}}));
       },
       true},
      {"a delete", [](ObjectStore& s) { s.erase(pod("a", "db-1", {})); }, true},
      {"a delete of nothing", [](ObjectStore& s) { s.erase(pod("a", "db-1", {})); }, false},
      {"a relist that removes", [](ObjectStore& s) { s.replace({}); }, true},
  };
  ObjectStore store;
  for (const Step& step : steps) {
    SCOPED_TRACE(step.what);
    const uint64_t before = store.generation();
    step.write(store);
    EXPECT_EQ(store.generation() != before, step.moves);
  }
}

TEST(ObjectStoreTest, ReadersKeepTheirSnapshot) {
  ObjectStore store;
  fillSample(store);
  auto before = store.get("a", "web-1");
  store.upsert(pod("a", "web-1", {{"app", "changed"}}));
  EXPECT_EQ((*before)["metadata"]["labels"]["app"], "web");
}

TEST(ObjectStoreTest, ClusterScopedObjectsHaveNoNamespace) {
  ObjectStore store;
  store.upsert({{"metadata", {{"name", "node-1"}, {"labels", {{"gpu", "a100"}}}}}});
  EXPECT_NE(store.get("", "node-1"), nullptr);
  EXPECT_EQ(store.list(*core::LabelSelector::parse("gpu=a100")).size(), 1u);
}

TEST(ObjectStoreTest, MetadataOfTheWrongTypeReadsAsAbsent) {
  ObjectStore store;
  // A malformed object from the server must not throw out of the informer's thread.
  store.replace({Object::parse(R"({"metadata":{"namespace":5,"name":"a","labels":{"k":1}}})"),
                 Object::parse(R"({"metadata":{"namespace":"ns","name":["b"]}})"), Object(3)});
  EXPECT_NE(store.get("", "a"), nullptr);
  EXPECT_NE(store.get("ns", ""), nullptr);
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.list(*core::LabelSelector::parse("k")).size(), 0u);
  EXPECT_EQ(store.list({}, "ns").size(), 1u);
  store.erase(Object::parse(R"({"metadata":{"namespace":[],"name":"a"}})"));
  EXPECT_EQ(store.size(), 2u);
}

}  // namespace object_store_test
}  // namespace gpuscale::kube
