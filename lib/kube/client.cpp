#include "gpuscale/kube/client.h"

#include <fmt/format.h>

#include "gpuscale/core/go_quote.h"
#include "gpuscale/k8s/object_accessors.h"

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

Object partialObjectMetadata(const Object& object) {
  Object out = {{"apiVersion", "meta.k8s.io/v1"}, {"kind", "PartialObjectMetadata"}};
  const auto metadata = object.find("metadata");
  out["metadata"] =
      metadata != object.end() && metadata->is_object() ? *metadata : Object::object();
  return out;
}

core::Status statusFromObject(const Object& object, int fallbackCode) {
  if (k8s::stringField(object, "kind") != "Status") {
    return core::Status(
        fallbackCode, reasonForCode(fallbackCode),
        fmt::format("unexpected error object from the server (HTTP {})", fallbackCode));
  }
  int code = k8s::intField(object, "code", fallbackCode);
  // Only an error code is an error: anything else (a 2xx, or a code no HTTP status has) falls back.
  if (code < 400 || code > 599) code = fallbackCode >= 400 ? fallbackCode : 500;
  core::StatusDetails details;
  if (const auto it = object.find("details"); it != object.end() && it->is_object()) {
    details.present = true;
    details.name = k8s::stringField(*it, "name");
    details.group = k8s::stringField(*it, "group");
    details.kind = k8s::stringField(*it, "kind");
    if (const auto causes = it->find("causes"); causes != it->end() && causes->is_array()) {
      for (const auto& cause : *causes) {
        if (cause.is_object()) details.causes.push_back(k8s::stringField(cause, "message"));
      }
    }
  }
  return core::Status(code, k8s::stringField(object, "reason"), k8s::stringField(object, "message"),
                      std::move(details));
}

core::Status statusFromResponse(int httpCode, std::string_view body, int retryAfterSeconds) {
  core::Status status;
  Object parsed = Object::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded() && k8s::stringField(parsed, "kind") == "Status") {
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

core::Result<WatchEvent> decodeWatchEvent(std::string_view line) {
  Object event = Object::parse(line, nullptr, /*allow_exceptions=*/false);
  if (event.is_discarded() || !event.is_object()) {
    return core::Status::internal("the Kubernetes API sent a watch event that is not JSON");
  }
  const std::string type = k8s::stringField(event, "type");
  WatchEvent out;
  if (type == "ADDED") {
    out.type = WatchEvent::Type::kAdded;
  } else if (type == "MODIFIED") {
    out.type = WatchEvent::Type::kModified;
  } else if (type == "DELETED") {
    out.type = WatchEvent::Type::kDeleted;
  } else if (type == "BOOKMARK") {
    out.type = WatchEvent::Type::kBookmark;
  } else if (type == "ERROR") {
    return statusFromObject(k8s::objectField(event, "object"), 500);
  } else {
    return core::Status::internal(fmt::format("unknown watch event type {}", core::goQuote(type)));
  }
  if (auto it = event.find("object"); it != event.end()) out.object = std::move(*it);
  return out;
}

core::Result<ListPage> decodeListPage(std::string_view body) {
  Object page = Object::parse(body, nullptr, /*allow_exceptions=*/false);
  if (page.is_discarded() || !page.is_object()) {
    return core::Status::internal("the Kubernetes API returned a body that is not JSON");
  }
  auto items = page.find("items");
  // `items` is null in an empty list from some servers; anything else but an array is malformed.
  if (items == page.end() || !(items->is_array() || items->is_null())) {
    return core::Status::internal("the Kubernetes API returned a list without items");
  }
  ListPage out;
  if (items->is_array()) {
    out.items.reserve(items->size());
    for (auto& item : *items) out.items.push_back(std::move(item));
  }
  const Object& meta = k8s::objectField(page, "metadata");
  out.resourceVersion = k8s::stringField(meta, "resourceVersion");
  out.continueToken = k8s::stringField(meta, "continue");
  return out;
}

}  // namespace gpuscale::kube
