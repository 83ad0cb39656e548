// The error values of the Prometheus client. Every failure names its cause class so the API layer
// can answer 500 or 503 with a message an operator can act on ("prometheus timeout: no answer
// within 2s from GET /api/v1/query"), and callers can tell "no data" (an empty result) from "could
// not ask" (an error).
//
// Messages have the form "prometheus <kind>: <detail>". Transient causes (connection failures,
// timeouts, Prometheus' own `timeout`/`unavailable`/`canceled` errors, HTTP 502/503/504) are
// Status::unavailable (503); everything else is Status::internal (500). Details never include query
// strings or credentials.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "gpuscale/core/status.h"
#include "gpuscale/prom/types.h"

namespace gpuscale::prom {

using core::Status;

enum class FailureKind {
  kConnection,       // refused, unreachable, DNS, TLS handshake
  kTimeout,          // no complete answer within the configured timeout
  kHttpStatus,       // an HTTP status Prometheus' API never uses, or an error status without JSON
  kPrometheusError,  // `"status":"error"` with errorType and error
  kBadJson,          // a body that is not the documented JSON envelope
  kBodyTooLarge,     // the body exceeds the configured cap
  kUnexpectedResultType,  // e.g. a matrix where a vector was required
  kCredentials,           // token, certificate or key files unreadable
};

// "connection failed", "timeout", "bad HTTP status", "error", "bad JSON", "body too large",
// "unexpected result type", "credentials".
std::string_view failureKindName(FailureKind kind);

// The Status for a failure of `kind`. `transient` forces 503 for kinds whose class depends on the
// case (kHttpStatus, kPrometheusError); kConnection and kTimeout are always 503.
Status failure(FailureKind kind, std::string_view detail, bool transient = false);

// The kind of a Status built by failure() (its payload, never its message); nullopt for any other
// Status.
std::optional<FailureKind> failureKindOf(const Status& status);

// OK when `result` has type `wanted`, else a kUnexpectedResultType failure naming both types.
Status expectResultType(const QueryResult& result, ResultType wanted);

}  // namespace gpuscale::prom
