#include "gpuscale/k8s/resource_mapper.h"

#include <gtest/gtest.h>

namespace gpuscale::k8s {
namespace resource_mapper_test {

struct Row {
  const char* what;
  GroupResource input;
  bool ok;
  GroupResource canonical;
  bool namespaced;
};

const Row kRows[] = {
    {"plural", {"", "pods"}, true, {"", "pods"}, true},
    {"singular", {"", "pod"}, true, {"", "pods"}, true},
    {"kind", {"", "Pod"}, true, {"", "pods"}, true},
    {"upper case plural", {"", "PODS"}, true, {"", "pods"}, true},
    {"namespace is cluster-scoped", {"", "namespace"}, true, {"", "namespaces"}, false},
    {"node", {"", "node"}, true, {"", "nodes"}, false},
    {"group-less deployment finds apps", {"", "deployment"}, true, {"apps", "deployments"}, true},
    {"explicit group", {"apps", "deployment"}, true, {"apps", "deployments"}, true},
    {"job is batch (the Prometheus job label trap)", {"", "job"}, true, {"batch", "jobs"}, true},
    {"ingress", {"", "ingress"}, true, {"networking.k8s.io", "ingresses"}, true},
    {"hpa",
     {"autoscaling", "horizontalpodautoscaler"},
     true,
     {"autoscaling", "horizontalpodautoscalers"},
     true},
    {"service", {"", "service"}, true, {"", "services"}, true},
    {"endpoints singular is endpoints", {"", "endpoints"}, true, {"", "endpoints"}, true},
    {"wrong group", {"apps", "pod"}, false, {}, false},
    {"unknown", {"", "instance"}, false, {}, false},
    {"sanitised group does not resolve", {"networking", "ingress"}, false, {}, false},
    {"empty", {"", ""}, false, {}, false},
};

TEST(BuiltinResourceTable, Table) {
  const BuiltinResourceTable& table = BuiltinResourceTable::instance();
  for (const Row& row : kRows) {
    SCOPED_TRACE(row.what);
    core::Result<ResourceInfo> info = table.resourceFor(row.input);
    ASSERT_EQ(info.ok(), row.ok) << info.status().message();
    if (!row.ok) {
      EXPECT_EQ(info.status().httpCode(), 404);
      continue;
    }
    EXPECT_EQ(info->groupResource, row.canonical);
    EXPECT_EQ(info->namespaced, row.namespaced);
  }
}

// The resource comes from the request path: an unknown one, whatever its bytes, is a 404 that
// quotes it as Go's %q does (a name cut inside a UTF-8 sequence once aborted the process through
// fmt's "{:?}").
TEST(BuiltinResourceTable, UnknownResourcesAreQuotedWhateverTheirBytes) {
  const BuiltinResourceTable& table = BuiltinResourceTable::instance();
  EXPECT_EQ(table.resourceFor({"", "pod\xc3"}).status().message(),
            R"(the server doesn't have a resource type "pod\xc3")");
  EXPECT_EQ(table.resourceFor({"x\xe2\x82", "a\"b\n"}).status().message(),
            R"(the server doesn't have a resource type "a\"b\n" in group "x\xe2\x82")");
}

TEST(GroupResource, ParseAndPrint) {
  EXPECT_EQ(GroupResource::parse("deployments.apps"), (GroupResource{"apps", "deployments"}));
  EXPECT_EQ(GroupResource::parse("ingresses.networking.k8s.io"),
            (GroupResource{"networking.k8s.io", "ingresses"}));
  EXPECT_EQ(GroupResource::parse("pods"), (GroupResource{"", "pods"}));
  EXPECT_EQ((GroupResource{"apps", "deployments"}).toString(), "deployments.apps");
  EXPECT_EQ((GroupResource{"", "pods"}).toString(), "pods");
}

TEST(BuiltinResourceTable, KnowsCoreAndAppsWithVersionsAndKinds) {
  const BuiltinResourceTable& table = BuiltinResourceTable::instance();
  core::Result<ResourceInfo> sts = table.resourceFor({"apps", "statefulsets"});
  ASSERT_TRUE(sts.ok());
  EXPECT_EQ(sts->kind, "StatefulSet");
  EXPECT_EQ(sts->version, "v1");
  EXPECT_EQ(sts->singular, "statefulset");
  EXPECT_EQ(table.resources().front().groupResource.resource, "pods");
}

}  // namespace resource_mapper_test
}  // namespace gpuscale::k8s
