#include "gpuscale/core/status.h"

#include <utility>

namespace gpuscale::core {

Status::Status(int httpCode, std::string reason, std::string message, StatusDetails details)
    : httpCode_(httpCode),
      reason_(std::move(reason)),
      message_(std::move(message)),
      details_(std::move(details)) {}

Status Status::notFound(std::string message) { return {404, "NotFound", std::move(message)}; }

Status Status::badRequest(std::string message) { return {400, "BadRequest", std::move(message)}; }

Status Status::internal(std::string cause) {
  StatusDetails details;
  details.causes.push_back(cause);
  details.present = true;
  return {500, "InternalError", "Internal error occurred: " + cause, std::move(details)};
}

Status Status::unavailable(std::string message) {
  return {503, "ServiceUnavailable", std::move(message)};
}

Status Status::unauthorized(std::string message) {
  return {401, "Unauthorized", std::move(message)};
}

Status Status::forbidden(std::string message, StatusDetails details) {
  details.present = true;
  return {403, "Forbidden", std::move(message), std::move(details)};
}

Status Status::invalid(std::string message) { return {422, "Invalid", std::move(message)}; }

Status Status::timeout(std::string message) {
  StatusDetails details;
  details.present = true;
  return {504, "Timeout", std::move(message), std::move(details)};
}

Status Status::plain(std::string message, int httpCode) {
  return {httpCode, "", std::move(message)};
}

Status Status::withPayloadOf(const Status& other) const {
  Status copy = *this;
  copy.payload_ = other.payload_;
  return copy;
}

Status Status::withContext(std::string_view context) const {
  Status copy = *this;
  copy.message_ = std::string(context) + ": " + message_;
  return copy;
}

nlohmann::ordered_json Status::toKubernetesJson() const {
  nlohmann::ordered_json out;
  out["kind"] = "Status";
  out["apiVersion"] = "v1";
  out["metadata"] = nlohmann::ordered_json::object();
  out["status"] = ok() ? "Success" : "Failure";
  if (!message_.empty()) out["message"] = message_;
  if (!reason_.empty()) out["reason"] = reason_;
  if (details_.present || !details_.name.empty() || !details_.group.empty() ||
      !details_.kind.empty() || !details_.causes.empty()) {
    nlohmann::ordered_json details = nlohmann::ordered_json::object();
    if (!details_.name.empty()) details["name"] = details_.name;
    if (!details_.group.empty()) details["group"] = details_.group;
    if (!details_.kind.empty()) details["kind"] = details_.kind;
    if (!details_.causes.empty()) {
      nlohmann::ordered_json causes = nlohmann::ordered_json::array();
      for (const auto& cause : details_.causes) causes.push_back({{"message", cause}});
      details["causes"] = std::move(causes);
    }
    out["details"] = std::move(details);
  }
  out["code"] = httpCode_;
  return out;
}

std::string Status::toString() const {
  if (ok()) return "OK";
  return (reason_.empty() ? std::string("Error") : reason_) + ": " + message_;
}

}  // namespace gpuscale::core
