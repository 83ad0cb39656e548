#include "gpuscale/partition/pod_record.h"

#include "gpuscale/partition/kube_objects.h"
#include "gpuscale/partition/object_fields.h"

namespace gpuscale::partition {

PodRecord readPodRecord(const nlohmann::json& object) {
  PodRecord record;
  auto pod = readPod(object);
  if (!pod) {
    record.skipped = skippedObject("Pod", object, pod.status());
    return record;
  }
  record.pod = std::move(*pod);
  if (const nlohmann::json* spec = fields::find(object, "spec"); spec != nullptr) {
    if (auto tpl = readPodTemplate(*spec)) {
      record.asTemplate =
          PodTemplateParts{std::move(tpl->gpuRequests), std::move(tpl->nodeSelector)};
    }
  }
  return record;
}

}  // namespace gpuscale::partition
