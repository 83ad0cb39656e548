// explain(): the live part of explain.h — discovery per distinct seriesQuery, then per relevant
// rule a sample object from Prometheus' label values, the rendered PromQL and one live query.
#include <fmt/format.h>

#include <map>

#include "gpuscale/adapter/explain.h"

namespace gpuscale::adapter {
namespace {

using WallClock = std::chrono::system_clock;
using k8s::GroupResource;
using rules::CompiledRule;

constexpr std::string_view kClusterScoped = " (cluster-scoped)";
constexpr size_t kSampleValues = 3;

struct ResourceChoice {
  GroupResource resource;
  bool namespaced = true;
};

// The resource to show an example for: the first one that is not `namespaces`, else the first.
std::optional<ResourceChoice> chooseResource(const ProducedMetric& metric) {
  std::optional<ResourceChoice> chosen;
  for (std::string_view text : metric.resources) {
    ResourceChoice choice;
    if (text.ends_with(kClusterScoped)) {
      choice.namespaced = false;
      text.remove_suffix(kClusterScoped.size());
    }
    choice.resource = GroupResource::parse(text);
    if (!chosen || (chosen->resource == rules::namespacesResource() &&
                    choice.resource != rules::namespacesResource())) {
      chosen = choice;
    }
  }
  return chosen;
}

// The first value Prometheus has for `label` over `match` in the window ("" when none).
std::string firstValue(prom::Client& client, const std::string& label, const std::string& match,
                       const prom::TimeRange& window, std::string& error) {
  auto values = client.labelValues(label, {match}, window);
  if (!values) {
    error = fmt::format("label values of {:?}: {}", label, values.status().message());
    return "";
  }
  return values->empty() ? std::string() : values->front();
}

class RuleProbe {
 public:
  RuleProbe(const CompiledRule& rule, prom::Client& client, const ExplainOptions& options,
            prom::TimeRange window)
      : rule_(rule), client_(client), options_(options), window_(window) {}

  // Fills explanation.example and .sample for `metric`.
  void run(const ProducedMetric& metric, RuleExplanation& explanation) {
    ExampleQuery example;
    example.metric = metric.metric;
    auto match = prom::restrictToMetric(rule_.seriesQuery(), metric.seriesName);
    const std::string selector =
        match ? *match : fmt::format("{{__name__={:?}}}", metric.seriesName);
    core::Result<std::string> promql = rule_.kind() == rules::RuleKind::kCustom
                                           ? customQuery(metric, selector, example)
                                           : externalQuery(metric, selector, example);
    if (denied_) {
      explanation.example = ExampleQuery{metric.metric, "", "", denied_->message()};
      return;
    }
    if (!promql) {
      example.error = promql.status().message();
      explanation.example = std::move(example);
      return;
    }
    example.promql = *promql;
    explanation.example = example;
    if (options_.liveSample) explanation.sample = sample(*promql);
  }

 private:
  // Asks options.authorizeSample for `scope`; false (and denied_ set) when refused.
  bool authorized(SampleScope scope, const ProducedMetric& metric) {
    if (!options_.authorizeSample) return true;
    scope.kind = rule_.kind();
    scope.metric = metric.metric;
    core::Status allowed = options_.authorizeSample(scope);
    if (allowed.ok()) return true;
    denied_ = std::move(allowed);
    return false;
  }

  std::string namespaceFor(const std::string& selector, std::string& note) {
    if (!options_.namespaceName.empty()) return options_.namespaceName;
    auto label = rule_.resources().labelForResource(rules::namespacesResource());
    if (!label) {
      note = "no namespace label: " + label.status().message();
      return "";
    }
    std::string ns = firstValue(client_, *label, selector, window_, note);
    if (ns.empty() && note.empty()) note = fmt::format("no value of label {:?}", *label);
    return ns;
  }

  core::Result<std::string> customQuery(const ProducedMetric& metric, const std::string& selector,
                                        ExampleQuery& example) {
    std::optional<ResourceChoice> choice = chooseResource(metric);
    if (!choice) return core::Status::invalid("the metric has no resource");
    auto label = rule_.resources().labelForResource(choice->resource);
    if (!label) return label.status();
    const bool isNamespace = choice->resource == rules::namespacesResource();
    std::string note;
    std::string ns = choice->namespaced || isNamespace ? namespaceFor(selector, note) : "";
    if (!authorized({rules::RuleKind::kCustom, "", choice->resource, choice->namespaced, ns},
                    metric)) {
      return denied_.value();
    }
    std::string name;
    if (isNamespace) {
      name = ns;
      ns.clear();
    } else {
      std::string scoped = selector;
      if (!ns.empty()) {
        auto nsLabel = rule_.resources().labelForResource(rules::namespacesResource());
        auto narrowed = nsLabel ? prom::addMatcher(selector, fmt::format("{}={:?}", *nsLabel, ns))
                                : core::Result<std::string>(nsLabel.status());
        if (narrowed) scoped = *narrowed;
      }
      name = firstValue(client_, *label, scoped, window_, note);
    }
    const std::vector<std::string> names = {name};
    rules::QueryRequest request{metric.seriesName, choice->resource, ns, names, nullptr, {}};
    if (name.empty()) {
      // No object with data: the wildcard form (label!="") still shows what the query looks like.
      request.names = {};
      request.anyName = true;
      example.error = fmt::format("no object found in Prometheus for label {:?}{}", *label,
                                  note.empty() ? "" : " (" + note + ")");
    }
    example.object = fmt::format("{} {}{}", choice->resource.toString(), ns.empty() ? "" : ns + "/",
                                 name.empty() ? "*" : name);
    return rule_.queryFor(request);
  }

