#include "gpuscale/k8s/resource_mapper.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "gpuscale/core/go_quote.h"

namespace gpuscale::k8s {
namespace {

struct Row {
  const char* group;
  const char* version;
  const char* plural;
  const char* singular;
  const char* kind;
  bool namespaced;
};

// Priority order matters for group-less lookups: the core group wins, as in discovery.
constexpr Row kRows[] = {
    {"", "v1", "pods", "pod", "Pod", true},
    {"", "v1", "services", "service", "Service", true},
    {"", "v1", "endpoints", "endpoints", "Endpoints", true},
    {"", "v1", "namespaces", "namespace", "Namespace", false},
    {"", "v1", "nodes", "node", "Node", false},
    {"", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", false},
    {"", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", true},
    {"", "v1", "configmaps", "configmap", "ConfigMap", true},
    {"", "v1", "secrets", "secret", "Secret", true},
    {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true},
    {"", "v1", "replicationcontrollers", "replicationcontroller", "ReplicationController", true},
    {"", "v1", "events", "event", "Event", true},
    {"", "v1", "limitranges", "limitrange", "LimitRange", true},
    {"", "v1", "resourcequotas", "resourcequota", "ResourceQuota", true},
    {"", "v1", "podtemplates", "podtemplate", "PodTemplate", true},
    {"", "v1", "componentstatuses", "componentstatus", "ComponentStatus", false},
    {"apps", "v1", "deployments", "deployment", "Deployment", true},
    {"apps", "v1", "replicasets", "replicaset", "ReplicaSet", true},
    {"apps", "v1", "statefulsets", "statefulset", "StatefulSet", true},
    {"apps", "v1", "daemonsets", "daemonset", "DaemonSet", true},
    {"apps", "v1", "controllerrevisions", "controllerrevision", "ControllerRevision", true},
    {"batch", "v1", "jobs", "job", "Job", true},
    {"batch", "v1", "cronjobs", "cronjob", "CronJob", true},
    {"networking.k8s.io", "v1", "ingresses", "ingress", "Ingress", true},
    {"networking.k8s.io", "v1", "ingressclasses", "ingressclass", "IngressClass", false},
    {"networking.k8s.io", "v1", "networkpolicies", "networkpolicy", "NetworkPolicy", true},
    {"autoscaling", "v2", "horizontalpodautoscalers", "horizontalpodautoscaler",
     "HorizontalPodAutoscaler", true},
};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

BuiltinResourceTable::BuiltinResourceTable() {
  for (const Row& row : kRows) {
    resources_.push_back(
        {{row.group, row.plural}, row.version, row.singular, row.kind, row.namespaced});
    kindsLower_.push_back(lower(row.kind));
  }
}

const BuiltinResourceTable& BuiltinResourceTable::instance() {
  static const BuiltinResourceTable table;
  return table;
}

core::Result<ResourceInfo> BuiltinResourceTable::resourceFor(const GroupResource& gr) const {
  const std::string resource = lower(gr.resource);
  const std::string group = lower(gr.group);
  for (const ResourceInfo& info : resources_) {
    if (!group.empty() && info.groupResource.group != group) continue;
    if (info.groupResource.resource == resource || info.singular == resource ||
        kindsLower_[static_cast<size_t>(&info - resources_.data())] == resource) {
      return info;
    }
  }
  if (group.empty()) {
    return core::Status::notFound(
        fmt::format("the server doesn't have a resource type {}", core::goQuote(gr.resource)));
  }
  return core::Status::notFound(
      fmt::format("the server doesn't have a resource type {} in group {}",
                  core::goQuote(gr.resource), core::goQuote(gr.group)));
}

}  // namespace gpuscale::k8s
