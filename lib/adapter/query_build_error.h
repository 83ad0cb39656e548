// Private: the answer for a rule whose query could not be rendered, shared by the providers.
//
// A rule that cannot render its query is a broken rule, not a missing metric: 500 with the
// renderer's reason. Selector problems are the caller's and keep their 400.
#pragma once

#include "gpuscale/core/status.h"

namespace gpuscale::adapter::detail {

inline core::Status queryBuildError(const core::Status& status) {
  if (status.httpCode() == 400) return status;
  return core::Status::internal("unable to build the query: " + status.message());
}

}  // namespace gpuscale::adapter::detail
