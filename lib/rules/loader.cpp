#include "gpuscale/rules/loader.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <sstream>

#include "gpuscale/core/files.h"

namespace gpuscale::rules {
namespace {

SourcePos posOf(const YAML::Mark& mark) {
  if (mark.line < 0 || mark.column < 0) return {};
  return {mark.line + 1, mark.column + 1};
}

std::string_view typeName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a sequence";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Null:
      return "null";
    default:
      return "nothing";
  }
}

// Reads the YAML tree into RuleConfig, stopping at the first error.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  bool readTop(const YAML::Node& root, RuleConfig& config) {
    if (!root.IsMap()) {
      return fail(root, {}, "",
                  fmt::format("expected a mapping with rules, externalRules, resourceRules or "
                              "backends at the top level, got {}",
                              typeName(root)));
    }
    return forEachField(root, "", {"rules", "externalRules", "resourceRules", "backends"},
                        [&](const std::string& key, const YAML::Node& value, SourcePos keyPos) {
                          if (key == "resourceRules") {
                            config.resourceRules.emplace();
                            return readResourceRules(value, keyPos, *config.resourceRules);
                          }
                          if (key == "backends")
                            return readBackends(value, keyPos, config.backends);
                          return readRuleList(value, keyPos, key,
                                              key == "rules" ? config.rules : config.externalRules);
                        });
  }

  const Diagnostic& error() const { return error_; }

 private:
  using Handler = std::function<bool(const std::string&, const YAML::Node&, SourcePos)>;

  bool fail(const YAML::Node& node, SourcePos fallback, std::string path, std::string message) {
    SourcePos pos = posOf(node.Mark());
    if (pos.line == 0) pos = fallback;
    error_ = {pos, std::move(path), std::move(message)};
    return false;
  }

  static std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }

  // Visits each key of a mapping: keys must be unique scalars and among `known`.
  bool forEachField(const YAML::Node& map, const std::string& path,
                    std::initializer_list<std::string_view> known, const Handler& handler) {
    std::map<std::string, SourcePos> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      // Copies, not references: the iterator hands out a temporary pair of node handles.
      const YAML::Node keyNode = it->first;
      const YAML::Node valueNode = it->second;
      SourcePos keyPos = posOf(keyNode.Mark());
      if (!keyNode.IsScalar()) {
        return fail(keyNode, {}, path,
                    fmt::format("expected a string key, got {}", typeName(keyNode)));
      }
      const std::string key = keyNode.Scalar();
      auto [previous, inserted] = seen.emplace(key, keyPos);
      if (!inserted) {
        return fail(keyNode, {}, path,
                    fmt::format("duplicate key {:?} (first at line {}, column {})", key,
                                previous->second.line, previous->second.column));
      }
      bool isKnown = known.size() == 0;
      for (std::string_view k : known) isKnown = isKnown || k == key;
      if (!isKnown) {
        std::string expected;
        for (std::string_view k : known)
          expected += (expected.empty() ? "" : ", ") + std::string(k);
        return fail(keyNode, {}, path,
                    fmt::format("unknown field {:?} (expected {})", key, expected));
      }
      if (!handler(key, valueNode, keyPos)) return false;
    }
    return true;
  }

  bool expectMap(const YAML::Node& node, SourcePos keyPos, const std::string& path, bool& isNull) {
    isNull = node.IsNull();
    if (node.IsMap() || isNull) return true;
    return fail(node, keyPos, path, fmt::format("expected a mapping, got {}", typeName(node)));
  }

  bool readString(const YAML::Node& node, SourcePos keyPos, const std::string& path,
                  Located<std::string>& out) {
    out.present = true;
    out.pos = posOf(node.Mark());
    if (out.pos.line == 0) out.pos = keyPos;
    if (node.IsNull()) return true;
    if (!node.IsScalar()) {
      return fail(node, keyPos, path, fmt::format("expected a string, got {}", typeName(node)));
    }
    out.value = node.Scalar();
    return true;
  }

  bool readBool(const YAML::Node& node, SourcePos keyPos, const std::string& path,
                Located<bool>& out) {
    out.present = true;
    out.pos = posOf(node.Mark());
    if (out.pos.line == 0) out.pos = keyPos;
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
      return fail(node, keyPos, path,
                  fmt::format("expected true or false, got {}",
                              node.IsScalar() ? fmt::format("{:?}", node.Scalar())
                                              : std::string(typeName(node))));
    }
    out.value = value;
    return true;
  }

  bool readRuleList(const YAML::Node& node, SourcePos keyPos, const std::string& key,
                    std::vector<DiscoveryRule>& out) {
    if (node.IsNull()) return true;
    if (!node.IsSequence()) {
      return fail(node, keyPos, key,
                  fmt::format("expected a list of rules, got {}", typeName(node)));
    }
    for (size_t i = 0; i < node.size(); ++i) {
      DiscoveryRule rule;
      rule.path = fmt::format("{}[{}]", key, i);
      if (!readRule(node[i], keyPos, rule)) return false;
      out.push_back(std::move(rule));
    }
    return true;
  }

  bool readRule(const YAML::Node& node, SourcePos keyPos, DiscoveryRule& rule) {
    rule.pos = posOf(node.Mark());
    if (!node.IsMap()) {
      return fail(node, keyPos, rule.path,
                  fmt::format("expected a rule (a mapping), got {}", typeName(node)));
    }
    return forEachField(
        node, rule.path,
        {"seriesQuery", "seriesFilters", "resources", "name", "metricsQuery", "backend"},
        [&](const std::string& key, const YAML::Node& value, SourcePos pos) {
          const std::string path = join(rule.path, key);
          if (key == "backend") return readString(value, pos, path, rule.backend);
          if (key == "seriesQuery") return readString(value, pos, path, rule.seriesQuery);
          if (key == "metricsQuery") return readString(value, pos, path, rule.metricsQuery);
          if (key == "seriesFilters") return readFilters(value, pos, path, rule.seriesFilters);
          if (key == "resources") return readResources(value, pos, path, rule.resources);
          return readName(value, pos, path, rule.name);
        });
  }

  bool readBackends(const YAML::Node& node, SourcePos keyPos, std::vector<BackendConfig>& out) {
    if (node.IsNull()) return true;
    if (!node.IsSequence()) {
      return fail(node, keyPos, "backends",
                  fmt::format("expected a list of backends, got {}", typeName(node)));
    }
    for (size_t i = 0; i < node.size(); ++i) {
      BackendConfig backend;
      backend.path = fmt::format("backends[{}]", i);
      backend.pos = posOf(node[i].Mark());
      if (!node[i].IsMap()) {
        return fail(node[i], keyPos, backend.path,
                    fmt::format("expected a backend (a mapping), got {}", typeName(node[i])));
      }
      if (!readBackend(node[i], backend)) return false;
      out.push_back(std::move(backend));
    }
    return true;
  }

  bool readBackend(const YAML::Node& node, BackendConfig& b) {
    const std::map<std::string_view, Located<std::string>*> strings = {
        {"name", &b.name},
        {"url", &b.url},
        {"bearerTokenFile", &b.bearerTokenFile},
        {"caFile", &b.caFile},
        {"clientCertFile", &b.clientCertFile},
        {"clientKeyFile", &b.clientKeyFile},
        {"timeout", &b.timeout},
        {"verb", &b.verb}};
    return forEachField(
        node, b.path,
        {"name", "url", "headers", "bearerTokenFile", "caFile", "clientCertFile", "clientKeyFile",
         "insecureSkipTLSVerify", "timeout", "verb"},
        [&](const std::string& key, const YAML::Node& value, SourcePos pos) {
          const std::string path = join(b.path, key);
          if (key == "insecureSkipTLSVerify") {
            return readBool(value, pos, path, b.insecureSkipTLSVerify);
          }
          if (key != "headers") return readString(value, pos, path, *strings.at(key));
          bool isNull = false;
          if (!expectMap(value, pos, path, isNull)) return false;
          if (isNull) return true;
          return forEachField(
              value, path, {},
              [&](const std::string& header, const YAML::Node& headerValue, SourcePos headerPos) {
                Located<std::string> name{header, headerPos, true};
                Located<std::string> text;
                if (!readString(headerValue, headerPos, join(path, header), text)) return false;
                b.headers.emplace_back(std::move(name), std::move(text));
                return true;
              });
        });
  }

  // A mapping of at most the two string fields `first` and `second` (null: neither).
  bool readStringPair(const YAML::Node& node, SourcePos keyPos, const std::string& path,
                      std::string_view first, Located<std::string>& firstOut,
                      std::string_view second, Located<std::string>& secondOut) {
    bool isNull = false;
    if (!expectMap(node, keyPos, path, isNull)) return false;
    if (isNull) return true;
    return forEachField(node, path, {first, second},
                        [&](const std::string& key, const YAML::Node& value, SourcePos pos) {
                          return readString(value, pos, join(path, key),
                                            key == first ? firstOut : secondOut);
                        });
  }

  bool readFilters(const YAML::Node& node, SourcePos keyPos, const std::string& path,
                   std::vector<RegexFilter>& out) {
    if (node.IsNull()) return true;
    if (!node.IsSequence()) {
      return fail(node, keyPos, path,
                  fmt::format("expected a list of filters, got {}", typeName(node)));
    }
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string itemPath = fmt::format("{}[{}]", path, i);
      RegexFilter filter;
      filter.pos = posOf(node[i].Mark());
      if (!readStringPair(node[i], keyPos, itemPath, "is", filter.is, "isNot", filter.isNot)) {
        return false;
      }
      out.push_back(std::move(filter));
    }
    return true;
  }

  bool readResources(const YAML::Node& node, SourcePos keyPos, const std::string& path,
                     ResourceMapping& out) {
    out.pos = posOf(node.Mark());
    bool isNull = false;
    if (!expectMap(node, keyPos, path, isNull)) return false;
    if (isNull) return true;
    return forEachField(node, path, {"template", "overrides", "namespaced"},
                        [&](const std::string& key, const YAML::Node& value, SourcePos pos) {
                          const std::string fieldPath = join(path, key);
                          if (key == "template")
                            return readString(value, pos, fieldPath, out.labelTemplate);
                          if (key == "namespaced")
                            return readBool(value, pos, fieldPath, out.namespaced);
                          return readOverrides(value, pos, fieldPath, out.overrides);
                        });
  }

  bool readOverrides(const YAML::Node& node, SourcePos keyPos, const std::string& path,
                     std::vector<ResourceOverride>& out) {
    bool isNull = false;
    if (!expectMap(node, keyPos, path, isNull)) return false;
    if (isNull) return true;
    return forEachField(node, path, {},
                        [&](const std::string& label, const YAML::Node& value, SourcePos pos) {
                          ResourceOverride override;
                          override.label = label;
                          override.pos = pos;
                          const std::string itemPath = fmt::format("{}.{}", path, label);
                          if (!readStringPair(value, pos, itemPath, "group", override.target.group,
                                              "resource", override.target.resource)) {
                            return false;
                          }
                          out.push_back(std::move(override));
                          return true;
                        });
  }

  bool readName(const YAML::Node& node, SourcePos keyPos, const std::string& path,
                NameMapping& out) {
    out.pos = posOf(node.Mark());
    return readStringPair(node, keyPos, path, "matches", out.matches, "as", out.as);
  }

  bool readResourceRules(const YAML::Node& node, SourcePos keyPos, ResourceRules& out) {
    out.pos = posOf(node.Mark());
    if (out.pos.line == 0) out.pos = keyPos;
    out.cpu.path = "resourceRules.cpu";
    out.memory.path = "resourceRules.memory";
    bool isNull = false;
    if (!expectMap(node, keyPos, "resourceRules", isNull)) return false;
    if (isNull) return true;
    return forEachField(node, "resourceRules", {"cpu", "memory", "window"},
                        [&](const std::string& key, const YAML::Node& value, SourcePos pos) {
                          if (key == "window")
                            return readString(value, pos, "resourceRules.window", out.window);
                          return readResourceRule(value, pos, key == "cpu" ? out.cpu : out.memory);
                        });
  }

  bool readResourceRule(const YAML::Node& node, SourcePos keyPos, ResourceRule& rule) {
    rule.pos = posOf(node.Mark());
    if (rule.pos.line == 0) rule.pos = keyPos;
    bool isNull = false;
    if (!expectMap(node, keyPos, rule.path, isNull)) return false;
    if (isNull) return true;
    return forEachField(node, rule.path,
                        {"containerQuery", "nodeQuery", "resources", "containerLabel"},
                        [&](const std::string& key, const YAML::Node& value, SourcePos pos) {
                          const std::string path = join(rule.path, key);
                          if (key == "containerQuery")
                            return readString(value, pos, path, rule.containerQuery);
                          if (key == "nodeQuery")
                            return readString(value, pos, path, rule.nodeQuery);
                          if (key == "containerLabel")
                            return readString(value, pos, path, rule.containerLabel);
                          return readResources(value, pos, path, rule.resources);
                        });
  }

  std::string file_;
  Diagnostic error_;
};

