// Reading workloads an HPA scales through their /scale subresource (kube_objects.h:
// readScalableWorkload, readScale): replicas and pods from the Scale, pods per replica, and the pod
// template where the kind has one this reader knows.
#include <charconv>
#include <limits>

#include "gpuscale/core/label_selector.h"
#include "gpuscale/k8s/well_known_keys.h"
#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/object_fields.h"
#include "object_meta.h"

namespace gpuscale::partition {
namespace {

using nlohmann::json;

// LeaderWorkerSet (leaderworkerset.x-k8s.io): a replica is a group of
// spec.leaderWorkerTemplate.size pods, every one labelled with the set's name; its /scale selector
// names the leaders only.
constexpr std::string_view kLeaderWorkerSetKind = "LeaderWorkerSet";
constexpr std::string_view kLeaderWorkerSetNameLabel = "leaderworkerset.sigs.k8s.io/name";

ScaleObject parseScale(const json& item) {
  const auto [meta, spec, status] = detail::parseParts(item);
  return {meta, fields::int32(spec, "replicas", 0, 0), fields::int32(status, "replicas", 0, 0),
          fields::string(status, "selector")};
}

// The equality terms of `text` into `target.selector` (one value per key), the others into
// `target.selectorRequirements`.
void readSelector(const std::string& text, ScaleTarget& target) {
  auto parsed = core::LabelSelector::parse(text);
  if (!parsed) fields::fail("status.selector of the Scale", "a label selector");
  for (const auto& r : parsed->requirements()) {
    const bool equality = r.op == core::SelectorOperator::kEquals ||
                          r.op == core::SelectorOperator::kDoubleEquals ||
                          (r.op == core::SelectorOperator::kIn && r.values.size() == 1);
    if (equality && !target.selector.contains(r.key)) {
      target.selector[r.key] = r.values.front();
    } else {
      target.selectorRequirements.push_back(r);
    }
  }
}

int podsPerReplicaAnnotation(const ObjectMeta& meta) {
  const std::string text = meta.annotation(k8s::kPodsPerReplicaAnnotation);
  if (text.empty()) return 1;
  const std::string what = "metadata.annotations." + std::string(k8s::kPodsPerReplicaAnnotation);
  long long n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc::result_out_of_range)
    fields::fail(what, "at most 2^31-1", fields::Problem::kRange);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1)
    fields::fail(what, "a decimal integer of at least 1");
  if (n > std::numeric_limits<std::int32_t>::max())
    fields::fail(what, "at most 2^31-1", fields::Problem::kRange);
  return static_cast<int>(n);
}

// LeaderWorkerSet: size, and the worker template with the leader template's larger requests.
void readLeaderWorkerSet(const json& spec, ScaleTarget& t) {
  const json& lwt = fields::object(spec, "leaderWorkerTemplate");
  t.podsPerReplica = fields::int32(lwt, "size", 1, 1);
  const json& worker = fields::object(lwt, "workerTemplate");
  detail::readTemplate(fields::object(worker, "spec"),
                       fields::stringMap(fields::object(worker, "metadata"), "annotations"), t);
  const json* leader = fields::find(lwt, "leaderTemplate");
  if (leader == nullptr) return;
  ScaleTarget l;
  const json& leaderTemplate = fields::object(lwt, "leaderTemplate");
  detail::readTemplate(fields::object(leaderTemplate, "spec"),
                       fields::stringMap(fields::object(leaderTemplate, "metadata"), "annotations"),
                       l);
  for (const auto& [resource, n] : l.gpuRequests) {
    auto& mine = t.gpuRequests[resource];
    mine = std::max(mine, n);
  }
}

// `scale` may be null only for a LeaderWorkerSet.
ScaleTarget parseScalable(const json& item, std::string_view kind, const ScaleObject* scale) {
  const auto [meta, spec, status] = detail::parseParts(item);
  ScaleTarget t;
  t.kind = kind;
  detail::copyIdentity(meta, t);
  t.uid = meta.uid;
  const bool lws = kind == kLeaderWorkerSetKind;
  t.specReplicas = scale != nullptr ? scale->specReplicas : fields::int32(spec, "replicas", 1, 0);
  if (lws) {
    t.selector[std::string(kLeaderWorkerSetNameLabel)] = meta.name;
    readLeaderWorkerSet(spec, t);
    return t;
  }
  readSelector(scale->selector, t);
  t.podsPerReplica = podsPerReplicaAnnotation(meta);
  if (fields::find(spec, "template") != nullptr) {
    const json& tpl = fields::object(spec, "template");
    detail::readTemplate(fields::object(tpl, "spec"),
                         fields::stringMap(fields::object(tpl, "metadata"), "annotations"), t);
  } else {
    t.templateFromPods = true;
  }
  return t;
}

}  // namespace

core::Result<ScaleObject> readScale(const json& object) {
  return fields::readFields("", [&] { return parseScale(object); });
}

core::Result<ScaleTarget> readScalableWorkload(const json& object, std::string_view kind,
                                               const ScaleObject* scale) {
  if (scale == nullptr && kind != kLeaderWorkerSetKind) {
    return core::Status(422, std::string(kNoScaleReason),
                        "its /scale subresource was not read: the reconciler finds the pods of " +
                            std::string(kind) + " through the Scale's status.selector");
  }
  return fields::readFields("", [&] { return parseScalable(object, kind, scale); });
}

}  // namespace gpuscale::partition
