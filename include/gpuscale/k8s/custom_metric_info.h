// CustomMetricInfo: one custom metric as custom.metrics.k8s.io lists it: the objects it describes,
// whether they are namespaced, and its name. The rule registry produces it, the API layer serves
// and looks it up: one type for both.
//
// Thread safety: a plain value.
#pragma once

#include <string>

#include "gpuscale/k8s/group_resource.h"

namespace gpuscale::k8s {

struct CustomMetricInfo {
  GroupResource resource;
  bool namespaced = true;
  std::string metric;

  // The APIResourceList name: "pods/avg_time_queue_us", "deployments.apps/x".
  std::string apiName() const { return resource.toString() + "/" + metric; }

  friend bool operator==(const CustomMetricInfo&, const CustomMetricInfo&) = default;
};

}  // namespace gpuscale::k8s
