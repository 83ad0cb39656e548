#include "gpuscale/prom/errors.h"

#include <string>

namespace gpuscale::prom {
namespace {

constexpr std::string_view kPrefix = "prometheus ";

}  // namespace

std::string_view failureKindName(FailureKind kind) {
  switch (kind) {
    case FailureKind::kConnection:
      return "connection failed";
    case FailureKind::kTimeout:
      return "timeout";
    case FailureKind::kHttpStatus:
      return "bad HTTP status";
    case FailureKind::kPrometheusError:
      return "error";
    case FailureKind::kBadJson:
      return "bad JSON";
    case FailureKind::kBodyTooLarge:
      return "body too large";
    case FailureKind::kUnexpectedResultType:
      return "unexpected result type";
    case FailureKind::kCredentials:
      return "credentials";
  }
  return "unknown";
}

Status failure(FailureKind kind, std::string_view detail, bool transient) {
  std::string message(kPrefix);
  message += failureKindName(kind);
  message += ": ";
  message += detail;
  const bool unavailable =
      transient || kind == FailureKind::kConnection || kind == FailureKind::kTimeout;
  return (unavailable ? Status::unavailable(std::move(message))
                      : Status::internal(std::move(message)))
      .withPayload(kind);
}

std::optional<FailureKind> failureKindOf(const Status& status) {
  return status.payload<FailureKind>();
}

Status expectResultType(const QueryResult& result, ResultType wanted) {
  if (result.type == wanted) return Status();
  return failure(FailureKind::kUnexpectedResultType, std::string(resultTypeName(result.type)) +
                                                         " (wanted " +
                                                         std::string(resultTypeName(wanted)) + ")");
}

std::string_view resultTypeName(ResultType type) {
  switch (type) {
    case ResultType::kVector:
      return "vector";
    case ResultType::kScalar:
      return "scalar";
    case ResultType::kMatrix:
      return "matrix";
    case ResultType::kString:
      return "string";
  }
  return "unknown";
}

}  // namespace gpuscale::prom
