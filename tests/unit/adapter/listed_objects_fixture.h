// The objects both object listers' tests resolve: pods in two namespaces (one terminating) and two
// namespaces, created in a FakeKubeClient.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "fakes/fake_kube_client.h"
#include "gpuscale/k8s/resource_mapper.h"

namespace gpuscale::adapter {

inline kube::Object listedObject(const std::string& ns, const std::string& name,
                                 const std::string& app, bool terminating = false) {
  kube::Object out = {{"metadata", {{"name", name}, {"labels", {{"app", app}}}}}};
  if (!ns.empty()) out["metadata"]["namespace"] = ns;
  if (terminating) out["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  return out;
}

inline k8s::ResourceInfo builtinResource(const std::string& plural) {
  return *k8s::BuiltinResourceTable::instance().resourceFor({"", plural});
}

inline kube::ResourceRef podsIn(const std::string& ns) {
  return kube::ResourceRef::collection("", "v1", "pods", ns);
}

// default: web-b, web-a (app=web), db-0 (app=db), web-old (app=web, terminating);
// other: web-x (app=web); namespaces default (app=none) and other (app=team).
inline void createListedObjects(testing::FakeKubeClient& kube) {
  ASSERT_TRUE(kube.create(podsIn("default"), listedObject("default", "web-b", "web")).ok());
  ASSERT_TRUE(kube.create(podsIn("default"), listedObject("default", "web-a", "web")).ok());
  ASSERT_TRUE(kube.create(podsIn("default"), listedObject("default", "db-0", "db")).ok());
  ASSERT_TRUE(kube.create(podsIn("default"),
                          listedObject("default", "web-old", "web", /*terminating=*/true))
                  .ok());
  ASSERT_TRUE(kube.create(podsIn("other"), listedObject("other", "web-x", "web")).ok());
  const auto namespaces = kube::ResourceRef::collection("", "v1", "namespaces");
  ASSERT_TRUE(kube.create(namespaces, listedObject("", "default", "none")).ok());
  ASSERT_TRUE(kube.create(namespaces, listedObject("", "other", "team")).ok());
}

}  // namespace gpuscale::adapter
