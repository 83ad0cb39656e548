#include "gpuscale/adapter/standalone_object_lister.h"

#include <algorithm>

#include "gpuscale/core/go_quote.h"

namespace gpuscale::adapter {
namespace {

// Where kube-state-metrics keeps an object kind's labels.
struct LabelSeries {
  std::string_view metric;       // kube_pod_labels
  std::string_view objectLabel;  // the label naming the object
};

// The selector with every key renamed to kube-state-metrics' label name, so it can be matched
// against a series' labels directly.
std::vector<core::Requirement> sanitised(const core::LabelSelector& selector) {
  std::vector<core::Requirement> out = selector.requirements();
  for (core::Requirement& requirement : out) {
    requirement.key = kubeStateMetricsLabelName(requirement.key);
  }
  return out;
}

}  // namespace

std::string kubeStateMetricsLabelName(std::string_view key) {
  std::string out = "label_";
  for (char c : key) {
    bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += keep ? c : '_';
  }
  return out;
}

StandaloneObjectLister::StandaloneObjectLister(std::shared_ptr<QueryRunner> runner)
    : runner_(std::move(runner)) {}

core::Result<ObjectSet> StandaloneObjectLister::list(const k8s::ResourceInfo& resource,
                                                     std::string_view namespaceName,
                                                     const core::LabelSelector& selector) {
  if (selector.empty()) return ObjectSet::everything();
  LabelSeries source;
  if (resource.groupResource == k8s::GroupResource{"", "pods"}) {
    source = {"kube_pod_labels", "pod"};
  } else if (resource.groupResource == k8s::GroupResource{"", "namespaces"}) {
    source = {"kube_namespace_labels", "namespace"};
  } else {
    return core::Status::badRequest(
        "labelSelector on " + resource.groupResource.toString() +
        " is not supported in standalone mode (only pods and namespaces, through "
        "kube-state-metrics' kube_pod_labels and kube_namespace_labels)");
  }
  std::string promql(source.metric);
  if (!namespaceName.empty() && source.objectLabel == "pod") {
    promql += "{namespace=" + core::goQuote(namespaceName) + "}";
  }
  auto result = runner_->run(promql, {prom::ResultType::kVector});
  if (!result) return result.status();

  const std::vector<core::Requirement> requirements = sanitised(selector);
  ObjectSet out;
  for (const prom::Sample& sample : (*result)->vector) {
    auto object = sample.metric.find(source.objectLabel);
    if (object == sample.metric.end() || object->second.empty()) continue;
    bool matches =
        std::all_of(requirements.begin(), requirements.end(),
                    [&](const core::Requirement& r) { return r.matches(sample.metric); });
    if (matches) out.names.push_back(object->second);
  }
  std::sort(out.names.begin(), out.names.end());
  out.names.erase(std::unique(out.names.begin(), out.names.end()), out.names.end());
  return out;
}

}  // namespace gpuscale::adapter
