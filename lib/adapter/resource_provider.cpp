#include "gpuscale/adapter/resource_provider.h"

#include <algorithm>
#include <map>
#include <set>

#include "gpuscale/adapter/resource_metrics_assembly.h"
#include "query_build_error.h"

namespace gpuscale::adapter {
namespace {

using apiserver::NodeMetrics;
using apiserver::PodMetrics;
using core::Result;
using core::Status;

const rules::GroupResource kPods{"", "pods"};
const rules::GroupResource kNodes{"", "nodes"};

bool isRunning(const ListedObject& object) {
  return object.phase.empty() || object.phase == "Running";
}

// One resource's query and how to read its answer.
struct UsageQuery {
  std::string promql;
  UsageSamples read;
};

// The query of `rule` for `resource` objects: named (`names`), or every object (`names` empty);
// `spanNamespaces` groups pods by the namespace label too.
Result<UsageQuery> buildUsageQuery(const rules::CompiledResourceRule& rule,
                                   const rules::GroupResource& resource,
                                   std::string_view namespaceName,
                                   std::span<const std::string> names, bool spanNamespaces) {
  UsageQuery out;
  auto objectLabel = rule.resources.labelForResource(resource);
  if (!objectLabel) return detail::queryBuildError(objectLabel.status());
  out.read.objectLabel = std::move(*objectLabel);
  std::vector<std::string> extraGroupBy;
  const bool pods = resource == kPods;
  if (pods) {
    out.read.containerLabel = rule.containerLabel;
    if (!rule.containerLabel.empty()) extraGroupBy.push_back(rule.containerLabel);
  }
  if (spanNamespaces) {
    auto nsLabel = rule.resources.labelForResource(rules::namespacesResource());
    if (!nsLabel) return detail::queryBuildError(nsLabel.status());
    out.read.namespaceLabel = *nsLabel;
    extraGroupBy.push_back(std::move(*nsLabel));
  }
  rules::QueryRequest request;
  request.resource = resource;
  request.namespaceName = namespaceName;
  request.names = names;
  request.anyName = names.empty();
  request.extraGroupBy = extraGroupBy;
  auto promql = rules::renderResourceQuery(pods ? rule.containerQuery : rule.nodeQuery,
                                           rule.resources, request);
  if (!promql) return detail::queryBuildError(promql.status());
  out.promql = std::move(*promql);
  return out;
}

// Runs the cpu and the memory query of `resource` objects (`names`, or every object when null or
// too many to name) and assembles the answers; objects not in `names` are dropped.
template <typename Assemble>
auto queryUsage(QueryRunner& runner, const rules::CompiledResourceRules& rules,
                const rules::GroupResource& resource, std::string_view namespaceName,
                const std::vector<std::string>* names, size_t maxNames, Assemble assemble)
    -> Result<decltype(assemble(UsageSamples(), UsageSamples()))> {
  const bool all = names == nullptr || names->size() > maxNames;
  const std::span<const std::string> named =
      all ? std::span<const std::string>() : std::span<const std::string>(*names);
  const bool spanNamespaces = resource == kPods && namespaceName.empty();
  auto cpu = buildUsageQuery(rules.cpu, resource, namespaceName, named, spanNamespaces);
  if (!cpu) return cpu.status();
  auto memory = buildUsageQuery(rules.memory, resource, namespaceName, named, spanNamespaces);
  if (!memory) return memory.status();
  auto cpuResult = runner.run(cpu->promql, {prom::ResultType::kVector});
  if (!cpuResult) return cpuResult.status();
  auto memoryResult = runner.run(memory->promql, {prom::ResultType::kVector});
  if (!memoryResult) return memoryResult.status();
  cpu->read.samples = &(*cpuResult)->vector;
  memory->read.samples = &(*memoryResult)->vector;
  for (const UsageSamples* read : {&cpu->read, &memory->read}) {
    for (const prom::Sample& sample : *read->samples) {
      runner.countUnservable("resource", sample.point.value);
    }
  }
  auto items = assemble(cpu->read, memory->read);
  if (names != nullptr) {
    const std::set<std::string_view> wanted(names->begin(), names->end());
    std::erase_if(items, [&](const auto& item) { return !wanted.contains(item.name); });
  }
  return items;
}

// Whether a lister's answer names `name`, and what it read of it (null when it read nothing).
struct Listed {
  bool found = false;
  const ListedObject* object = nullptr;
};
Listed findListed(const ObjectSet& objects, std::string_view name) {
  if (objects.all) return {true, nullptr};
  for (const ListedObject& object : objects.objects) {
    if (object.name == name) return {true, &object};
  }
  const bool named =
      std::find(objects.names.begin(), objects.names.end(), name) != objects.names.end();
  return {named && objects.objects.empty(), nullptr};
}

}  // namespace

ResourceProvider::ResourceProvider(RuleSetSource rules, const k8s::ResourceMapper& mapper,
                                   std::shared_ptr<ObjectLister> objects,
                                   std::shared_ptr<QueryRunner> runner,
                                   ResourceProviderOptions options)
    : rules_(std::move(rules)),
      mapper_(mapper),
      objects_(std::move(objects)),
      runner_(std::move(runner)),
      options_(options) {}

Result<ResourceProvider::Rules> ResourceProvider::currentRules() const {
  Rules out;
  out.set = rules_();
  if (!out.set || !out.set->resourceRules) {
    return Status::unavailable("the rule file has no resourceRules: no resource metrics to serve");
  }
  out.resource = &*out.set->resourceRules;
  return out;
}

Result<ObjectSet> ResourceProvider::listObjects(std::string_view resource,
                                                std::string_view namespaceName,
                                                const core::LabelSelector& selector) const {
  auto info = mapper_.resourceFor({"", std::string(resource)});
  if (!info) return Status::internal("no resource " + std::string(resource) + " in the mapper");
  auto objects = objects_->list(*info, namespaceName, selector);
  if (!objects) return objects.status();
  if (!objects->objects.empty()) {
    // Only Running pods have (or are listed with) resource metrics.
    ObjectSet running;
    for (ListedObject& object : objects->objects) {
      if (!isRunning(object)) continue;
      running.names.push_back(object.name);
      running.objects.push_back(std::move(object));
    }
    return running;
  }
  return objects;
}

Result<std::vector<PodMetrics>> ResourceProvider::queryPods(
    const Rules& rules, std::string_view namespaceName,
    const std::vector<std::string>* names) const {
  const core::Duration window = rules.resource->window;
  return queryUsage(*runner_, *rules.resource, kPods, namespaceName, names,
                    options_.maxNamesInQuery,
                    [&](const UsageSamples& cpu, const UsageSamples& memory) {
                      return assemblePodMetrics(namespaceName, cpu, memory, window);
                    });
}

Result<std::vector<NodeMetrics>> ResourceProvider::queryNodes(
    const Rules& rules, const std::vector<std::string>* names) const {
  const core::Duration window = rules.resource->window;
  return queryUsage(*runner_, *rules.resource, kNodes, "", names, options_.maxNamesInQuery,
                    [&](const UsageSamples& cpu, const UsageSamples& memory) {
                      return assembleNodeMetrics(cpu, memory, window);
                    });
}

Result<std::vector<PodMetrics>> ResourceProvider::listPodMetrics(
    std::string_view namespaceName, const core::LabelSelector& selector) {
  auto rules = currentRules();
  if (!rules) return rules.status();
  auto objects = listObjects("pods", namespaceName, selector);
  if (!objects) return objects.status();
  if (objects->all) return queryPods(*rules, namespaceName, nullptr);
  if (objects->names.empty()) return std::vector<PodMetrics>();
  if (objects->objects.empty()) {
    // Names without namespaces (standalone with a label selector).
    if (namespaceName.empty()) {
      return Status::badRequest(
          "standalone mode cannot select pods by label in every namespace: name a namespace");
    }
    return queryPods(*rules, namespaceName, &objects->names);
  }

  // Kubernetes-backed: one query pair per namespace, labels from the objects.
  std::map<std::string, std::vector<std::string>> namesByNamespace;
  std::map<std::pair<std::string_view, std::string_view>, const ListedObject*> listed;
  for (const ListedObject& object : objects->objects) {
    namesByNamespace[object.namespaceName].push_back(object.name);
    listed[{object.namespaceName, object.name}] = &object;
  }
  std::vector<PodMetrics> out;
  for (const auto& [ns, names] : namesByNamespace) {
    auto pods = queryPods(*rules, ns, &names);
    if (!pods) return pods.status();
    for (PodMetrics& pod : *pods) {
      pod.labels = listed.at({pod.namespaceName, pod.name})->labels;
      out.push_back(std::move(pod));
    }
  }
  return out;
}

Result<PodMetrics> ResourceProvider::getPodMetrics(std::string_view namespaceName,
                                                   std::string_view name) {
  auto rules = currentRules();
  if (!rules) return rules.status();
  auto objects = listObjects("pods", namespaceName, core::LabelSelector());
  if (!objects) return objects.status();
  const Listed listed = findListed(*objects, name);
  if (!listed.found) return apiserver::objectNotFound("pods", name);
  const std::vector<std::string> names = {std::string(name)};
  auto pods = queryPods(*rules, namespaceName, &names);
  if (!pods) return pods.status();
  if (pods->empty()) return apiserver::podMetricsNotFound(namespaceName, name);
  PodMetrics pod = std::move(pods->front());
  if (listed.object != nullptr) pod.labels = listed.object->labels;
  return pod;
}

Result<std::vector<NodeMetrics>> ResourceProvider::listNodeMetrics(
    const core::LabelSelector& selector) {
  auto rules = currentRules();
  if (!rules) return rules.status();
  auto objects = listObjects("nodes", "", selector);
  if (!objects) return objects.status();
  if (objects->all) return queryNodes(*rules, nullptr);
  if (objects->names.empty()) return std::vector<NodeMetrics>();
  auto nodes = queryNodes(*rules, &objects->names);
  if (!nodes) return nodes.status();
  if (!objects->objects.empty()) {
    std::map<std::string_view, const ListedObject*> listed;
    for (const ListedObject& object : objects->objects) listed[object.name] = &object;
    for (NodeMetrics& node : *nodes) node.labels = listed.at(node.name)->labels;
  }
  return nodes;
}

Result<NodeMetrics> ResourceProvider::getNodeMetrics(std::string_view name) {
  auto rules = currentRules();
  if (!rules) return rules.status();
  auto objects = listObjects("nodes", "", core::LabelSelector());
  if (!objects) return objects.status();
  const Listed listed = findListed(*objects, name);
  if (!listed.found) return apiserver::objectNotFound("nodes", name);
  const std::vector<std::string> names = {std::string(name)};
  auto nodes = queryNodes(*rules, &names);
  if (!nodes) return nodes.status();
  if (nodes->empty()) return apiserver::nodeMetricsNotFound(name);
  NodeMetrics node = std::move(nodes->front());
  if (listed.object != nullptr) node.labels = listed.object->labels;
  return node;
}

}  // namespace gpuscale::adapter
