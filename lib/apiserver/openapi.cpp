#include "gpuscale/apiserver/openapi.h"

#include <openssl/sha.h>
#include <nlohmann/json.hpp>

#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/apiserver/health.h"
#include "gpuscale/apiserver/metric_request.h"
#include "gpuscale/apiserver/url.h"

namespace gpuscale::apiserver {
namespace {

constexpr std::string_view kV2Path = "/openapi/v2";
constexpr std::string_view kV3Path = "/openapi/v3";

std::string sha512Hex(std::string_view data) {
  unsigned char digest[SHA512_DIGEST_LENGTH];
  SHA512(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(2 * sizeof digest);
  for (unsigned char byte : digest) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0xF]);
  }
  return out;
}

// True when an If-None-Match value lists `etag` (or is "*").
bool matchesEtag(std::string_view ifNoneMatch, std::string_view etag) {
  while (!ifNoneMatch.empty()) {
    const size_t comma = ifNoneMatch.find(',');
    std::string_view candidate = ifNoneMatch.substr(0, comma);
    while (!candidate.empty() && candidate.front() == ' ') candidate.remove_prefix(1);
    while (!candidate.empty() && candidate.back() == ' ') candidate.remove_suffix(1);
    if (candidate.starts_with("W/")) candidate.remove_prefix(2);
    if (candidate == "*" || candidate == etag) return true;
    ifNoneMatch = comma == std::string_view::npos ? "" : ifNoneMatch.substr(comma + 1);
  }
  return false;
}

}  // namespace

OpenApiDocuments::OpenApiDocuments(const std::vector<GroupVersion>& served) {
  auto add = [this](std::string path, std::string body) {
    std::string hash = sha512Hex(body);
    documents_[std::move(path)] = Document{std::move(body), std::move(hash)};
  };
  add(std::string(kV2Path), openApiV2Json(served));
  nlohmann::ordered_json root = {{"paths", nlohmann::ordered_json::object()}};
  for (const GroupVersion& gv : served) {
    const std::string key = "apis/" + gv.group + "/" + gv.version;
    const std::string path = std::string(kV3Path) + "/" + key;
    add(path, openApiV3Json(gv));
    root["paths"][key] = {{"serverRelativeURL", path + "?hash=" + documents_.at(path).hash}};
  }
  add(std::string(kV3Path), root.dump());
}

const std::string* OpenApiDocuments::body(const std::string& path) const {
  auto it = documents_.find(path);
  return it == documents_.end() ? nullptr : &it->second.body;
}

std::optional<HttpResponse> OpenApiDocuments::answer(const HttpRequest& request) const {
  const std::string& path = request.path;
  if (path != kV2Path && path != kV3Path && !path.starts_with(std::string(kV3Path) + "/")) {
    return std::nullopt;
  }
  auto it = documents_.find(path);
  if (it == documents_.end()) return plainTextResponse(404, "404 page not found");
  if (request.method != "GET") return statusResponse(methodNotAllowedStatus(), false);
  if (!acceptsPlainJson(request.header("Accept").value_or(""))) {
    return statusResponse(core::Status(406, "NotAcceptable",
                                       "only the following media types are accepted: "
                                       "application/json"),
                          false);
  }
  const Document& document = it->second;
  const std::string etag = "\"" + document.hash + "\"";
  HttpResponse response;
  response.headers.emplace_back("Etag", etag);
  const auto hash = QueryParams::parse(request.rawQuery).get("hash");
  if (hash && *hash == document.hash) {
    response.headers.emplace_back("Cache-Control", "public, immutable");
  } else {
    response.headers.emplace_back("Cache-Control", "no-cache, private");
  }
  if (matchesEtag(request.header("If-None-Match").value_or(""), etag)) {
    response.status = 304;
    return response;
  }
  response.contentType = "application/json";
  response.body = document.body;
  return response;
}

}  // namespace gpuscale::apiserver
