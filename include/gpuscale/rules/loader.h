// Strict loading of rule files (prometheus-adapter's `--config` format, see config.h) with
// yaml-cpp. gpuscale adds two optional fields prometheus-adapter files do not have: a top-level
// `backends` list (config.h: BackendConfig) and a rule's `backend`.
//
// Strict like prometheus-adapter's yaml.v2 UnmarshalStrict: unknown keys and duplicate keys are
// errors (yaml-cpp silently keeps one of two duplicate keys, so duplicates are detected here), as
// are values of the wrong type (a mapping where a string belongs, a non-boolean `namespaced`). In
// addition, an empty file (or one holding no rules at all) is an error, because an adapter started
// on it would serve nothing. Only the structure is checked here; regexes, templates and resources
// are checked by compileRules().
//
// Every error is a Status::invalid whose message is `FILE:LINE:COL: PATH: message`, e.g.
//   rules.yaml:7:14: rules[3].name.matches: unknown field "match" (expected matches, as)
// Malformed YAML reports yaml-cpp's position. No input makes these functions crash or throw.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "gpuscale/core/result.h"
#include "gpuscale/rules/config.h"

namespace gpuscale::rules {

// Parses rule-file text; `fileName` is what messages call the file.
core::Result<RuleConfig> parseRuleConfig(std::string_view text, std::string_view fileName);

// Reads and parses a file. An unreadable file is a Status::invalid naming it and the OS error.
core::Result<RuleConfig> loadRuleConfigFile(const std::string& path);

}  // namespace gpuscale::rules
