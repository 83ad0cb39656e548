// Association between Prometheus labels and Kubernetes group-resources for one rule (`resources:`),
// in both directions, as prometheus-adapter's resourceConverter does it:
//
//  - label → resource (discovery): an override label maps to its (normalised) group-resource;
//  otherwise the
//    label template is run with Group = `(?P<group>.+?)`, Resource = `(?P<resource>.+?)`, wrapped
//    in ^…$ and used as a regex (template text is NOT escaped: a '.' in it is a wildcard). A
//    matching label gives {group capture, resource capture}, normalised through the ResourceMapper;
//    labels that do not normalise are ignored. So `<<.Resource>>` maps `pod`, `namespace`, `node`,
//    `service`, `job` (→ jobs.batch), …
//  - resource → label (queries): an override wins; otherwise the template is run with Group = the
//  group with
//    '.' and '-' replaced by '_' and Resource = the singular name. No override and no template →
//    "no generic resource label form specified for this metric"; an empty result → "empty label
//    produced by label template".
//
// Thread safety: immutable after create(); all methods are const and thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/k8s/resource_mapper.h"
#include "gpuscale/rules/go_regexp.h"
#include "gpuscale/rules/template.h"

namespace gpuscale::rules {

// The Kubernetes vocabulary the rules use (lib/k8s).
using k8s::GroupResource;
using k8s::ResourceInfo;
using k8s::ResourceMapper;

// {"", "namespaces"}: the resource whose label scopes namespaced queries.
const GroupResource& namespacesResource();

class ResourceConverter {
 public:
  // What create() found wrong, with the byte offset inside the template when the problem is there.
  struct Problem {
    enum class Where { kTemplate, kOverride };
    Where where = Where::kTemplate;
    size_t overrideIndex = 0;  // for kOverride
    size_t offset = 0;         // for kTemplate
    std::string message;
  };

  ResourceConverter() = default;

  // `overrides` are (label, unnormalised group-resource) in file order; `labelTemplate` may be
  // empty. Each override must normalise through `mapper`; a template must parse, run, and contain
  // <<.Resource>>. With `unknownOverrides` given, an override the mapper does not know is not a
  // Problem: it is left out and its index appended there (a resource the cluster does not serve
  // yet, such as a CRD installed later).
  static std::variant<ResourceConverter, Problem> create(
      std::string_view labelTemplate,
      const std::vector<std::pair<std::string, GroupResource>>& overrides,
      const ResourceMapper& mapper, std::vector<size_t>* unknownOverrides = nullptr);

  // The normalised group-resource `label` stands for, if any (uncached: callers that look up many
  // labels should cache per label name).
  std::optional<GroupResource> resourceForLabel(std::string_view label) const;
  // What the label template reads from `label` before normalisation ({group, resource} as
  // captured), or nullopt when there is no template or it does not match. A candidate that
  // resourceForLabel() does not return is a resource the mapper does not know (explain shows it).
  std::optional<GroupResource> templateCandidate(std::string_view label) const;

  // The label that holds `resource`'s object names. `resource` must be normalised.
  core::Result<std::string> labelForResource(const GroupResource& resource) const;

  bool hasTemplate() const { return labelRegex_.has_value(); }
  // Overrides in file order, normalised.
  const std::vector<std::pair<std::string, GroupResource>>& overrides() const { return overrides_; }
  const std::string& labelTemplateText() const { return labelTemplate_.text(); }

 private:
  core::Result<std::string> labelFromTemplate(const GroupResource& resource) const;

  const ResourceMapper* mapper_ = nullptr;
  std::vector<std::pair<std::string, GroupResource>> overrides_;
  Template labelTemplate_;
  std::optional<GoRegex> labelRegex_;
  int groupIndex_ = -1;
  int resourceIndex_ = -1;
  // resource → label for every resource the mapper knows (overrides first), computed once.
  std::map<GroupResource, std::string> labels_;
};

}  // namespace gpuscale::rules
