#include "gpuscale/rules/go_regexp.h"

#include <fmt/format.h>

namespace gpuscale::rules {
namespace {

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// Go's regexp `extract`: reads a reference after a '$'. On success `consumed` is its length after
// the '$'.
bool extractReference(std::string_view str, ExpandReference& ref, size_t& consumed) {
  if (str.empty()) return false;
  bool brace = false;
  size_t start = 0;
  if (str.front() == '{') {
    brace = true;
    start = 1;
  }
  size_t i = start;
  while (i < str.size() && isNameChar(str[i])) ++i;
  if (i == start) return false;
  ref.name = std::string(str.substr(start, i - start));
  if (brace) {
    if (i >= str.size() || str[i] != '}') return false;
    ++i;
  }
  ref.braced = brace;
  int num = 0;
  for (char c : ref.name) {
    if (c < '0' || c > '9' || num >= 100000000) {
      num = -1;
      break;
    }
    num = num * 10 + (c - '0');
  }
  if (ref.name.size() > 1 && ref.name.front() == '0') num = -1;
  ref.number = num;
  consumed = i;
  return true;
}

}  // namespace

core::Result<GoRegex> GoRegex::compile(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_encoding(RE2::Options::EncodingUTF8);
  options.set_posix_syntax(false);
  options.set_longest_match(false);
  auto re = std::make_shared<const RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    return core::Status::invalid(
        fmt::format("error parsing regexp {:?}: {}", std::string(pattern), re->error()));
  }
  GoRegex result;
  result.pattern_ = std::string(pattern);
  result.re_ = std::move(re);
  return result;
}

bool GoRegex::matches(std::string_view text) const {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

int GoRegex::captureGroups() const { return re_->NumberOfCapturingGroups(); }

int GoRegex::groupIndex(std::string_view name) const {
  const auto& groups = re_->NamedCapturingGroups();
  auto it = groups.find(std::string(name));
  return it == groups.end() ? -1 : it->second;
}

bool GoRegex::expand(std::string_view tmpl, std::string_view text, std::string& out) const {
  const int groups = captureGroups() + 1;
  std::vector<re2::StringPiece> match(static_cast<size_t>(groups));
  if (!re_->Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), RE2::UNANCHORED,
                  match.data(), groups)) {
    return false;
  }
  auto appendGroup = [&](int index) {
    if (index >= 0 && index < groups && match[static_cast<size_t>(index)].data() != nullptr) {
      out.append(match[static_cast<size_t>(index)].data(),
                 match[static_cast<size_t>(index)].size());
    }
  };
  while (!tmpl.empty()) {
    size_t dollar = tmpl.find('$');
    if (dollar == std::string_view::npos) break;
    out.append(tmpl.substr(0, dollar));
    tmpl.remove_prefix(dollar + 1);
    if (!tmpl.empty() && tmpl.front() == '$') {
      out.push_back('$');
      tmpl.remove_prefix(1);
      continue;
    }
    ExpandReference ref;
    size_t consumed = 0;
    if (!extractReference(tmpl, ref, consumed)) {
      out.push_back('$');
      continue;
    }
    tmpl.remove_prefix(consumed);
    appendGroup(ref.number >= 0 ? ref.number : groupIndex(ref.name));
  }
  out.append(tmpl);
  return true;
}

std::vector<ExpandReference> parseExpandReferences(std::string_view tmpl) {
  std::vector<ExpandReference> refs;
  size_t pos = 0;
  while (pos < tmpl.size()) {
    size_t dollar = tmpl.find('$', pos);
    if (dollar == std::string_view::npos) break;
    pos = dollar + 1;
    if (pos < tmpl.size() && tmpl[pos] == '$') {
      ++pos;
      continue;
    }
    ExpandReference ref;
    size_t consumed = 0;
    if (!extractReference(tmpl.substr(pos), ref, consumed)) continue;
    ref.offset = dollar;
    ref.text = std::string(tmpl.substr(dollar, consumed + 1));
    pos += consumed;
    refs.push_back(std::move(ref));
  }
  return refs;
}

}  // namespace gpuscale::rules
