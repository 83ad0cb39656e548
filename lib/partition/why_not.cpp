#include "gpuscale/partition/why_not.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "gpuscale/core/enum_names.h"
#include "gpuscale/partition/capacity_request.h"

namespace gpuscale::partition {
namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr core::EnumNames<WhyCode, 36> kNames{{
    {WhyCode::kNotBlocked, "NotBlocked"},
    {WhyCode::kScaleUpCooldown, "ScaleUpCooldown"},
    {WhyCode::kWaitingForMapping, "WaitingForMapping"},
    {WhyCode::kAtPolicyCap, "AtPolicyCap"},
    {WhyCode::kNoEligibleNodes, "NoEligibleNodes"},
    {WhyCode::kShortfall, "Shortfall"},
    {WhyCode::kShared, "Shared"},
    {WhyCode::kRaised, "Raised"},
    {WhyCode::kLowered, "Lowered"},
    {WhyCode::kNodeMigTransition, "NodeMigTransition"},
    {WhyCode::kNodeOperationInFlight, "NodeOperationInFlight"},
    {WhyCode::kNodeBackoff, "NodeBackoff"},
    {WhyCode::kNodeNotSelected, "NodeNotSelected"},
    {WhyCode::kNotMigCapable, "NotMigCapable"},
    {WhyCode::kMigGeometryUnknown, "MigGeometryUnknown"},
    {WhyCode::kMigDisabled, "MigDisabled"},
    {WhyCode::kGpuPodsOnNode, "GpuPodsOnNode"},
    {WhyCode::kGpusBusy, "GpusBusy"},
    {WhyCode::kProfileNotAllowed, "ProfileNotAllowed"},
    {WhyCode::kNoReshapeGain, "NoReshapeGain"},
    {WhyCode::kReshaped, "Reshaped"},
    {WhyCode::kMps, "Mps"},
    {WhyCode::kNoDevices, "NoDevices"},
    {WhyCode::kReplicaLimit, "ReplicaLimit"},
    {WhyCode::kMemoryLimit, "MemoryLimit"},
    {WhyCode::kMemoryUnknown, "MemoryUnknown"},
    {WhyCode::kProductRename, "ProductRename"},
    {WhyCode::kSaturated, "Saturated"},
    {WhyCode::kNoTimeSlicingGain, "NoTimeSlicingGain"},
    {WhyCode::kTimeSliced, "TimeSliced"},
    {WhyCode::kMigModeOff, "MigModeOff"},
    {WhyCode::kMigModeBusyNode, "MigModeBusyNode"},
    {WhyCode::kMigNotManaged, "MigNotManaged"},
    {WhyCode::kOtherTenant, "OtherTenant"},
    {WhyCode::kDraPartitionable, "DraPartitionable"},
    {WhyCode::kDraNoSharing, "DraNoSharing"},
}};

const WhyReason* find(const HpaWhy& why, WhyCode code) {
  auto it = std::find_if(why.reasons.begin(), why.reasons.end(),
                         [&](const WhyReason& r) { return r.code == code; });
  return it == why.reasons.end() ? nullptr : &*it;
}

std::string reasonText(const WhyReason& r) {
  std::string where;
  if (!r.node.empty()) {
    where = r.lever ? fmt::format("node {} ({}): ", r.node, leverName(*r.lever))
                    : fmt::format("node {}: ", r.node);
  }
  return fmt::format("{}{}{}{}", where, whyCodeName(r.code), r.detail.empty() ? "" : ": ",
                     r.detail);
}

}  // namespace

std::string_view whyCodeName(WhyCode code) { return core::enumName(kNames, code, "Unknown"); }

bool HpaWhy::has(WhyCode code) const { return find(*this, code) != nullptr; }

OrderedJson whyToJson(const HpaWhy& why) {
  OrderedJson out{{"namespace", why.ns}, {"name", why.name}, {"policy", why.policy}};
  if (!why.resource.empty()) out["resource"] = why.resource;
  out["blocked"] = why.blocked;
  if (!why.demand.empty()) out["demand"] = why.demand;
  out["maxReplicas"] = why.maxReplicas;
  out["ceiling"] = why.ceiling;
  out["wanted"] = why.wanted;
  if (why.cap) out["cap"] = *why.cap;
  if (why.aim) out["aim"] = *why.aim;
  if (why.after) out["after"] = *why.after;
  if (why.newMaxReplicas) out["newMaxReplicas"] = *why.newMaxReplicas;
  out["verdict"] = whyVerdict(why);
  OrderedJson reasons = OrderedJson::array();
  for (const auto& r : why.reasons) {
    OrderedJson j{{"code", whyCodeName(r.code)}};
    if (!r.node.empty()) j["node"] = r.node;
    if (r.lever) j["lever"] = leverName(*r.lever);
    if (!r.detail.empty()) j["detail"] = r.detail;
    reasons.push_back(std::move(j));
  }
  out["reasons"] = std::move(reasons);
  return out;
}

std::string whyVerdict(const HpaWhy& why) {
  if (why.newMaxReplicas && *why.newMaxReplicas > why.maxReplicas) {
    return fmt::format("raised maxReplicas {} -> {}", why.maxReplicas, *why.newMaxReplicas);
  }
  if (why.newMaxReplicas) {
    return fmt::format("lowered maxReplicas {} -> {} (giving isolation back)", why.maxReplicas,
                       *why.newMaxReplicas);
  }
  // The reason that decided, most fundamental first.
  std::string decided = "not raised";
  for (WhyCode code :
       {WhyCode::kNotBlocked, WhyCode::kScaleUpCooldown, WhyCode::kWaitingForMapping,
        WhyCode::kNoEligibleNodes, WhyCode::kShared, WhyCode::kShortfall, WhyCode::kAtPolicyCap}) {
    if (const WhyReason* r = find(why, code)) {
      decided += ": " + reasonText(*r);
      break;
    }
  }
  // Pending pods within maxReplicas get partitions without a raise.
  if (why.has(WhyCode::kReshaped) || why.has(WhyCode::kTimeSliced)) {
    return fmt::format("partitions grow within maxReplicas {}; {}", why.maxReplicas, decided);
  }
  return decided;
}

std::string whyToText(const HpaWhy& why) {
  std::string out = fmt::format("{} (policy {}): {}\n", demandOwnerName(why.ns, why.name),
                                why.policy, whyVerdict(why));
  out +=
      fmt::format("  maxReplicas {}, partitions hold {} pods{}, the HPA wants {}", why.maxReplicas,
                  why.ceiling, why.resource.empty() ? "" : " of " + why.resource, why.wanted);
  out += why.blocked ? fmt::format(" (blocked: {})\n", why.demand) : " (not blocked)\n";
  if (why.aim) {
    out += fmt::format("  aims at {} pods (policy cap {}), partitions hold {} after this plan\n",
                       *why.aim, why.cap.value_or(0), why.after.value_or(why.ceiling));
  }
  for (const auto& r : why.reasons) out += "  - " + reasonText(r) + "\n";
  return out;
}

}  // namespace gpuscale::partition
