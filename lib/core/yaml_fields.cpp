#include "gpuscale/core/yaml_fields.h"

#include "gpuscale/core/yaml_input.h"

namespace gpuscale::core {
namespace {

std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

YamlField& YamlField::defaultText(std::string text) {
  fields_->entries_[index_].info.defaultText = std::move(text);
  return *this;
}

YamlField& YamlField::deprecatedName(std::string old) {
  fields_->entries_[index_].info.deprecatedNames.push_back(std::move(old));
  return *this;
}

YamlFields::YamlFields(std::string path, std::string name)
    : path_(std::move(path)), name_(std::move(name)) {}

std::string YamlFields::childPath(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

YamlField YamlFields::add(std::string key, std::string type, std::string meaning, Setter set) {
  Entry entry;
  entry.info.path = childPath(key);
  entry.info.type = std::move(type);
  entry.info.meaning = std::move(meaning);
  entry.key = std::move(key);
  entry.set = std::move(set);
  entries_.push_back(std::move(entry));
  return YamlField(this, entries_.size() - 1);
}

YamlField YamlFields::addMapping(std::string key, std::string meaning, Declare declare) {
  YamlField field = add(std::move(key), "mapping", std::move(meaning), nullptr);
  entries_.back().declare = std::move(declare);
  return field;
}

void YamlFields::parse(const YAML::Node& node, std::vector<std::string>* warnings) const {
  const std::string what = path_.empty() ? name_ : path_;
  if (!node.IsMap()) yamlFail(node, what + " must be a mapping");
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>();
    const Entry* found = nullptr;
    bool deprecated = false;
    for (const Entry& entry : entries_) {
      if (entry.key == key) {
        found = &entry;
        break;
      }
      for (const std::string& old : entry.info.deprecatedNames) {
        if (old == key) {
          found = &entry;
          deprecated = true;
        }
      }
      if (found != nullptr) break;
    }
    if (found == nullptr) yamlFail(kv.first, "unexpected field \"" + key + "\" in " + what);
    if (deprecated && warnings != nullptr) {
      warnings->push_back(yamlPosition(kv.first) + childPath(key) + " is deprecated, use " +
                          found->info.path);
    }
    if (found->declare) {
      YamlFields nested(found->info.path);
      found->declare(nested);
      nested.parse(kv.second, warnings);
    } else {
      found->set(kv.second);
    }
  }
}

std::vector<YamlKeyInfo> YamlFields::keys() const {
  std::vector<YamlKeyInfo> out;
  for (const Entry& entry : entries_) {
    out.push_back(entry.info);
    if (entry.declare) {
      YamlFields nested(entry.info.path);
      entry.declare(nested);
      for (YamlKeyInfo& info : nested.keys()) out.push_back(std::move(info));
    }
  }
  return out;
}

std::string yamlKeysMarkdown(const std::vector<YamlKeyInfo>& keys) {
  std::string out = "| key | type | default | meaning |\n|---|---|---|---|\n";
  for (const YamlKeyInfo& key : keys) {
    std::string meaning = key.meaning;
    const std::string parent = key.path.substr(0, key.path.rfind('.') + 1);
    for (const std::string& old : key.deprecatedNames) {
      meaning += " (deprecated name: `" + parent + old + "`)";
    }
    out += "| `" + key.path + "` | " + key.type + " | " +
           (key.defaultText.empty() ? "" : "`" + cell(key.defaultText) + "`") + " | " +
           cell(meaning) + " |\n";
  }
  return out;
}

}  // namespace gpuscale::core