  core::Result<std::string> externalQuery(const ProducedMetric& metric, const std::string& selector,
                                          ExampleQuery& example) {
    std::string note;
    std::string ns = rule_.namespaced() ? namespaceFor(selector, note) : "";
    // A rule that is not namespaced answers the same in every namespace: the caller's own
    // namespace, if named, is the one whose request it stands for.
    const std::string scoped = ns.empty() ? options_.namespaceName : ns;
    if (!authorized({rules::RuleKind::kExternal, "", {}, true, scoped}, metric)) {
      return denied_.value();
    }
    example.object = ns.empty() ? "(no namespace)" : "namespace " + ns;
    return rule_.externalQueryFor(metric.seriesName, ns, nullptr);
  }

  LiveSample sample(const std::string& promql) {
    LiveSample out;
    auto result = client_.query(promql, WallClock::now());
    if (!result) {
      out.error = result.status().message();
      return out;
    }
    auto add = [&](const core::Labels* labels, const prom::Point& point) {
      ++out.total;
      if (out.values.size() >= kSampleValues) return;
      std::string text;
      if (labels != nullptr) {
        for (const auto& [key, value] : *labels) {
          text += fmt::format("{}{}={:?}", text.empty() ? "" : ",", key, value);
        }
      }
      out.values.push_back({"{" + text + "}", point.value, point.timestamp});
    };
    const prom::QueryResult& data = **result;
    if (data.type == prom::ResultType::kScalar) {
      add(nullptr, data.scalar);
    } else if (data.type == prom::ResultType::kVector) {
      for (const prom::Sample& s : data.vector) add(&s.metric, s.point);
    } else {
      out.error = fmt::format("Prometheus returned a {} where a vector was expected",
                              prom::resultTypeName(data.type));
    }
    return out;
  }

  std::optional<core::Status> denied_;
  const CompiledRule& rule_;
  prom::Client& client_;
  const ExplainOptions& options_;
  prom::TimeRange window_;
};

}  // namespace

BackendClients discoveryClientsOf(std::shared_ptr<const BackendSet> backends) {
  return [backends = std::move(backends)](std::string_view name) -> prom::Client* {
    const Backend* backend = backends ? backends->find(name) : nullptr;
    return backend != nullptr ? &backend->discovery() : nullptr;
  };
}

Explanation explain(const rules::RuleSet& rules, prom::Client& client,
                    const ExplainOptions& options, const RuleStatus* status) {
  return explain(
      rules, [&client](std::string_view) { return &client; }, options, status);
}

Explanation explain(const rules::RuleSet& rules, const BackendClients& clients,
                    const ExplainOptions& options, const RuleStatus* status) {
  Explanation out;
  out.file = rules.file;
  out.metric = options.metric;
  out.at = WallClock::now();
  const prom::TimeRange window{
      out.at - std::chrono::duration_cast<WallClock::duration>(options.maxAge), std::nullopt};
  // One discovery per (backend, seriesQuery), as the relister does: the same query asked of two
  // servers has two answers.
  std::map<std::string, core::Result<prom::MetricLabelNames>, std::less<>> discovered;
  for (rules::RuleKind kind : {rules::RuleKind::kCustom, rules::RuleKind::kExternal}) {
    for (const CompiledRule& rule : rules.of(kind)) {
      if (!options.rule.empty() && rule.path() != options.rule) continue;
      prom::Client* client = clients(rule.backend());
      auto it = discovered.find(rule.discoveryKey());
      if (it == discovered.end()) {
        auto found =
            client != nullptr
                ? prom::discoverLabelNames(*client, rule.seriesQuery(), window, options.discovery)
                : core::Result<prom::MetricLabelNames>(core::Status::internal(
                      fmt::format("backend {:?} is not configured", rule.backend())));
        it = discovered.emplace(rule.discoveryKey(), std::move(found)).first;
      }
      RuleExplanation explanation =
          explainDiscovery(rule, it->second ? *it->second : prom::MetricLabelNames{}, options);
      if (!it->second) explanation.discoveryError = it->second.status().message();
      if (status != nullptr) explanation.recorded = status->state(rule.path());
      if (client != nullptr && explanation.relevant && !explanation.metrics.empty()) {
        const ProducedMetric* metric = &explanation.metrics.front();
        for (const ProducedMetric& m : explanation.metrics) {
          if (m.metric == options.metric) metric = &m;
        }
        RuleProbe(rule, *client, options, window).run(*metric, explanation);
      }
      out.rules.push_back(std::move(explanation));
    }
  }
  return out;
}

}  // namespace gpuscale::adapter
