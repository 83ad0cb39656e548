// Backends: the Prometheus-compatible servers (Prometheus, Thanos, Mimir, VictoriaMetrics...) a
// rule file declares in its top-level `backends` list, validated.
//
// The command line's `--prometheus-*` flags define the backend named `default`, used by every rule
// without `backend:`; the name is reserved. compileBackends() checks, each reported as
// `FILE:LINE:COL: backends[i].FIELD: message`:
//   - a name that is missing, not a DNS label (lower-case letters, digits, '-'), `default`, or
//     used twice;
//   - a url that is not http(s)://host[:port][/prefix];
//   - a timeout that is not a positive Go duration; a verb other than GET or POST;
//   - a client certificate without its key or the other way round.
// Files (token, CA, certificate) are read when the adapter builds the client, not here.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscale/core/status.h"
#include "gpuscale/rules/config.h"

namespace gpuscale::rules {

// The backend of rules that name none: the one the command-line flags describe.
inline constexpr std::string_view kDefaultBackend = "default";

struct BackendSpec {
  std::string name;
  std::string path;  // "backends[1]"
  SourcePos pos;
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string bearerTokenFile;
  std::string caFile;
  std::string clientCertFile;
  std::string clientKeyFile;
  bool insecureSkipTlsVerify = false;
  std::optional<std::chrono::nanoseconds> timeout;  // absent: the default backend's
  std::optional<bool> post;                         // absent: the default backend's verb
};

// Validates `config.backends` into `out` (file order). Errors are Status::invalid with a location.
core::Status compileBackends(const RuleConfig& config, std::vector<BackendSpec>& out);

}  // namespace gpuscale::rules
