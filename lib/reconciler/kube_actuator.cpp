// KubeActuator: each pass advances the node operations and HPA raises in flight, then turns the
// plan into new ones (node_operation.h, hpa_raise.h) within the in-flight limit.
#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "gpuscale/core/enum_names.h"
#include "gpuscale/core/rfc3339.h"
#include "gpuscale/reconciler/actuator.h"
#include "gpuscale/reconciler/hpa_raise.h"
#include "gpuscale/reconciler/node_operation.h"

namespace gpuscale::reconciler {

std::string_view actionKindName(ActionKind kind) {
  static constexpr core::EnumNames<ActionKind, 4> kNames{
      {{ActionKind::kMig, "mig"},
       {ActionKind::kTimeSlicing, "timeSlicing"},
       {ActionKind::kMps, "mps"},
       {ActionKind::kMaxReplicas, "maxReplicas"}}};
  return core::enumName(kNames, kind, "maxReplicas");
}

KubeActuator::KubeActuator(std::shared_ptr<kube::KubeClient> client,
                           std::shared_ptr<EventRecorder> events,
                           std::shared_ptr<GpuPodMapping> gpuPods, ActuatorOptions options,
                           std::shared_ptr<ReconcilerMetrics> metrics)
    : options_(options),
      nodes_(std::make_unique<NodeOperations>(client, events, std::move(gpuPods),
                                              std::move(options), metrics)),
      hpas_(std::make_unique<HpaRaise>(std::move(client), std::move(events), std::move(metrics))) {}

KubeActuator::~KubeActuator() = default;

ActuationReport KubeActuator::apply(const partition::Plan& plan, const ClusterState& state,
                                    TimePoint now) {
  ActuationReport report;
  std::set<std::string> nodes = state.nodesWithIntent;
  nodes.insert(nodes_->started().begin(), nodes_->started().end());
  int inFlight = 0;
  for (const auto& n : nodes) inFlight += nodes_->advance(n, now, report) ? 1 : 0;
  // A reshape taint without an operation (advance() looks after the nodes with one): the
  // reconciler stopped mid-step, or the intent was removed. Every pass, the first one included.
  for (const auto& node : state.snapshot->nodes) {
    if (node.reshapeTainted && !nodes.contains(node.name)) {
      nodes_->removeOrphanTaint(node.name, report);
    }
  }

  auto hpas = state.hpasWithIntent;
  hpas.insert(hpas_->started().begin(), hpas_->started().end());
  // Before the raises in flight advance: a raise that completes now goes to the cut target.
  for (const auto& cut : plan.promiseCuts) hpas_->cutPromise(cut, state);
  for (const auto& [ns, name] : hpas) {
    if (!hpas_->advance(ns, name, state, now, report)) hpas_->started().erase({ns, name});
  }

  std::vector<const partition::SetMaxReplicas*> raises;
  // Each HPA change is recorded in the state store first; without one, none is made.
  for (const auto& action : plan.actions) {
    const auto* m = std::get_if<partition::SetMaxReplicas>(&action);
    if (m == nullptr || hpas.contains({m->ns, m->name})) continue;
    if (m->to < m->from) {
      hpas_->lower(*m, state, now, report);
    } else if (m->to > m->from) {
      raises.push_back(m);
    }
  }

  auto work = nodeWorkFor(plan, *state.snapshot);
  std::erase_if(work, [&](const NodeWork& w) { return nodes.contains(w.node); });
  const std::string planId = fmt::format("{}-{}", core::formatRfc3339(now), ++planCounter_);
  if (work.empty()) {
    for (const auto* m : raises) {
      hpas_->raise(m->ns, m->name, m->from, m->to, planId, state, now, report);
    }
    report.nodesInFlight = inFlight;
    return report;
  }
  const int budget = std::max(0, options_.maxNodesInFlight - inFlight);
  if (static_cast<int>(work.size()) > budget) work.resize(budget);
  if (work.empty()) {
    const std::string wait = fmt::format("plan waits: {} node(s) in flight (limit {})", inFlight,
                                         options_.maxNodesInFlight);
    if (wait != waitingLogged_) spdlog::info("{}", wait);
    waitingLogged_ = wait;
    report.nodesInFlight = inFlight;
    return report;
  }
  waitingLogged_.clear();
  HpaIntent hpaIntent{planId, 0, 0, {}, now};
  for (const auto& w : work) hpaIntent.nodes.push_back(w.node);
  bool recorded = raises.empty();  // node work without a raise (giving isolation back)
  for (const auto* m : raises) {
    hpaIntent.from = m->from;
    hpaIntent.to = m->to;
    if (hpas_->recordIntent(*m, hpaIntent, state)) {
      hpas_->started().insert({m->ns, m->name});
      recorded = true;
    }
  }
  // Partitions change only for an HPA whose intent is recorded (a full state store refuses it).
  if (!recorded) {
    report.nodesInFlight = inFlight;
    return report;
  }
  for (const auto& w : work) inFlight += nodes_->start(w, planId, now, report) ? 1 : 0;
  report.nodesInFlight = inFlight;
  return report;
}

}  // namespace gpuscale::reconciler
