#include "gpuscale/rules/namer.h"

#include <fmt/format.h>

#include "gpuscale/core/go_quote.h"
#include "gpuscale/rules/label_matchers.h"

namespace gpuscale::rules {
namespace {

constexpr std::string_view kQueryArgsType = "naming.queryTemplateArgs";

std::string joinComma(std::span<const std::string> parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += ',';
    out += parts[i];
  }
  return out;
}

core::Result<std::string> runQuery(const Template& tmpl, std::string_view seriesName,
                                   const LabelMatchers& matchers, std::vector<std::string> groupBy,
                                   bool externalGroupBy) {
  TemplateValue series = std::string(seriesName);
  TemplateValue labelMatchers = matchers.joined();
  TemplateValue valuesByName = matchers.valuesByName();
  TemplateValue groupByText = externalGroupBy ? std::string() : joinComma(groupBy);
  TemplateValue groupBySlice = std::move(groupBy);
  TemplateData data{kQueryArgsType,
                    {{"Series", &series},
                     {"LabelMatchers", &labelMatchers},
                     {"LabelValuesByName", &valuesByName},
                     {"GroupBy", &groupByText},
                     {"GroupBySlice", &groupBySlice}}};
  core::Result<std::string> query = tmpl.execute(data);
  if (!query) return query;
  if (query->empty()) {
    return core::Status::invalid("empty query produced by metrics query template");
  }
  return query;
}

// Prometheus holds only UTF-8 label values, and its regex matchers reject patterns that are not
// UTF-8, so a name or namespace that is not UTF-8 is a bad request, never a broken query.
core::Status checkUtf8(std::string_view what, std::string_view value) {
  if (core::isValidUtf8(value)) return {};
  return core::Status::badRequest(
      fmt::format("{} {} is not valid UTF-8", what, core::goQuote(value)));
}

}  // namespace

core::Result<std::string> renderResourceQuery(const Template& tmpl,
                                              const ResourceConverter& resources,
                                              const QueryRequest& request) {
  if (request.names.empty() && !request.anyName) {
    return core::Status::invalid(
        fmt::format("no resource names requested while producing a query "
                    "for {}",
                    request.resource.toString()));
  }
  if (auto status = checkUtf8("namespace", request.namespaceName); !status.ok()) return status;
  for (const std::string& name : request.names) {
    if (auto status = checkUtf8("object name", name); !status.ok()) return status;
  }
  LabelMatchers matchers;
  if (request.metricSelector != nullptr) {
    core::Status status = matchers.addSelector(*request.metricSelector);
    if (!status.ok()) return status;
  }
  if (!request.namespaceName.empty()) {
    core::Result<std::string> nsLabel = resources.labelForResource(namespacesResource());
    if (!nsLabel) return nsLabel.status();
    matchers.addEqual(*nsLabel, request.namespaceName);
  }
  core::Result<std::string> label = resources.labelForResource(request.resource);
  if (!label) return label.status();
  if (request.anyName) {
    matchers.addAnyValue(*label);
  } else {
    matchers.addNames(*label, request.names);
  }
  std::vector<std::string> groupBy;
  groupBy.reserve(1 + request.extraGroupBy.size());
  groupBy.push_back(*label);
  groupBy.insert(groupBy.end(), request.extraGroupBy.begin(), request.extraGroupBy.end());
  return runQuery(tmpl, request.seriesName, matchers, std::move(groupBy), false);
}

int CompiledRule::firstFailingFilter(std::string_view seriesName) const {
  for (size_t i = 0; i < filters_.size(); ++i) {
    if (!filters_[i].passes(seriesName)) return static_cast<int>(i);
  }
  return -1;
}

bool CompiledRule::metricNameFor(std::string_view seriesName, std::string& out) const {
  out.clear();
  return nameRegex_.expand(nameAs_, seriesName, out);
}

core::Result<std::string> CompiledRule::queryFor(const QueryRequest& request) const {
  return renderResourceQuery(metricsQuery_, resources_, request);
}

core::Result<std::string> CompiledRule::externalQueryFor(
    std::string_view seriesName, std::string_view namespaceName,
    const core::LabelSelector* metricSelector) const {
  if (auto status = checkUtf8("namespace", namespaceName); !status.ok()) return status;
  LabelMatchers matchers;
  if (metricSelector != nullptr) {
    core::Status status = matchers.addSelector(*metricSelector);
    if (!status.ok()) return status;
  }
  if (namespaced_ && !namespaceName.empty()) {
    core::Result<std::string> nsLabel = resources_.labelForResource(namespacesResource());
    if (!nsLabel) return nsLabel.status();
    matchers.addEqual(*nsLabel, namespaceName);
  }
  return runQuery(metricsQuery_, seriesName, matchers, {}, true);
}

std::string CompiledRule::summary() const {
  std::string resources;
  for (const auto& [label, resource] : resources_.overrides()) {
    resources += fmt::format("{}{}→{}", resources.empty() ? "" : ", ", label, resource.toString());
  }
  if (resources_.hasTemplate()) {
    resources += fmt::format("{}template {:?}", resources.empty() ? "" : ", ",
                             resources_.labelTemplateText());
  }
  if (resources.empty()) resources = "none";
  std::string line =
      fmt::format("{}: {} seriesQuery {:?}, {} filter{}, name {:?} as {:?}, resources: {}", path_,
                  kind_ == RuleKind::kCustom ? "custom" : "external", seriesQuery_, filters_.size(),
                  filters_.size() == 1 ? "" : "s", nameRegex_.pattern(), nameAs_, resources);
  if (kind_ == RuleKind::kExternal) line += namespaced_ ? ", namespaced" : ", not namespaced";
  return line;
}

std::string CompiledRule::discoveryKey() const {
  // A unit separator cannot start a selector, so no default-backend query collides with these.
  if (backend_ == "default") return seriesQuery_;
  return backend_ + '\x1f' + seriesQuery_;
}

}  // namespace gpuscale::rules
