#include "gpuscale/rules/resource_converter.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscale::rules {
namespace {

constexpr std::string_view kGroupResourceType = "schema.GroupResource";

Result<std::string> runLabelTemplate(const Template& tmpl, const std::string& group,
                                     const std::string& resource) {
  TemplateValue groupValue = group;
  TemplateValue resourceValue = resource;
  TemplateData data{kGroupResourceType, {{"Group", &groupValue}, {"Resource", &resourceValue}}};
  return tmpl.execute(data);
}

std::string sanitizeGroup(std::string group) {
  std::replace(group.begin(), group.end(), '.', '_');
  std::replace(group.begin(), group.end(), '-', '_');
  return group;
}

}  // namespace

const GroupResource& namespacesResource() {
  static const GroupResource kNamespaces{"", "namespaces"};
  return kNamespaces;
}

std::variant<ResourceConverter, ResourceConverter::Problem> ResourceConverter::create(
    std::string_view labelTemplate,
    const std::vector<std::pair<std::string, GroupResource>>& overrides,
    const ResourceMapper& mapper, std::vector<size_t>* unknownOverrides) {
  using Where = Problem::Where;
  ResourceConverter converter;
  converter.mapper_ = &mapper;
  if (!labelTemplate.empty()) {
    size_t offset = 0;
    Result<Template> parsed = Template::parse(labelTemplate, &offset);
    if (!parsed) return Problem{Where::kTemplate, 0, offset, parsed.status().message()};
    converter.labelTemplate_ = std::move(*parsed);
    Result<std::string> pattern =
        runLabelTemplate(converter.labelTemplate_, "(?P<group>.+?)", "(?P<resource>.+?)");
    if (!pattern) {
      return Problem{Where::kTemplate, 0, 0,
                     "unable to convert label template to matcher: " + pattern.status().message()};
    }
    if (pattern->empty()) {
      return Problem{Where::kTemplate, 0, 0,
                     "unable to convert label template to matcher: empty template"};
    }
    Result<GoRegex> regex = GoRegex::compile("^" + *pattern + "$");
    if (!regex) {
      return Problem{Where::kTemplate, 0, 0,
                     "unable to convert label template to matcher: " + regex.status().message()};
    }
    converter.groupIndex_ = regex->groupIndex("group");
    converter.resourceIndex_ = regex->groupIndex("resource");
    if (converter.resourceIndex_ < 0) {
      return Problem{Where::kTemplate, 0, 0,
                     "must include at least '<<.Resource>>' in the label template"};
    }
    converter.labelRegex_ = std::move(*regex);
  }
  for (size_t i = 0; i < overrides.size(); ++i) {
    const auto& [label, target] = overrides[i];
    Result<ResourceInfo> info = mapper.resourceFor(target);
    if (!info && unknownOverrides != nullptr) {
      unknownOverrides->push_back(i);
      continue;
    }
    if (!info) {
      return Problem{Where::kOverride, i, 0,
                     fmt::format("unable to normalize group-resource {{{} {}}}: {}", target.group,
                                 target.resource, info.status().message())};
    }
    converter.overrides_.emplace_back(label, info->groupResource);
    converter.labels_.emplace(info->groupResource, label);
  }
  if (converter.labelRegex_) {
    for (const ResourceInfo& info : mapper.resources()) {
      if (converter.labels_.count(info.groupResource) != 0) continue;
      Result<std::string> label = converter.labelFromTemplate(info.groupResource);
      if (label) converter.labels_.emplace(info.groupResource, std::move(*label));
    }
  }
  return converter;
}

std::optional<GroupResource> ResourceConverter::resourceForLabel(std::string_view label) const {
  for (const auto& [overrideLabel, resource] : overrides_) {
    if (overrideLabel == label) return resource;
  }
  std::optional<GroupResource> candidate = templateCandidate(label);
  if (!candidate) return std::nullopt;
  Result<ResourceInfo> info = mapper_->resourceFor(*candidate);
  if (!info) return std::nullopt;
  return info->groupResource;
}

std::optional<GroupResource> ResourceConverter::templateCandidate(std::string_view label) const {
  if (!labelRegex_) return std::nullopt;
  const RE2& re = labelRegex_->re2();
  const int groups = re.NumberOfCapturingGroups() + 1;
  std::vector<re2::StringPiece> match(static_cast<size_t>(groups));
  if (!re.Match(re2::StringPiece(label.data(), label.size()), 0, label.size(), RE2::UNANCHORED,
                match.data(), groups)) {
    return std::nullopt;
  }
  GroupResource candidate;
  if (groupIndex_ >= 0) candidate.group = std::string(match[static_cast<size_t>(groupIndex_)]);
  candidate.resource = std::string(match[static_cast<size_t>(resourceIndex_)]);
  return candidate;
}

Result<std::string> ResourceConverter::labelFromTemplate(const GroupResource& resource) const {
  if (!labelRegex_) {
    return Status::invalid(fmt::format(
        "unable to convert resource {} into label: no generic resource label form specified for "
        "this metric",
        resource.toString()));
  }
  Result<ResourceInfo> info = mapper_->resourceFor(resource);
  if (!info) {
    return Status::invalid(
        fmt::format("unable to convert resource {} into label: unable to "
                    "singularize resource {}: {}",
                    resource.toString(), resource.toString(), info.status().message()));
  }
  Result<std::string> label =
      runLabelTemplate(labelTemplate_, sanitizeGroup(resource.group), info->singular);
  if (!label) return label.status();
  if (label->empty()) {
    return Status::invalid(fmt::format(
        "unable to convert resource {} into label: empty label produced by label template",
        resource.toString()));
  }
  return label;
}

Result<std::string> ResourceConverter::labelForResource(const GroupResource& resource) const {
  auto it = labels_.find(resource);
  if (it != labels_.end()) return it->second;
  return labelFromTemplate(resource);
}

}  // namespace gpuscale::rules
