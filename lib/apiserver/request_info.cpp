#include "gpuscale/apiserver/request_info.h"

#include <algorithm>
#include <cctype>

namespace gpuscale::apiserver {
namespace {

std::string lowerCase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string resourceVerb(std::string_view method) {
  if (method == "POST") return "create";
  if (method == "GET" || method == "HEAD") return "get";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return "delete";
  return "";
}

bool isParseTrue(std::string_view value) {
  return value == "1" || value == "t" || value == "T" || value == "true" || value == "TRUE" ||
         value == "True";
}

// The name from a field selector that is exactly `metadata.name=<n>` or `metadata.name==<n>`.
std::string nameFromFieldSelector(std::string_view selector) {
  constexpr std::string_view kKey = "metadata.name";
  if (selector.find(',') != std::string_view::npos) return "";
  if (selector.substr(0, kKey.size()) != kKey) return "";
  std::string_view rest = selector.substr(kKey.size());
  if (rest.substr(0, 2) == "==") {
    rest.remove_prefix(2);
  } else if (rest.substr(0, 1) == "=") {
    rest.remove_prefix(1);
  } else {
    return "";
  }
  // Kubernetes only accepts names that are valid path segments.
  if (rest.empty() || rest == "." || rest == ".." || rest.find('/') != std::string_view::npos ||
      rest.find('%') != std::string_view::npos) {
    return "";
  }
  return std::string(rest);
}

}  // namespace

std::vector<std::string> splitPath(std::string_view path) {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  std::vector<std::string> parts;
  if (path.empty()) return parts;
  size_t start = 0;
  while (true) {
    const size_t slash = path.find('/', start);
    parts.emplace_back(path.substr(start, slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

RequestInfo parseRequestInfo(std::string_view method, std::string_view path,
                             const QueryParams& query) {
  RequestInfo info;
  info.path = std::string(path);
  info.verb = lowerCase(method);

  std::vector<std::string> parts = splitPath(path);
  if (parts.size() < 3) return info;
  if (parts[0] != "api" && parts[0] != "apis") return info;
  info.apiPrefix = parts[0];
  size_t at = 1;
  if (info.apiPrefix == "apis") {
    if (parts.size() - at < 3) return info;
    info.apiGroup = parts[at++];
  }
  info.isResourceRequest = true;
  info.apiVersion = parts[at++];

  bool noSubresources = false;
  if (at < parts.size() && (parts[at] == "watch" || parts[at] == "proxy")) {
    if (parts.size() - at < 2) {
      // Kubernetes rejects this form; treat it as a non-resource request so it is never routed.
      RequestInfo plain;
      plain.path = info.path;
      plain.verb = lowerCase(method);
      return plain;
    }
    info.verb = parts[at];
    noSubresources = parts[at] == "proxy";
    ++at;
  } else {
    info.verb = resourceVerb(method);
  }

  if (at < parts.size() && parts[at] == "namespaces") {
    if (parts.size() - at > 1) {
      info.namespaceName = parts[at + 1];
      if (parts.size() - at > 2 && parts[at + 2] != "status" && parts[at + 2] != "finalize") {
        at += 2;
      }
    }
  }
  info.parts.assign(parts.begin() + static_cast<std::ptrdiff_t>(at), parts.end());
  const size_t n = info.parts.size();
  if (n >= 3 && !noSubresources) info.subresource = info.parts[2];
  if (n >= 2) info.name = info.parts[1];
  if (n >= 1) info.resource = info.parts[0];

  if (info.name.empty() && info.verb == "get") {
    const auto watch = query.get("watch");
    info.verb = watch && isParseTrue(*watch) ? "watch" : "list";
    if (const auto fieldSelector = query.get("fieldSelector")) {
      info.name = nameFromFieldSelector(*fieldSelector);
    }
  }
  if (info.name.empty() && info.verb == "delete") info.verb = "deletecollection";
  return info;
}

}  // namespace gpuscale::apiserver
