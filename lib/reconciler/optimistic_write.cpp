#include "gpuscale/reconciler/optimistic_write.h"

#include <string>

#include "gpuscale/partition/kube_objects.h"

namespace gpuscale::reconciler {
namespace {

core::Result<WriteResult> writeLoop(kube::KubeClient& client, const kube::ResourceRef& ref,
                                    const ChangeFn& change, int attempts,
                                    const kube::Object* skeleton) {
  WriteResult out;
  // A status subresource is read through its object, which carries the status: a GET of /status
  // would need a grant of its own, and the writer needs only the object's read and the patch.
  kube::ResourceRef read = ref;
  if (read.subresource == "status") read.subresource.clear();
  for (int attempt = 0; attempt < std::max(1, attempts); ++attempt) {
    auto current = client.get(read);
    if (!current && k8s::isNotFound(current.status()) && skeleton != nullptr) {
      auto patch = change(*skeleton);
      if (!patch) return patch.status();
      kube::Object created = *skeleton;
      if (*patch) created.merge_patch(**patch);
      auto r = client.create(ref.named(""), created);
      if (r) return WriteResult{*r, true, out.conflicts};
      if (!k8s::isConflict(r.status())) return r.status();
      ++out.conflicts;  // created by someone else meanwhile: read it and patch
      continue;
    }
    if (!current) return current.status();
    auto patch = change(*current);
    if (!patch) return patch.status();
    if (!*patch) return WriteResult{*current, false, out.conflicts};
    auto meta = partition::readMeta(*current);
    if (!meta) return meta.status();
    kube::Object body = **patch;
    body["metadata"]["resourceVersion"] = meta->resourceVersion;
    auto r = client.patch(ref, kube::PatchType::kMerge, body);
    if (r) return WriteResult{*r, true, out.conflicts};
    if (!k8s::isConflict(r.status())) return r.status();
    ++out.conflicts;
  }
  return core::Status(409, "Conflict",
                      "gave up after " + std::to_string(out.conflicts) + " conflicting writes");
}

}  // namespace

core::Result<WriteResult> patchWithRetry(kube::KubeClient& client, const kube::ResourceRef& ref,
                                         const ChangeFn& change, int attempts) {
  return writeLoop(client, ref, change, attempts, nullptr);
}

core::Result<WriteResult> upsertWithRetry(kube::KubeClient& client, const kube::ResourceRef& ref,
                                          std::string_view apiVersion, std::string_view kind,
                                          const ChangeFn& change, int attempts) {
  kube::Object skeleton{{"apiVersion", apiVersion},
                        {"kind", kind},
                        {"metadata", {{"name", ref.name}, {"namespace", ref.namespaceName}}}};
  return writeLoop(client, ref, change, attempts, &skeleton);
}

}  // namespace gpuscale::reconciler
