// What kind of failure a Kubernetes API answer was, decided from the Status's code and reason (the
// answer's metav1.Status), never from its message. One set of rules for every module.
//
// Thread safety: pure functions.
#pragma once

#include "gpuscale/core/status.h"

namespace gpuscale::k8s {

bool isNotFound(const core::Status& status);         // 404
bool isConflict(const core::Status& status);         // 409: Conflict or AlreadyExists
bool isGone(const core::Status& status);             // 410, or reason Expired/Gone (too old)
bool isTooManyRequests(const core::Status& status);  // 429

}  // namespace gpuscale::k8s
