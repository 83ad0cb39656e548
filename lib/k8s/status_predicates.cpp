#include "gpuscale/k8s/status_predicates.h"

namespace gpuscale::k8s {

bool isNotFound(const core::Status& status) { return status.httpCode() == 404; }

bool isConflict(const core::Status& status) { return status.httpCode() == 409; }

bool isGone(const core::Status& status) {
  return status.httpCode() == 410 || status.reason() == "Expired" || status.reason() == "Gone";
}

bool isTooManyRequests(const core::Status& status) { return status.httpCode() == 429; }

}  // namespace gpuscale::k8s
