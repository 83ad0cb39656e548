// A validated, compiled rule file: what the adapter runs. compileRules() performs every startup
// check that prometheus-adapter's NamersFromConfig does, each reported as `FILE:LINE:COL: PATH:
// message`:
//   - a filter with both `is` and `isNot`, or neither;
//   - a regex that does not compile (Go RE2 syntax) in seriesFilters or name.matches;
//   - name.matches with more than one capture group and no `as`;
//   - a metricsQuery / containerQuery / nodeQuery / resources.template that does not parse;
//   - a resources.template that cannot be used as a label regex or lacks <<.Resource>>;
//   - an override whose resource the ResourceMapper does not know (unless
//     CompileOptions::unknownOverridesWarn: then a warning, and the override is left out);
//   - a resourceRules.window that is not a Prometheus duration.
//   - a backend declaration that is invalid (backend.h), or a rule naming an undeclared backend.
// It also collects warnings for rules that load but cannot work as written: the `$1_per_second`
// trap in `as`, template fields that do not exist (every request would fail), .GroupBy in external
// rules (always empty), no way to build a namespace matcher, an empty seriesQuery or metricsQuery.
//
// The ResourceMapper given to compileRules() must outlive the RuleSet (rules keep a pointer to it).
//
// Thread safety: a RuleSet is immutable; share it as std::shared_ptr<const RuleSet>.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/rules/backend.h"
#include "gpuscale/rules/config.h"
#include "gpuscale/rules/namer.h"

namespace gpuscale::rules {

// The Kubernetes vocabulary the rules use (lib/k8s).
using k8s::GroupResource;
using k8s::ResourceInfo;
using k8s::ResourceMapper;

// resourceRules.cpu or .memory, compiled.
struct CompiledResourceRule {
  std::string path;
  Template containerQuery;
  Template nodeQuery;
  ResourceConverter resources;
  std::string containerLabel;

  // Container query for pods in one namespace: .GroupBy is "<pod label>,<containerLabel>".
  core::Result<std::string> containerQueryFor(std::string_view namespaceName,
                                              std::span<const std::string> podNames) const;
  // Node query (root-scoped; .GroupBy is the node label).
  core::Result<std::string> nodeQueryFor(std::span<const std::string> nodeNames) const;
};

struct CompiledResourceRules {
  CompiledResourceRule cpu;
  CompiledResourceRule memory;
  std::chrono::nanoseconds window{0};
};

struct RuleSet {
  std::string file;
  std::vector<CompiledRule> rules;          // custom.metrics.k8s.io
  std::vector<CompiledRule> externalRules;  // external.metrics.k8s.io
  std::optional<CompiledResourceRules> resourceRules;
  std::vector<BackendSpec> backends;  // declared in the file (the default one is not)
  std::vector<Diagnostic> warnings;   // in file order

  const std::vector<CompiledRule>& of(RuleKind kind) const {
    return kind == RuleKind::kCustom ? rules : externalRules;
  }
  // The distinct seriesQuery strings of `kind`'s rules, in first-use order (one Prometheus call
  // each).
  std::vector<std::string> seriesQueries(RuleKind kind) const;

  // One discovery call: a seriesQuery asked of a backend, filed under `key` (discoveryKey()).
  struct DiscoveryQuery {
    std::string key;
    std::string backend;
    std::string seriesQuery;
  };
  // The distinct discovery calls of `kind`'s rules, in first-use order.
  std::vector<DiscoveryQuery> discoveryQueries(RuleKind kind) const;
};

struct CompileOptions {
  // For a mapper that follows the cluster's discovery: an override naming a resource the cluster
  // does not serve (yet) is a warning and is left out, so the other rules serve; the caller
  // compiles again when discovery changes.
  bool unknownOverridesWarn = false;
};

// Validates and compiles `config`. The first error is returned; warnings are kept in the RuleSet.
core::Result<std::shared_ptr<const RuleSet>> compileRules(const RuleConfig& config,
                                                          const ResourceMapper& mapper,
                                                          CompileOptions options = {});

// loadRuleConfigFile() + compileRules().
core::Result<std::shared_ptr<const RuleSet>> loadRules(const std::string& path,
                                                       const ResourceMapper& mapper);

}  // namespace gpuscale::rules