bool blank(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    if (line.compare(start, 3, "---") == 0 || line.compare(start, 3, "...") == 0) continue;
    return false;
  }
  return true;
}

}  // namespace

core::Result<RuleConfig> parseRuleConfig(std::string_view text, std::string_view fileName) {
  RuleConfig config;
  config.file = std::string(fileName);
  config.source = std::string(text);
  auto invalid = [&](SourcePos pos, std::string message) {
    return core::Status::invalid(Diagnostic{pos, "", std::move(message)}.format(config.file));
  };
  if (blank(text)) {
    return invalid({}, "the rule file is empty (expected rules, externalRules or resourceRules)");
  }
  Reader reader(config.file);
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (!reader.readTop(root, config)) {
      return core::Status::invalid(reader.error().format(config.file));
    }
  } catch (const YAML::Exception& e) {
    return invalid(posOf(e.mark), fmt::format("malformed YAML: {}", e.msg));
  } catch (const std::exception& e) {
    return invalid({}, fmt::format("unable to read YAML: {}", e.what()));
  }
  if (config.rules.empty() && config.externalRules.empty() && !config.resourceRules) {
    return invalid({1, 1}, "the rule file defines no rules, externalRules or resourceRules");
  }
  return config;
}

core::Result<RuleConfig> loadRuleConfigFile(const std::string& path) {
  errno = 0;
  auto content = core::readFile(path);
  if (!content) {
    return core::Status::invalid(
        errno != 0 ? fmt::format("{}: unable to read rule file: {}", path, std::strerror(errno))
                   : fmt::format("{}: unable to read rule file", path));
  }
  return parseRuleConfig(*content, path);
}

}  // namespace gpuscale::rules
