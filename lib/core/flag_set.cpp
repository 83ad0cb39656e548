#include "gpuscale/core/flag_set.h"

#include <fmt/format.h>

#include <charconv>

namespace gpuscale::core {
namespace {

// A FlagInfo with what every declaration gives (aggregate initialization would have to name every
// member).
FlagInfo flagInfo(std::string name, std::string type, std::string usage) {
  FlagInfo info;
  info.name = std::move(name);
  info.type = std::move(type);
  info.usage = std::move(usage);
  return info;
}

constexpr size_t kDetached = static_cast<size_t>(-1);

std::string underscored(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

}  // namespace

std::vector<std::string> splitCommaList(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    if (std::string_view item = trimmed(text.substr(0, comma)); !item.empty()) {
      out.emplace_back(item);
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

}  // namespace

Flag& Flag::alias(std::string name) {
  if (index_ == kDetached) return *this;
  set_->index(name, index_);
  set_->entries_[index_].info.aliases.push_back(std::move(name));
  return *this;
}

Flag& Flag::deprecatedName(std::string oldName) {
  if (index_ == kDetached) return *this;
  set_->index(oldName, index_);
  set_->deprecated_.insert(oldName);
  set_->entries_[index_].info.deprecatedNames.push_back(std::move(oldName));
  return *this;
}

Flag& Flag::shorthand(char letter) {
  if (index_ == kDetached) return *this;
  if (!set_->shorthands_.emplace(letter, index_).second) {
    set_->problems_.push_back(fmt::format("shorthand -{} declared twice", letter));
  }
  set_->entries_[index_].info.shorthand = letter;
  return *this;
}

Flag& Flag::defaultText(std::string text) {
  if (index_ != kDetached) set_->entries_[index_].info.defaultText = std::move(text);
  return *this;
}

Flag& Flag::repeatable() {
  if (index_ != kDetached) set_->entries_[index_].info.repeatable = true;
  return *this;
}

Flag& Flag::acceptUnderscores() {
  if (index_ == kDetached) return *this;
  FlagInfo& info = set_->entries_[index_].info;
  info.underscores = true;
  if (std::string other = underscored(info.name); other != info.name) set_->index(other, index_);
  return *this;
}

FlagSet::FlagSet(std::string command, std::string synopsis, std::string description)
    : command_(std::move(command)),
      synopsis_(std::move(synopsis)),
      description_(std::move(description)) {}

void FlagSet::section(std::string title, std::string note) {
  sections_.push_back({std::move(title), std::move(note)});
}

void FlagSet::index(const std::string& name, size_t entry) {
  if (!names_.emplace(name, entry).second) {
    problems_.push_back("flag --" + name + " declared twice");
  }
}

Flag FlagSet::declare(FlagInfo info, Setter set) {
  info.section = sections_.empty() ? "" : sections_.back().title;
  if (auto it = names_.find(info.name); it != names_.end() && !info.prefix) {
    // A second group reading the same flag: one flag, both values set.
    Entry& first = entries_[it->second];
    if (first.info.type != info.type || first.info.boolean != info.boolean || !set ||
        first.setters.empty()) {
      problems_.push_back("flag --" + info.name + " declared twice with different types");
    } else {
      first.setters.push_back(std::move(set));
    }
    return Flag(this, kDetached);
  }
  const size_t at = entries_.size();
  const std::string name = info.name;
  Entry entry;
  entry.info = std::move(info);
  if (set) entry.setters.push_back(std::move(set));
  entries_.push_back(std::move(entry));
  if (!entries_.back().info.prefix) index(name, at);
  return Flag(this, at);
}

Flag FlagSet::addString(std::string name, std::string* target, std::string usage) {
  FlagInfo info = flagInfo(std::move(name), "string", std::move(usage));
  info.defaultText = *target;
  return declare(std::move(info), [target](std::string_view value) {
    *target = std::string(value);
    return Status();
  });
}

Flag FlagSet::addNonEmptyString(std::string name, std::string* target, std::string usage) {
  FlagInfo info = flagInfo(std::move(name), "string", std::move(usage));
  info.defaultText = *target;
  return declare(std::move(info), [target](std::string_view value) {
    if (value.empty()) return Status::badRequest("must not be empty");
    *target = std::string(value);
    return Status();
  });
}

Flag FlagSet::addBool(std::string name, bool* target, std::string usage) {
  FlagInfo info = flagInfo(std::move(name), "", std::move(usage));
  info.boolean = true;
  info.defaultText = *target ? "true" : "";
  return declare(std::move(info), [target](std::string_view value) {
    auto parsed = parseBool(value);
    if (!parsed) return parsed.status();
    *target = *parsed;
    return Status();
  });
}

Flag FlagSet::addOptionalBool(std::string name, std::optional<bool>* target, std::string usage) {
  FlagInfo info = flagInfo(std::move(name), "", std::move(usage));
  info.boolean = true;
  if (target->has_value()) info.defaultText = **target ? "true" : "false";
  return declare(std::move(info), [target](std::string_view value) {
    auto parsed = parseBool(value);
    if (!parsed) return parsed.status();
    *target = *parsed;
    return Status();
  });
}

Flag FlagSet::addDurationNanos(std::string name, std::string usage, Duration current,
                               DurationBound bound, std::function<void(Duration)> store) {
  FlagInfo info = flagInfo(std::move(name), "duration", std::move(usage));
  if (current != Duration::zero()) info.defaultText = formatGoDuration(current);
  return declare(std::move(info), [bound, store = std::move(store)](std::string_view value) {
    auto parsed = parseGoDuration(value);
    if (!parsed) return Status::badRequest(parsed.status().message());
    if (*parsed < Duration::zero()) return Status::badRequest("must not be negative");
    if (bound == DurationBound::kPositive && *parsed == Duration::zero()) {
      return Status::badRequest("must be positive");
    }
    store(*parsed);
    return Status();
  });
}

Flag FlagSet::addInteger(std::string name, std::string usage, std::string current, int64_t min,
                         int64_t max, bool saysMax, std::function<void(int64_t)> store) {
  FlagInfo info = flagInfo(std::move(name), "int", std::move(usage));
  if (current != "0") info.defaultText = std::move(current);
  return declare(std::move(info), [min, max, saysMax,
                                   store = std::move(store)](std::string_view value) {
    int64_t number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (value.empty() || error != std::errc() || end != value.data() + value.size() ||
        number < min || number > max) {
      return Status::badRequest(saysMax ? fmt::format("must be an integer from {} to {}", min, max)
                                        : fmt::format("must be an integer of at least {}", min));
    }
    store(number);
    return Status();
  });
}

Flag FlagSet::addFloat(std::string name, double* target, std::string usage, double min) {
  FlagInfo info = flagInfo(std::move(name), "float", std::move(usage));
  if (*target != 0) info.defaultText = fmt::format("{}", *target);
  return declare(std::move(info), [target, min](std::string_view value) {
    double number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (value.empty() || error != std::errc() || end != value.data() + value.size() ||
        !(number >= min)) {
      return Status::badRequest(fmt::format("must be a number of at least {}", min));
    }
    *target = number;
    return Status();
  });
}

Flag FlagSet::addStringList(std::string name, std::vector<std::string>* target, std::string usage,
                            ListForm form) {
  FlagInfo info = flagInfo(std::move(name), "strings", std::move(usage));
  info.defaultText = joined(*target);
  info.repeatable = form == ListForm::kRepeated;
  if (form == ListForm::kRepeated) info.type = "string";
  return declare(std::move(info), [target, form](std::string_view value) {
    if (form == ListForm::kCommaSeparated) {
      *target = splitCommaList(value);
    } else if (!value.empty()) {
      target->emplace_back(value);
    }
    return Status();
  });
}

Flag FlagSet::addCustom(std::string name, std::string type, std::string usage, Setter set,
                        bool boolean) {
  FlagInfo info = flagInfo(std::move(name), boolean ? "" : std::move(type), "");
  info.usage = std::move(usage);
  info.boolean = boolean;
  return declare(std::move(info), std::move(set));
}

Flag FlagSet::addIgnored(std::string name, bool boolean, std::string why) {
  FlagInfo info = flagInfo(std::move(name), boolean ? "" : "string", "");
  info.ignoredBecause = std::move(why);
  info.boolean = boolean;
  return declare(std::move(info), nullptr);
}

Flag FlagSet::addIgnoredPrefix(std::string prefix, std::function<bool(std::string_view)> isBoolean,
                               std::string why) {
  FlagInfo info = flagInfo(std::move(prefix), "string", "");
  info.ignoredBecause = std::move(why);
  info.prefix = true;
  Flag flag = declare(std::move(info), nullptr);
  entries_[flag.index_].prefixIsBoolean = std::move(isBoolean);
  return flag;
}

const FlagSet::Entry* FlagSet::find(std::string_view name, size_t* at, bool* deprecated) const {
  *deprecated = deprecated_.contains(name);
  if (auto it = names_.find(name); it != names_.end()) {
    *at = it->second;
    return &entries_[*at];
  }
  for (size_t i = 0; i < entries_.size(); ++i) {
    const FlagInfo& info = entries_[i].info;
    if (info.prefix && (name.starts_with(info.name) || name.starts_with(underscored(info.name)))) {
      *at = i;
      return &entries_[i];
    }
  }
  return nullptr;
}

Status FlagSet::apply(size_t at, const std::string& spelling, std::string_view value,
                      bool deprecated) {
  const Entry& entry = entries_[at];
  changed_.insert(at);
  if (deprecated && warned_.insert("deprecated " + spelling).second) {
    warnings_.push_back("flag " + spelling + " is deprecated, use --" + entry.info.name);
  }
  if (!entry.info.ignoredBecause.empty()) {
    // One warning per flag, however often and in whichever spelling it is given.
    std::string key = entry.info.prefix ? spelling : entry.info.name;
    std::replace(key.begin(), key.end(), '_', '-');
    if (warned_.insert("ignored " + key).second) {
      warnings_.push_back("flag " + spelling + " is ignored (" + entry.info.ignoredBecause + ")");
    }
    return {};
  }
  for (const Setter& set : entry.setters) {
    if (Status status = set(value); !status.ok()) {
      return Status::badRequest(fmt::format("invalid argument \"{}\" for \"{}\" flag: {}", value,
                                            spelling, status.message()));
    }
  }
  return {};
}

Result<std::vector<std::string>> FlagSet::parse(const std::vector<std::string>& args) {
  if (!problems_.empty()) {
    return Status::internal("flag declarations of " + command_ + ": " + joined(problems_));
  }
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + static_cast<ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    const bool isLong = arg[1] == '-';
    const std::string_view body = std::string_view(arg).substr(isLong ? 2 : 1);
    const size_t eq = body.find('=');
    const std::string name(body.substr(0, eq));
    const std::string spelling = (isLong ? "--" : "-") + name;
    size_t at = 0;
    bool deprecated = false;
    const Entry* entry = nullptr;
    if (isLong) {
      entry = find(name, &at, &deprecated);
      if (entry == nullptr) return Status::badRequest("unknown flag: " + spelling);
    } else {
      auto it = name.size() == 1 ? shorthands_.find(name[0]) : shorthands_.end();
      if (it == shorthands_.end()) {
        return Status::badRequest(
            fmt::format("unknown shorthand flag: '{}' in {}", name.substr(0, 1), arg));
      }
      at = it->second;
      entry = &entries_[at];
    }
    const bool boolean = entry->info.prefix ? entry->prefixIsBoolean(name) : entry->info.boolean;
    std::string value;
    if (eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
    } else if (boolean) {
      value = "true";
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return Status::badRequest("flag needs an argument: " + spelling);
    }
    if (Status applied = apply(at, spelling, value, deprecated); !applied.ok()) return applied;
  }
  return positional;
}

bool FlagSet::changed(std::string_view name) const {
  auto it = names_.find(name);
  return it != names_.end() && changed_.contains(it->second);
}

std::vector<FlagInfo> FlagSet::flags() const {
  std::vector<FlagInfo> out;
  out.reserve(entries_.size());
  for (const Entry& entry : entries_) out.push_back(entry.info);
  return out;
}

Result<bool> FlagSet::parseBool(std::string_view text) {
  for (std::string_view yes : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (text == yes) return true;
  }
  for (std::string_view no : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (text == no) return false;
  }
  return Status::badRequest("must be true or false");
}

bool asksForHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") return false;
    if (arg == "-h" || arg == "--help" || arg == "--help=true") return true;
  }
  return false;
}

}  // namespace gpuscale::core
