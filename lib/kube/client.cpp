#include "gpuscale/kube/client.h"

#include <fmt/format.h>

namespace gpuscale::kube {
namespace {

bool unreserved(unsigned char c) {
  return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == ':' || c == '@';
}

void appendSegment(std::string& out, std::string_view segment) {
  out += '/';
  for (unsigned char c : segment) {
    if (unreserved(c)) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
}

std::string reasonForCode(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return code >= 500 ? "InternalError" : "";
  }
}

}  // namespace

ResourceRef ResourceRef::collection(std::string_view group, std::string_view version,
                                    std::string_view resource, std::string_view ns) {
  ResourceRef ref;
  ref.group = group;
  ref.version = version;
  ref.resource = resource;
  ref.namespaceName = ns;
  return ref;
}

std::string ResourceRef::path() const {
  std::string out = group.empty() ? "/api" : "/apis";
  if (!group.empty()) appendSegment(out, group);
  appendSegment(out, version);
  if (!namespaceName.empty()) {
    appendSegment(out, "namespaces");
    appendSegment(out, namespaceName);
  }
  appendSegment(out, resource);
  if (!name.empty()) {
    appendSegment(out, name);
    if (!subresource.empty()) appendSegment(out, subresource);
  }
  return out;
}

ResourceRef ResourceRef::named(std::string_view objectName) const {
  ResourceRef copy = *this;
  copy.name = objectName;
  return copy;
}

ResourceRef ResourceRef::inNamespace(std::string_view ns) const {
  ResourceRef copy = *this;
  copy.namespaceName = ns;
  return copy;
}

core::Status statusFromObject(const Object& object, int fallbackCode) {
  if (!object.is_object() || object.value("kind", "") != "Status") {
    return core::Status(
        fallbackCode, reasonForCode(fallbackCode),
        fmt::format("unexpected error object from the server (HTTP {})", fallbackCode));
  }
  int code = object.value("code", fallbackCode);
  if (code < 400) code = fallbackCode >= 400 ? fallbackCode : 500;
  core::StatusDetails details;
  if (const auto it = object.find("details"); it != object.end() && it->is_object()) {
    details.present = true;
    details.name = it->value("name", "");
    details.group = it->value("group", "");
    details.kind = it->value("kind", "");
    if (const auto causes = it->find("causes"); causes != it->end() && causes->is_array()) {
      for (const auto& cause : *causes) {
        if (cause.is_object()) details.causes.push_back(cause.value("message", ""));
      }
    }
  }
  std::string reason = object.value("reason", "");
  return core::Status(code, reason, object.value("message", ""), std::move(details));
}

core::Status statusFromResponse(int httpCode, std::string_view body, int retryAfterSeconds) {
  core::Status status;
  Object parsed = Object::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded() && parsed.is_object() && parsed.value("kind", "") == "Status") {
    status = statusFromObject(parsed, httpCode);
  } else {
    std::string text(body.substr(0, 256));
    status = core::Status(
        httpCode, reasonForCode(httpCode),
        text.empty() ? fmt::format("the server responded with HTTP {}", httpCode) : text);
  }
  if (retryAfterSeconds > 0) {
    return core::Status(status.httpCode(), status.reason(),
                        fmt::format("{} (retry after {}s)", status.message(), retryAfterSeconds),
                        status.details());
  }
  return status;
}

}  // namespace gpuscale::kube
