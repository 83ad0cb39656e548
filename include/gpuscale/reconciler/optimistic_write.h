// Optimistic concurrency for every write the reconciler makes: read the object, compute the change
// from what is there now, write it as a merge patch carrying the read resourceVersion (the API
// server refuses it with 409 Conflict if anyone wrote in between), and on 409 read again and
// recompute. A change function that finds nothing to do writes nothing.
//
// Thread safety: stateless functions; the client must be thread-safe.
#pragma once

#include <functional>
#include <optional>

#include "gpuscale/core/result.h"
#include "gpuscale/kube/client.h"

namespace gpuscale::reconciler {

// The merge patch to apply to `current` (without resourceVersion), or nullopt for "no change".
// It may also fail (a precondition no longer holds): the Status is returned as is.
using ChangeFn = std::function<core::Result<std::optional<kube::Object>>(const kube::Object&)>;

struct WriteResult {
  kube::Object object;  // the object after the write (or as read, when nothing changed)
  bool changed = false;
  int conflicts = 0;  // 409s retried
};

// Reads `ref`, applies `change`, retries on 409 up to `attempts` times (then returns the 409). For
// a status subresource (`ref.subresource` "status") the object itself is read and the patch goes
// to /status.
core::Result<WriteResult> patchWithRetry(kube::KubeClient& client, const kube::ResourceRef& ref,
                                         const ChangeFn& change, int attempts = 5);

// As patchWithRetry, but a missing object is created from `change({})`'s patch applied to a
// skeleton {"apiVersion","kind","metadata":{name,namespace}} (a ConfigMap, for instance).
core::Result<WriteResult> upsertWithRetry(kube::KubeClient& client, const kube::ResourceRef& ref,
                                          std::string_view apiVersion, std::string_view kind,
                                          const ChangeFn& change, int attempts = 5);

}  // namespace gpuscale::reconciler
