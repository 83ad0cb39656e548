// What the reconciler answers on its two listeners.
//
// The probe listener (--health-bind-address, plain HTTP, no credentials: kubelet probes carry
// none) answers only /healthz and /livez (200 "ok") and /readyz (200 once the informers synced,
// 500 before). Everything else is 404 there, in particular /plan, /leader and /metrics: they reveal
// cluster state (nodes, workloads, GPU layout, who leads) and are served only on the secure status
// listener (auth/secure_status_server.h), behind TokenReview and SubjectAccessReview:
//   /plan    the last plan as JSON (Controller::lastPlanJson)
//   /leader  "true" or "false" (always "true" without leader election)
//   /metrics the reconciler's registry (served by the status server itself)
//
// Thread safety: pure functions of the callbacks, which must be thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "gpuscale/core/plain_http.h"

namespace gpuscale::reconciler {

struct StatusSource {
  std::function<bool()> synced;               // informers synced (readiness)
  std::function<std::string()> lastPlanJson;  // /plan
  std::function<bool()> leader;               // /leader
};

// The probe listener's answer for `path`.
core::PlainHttpReply probeReply(std::string_view path, const StatusSource& source);

// The secure listener's page at `path` (/plan, /leader); nullopt for any other path.
std::optional<core::PlainHttpReply> statusPage(std::string_view path, const StatusSource& source);

}  // namespace gpuscale::reconciler
