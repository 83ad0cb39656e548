#include "gpuscale/reconciler/dcgm_gpu_pod_mapping.h"

#include <charconv>

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

std::optional<GpuOccupancy> DcgmGpuPodMapping::occupancy(
    const std::string& node, const std::set<std::string>& pods,
    std::chrono::system_clock::time_point now) {
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
  for (const auto& pod : pods) {
    if (!seenPods.contains(pod)) {
      return fallBack(node, "unaccounted",
                      "pod " + pod + " runs there but no " + options_.metric + " series names it");
    }
  }
  if (metrics_) metrics_->gpuMapping(kMappingPerGpu);
  return out;
}

std::optional<GpuOccupancy> DcgmGpuPodMapping::fallBack(const std::string& node, const char* reason,
                                                        const std::string& detail) {
  if (metrics_) metrics_->gpuMapping(std::string("fallback_") + reason);
  bool first = false;
  {
    std::lock_guard lock(mu_);
    first = logged_.insert(reason).second;
  }
  if (first) {
    spdlog::warn(
        "GPU mapping: node {}: {}; treating every GPU of the node as busy (logged once per "
        "cause; counted in gpuscale_reconciler_gpu_mapping_total)",
        node, detail);
  }
  return std::nullopt;
}

}  // namespace gpuscale::reconciler
