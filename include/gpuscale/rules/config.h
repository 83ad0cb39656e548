// The rule file schema: what an operator writes in a prometheus-adapter compatible `--config` file.
//
// These are plain parsed values, before any validation that needs regex compilation, template
// parsing or a resource table (that happens in namer.h: compileRules). Every field remembers where
// it came from (line/column in the file) so that later errors, warnings and the discovery "explain"
// output can point at the exact place. A field that was absent from the file has `present == false`
// and a default value.
//
// Thread safety: plain value types.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuscale::rules {

// A 1-based position in the rule file. line == 0 means "unknown" (for example a built-in default).
struct SourcePos {
  int line = 0;
  int column = 0;
};

// A value together with where it was written.
template <typename T>
struct Located {
  T value{};
  SourcePos pos;
  bool present = false;
};

// One `seriesFilters` entry: exactly one of `is` / `isNot` must be set (checked when compiling).
struct RegexFilter {
  Located<std::string> is;
  Located<std::string> isNot;
  SourcePos pos;
};

// `{group: ..., resource: ...}` as written in an override (not yet normalised).
struct GroupResourceRef {
  Located<std::string> group;
  Located<std::string> resource;
};

// One `overrides` entry: Prometheus label → group-resource. `pos` is the position of the label key.
struct ResourceOverride {
  std::string label;
  SourcePos pos;
  GroupResourceRef target;
};

// `resources:`. Overrides keep the file order.
struct ResourceMapping {
  Located<std::string> labelTemplate;  // `template`
  std::vector<ResourceOverride> overrides;
  Located<bool> namespaced{true, {}, false};  // only meaningful for externalRules; default true
  SourcePos pos;
};

// `name:`.
struct NameMapping {
  Located<std::string> matches;  // default ".*" when empty
  Located<std::string> as;       // default "$0" / "$1" when empty
  SourcePos pos;
};

// One entry of `rules` or `externalRules`.
struct DiscoveryRule {
  std::string path;  // "rules[3]" or "externalRules[0]": used in every message about this rule
  SourcePos pos;
  Located<std::string> seriesQuery;
  std::vector<RegexFilter> seriesFilters;
  ResourceMapping resources;
  NameMapping name;
  Located<std::string> metricsQuery;
  Located<std::string> backend;  // gpuscale: the `backends` entry it queries ("" = `default`)
};

// `resourceRules.cpu` / `resourceRules.memory`.
struct ResourceRule {
  std::string path;  // "resourceRules.cpu"
  SourcePos pos;
  Located<std::string> containerQuery;
  Located<std::string> nodeQuery;
  ResourceMapping resources;
  Located<std::string> containerLabel;
};

// `resourceRules:` (its presence alone enables metrics.k8s.io).
struct ResourceRules {
  SourcePos pos;
  ResourceRule cpu;
  ResourceRule memory;
  Located<std::string> window;  // Prometheus duration, e.g. "5m"
};

// One `backends` entry (gpuscale, not prometheus-adapter): a Prometheus-compatible server that
// rules may name with `backend:`. Credentials are never inherited from the command line's default
// backend; timeout and verb are, when absent.
struct BackendConfig {
  std::string path;  // "backends[1]"
  SourcePos pos;
  Located<std::string> name;
  Located<std::string> url;
  std::vector<std::pair<Located<std::string>, Located<std::string>>> headers;  // in file order
  Located<std::string> bearerTokenFile;
  Located<std::string> caFile;
  Located<std::string> clientCertFile;
  Located<std::string> clientKeyFile;
  Located<bool> insecureSkipTLSVerify;
  Located<std::string> timeout;  // Go duration
  Located<std::string> verb;     // GET or POST
};

// The whole file.
struct RuleConfig {
  std::string file;    // the name used in messages ("FILE:LINE:COL: ...")
  std::string source;  // the file's text (lets messages point inside a template or regex)
  std::vector<DiscoveryRule> rules;
  std::vector<DiscoveryRule> externalRules;
  std::optional<ResourceRules> resourceRules;
  std::vector<BackendConfig> backends;
};

// A positioned message about a rule file (an error or a warning).
struct Diagnostic {
  SourcePos pos;
  std::string path;     // "rules[3].name.as" (may be empty for file-level messages)
  std::string message;  // without location

  // "FILE:LINE:COL: PATH: MESSAGE" (LINE:COL omitted when unknown, PATH omitted when empty).
  std::string format(const std::string& file) const;
};

}  // namespace gpuscale::rules
