#include "gpuscale/prom/errors.h"

#include <string>

#include "gpuscale/core/enum_names.h"

namespace gpuscale::prom {
namespace {

constexpr std::string_view kPrefix = "prometheus ";

}  // namespace

std::string_view failureKindName(FailureKind kind) {
  static constexpr core::EnumNames<FailureKind, 8> kNames{
      {{FailureKind::kConnection, "connection failed"},
       {FailureKind::kTimeout, "timeout"},
       {FailureKind::kHttpStatus, "bad HTTP status"},
       {FailureKind::kPrometheusError, "error"},
       {FailureKind::kBadJson, "bad JSON"},
       {FailureKind::kBodyTooLarge, "body too large"},
       {FailureKind::kUnexpectedResultType, "unexpected result type"},
       {FailureKind::kCredentials, "credentials"}}};
  return core::enumName(kNames, kind, "unknown");
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
  static constexpr core::EnumNames<ResultType, 4> kNames{{{ResultType::kVector, "vector"},
                                                          {ResultType::kScalar, "scalar"},
                                                          {ResultType::kMatrix, "matrix"},
                                                          {ResultType::kString, "string"}}};
  return core::enumName(kNames, type, "unknown");
}

}  // namespace gpuscale::prom
