// Status: the error value of gpuscale.
//
// Every path that untrusted input or a remote system can reach returns a Status (or a Result<T>,
// which is a value or a Status) instead of throwing. A Status carries what the Kubernetes API
// machinery puts in a `metav1.Status`: an HTTP code, a machine-readable reason ("NotFound",
// "BadRequest", "InternalError", ...) and a human message, plus optional details. The API layer
// serialises it with toKubernetesJson(); other layers only create and inspect it.
//
// Besides the Kubernetes reason, a Status may carry a payload: one value of a type the module that
// made the Status defines for the failure classes its callers act on, finer than the reason
// (prom::FailureKind says which backend failure, core::FileFailure which file problem). Code that
// must react to a kind of failure reads payload<T>(), never the message; messages are for people
// and may change.
//
// Status is [[nodiscard]]: a call whose Status is dropped is a compile error under -Werror, so
// every error is either handled or explicitly ignored (`(void)` with a comment saying why).
//
// Thread safety: a Status is an immutable value once built; copies are independent.
#pragma once

#include <any>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale::core {

// Extra fields of a metav1.Status ("details"). Empty members are omitted from the JSON.
struct StatusDetails {
  std::string name;
  std::string group;
  std::string kind;
  std::vector<std::string> causes;  // each becomes {"message": cause}
  bool present = false;             // emit "details" even when all fields are empty (as `{}`)
};

class [[nodiscard]] Status {
 public:
  // The OK status: code 200, no reason, no message.
  Status() = default;
  Status(int httpCode, std::string reason, std::string message, StatusDetails details = {});

  // Factories for the reasons gpuscale uses. The message is shown to users verbatim.
  static Status notFound(std::string message);
  static Status badRequest(std::string message);
  // A failed request to a backend or a broken invariant. The message names the cause class
  // (for example "unable to fetch metrics"); Kubernetes renders it as "Internal error occurred:
  // <cause>".
  static Status internal(std::string cause);
  // A dependency is not available yet or is down (HTTP 503, reason ServiceUnavailable).
  static Status unavailable(std::string message);
  static Status unauthorized(std::string message = "Unauthorized");
  static Status forbidden(std::string message, StatusDetails details = {});
  // Invalid configuration or input that is not an HTTP request (rule files, flags). HTTP 422,
  // reason Invalid.
  static Status invalid(std::string message);
  // A timeout talking to a backend (HTTP 504, reason Timeout).
  static Status timeout(std::string message);
  // An error with no reason, as a plain Go error surfaces through the apiserver (HTTP 500, reason
  // omitted).
  static Status plain(std::string message, int httpCode = 500);

  bool ok() const { return httpCode_ >= 200 && httpCode_ < 300; }
  int httpCode() const { return httpCode_; }
  const std::string& reason() const { return reason_; }
  const std::string& message() const { return message_; }
  const StatusDetails& details() const { return details_; }

  // The payload of type T (the failure class of the module that made the status); nullopt when
  // there is none or it has another type.
  template <typename T>
  std::optional<T> payload() const {
    const T* value = std::any_cast<T>(&payload_);
    return value != nullptr ? std::optional<T>(*value) : std::nullopt;
  }
  // The same status with `value` as its payload (replacing any other).
  template <typename T>
  Status withPayload(T value) const {
    Status copy = *this;
    copy.payload_ = std::move(value);
    return copy;
  }
  // The same status with the payload of `other` (an error passed up as another one).
  Status withPayloadOf(const Status& other) const;

  // The same status with `context + ": "` prepended to the message (for errors passed up a layer).
  // The payload is kept.
  Status withContext(std::string_view context) const;

  // The metav1.Status object, keys in Kubernetes' order:
  // kind, apiVersion, metadata, status, message, reason, details, code.
  nlohmann::ordered_json toKubernetesJson() const;

  // "Reason: message" for logs.
  std::string toString() const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.httpCode_ == b.httpCode_ && a.reason_ == b.reason_ && a.message_ == b.message_;
  }

 private:
  int httpCode_ = 200;
  std::string reason_;
  std::string message_;
  StatusDetails details_;
  std::any payload_;
};

}  // namespace gpuscale::core
