#include "gpuscale/rules/backend.h"

#include <fmt/format.h>

#include <set>

#include "gpuscale/core/duration.h"
#include "gpuscale/core/label_selector.h"

namespace gpuscale::rules {
namespace {

bool isHttpUrl(std::string_view url) {
  auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return false;
  std::string_view name = url.substr(0, scheme);
  return (name == "http" || name == "https") && url.size() > scheme + 3 && url[scheme + 3] != '/';
}

// Where a field's message points: the value when it was written, else the backend entry.
SourcePos where(const Located<std::string>& field, const BackendConfig& backend) {
  return field.present && field.pos.line > 0 ? field.pos : backend.pos;
}

}  // namespace

core::Status compileBackends(const RuleConfig& config, std::vector<BackendSpec>& out) {
  std::set<std::string, std::less<>> names;
  for (const BackendConfig& b : config.backends) {
    auto error = [&](const Located<std::string>& field, std::string_view key, std::string message) {
      return core::Status::invalid(
          Diagnostic{where(field, b), b.path + "." + std::string(key), std::move(message)}.format(
              config.file));
    };
    BackendSpec spec;
    spec.path = b.path;
    spec.pos = b.pos;
    spec.name = b.name.value;
    if (!core::isDns1123Label(spec.name)) {
      return error(b.name, "name",
                   fmt::format("backend name {:?} must be a DNS label (lower-case letters, digits "
                               "and '-')",
                               spec.name));
    }
    if (spec.name == kDefaultBackend) {
      return error(b.name, "name",
                   "the name \"default\" is reserved for the backend the --prometheus-* flags "
                   "describe");
    }
    if (!names.insert(spec.name).second) {
      return error(b.name, "name", fmt::format("backend {:?} is declared twice", spec.name));
    }
    spec.url = b.url.value;
    if (!isHttpUrl(spec.url)) {
      return error(b.url, "url",
                   fmt::format("invalid url {:?}: want http(s)://host[:port][/prefix]", spec.url));
    }
    for (const auto& [name, value] : b.headers) spec.headers.emplace_back(name.value, value.value);
    spec.bearerTokenFile = b.bearerTokenFile.value;
    spec.caFile = b.caFile.value;
    spec.clientCertFile = b.clientCertFile.value;
    spec.clientKeyFile = b.clientKeyFile.value;
    if (spec.clientCertFile.empty() != spec.clientKeyFile.empty()) {
      const bool certMissing = spec.clientCertFile.empty();
      return error(certMissing ? b.clientKeyFile : b.clientCertFile,
                   certMissing ? "clientKeyFile" : "clientCertFile",
                   "clientCertFile and clientKeyFile go together");
    }
    spec.insecureSkipTlsVerify = b.insecureSkipTLSVerify.value;
    if (!b.timeout.value.empty()) {
      auto timeout = core::parseGoDuration(b.timeout.value);
      if (!timeout || *timeout <= core::Duration::zero()) {
        return error(b.timeout, "timeout",
                     fmt::format("invalid timeout {:?}: want a positive Go duration such as "
                                 "\"10s\"",
                                 b.timeout.value));
      }
      spec.timeout = *timeout;
    }
    if (!b.verb.value.empty()) {
      if (b.verb.value != "GET" && b.verb.value != "POST") {
        return error(b.verb, "verb",
                     fmt::format("invalid verb {:?}: want GET or POST", b.verb.value));
      }
      spec.post = b.verb.value == "POST";
    }
    out.push_back(std::move(spec));
  }
  return core::Status();
}

}  // namespace gpuscale::rules
