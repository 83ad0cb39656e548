// YamlFields: the keys of one YAML mapping, declared once and used two ways: parsing (each key's
// setter, unknown keys refused with their position, old spellings accepted with a warning) and the
// reference (every key's path, type, default and meaning), so a file format's documentation is
// drawn from the parser itself. The YAML counterpart of FlagSet (flag_set.h).
//
// A format declares its keys in one function bound to the value being parsed:
//
//   void declare(core::YamlFields& fields, Policy& p) {
//     fields.add("tolerance", "number", "the HPA controller's tolerance", [&p](const YAML::Node& v)
//     {
//       p.tolerance = core::yamlAs<double>(v, "tolerance");
//     }).defaultText("0.1");
//     fields.addMapping("cooldown", "waits between changes", [&p](core::YamlFields& cooldown)
//     {...});
//   }
//
// parse() runs it on a node; keys() runs it on a scratch value for the reference. Setters report
// bad values with yamlFail (yaml_input.h), as every parser of YAML input does.
//
// Thread safety: a YamlFields and the values its setters bind belong to one thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace gpuscale::core {

// What the reference says of one key.
struct YamlKeyInfo {
  std::string path;  // "anticipation.minSpan"
  std::string type;  // "duration", "string list", "mapping", ...
  std::string defaultText;
  std::string meaning;
  std::vector<std::string> deprecatedNames;  // accepted with a warning
};

class YamlFields;

// Says more about the key just declared (a handle; keep it no longer than the statement).
class YamlField {
 public:
  YamlField& defaultText(std::string text);
  // `old` is accepted with one warning: "KEY: old is deprecated, use new".
  YamlField& deprecatedName(std::string old);

 private:
  friend class YamlFields;
  YamlField(YamlFields* fields, size_t index) : fields_(fields), index_(index) {}
  YamlFields* fields_;
  size_t index_;
};

class YamlFields {
 public:
  using Setter = std::function<void(const YAML::Node& value)>;
  using Declare = std::function<void(YamlFields& fields)>;

  // `path` is the mapping's place in the document ("" at the top, "anticipation.leadTime" ...); it
  // prefixes the keys in errors, warnings and the reference. `name` names the top mapping in
  // errors ("policy"); nested mappings are named by their path.
  explicit YamlFields(std::string path, std::string name = "");

  YamlField add(std::string key, std::string type, std::string meaning, Setter set);
  // A nested mapping whose keys `declare` declares.
  YamlField addMapping(std::string key, std::string meaning, Declare declare);

  // Applies every key of `node` (a mapping, or yamlFail) in document order; an unknown key fails
  // with its position ("unexpected field \"KEY\" in PATH"). A deprecated spelling adds a warning to
  // `warnings` (when not null). Nested mappings are parsed the same way.
  void parse(const YAML::Node& node, std::vector<std::string>* warnings) const;

  // Every key in declaration order, each nested mapping's keys after it.
  std::vector<YamlKeyInfo> keys() const;

 private:
  friend class YamlField;
  struct Entry {
    YamlKeyInfo info;
    std::string key;
    Setter set;
    Declare declare;  // set for a nested mapping
  };
  std::string childPath(const std::string& key) const;

  std::string path_;
  std::string name_;
  std::vector<Entry> entries_;
};

// The keys as a markdown table (key, type, default, meaning), for generated references.
std::string yamlKeysMarkdown(const std::vector<YamlKeyInfo>& keys);

}  // namespace gpuscale::core
