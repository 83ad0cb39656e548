// explanationText() and explanationJson() of explain.h.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "gpuscale/adapter/explain.h"
#include "gpuscale/apiserver/wire_format.h"

namespace gpuscale::adapter {
namespace {

using OrderedJson = nlohmann::ordered_json;

std::string dropHeadline(const DroppedNames& drop) {
  if (drop.reason == "filter") return fmt::format("by {}: {}", drop.filter, drop.detail);
  if (drop.reason == "unsafe_name") return "unsafe name: " + drop.detail;
  if (drop.reason == "unresolvable_resource") return "resource not resolvable: " + drop.detail;
  return "no resource label: " + drop.detail;
}

std::string producedLine(const ProducedMetric& metric) {
  std::string out = fmt::format("{} (series {})", metric.metric, metric.seriesName);
  if (!metric.resources.empty()) out += fmt::format(" for {}", fmt::join(metric.resources, ", "));
  return out;
}

std::string errorLine(const RecordedError& error, std::string_view what) {
  return fmt::format("{} at {} ({}{}): {}", what, apiserver::formatTimestamp(error.at),
                     error.errorClass, error.metric.empty() ? "" : ", metric " + error.metric,
                     error.message);
}

// Every error this explanation knows of, newest knowledge first.
std::vector<std::string> lastErrors(const RuleExplanation& rule) {
  std::vector<std::string> out;
  if (!rule.discoveryError.empty()) out.push_back("discovery: " + rule.discoveryError);
  if (rule.example && !rule.example->error.empty())
    out.push_back("example: " + rule.example->error);
  if (rule.sample && !rule.sample->error.empty())
    out.push_back("live query: " + rule.sample->error);
  if (rule.recorded) {
    if (rule.recorded->lastDiscoveryError) {
      out.push_back(errorLine(*rule.recorded->lastDiscoveryError, "adapter discovery"));
    }
    if (rule.recorded->lastQueryError) {
      out.push_back(errorLine(*rule.recorded->lastQueryError, "adapter query"));
    }
  }
  return out;
}

// One sentence: is the rule serving, and if not, the first thing to look at.
std::string verdict(const RuleExplanation& rule) {
  if (!rule.discoveryError.empty()) {
    return "not served now: the series query failed (see last error)";
  }
  if (rule.names == 0) {
    return "not served: the series query matched no metric in the discovery window; check the "
           "seriesQuery against Prometheus and --metrics-max-age";
  }
  if (rule.metrics.empty()) {
    return fmt::format("not served: all {} metric name(s) were dropped (see dropped)", rule.names);
  }
  std::vector<std::string> names;
  for (const ProducedMetric& metric : rule.metrics) {
    if (rule.kind == "external" || metric.resources.empty()) {
      names.push_back(metric.metric);
      continue;
    }
    for (std::string_view resource : metric.resources) {
      names.push_back(fmt::format("{}/{}", resource.substr(0, resource.find(' ')), metric.metric));
    }
  }
  std::string out = fmt::format("serves {}", fmt::join(names, ", "));
  if (rule.sample && rule.sample->error.empty() && rule.sample->total == 0) {
    out += "; but the example query returned no data, so requests for it answer 404";
  }
  return out;
}

void appendRuleText(std::string& out, const RuleExplanation& rule) {
  auto line = [&](std::string_view key, const std::string& value) {
    out +=
        fmt::format("  {:<14} {}\n", key.empty() ? std::string() : std::string(key) + ":", value);
  };
  out += fmt::format("{} ({})\n", rule.path, rule.kind);
  line("backend", rule.backend);
  line("series query", rule.seriesQuery);
  line("matched", rule.discoveryError.empty() ? fmt::format("{} metric name(s)", rule.names)
                                              : std::string("unknown (the series query failed)"));
  if (rule.dropped.empty()) line("dropped", "none");
  for (size_t i = 0; i < rule.dropped.size(); ++i) {
    const DroppedNames& drop = rule.dropped[i];
    line(i == 0 ? "dropped" : "", fmt::format("{} {} (e.g. {})", drop.count, dropHeadline(drop),
                                              fmt::join(drop.examples, "; ")));
  }
  if (rule.metrics.empty()) line("produced", "nothing");
  for (size_t i = 0; i < rule.metrics.size(); ++i) {
    line(i == 0 ? "produced" : "", producedLine(rule.metrics[i]));
  }
  if (rule.example) {
    line("example", fmt::format("{} for {}", rule.example->metric, rule.example->object));
    line("promql", rule.example->promql.empty() ? "(not rendered)" : rule.example->promql);
  }
  if (rule.sample) {
    const LiveSample& sample = *rule.sample;
    if (!sample.error.empty()) {
      line("live sample", "error: " + sample.error);
    } else if (sample.total == 0) {
      line("live sample", "empty result (no data: the HPA sees the metric as missing)");
    } else {
      std::vector<std::string> values;
      for (const LiveSample::Value& v : sample.values) {
        values.push_back(
            fmt::format("{} {} at {}", v.labels, v.value, apiserver::formatTimestamp(v.at)));
      }
      line("live sample", fmt::format("{} sample(s): {}", sample.total, fmt::join(values, "; ")));
    }
  }
  if (rule.recorded && rule.recorded->lastRelistSuccess) {
    line("last relist", apiserver::formatTimestamp(*rule.recorded->lastRelistSuccess));
  }
  const std::vector<std::string> errors = lastErrors(rule);
  if (errors.empty()) line("last error", "none");
  for (size_t i = 0; i < errors.size(); ++i) line(i == 0 ? "last error" : "", errors[i]);
  line("verdict", verdict(rule));
  out += "\n";
}

OrderedJson ruleJson(const RuleExplanation& rule) {
  OrderedJson dropped = OrderedJson::array();
  for (const DroppedNames& drop : rule.dropped) {
    OrderedJson entry = {{"reason", drop.reason}};
    if (!drop.filter.empty()) entry["filter"] = drop.filter;
    entry["detail"] = drop.detail;
    entry["count"] = drop.count;
    entry["examples"] = drop.examples;
    dropped.push_back(std::move(entry));
  }
  OrderedJson metrics = OrderedJson::array();
  for (const ProducedMetric& metric : rule.metrics) {
    metrics.push_back({{"metric", metric.metric},
                       {"seriesName", metric.seriesName},
                       {"resources", metric.resources}});
  }
  OrderedJson out = {{"rule", rule.path},
                     {"kind", rule.kind},
                     {"backend", rule.backend},
                     {"seriesQuery", rule.seriesQuery},
                     {"metricsQuery", rule.metricsQuery},
                     {"relevant", rule.relevant},
                     {"matched", rule.names},
                     {"kept", rule.kept},
                     {"dropped", std::move(dropped)},
                     {"metrics", std::move(metrics)}};
  if (rule.example) {
    out["example"] = {{"metric", rule.example->metric},
                      {"object", rule.example->object},
                      {"promql", rule.example->promql},
                      {"error", rule.example->error}};
  }
  if (rule.sample) {
    OrderedJson values = OrderedJson::array();
    for (const LiveSample::Value& v : rule.sample->values) {
      values.push_back({{"labels", v.labels},
                        {"value", fmt::format("{}", v.value)},
                        {"timestamp", apiserver::formatTimestamp(v.at)}});
    }
    out["sample"] = {{"total", rule.sample->total},
                     {"values", std::move(values)},
                     {"error", rule.sample->error}};
  }
  if (rule.recorded && rule.recorded->lastRelistSuccess) {
    out["lastRelistSuccess"] = apiserver::formatTimestamp(*rule.recorded->lastRelistSuccess);
  }
  if (rule.recorded) {
    out["queries"] = rule.recorded->queries;
    out["queryErrors"] = rule.recorded->queryErrors;
    out["emptyResults"] = rule.recorded->emptyResults;
  }
  out["lastErrors"] = lastErrors(rule);
  out["verdict"] = verdict(rule);
  return out;
}

bool anyRelevant(const Explanation& explanation) {
  for (const RuleExplanation& rule : explanation.rules) {
    if (rule.relevant) return true;
  }
  return false;
}

}  // namespace

std::string explanationText(const Explanation& explanation) {
  std::string out = fmt::format("rules from {} at {}", explanation.file,
                                apiserver::formatTimestamp(explanation.at));
  if (!explanation.metric.empty()) out += fmt::format(", metric {:?}", explanation.metric);
  out += "\n\n";
  const bool filtered = !explanation.metric.empty() && anyRelevant(explanation);
  if (!explanation.metric.empty() && !filtered) {
    out += fmt::format("no rule produces, names or mentions metric {:?}; every rule follows.\n\n",
                       explanation.metric);
  }
  if (explanation.rules.empty()) out += "no rule selected\n";
  for (const RuleExplanation& rule : explanation.rules) {
    if (!filtered || rule.relevant) appendRuleText(out, rule);
  }
  return out;
}

std::string explanationJson(const Explanation& explanation) {
  OrderedJson rules = OrderedJson::array();
  for (const RuleExplanation& rule : explanation.rules) rules.push_back(ruleJson(rule));
  OrderedJson out = {{"file", explanation.file},
                     {"metric", explanation.metric},
                     {"time", apiserver::formatTimestamp(explanation.at)},
                     {"rules", std::move(rules)}};
  return out.dump(2) + "\n";
}

}  // namespace gpuscale::adapter
