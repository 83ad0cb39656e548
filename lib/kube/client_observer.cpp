#include "gpuscale/kube/client_observer.h"

#include <algorithm>
#include <array>

namespace gpuscale::kube {

std::string boundedResourceLabel(std::string_view resource) {
  static constexpr std::array<std::string_view, 22> kKnown = {"configmaps",
                                                              "daemonsets",
                                                              "deployments",
                                                              "discovery",
                                                              "endpoints",
                                                              "events",
                                                              "horizontalpodautoscalers",
                                                              "leases",
                                                              "namespaces",
                                                              "nodes",
                                                              "persistentvolumeclaims",
                                                              "pods",
                                                              "replicasets",
                                                              "replicationcontrollers",
                                                              "secrets",
                                                              "serviceaccounts",
                                                              "services",
                                                              "statefulsets",
                                                              "subjectaccessreviews",
                                                              "tokenreviews",
                                                              "customresourcedefinitions",
                                                              "apiservices"};
  const bool known = std::find(kKnown.begin(), kKnown.end(), resource) != kKnown.end();
  return known ? std::string(resource) : "other";
}

std::string codeClass(int code) {
  if (code < 200 || code > 599) return "error";
  return std::to_string(code / 100) + "xx";
}

}  // namespace gpuscale::kube
