#include "gpuscale/partition/plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpuscale/partition/capacity_request.h"

namespace gpuscale::partition {
namespace {

using OrderedJson = nlohmann::ordered_json;

OrderedJson geometryJson(const MigGeometry& g) {
  OrderedJson out = OrderedJson::object();
  for (const auto& [profile, count] : g) out[profile] = count;
  return out;
}

OrderedJson actionJson(const MigReconfigure& a) {
  OrderedJson gpus = OrderedJson::array();
  for (const auto& g : a.gpus) {
    OrderedJson gpu{{"index", g.index}, {"from", geometryJson(g.from)}, {"to", geometryJson(g.to)}};
    if (g.switchesMigMode())
      gpu["migEnabled"] = {{"from", g.fromMigEnabled}, {"to", g.toMigEnabled}};
    gpus.push_back(std::move(gpu));
  }
  OrderedJson entries = OrderedJson::array();
  for (const auto& e : a.entries) {
    OrderedJson entry{{"devices", e.devices}, {"mig-enabled", e.migEnabled}};
    if (e.migEnabled) entry["mig-devices"] = geometryJson(e.migDevices);
    entries.push_back(std::move(entry));
  }
  return {{"kind", "MigReconfigure"},
          {"node", a.node},
          {"gpus", std::move(gpus)},
          {"config", {{"name", a.configName}, {"entries", std::move(entries)}}}};
}

OrderedJson actionJson(const TimeSlicingChange& a) {
  return {{"kind", a.mode == SharingMode::kMps ? "Mps" : "TimeSlicing"},
          {"node", a.node},
          {"resource", a.resource},
          {"replicas", a.replicas}};
}

OrderedJson actionJson(const SetMaxReplicas& a) {
  return {{"kind", "SetMaxReplicas"},
          {"namespace", a.ns},
          {"name", a.name},
          {"from", a.from},
          {"to", a.to}};
}

std::string geometryText(const MigGeometry& g) { return g.empty() ? "(empty)" : formatGeometry(g); }

std::string settingText(bool migEnabled, const MigGeometry& g) {
  return migEnabled ? geometryText(g) : "MIG disabled";
}

std::string actionText(const MigReconfigure& a) {
  std::string out = fmt::format("reshape MIG on node {} (config {}){}:", a.node, a.configName,
                                a.switchesMigMode() ? ", MIG mode change: every GPU resets" : "");
  for (const auto& g : a.gpus) {
    out += fmt::format("\n    gpu {}: {} -> {}", g.index, settingText(g.fromMigEnabled, g.from),
                       settingText(g.toMigEnabled, g.to));
  }
  return out;
}

std::string actionText(const TimeSlicingChange& a) {
  return fmt::format("{} {} on node {}: {} -> {} replicas",
                     a.mode == SharingMode::kMps ? "MPS-share" : "time-slice", a.resource, a.node,
                     a.from, a.replicas);
}

std::string actionText(const SetMaxReplicas& a) {
  if (capacityRequestName(a.name)) {
    return fmt::format("grant {}: {} -> {} replicas", demandOwnerName(a.ns, a.name), a.from, a.to);
  }
  return fmt::format("set maxReplicas of HPA {}/{}: {} -> {}", a.ns, a.name, a.from, a.to);
}

}  // namespace

bool MigReconfigure::switchesMigMode() const {
  return std::any_of(gpus.begin(), gpus.end(),
                     [](const GpuChange& g) { return g.switchesMigMode(); });
}

nlohmann::ordered_json actionToJson(const PlanAction& action) {
  return std::visit([](const auto& v) { return actionJson(v); }, action);
}

std::string actionToText(const PlanAction& action) {
  return std::visit([](const auto& v) { return actionText(v); }, action);
}

nlohmann::ordered_json planToJson(const Plan& plan) {
  OrderedJson demands = OrderedJson::array();
  for (const auto& d : plan.demands) {
    demands.push_back({{"namespace", d.ns},
                       {"name", d.name},
                       {"resource", d.resource},
                       {"ceiling", d.ceiling},
                       {"wanted", d.wanted}});
    if (!d.explain.empty()) {
      demands.back()["reason"] = std::string(blockReasonName(d.reason));
      demands.back()["explain"] = d.explain;
    }
  }
  OrderedJson actions = OrderedJson::array();
  for (const auto& a : plan.actions) {
    actions.push_back(actionToJson(a));
  }
  OrderedJson capacity = OrderedJson::array();
  for (const auto& c : plan.capacityAfter) {
    capacity.push_back({{"namespace", c.ns}, {"name", c.name}, {"ceiling", c.ceiling}});
  }
  OrderedJson out{{"demands", std::move(demands)},
                  {"actions", std::move(actions)},
                  {"capacityAfter", std::move(capacity)}};
  for (const auto& c : plan.promiseCuts) {
    out["promiseCuts"].push_back(
        {{"namespace", c.ns}, {"name", c.name}, {"from", c.from}, {"to", c.to}});
  }
  return out;
}

std::string planToText(const Plan& plan) {
  std::string out;
  out += fmt::format("Demands ({}):\n", plan.demands.size());
  for (const auto& d : plan.demands) {
    out += fmt::format("  {} blocked ({}) on {}: ceiling {}, wants {}\n",
                       demandOwnerName(d.ns, d.name), blockReasonName(d.reason), d.resource,
                       d.ceiling, d.wanted);
    if (!d.explain.empty()) out += fmt::format("    {}\n", d.explain);
  }
  out += fmt::format("Actions ({}):\n", plan.actions.size());
  for (const auto& a : plan.actions) {
    out += "  " + actionToText(a) + "\n";
  }
  out += "Capacity after:\n";
  for (const auto& c : plan.capacityAfter) {
    out += fmt::format("  {}: {} pods\n", demandOwnerName(c.ns, c.name), c.ceiling);
  }
  for (const auto& c : plan.promiseCuts) {
    out += fmt::format("Promise cut: HPA {}/{}: the raise in flight goes to {} instead of {}\n",
                       c.ns, c.name, c.to, c.from);
  }
  if (!plan.notes.empty()) {
    out += "Notes:\n";
    for (const auto& n : plan.notes) out += "  " + n + "\n";
  }
  return out;
}

}  // namespace gpuscale::partition
