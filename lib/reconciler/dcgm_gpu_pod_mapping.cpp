#include "gpuscale/reconciler/dcgm_gpu_pod_mapping.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "gpuscale/core/go_quote.h"

namespace gpuscale::reconciler {
namespace {

std::string labelOf(const prom::Labels& labels, const std::string& name) {
  auto it = labels.find(name);
  return it == labels.end() ? std::string() : it->second;
}

std::optional<int> gpuIndex(const std::string& text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

DcgmGpuPodMapping::DcgmGpuPodMapping(std::shared_ptr<prom::Client> client,
                                     DcgmMappingOptions options,
                                     std::shared_ptr<ReconcilerMetrics> metrics)
    : client_(std::move(client)), options_(std::move(options)), metrics_(std::move(metrics)) {}

std::string DcgmGpuPodMapping::queryFor(const std::string& node) const {
  std::string query;
  for (const auto& label : options_.nodeLabels) {
    if (!query.empty()) query += " or ";
    query += fmt::format("timestamp({}{{{}={}}})", options_.metric, label, core::goQuote(node));
  }
  return query;
}

std::string DcgmGpuPodMapping::utilizationQueryFor(const std::string& node) const {
  if (options_.utilizationMetric.empty()) return {};
  std::string query;
  for (const auto& label : options_.nodeLabels) {
    if (!query.empty()) query += " or ";
    query += fmt::format("{}{{{}={}}}", options_.utilizationMetric, label, core::goQuote(node));
  }
  return query;
}

std::optional<GpuOccupancy> DcgmGpuPodMapping::occupancy(
    const std::string& node, const NodeGpuPods& pods, std::chrono::system_clock::time_point now) {
  auto result = client_->query(queryFor(node), now);
  if (!result) return fallBack(node, "error", result.status().message());
  if ((*result)->type != prom::ResultType::kVector) {
    return fallBack(node, "error", "the query did not return a vector");
  }
  const auto& samples = (*result)->vector;
  if (samples.empty()) return fallBack(node, "absent", "no " + options_.metric + " series");
  GpuOccupancy out;
  std::set<std::string> seenPods;
  const double newest = std::chrono::duration<double>(now.time_since_epoch()).count();
  for (const auto& s : samples) {
    auto gpu = gpuIndex(labelOf(s.metric, options_.gpuLabel));
    if (!gpu) {
      return fallBack(node, "malformed",
                      fmt::format("a series has {}=\"{}\", not a GPU index", options_.gpuLabel,
                                  labelOf(s.metric, options_.gpuLabel)));
    }
    const double age = newest - s.point.value;
    if (!(age <= static_cast<double>(options_.maxAge.count()))) {
      return fallBack(node, "stale",
                      fmt::format("GPU {} last scraped {:.0f}s ago (max {}s)", *gpu, age,
                                  options_.maxAge.count()));
    }
    out.reported.insert(*gpu);
    const std::string pod = labelOf(s.metric, options_.podLabel);
    if (!pod.empty()) {
      out.busy.insert(*gpu);
      seenPods.insert(labelOf(s.metric, options_.namespaceLabel) + "/" + pod);
    }
  }
  std::set<std::string> missing;
  for (const auto& [pod, _] : pods) {
    if (!seenPods.contains(pod)) missing.insert(pod);
  }
  out.settling = settlingPods(node, pods, missing, out, now);
  if (!missing.empty() && out.settling.empty()) {
    return fallBack(
        node, "unaccounted",
        "pod " + *missing.begin() + " runs there but no " + options_.metric + " series names it");
  }
  out.utilization = utilization(node, now);
  if (metrics_) metrics_->gpuMapping(out.settling.empty() ? kMappingPerGpu : kMappingSettling);
  if (!out.settling.empty()) {
    logOnce(kMappingSettling,
            fmt::format("GPU mapping: node {}: pod {} started moments ago and no {} series names "
                        "it yet; waiting up to {}s for the mapping to settle before choosing a "
                        "lever (logged once; counted in gpuscale_reconciler_gpu_mapping_total)",
                        node, *out.settling.begin(), options_.metric, options_.settle.count()));
  }
  return out;
}

std::set<std::string> DcgmGpuPodMapping::settlingPods(const std::string& node,
                                                      const NodeGpuPods& pods,
                                                      const std::set<std::string>& missing,
                                                      const GpuOccupancy& seen,
                                                      std::chrono::system_clock::time_point now) {
  bool looksIdle = false;
  for (int gpu : seen.reported) looksIdle = looksIdle || !seen.busy.contains(gpu);
  bool young = !missing.empty() && options_.settle.count() > 0;
  for (const auto& pod : missing) {
    young = young && now - pods.at(pod) < options_.settle;
  }
  std::lock_guard lock(mu_);
  if (!looksIdle || !young) {
    settlingSince_.erase(node);
    return {};
  }
  // The clock keeps running while pods keep arriving: the wait is bounded per node, not per pod.
  auto since = settlingSince_.try_emplace(node, now).first->second;
  if (now - since >= options_.settle) return {};
  return missing;
}

std::map<std::string, double, std::less<>> DcgmGpuPodMapping::utilization(
    const std::string& node, std::chrono::system_clock::time_point now) {
  const std::string query = utilizationQueryFor(node);
  if (query.empty()) return {};
  auto result = client_->query(query, now);
  if (!result || (*result)->type != prom::ResultType::kVector) {
    logOnce("utilization_error",
            fmt::format("GPU utilisation: node {}: {}; time-slicing is chosen without it (logged "
                        "once)",
                        node, result ? "not a vector" : result.status().message()));
    return {};
  }
  const bool percent = options_.utilizationMetric.ends_with("_UTIL");
  std::map<std::string, std::pair<double, int>, std::less<>> sums;
  for (const auto& s : (*result)->vector) {
    if (!std::isfinite(s.point.value) || labelOf(s.metric, options_.podLabel).empty()) continue;
    const std::string profile = labelOf(s.metric, options_.profileLabel);
    auto& [sum, count] = sums[profile.empty() ? "nvidia.com/gpu" : "nvidia.com/mig-" + profile];
    sum += percent ? s.point.value / 100 : s.point.value;
    ++count;
  }
  std::map<std::string, double, std::less<>> out;
  for (const auto& [resource, sc] : sums) out[resource] = sc.first / sc.second;
  return out;
}

void DcgmGpuPodMapping::logOnce(const std::string& reason, const std::string& message) {
  bool first = false;
  {
    std::lock_guard lock(mu_);
    first = logged_.insert(reason).second;
  }
  if (first) spdlog::warn("{}", message);
}

std::optional<GpuOccupancy> DcgmGpuPodMapping::fallBack(const std::string& node, const char* reason,
                                                        const std::string& detail) {
  if (metrics_) metrics_->gpuMapping(std::string("fallback_") + reason);
  logOnce(reason, fmt::format("GPU mapping: node {}: {}; treating every GPU of the node as busy "
                              "(logged once per cause; counted in "
                              "gpuscale_reconciler_gpu_mapping_total)",
                              node, detail));
  return std::nullopt;
}

}  // namespace gpuscale::reconciler
