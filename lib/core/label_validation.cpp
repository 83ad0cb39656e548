// Label key and value validation with apimachinery's messages (validation.IsQualifiedName,
// IsValidLabelValue, IsDNS1123Subdomain), so errors read as kube-apiserver's do.
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/ascii.h"
#include "gpuscale/core/label_selector.h"

namespace gpuscale::core {
namespace {

constexpr size_t kNameMaxLength = 63;
constexpr size_t kSubdomainMaxLength = 253;

constexpr std::string_view kQualifiedNameFormat = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view kQualifiedNameMessage =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr std::string_view kLabelValueFormat = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr std::string_view kLabelValueMessage =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character";
constexpr std::string_view kSubdomainFormat =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view kSubdomainMessage =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', "
    "and must start and end with an alphanumeric character";

// [a-z0-9]([-a-z0-9]*[a-z0-9])? (no length limit).
bool isDns1123LabelChars(std::string_view label) {
  const auto lowerAlnum = [](char c) { return isAsciiLower(c) || isAsciiDigit(c); };
  if (label.empty() || !lowerAlnum(label.front()) || !lowerAlnum(label.back())) return false;
  for (char c : label) {
    if (!lowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool isQualifiedNamePart(std::string_view s) {
  if (s.empty() || !isAsciiAlnum(s.front()) || !isAsciiAlnum(s.back())) return false;
  for (char c : s) {
    if (!isAsciiAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])? separated by dots.
bool isDns1123Subdomain(std::string_view s) {
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    if (!isDns1123LabelChars(
            s.substr(start, dot == std::string_view::npos ? s.npos : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string maxLengthError(size_t length) {
  return "must be no more than " + std::to_string(length) + " characters";
}

std::string regexError(std::string_view message, std::string_view format,
                       std::initializer_list<std::string_view> examples) {
  std::string out(message);
  out += " (e.g. ";
  bool first = true;
  for (std::string_view example : examples) {
    if (!first) out += " or ";
    first = false;
    out += "'";
    out += example;
    out += "', ";
  }
  out += "regex used for validation is '";
  out += format;
  out += "')";
  return out;
}

std::string qualifiedNameRegexError() {
  return regexError(kQualifiedNameMessage, kQualifiedNameFormat, {"MyName", "my.name", "123-abc"});
}

std::string joinErrors(const std::vector<std::string>& errors) {
  std::string out;
  for (const std::string& e : errors) {
    if (!out.empty()) out += "; ";
    out += e;
  }
  return out;
}

}  // namespace

std::string labelKeyError(std::string_view key) {
  std::vector<std::string> errors;
  std::string_view name = key;
  const size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    if (key.find('/', slash + 1) != std::string_view::npos) {
      return "a qualified name " + qualifiedNameRegexError() +
             " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
    }
    const std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty()) {
      errors.emplace_back("prefix part must be non-empty");
    } else {
      if (prefix.size() > kSubdomainMaxLength) {
        errors.push_back("prefix part " + maxLengthError(kSubdomainMaxLength));
      }
      if (!isDns1123Subdomain(prefix)) {
        errors.push_back("prefix part " +
                         regexError(kSubdomainMessage, kSubdomainFormat, {"example.com"}));
      }
    }
  }
  if (name.empty()) {
    errors.emplace_back("name part must be non-empty");
  } else if (name.size() > kNameMaxLength) {
    errors.push_back("name part " + maxLengthError(kNameMaxLength));
  }
  if (!isQualifiedNamePart(name)) errors.push_back("name part " + qualifiedNameRegexError());
  return joinErrors(errors);
}

std::string labelValueError(std::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > kNameMaxLength) errors.push_back(maxLengthError(kNameMaxLength));
  if (!value.empty() && !isQualifiedNamePart(value)) {
    errors.push_back(
        regexError(kLabelValueMessage, kLabelValueFormat, {"MyValue", "my_value", "12345"}));
  }
  return joinErrors(errors);
}

bool isDns1123Label(std::string_view name) {
  return name.size() <= 63 && isDns1123LabelChars(name);
}

}  // namespace gpuscale::core
