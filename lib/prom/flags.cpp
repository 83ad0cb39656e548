#include "gpuscale/prom/options.h"

#include <charconv>

#include "gpuscale/core/files.h"
#include "gpuscale/core/flag_args.h"

namespace gpuscale::prom {
namespace {

Status badFlag(std::string_view name, std::string_view value, std::string_view why) {
  return Status::badRequest("invalid value \"" + std::string(value) + "\" for flag --" +
                            std::string(name) + ": " + std::string(why));
}

Result<bool> parseBool(std::string_view name, std::string_view value) {
  if (value.empty() || value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return badFlag(name, value, "want true or false");
}

Result<core::Duration> parseNonNegativeDuration(std::string_view name, std::string_view value) {
  auto d = core::parseGoDuration(value);
  if (!d) return badFlag(name, value, d.status().message());
  if (*d < core::Duration::zero()) return badFlag(name, value, "must not be negative");
  return *d;
}

// "Name=Value" (prometheus-adapter) or "Name: Value"; the name ends at the first '=' or ':'.
Result<std::pair<std::string, std::string>> parseHeader(std::string_view value) {
  auto split = value.find_first_of("=:");
  std::string_view name = core::trimSpace(value.substr(0, split));
  if (split == std::string_view::npos || name.empty()) {
    return badFlag("prometheus-header", value, "want Name=Value or \"Name: Value\"");
  }
  for (char c : name) {
    if (c <= 0x20 || c >= 0x7f ||
        std::string_view("()<>@,;:\\\"/[]?={}").find(c) != std::string_view::npos) {
      return badFlag("prometheus-header", value, "header name has an invalid character");
    }
  }
  std::string_view content = core::trimSpace(value.substr(split + 1));
  for (char c : content) {
    if (c == '\r' || c == '\n' || c == '\0') {
      return badFlag("prometheus-header", value, "header value has a line break");
    }
  }
  return std::pair{std::string(name), std::string(content)};
}

}  // namespace

bool isPrometheusBoolFlag(std::string_view name) {
  return name == "prometheus-auth-incluster" || name == "prometheus-insecure-skip-tls-verify";
}

Result<bool> applyPrometheusFlag(PrometheusOptions& options, std::string_view name,
                                 std::string_view value) {
  std::string text(value);
  if (name == "prometheus-url") {
    options.url = text;
  } else if (name == "prometheus-verb") {
    if (value == "GET") {
      options.verb = HttpVerb::kGet;
    } else if (value == "POST") {
      options.verb = HttpVerb::kPost;
    } else {
      return badFlag(name, value, "want GET or POST");
    }
  } else if (name == "prometheus-timeout" || name == "metrics-cache-ttl") {
    auto d = parseNonNegativeDuration(name, value);
    if (!d) return d.status();
    (name == "metrics-cache-ttl" ? options.cacheTtl : options.timeout) = *d;
  } else if (name == "metrics-cache-max-bytes") {
    size_t bytes = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), bytes);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
      return badFlag(name, value, "want a number of bytes (0 keeps no results)");
    }
    options.cacheMaxBytes = bytes;
  } else if (name == "prometheus-auth-config") {
    options.authConfigFile = text;
  } else if (name == "prometheus-auth-incluster") {
    auto b = parseBool(name, value);
    if (!b) return b.status();
    options.authInCluster = *b;
  } else if (name == "prometheus-insecure-skip-tls-verify") {
    auto b = parseBool(name, value);
    if (!b) return b.status();
    options.insecureSkipTlsVerify = *b;
  } else if (name == "prometheus-token-file") {
    options.tokenFile = text;
  } else if (name == "prometheus-ca-file") {
    options.caFile = text;
  } else if (name == "prometheus-client-tls-cert-file" || name == "prometheus-client-cert") {
    options.clientCertFile = text;
  } else if (name == "prometheus-client-tls-key-file" || name == "prometheus-client-key") {
    options.clientKeyFile = text;
  } else if (name == "prometheus-sigv4-region") {
    options.sigv4Region = text;
  } else if (name == "prometheus-sigv4-service") {
    if (value.empty()) return badFlag(name, value, "want an AWS service name (aps)");
    options.sigv4Service = text;
  } else if (name == "prometheus-header") {
    auto header = parseHeader(value);
    if (!header) return header.status();
    options.headers.push_back(std::move(*header));
  } else if (name == "prometheus-max-body-bytes" || name == "prometheus-max-series-body-bytes") {
    size_t bytes = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), bytes);
    if (ec != std::errc() || end != value.data() + value.size() || bytes == 0) {
      return badFlag(name, value, "want a positive number of bytes");
    }
    (name == "prometheus-max-body-bytes" ? options.maxBodyBytes : options.maxSeriesBodyBytes) =
        bytes;
  } else {
    return false;
  }
  return true;
}

Result<PrometheusOptions> parsePrometheusFlags(const std::vector<std::string>& args,
                                               std::vector<std::string>* rest) {
  PrometheusOptions options;
  core::FlagCallbacks flags;
  flags.apply = [&](std::string_view name, std::string_view value) {
    return applyPrometheusFlag(options, name, value);
  };
  flags.isBoolean = isPrometheusBoolFlag;
  auto remaining = core::applyFlags(args, flags);
  if (!remaining) return remaining.status();
  if (rest) *rest = std::move(*remaining);
  return options;
}

}  // namespace gpuscale::prom
