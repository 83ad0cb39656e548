#include "gpuscale/core/label_selector.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/go_quote.h"

namespace gpuscale::core {
namespace {

enum class Token {
  kIdentifier,
  kDoesNotExist,  // "!"
  kEquals,
  kDoubleEquals,
  kNotEquals,
  kIn,
  kNotIn,
  kGreaterThan,
  kLessThan,
  kOpenParenthesis,
  kClosedParenthesis,
  kComma,
  kEnd,
};

struct ScannedItem {
  Token token;
  std::string_view literal;
};

bool isWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool isSpecialSymbol(char c) {
  switch (c) {
    case '=':
    case '!':
    case '(':
    case ')':
    case ',':
    case '>':
    case '<':
      return true;
    default:
      return false;
  }
}

Token specialSymbolToken(std::string_view symbol) {
  if (symbol == "!=") return Token::kNotEquals;
  if (symbol == "==") return Token::kDoubleEquals;
  switch (symbol[0]) {
    case '=':
      return Token::kEquals;
    case '!':
      return Token::kDoesNotExist;
    case '(':
      return Token::kOpenParenthesis;
    case ')':
      return Token::kClosedParenthesis;
    case ',':
      return Token::kComma;
    case '>':
      return Token::kGreaterThan;
    default:
      return Token::kLessThan;
  }
}

// The lexer of labels.Parse. Unlike apimachinery, a NUL byte is an ordinary identifier character
// (which validation then rejects): apimachinery ends the input at a NUL that starts a token, so
// "\0x" would parse as the selector that matches everything.
std::vector<ScannedItem> scan(std::string_view text) {
  std::vector<ScannedItem> items;
  size_t pos = 0;
  while (true) {
    while (pos < text.size() && isWhitespace(text[pos])) ++pos;
    if (pos == text.size()) break;
    const size_t start = pos;
    if (isSpecialSymbol(text[pos])) {
      // Every single symbol is a token; "!=" and "==" are the only longer ones.
      const bool twoChars =
          pos + 1 < text.size() && text[pos + 1] == '=' && (text[pos] == '!' || text[pos] == '=');
      pos += twoChars ? 2 : 1;
      const std::string_view symbol = text.substr(start, pos - start);
      items.push_back({specialSymbolToken(symbol), symbol});
      continue;
    }
    while (pos < text.size() && !isWhitespace(text[pos]) && !isSpecialSymbol(text[pos])) ++pos;
    const std::string_view word = text.substr(start, pos - start);
    const Token token =
        word == "in" ? Token::kIn : (word == "notin" ? Token::kNotIn : Token::kIdentifier);
    items.push_back({token, word});
  }
  items.push_back({Token::kEnd, {}});
  return items;
}

// strconv.ParseInt(s, 10, 64).
std::optional<int64_t> parseInt64(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))) return std::nullopt;
  int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

// An apimachinery field.Invalid error: `<path>: Invalid value: "<value>": <detail>`.
std::string invalidValue(std::string_view path, std::string_view value, std::string_view detail) {
  return std::string(path) + ": Invalid value: " + goQuote(value) + ": " + std::string(detail);
}

// The errors apimachinery's NewRequirement reports for values, joined as an error aggregate.
std::string requirementValuesError(const Requirement& r) {
  std::vector<std::string> errors;
  const auto add = [&errors](std::string error) {
    if (std::find(errors.begin(), errors.end(), error) == errors.end()) {
      errors.push_back(std::move(error));
    }
  };
  const bool ordering =
      r.op == SelectorOperator::kGreaterThan || r.op == SelectorOperator::kLessThan;
  for (size_t i = 0; i < r.values.size(); ++i) {
    const std::string index = "values[" + std::to_string(i) + "]";
    if (ordering && !parseInt64(r.values[i])) {
      add(invalidValue(index, r.values[i],
                       "for 'Gt', 'Lt' operators, the value must be an integer"));
    }
  }
  for (size_t i = 0; i < r.values.size(); ++i) {
    if (std::string why = labelValueError(r.values[i]); !why.empty()) {
      add(invalidValue("values[" + std::to_string(i) + "][" + r.key + "]", r.values[i], why));
    }
  }
  if (errors.empty()) return {};
  if (errors.size() == 1) return errors.front();
  std::string joined = "[";
  for (size_t i = 0; i < errors.size(); ++i) joined += (i > 0 ? ", " : "") + errors[i];
  return joined + "]";
}

std::string found(std::string_view literal, std::string_view expected) {
  return "found '" + std::string(literal) + "', expected: " + std::string(expected);
}

// The recursive-descent parser of labels.Parse, with its error messages.
class SelectorParser {
 public:
  explicit SelectorParser(std::string_view text) : items_(scan(text)) {}

  Result<std::vector<Requirement>> parse() {
    std::vector<Requirement> requirements;
    while (true) {
      const ScannedItem item = lookahead();
      if (item.token == Token::kEnd) return requirements;
      if (item.token != Token::kIdentifier && item.token != Token::kDoesNotExist) {
        return error(found(item.literal, "!, identifier, or 'end of string'"));
      }
      Result<Requirement> requirement = parseRequirement();
      if (!requirement) {
        return error("unable to parse requirement: " + requirement.status().message());
      }
      requirements.push_back(std::move(*requirement));
      const ScannedItem next = consume();
      if (next.token == Token::kEnd) return requirements;
      if (next.token != Token::kComma) return error(found(next.literal, "',' or 'end of string'"));
      const ScannedItem after = lookahead();
      if (after.token != Token::kIdentifier && after.token != Token::kDoesNotExist) {
        return error(found(after.literal, "identifier after ','"));
      }
    }
  }

 private:
  static Status error(std::string message) { return Status::badRequest(std::move(message)); }

  // In value positions "in" and "notin" are plain identifiers (a key or value may be named "in").
  ScannedItem asValue(ScannedItem item) const {
    if (item.token == Token::kIn || item.token == Token::kNotIn) item.token = Token::kIdentifier;
    return item;
  }
  ScannedItem lookahead() const { return asValue(items_[position_]); }
  ScannedItem consume() { return asValue(consumeRaw()); }
  ScannedItem consumeRaw() {
    const ScannedItem item = items_[position_];
    if (item.token != Token::kEnd) ++position_;
    return item;
  }

  Result<Requirement> parseRequirement() {
    Requirement r;
    ScannedItem item = consume();
    const bool notExists = item.token == Token::kDoesNotExist;
    if (notExists) item = consume();
    if (item.token != Token::kIdentifier) return error(found(item.literal, "identifier"));
    r.key = std::string(item.literal);
    if (std::string why = labelKeyError(r.key); !why.empty()) {
      return error(invalidValue("<nil>", r.key, why));
    }
    const Token next = lookahead().token;
    if (notExists || next == Token::kEnd || next == Token::kComma) {
      r.op = notExists ? SelectorOperator::kDoesNotExist : SelectorOperator::kExists;
      return r;
    }
    const ScannedItem op = consumeRaw();
    std::optional<std::set<std::string>> values;
    switch (op.token) {
      case Token::kIn:
      case Token::kNotIn:
        r.op = op.token == Token::kIn ? SelectorOperator::kIn : SelectorOperator::kNotIn;
        values = parseValueSet();
        break;
      case Token::kEquals:
      case Token::kDoubleEquals:
      case Token::kNotEquals:
      case Token::kGreaterThan:
      case Token::kLessThan:
        r.op = exactOperator(op.token);
        values = parseExactValue();
        break;
      default:
        return error(found(op.literal, "in, notin, =, ==, !=, gt, lt"));
    }
    if (!values) return error(std::move(valueError_));
    r.values.assign(values->begin(), values->end());
    if (std::string why = requirementValuesError(r); !why.empty()) return error(std::move(why));
    return r;
  }

  static SelectorOperator exactOperator(Token token) {
    switch (token) {
      case Token::kEquals:
        return SelectorOperator::kEquals;
      case Token::kDoubleEquals:
        return SelectorOperator::kDoubleEquals;
      case Token::kNotEquals:
        return SelectorOperator::kNotEquals;
      case Token::kGreaterThan:
        return SelectorOperator::kGreaterThan;
      default:
        return SelectorOperator::kLessThan;
    }
  }

  std::optional<std::set<std::string>> failValues(std::string message) {
    valueError_ = std::move(message);
    return std::nullopt;
  }

  // "(" [values] ")": "()" is the set {""}, and empty entries ("(a,)", "(,,b)") are "" too.
  std::optional<std::set<std::string>> parseValueSet() {
    const ScannedItem open = consume();
    if (open.token != Token::kOpenParenthesis) {
      return failValues("found '" + std::string(open.literal) + "' expected: '('");
    }
    const ScannedItem first = lookahead();
    if (first.token == Token::kClosedParenthesis) {
      consume();
      return std::set<std::string>{""};
    }
    if (first.token != Token::kIdentifier && first.token != Token::kComma) {
      return failValues(found(first.literal, "',', ')' or identifier"));
    }
    std::set<std::string> values;
    while (true) {
      const ScannedItem item = consume();
      if (item.token == Token::kIdentifier) {
        values.emplace(item.literal);
        const ScannedItem next = lookahead();
        if (next.token == Token::kClosedParenthesis) break;
        if (next.token != Token::kComma) return failValues(found(next.literal, "',' or ')'"));
      } else if (item.token == Token::kComma) {
        if (values.empty()) values.emplace();
        const Token next = lookahead().token;
        if (next == Token::kClosedParenthesis) {
          values.emplace();
          break;
        }
        if (next == Token::kComma) {
          consume();
          values.emplace();
        }
      } else {
        return failValues(found(item.literal, "',', or identifier"));
      }
    }
    consume();  // ")"
    return values;
  }

  // One value after =, ==, !=, > or <; nothing before "," or the end is the empty value.
  std::optional<std::set<std::string>> parseExactValue() {
    const Token next = lookahead().token;
    if (next == Token::kEnd || next == Token::kComma) return std::set<std::string>{""};
    const ScannedItem item = consume();
    if (item.token != Token::kIdentifier) return failValues(found(item.literal, "identifier"));
    return std::set<std::string>{std::string(item.literal)};
  }

  std::vector<ScannedItem> items_;
  size_t position_ = 0;
  std::string valueError_;
};

// Requirements built by hand need not keep the parser's sorted order, so neither lookup nor
// printing relies on it.
bool hasValue(const Requirement& r, std::string_view value) {
  return std::find(r.values.begin(), r.values.end(), value) != r.values.end();
}

}  // namespace

bool Requirement::matches(const Labels& labels) const {
  const auto it = labels.find(key);
  return matchesValue(it == labels.end() ? nullptr : &it->second);
}

bool Requirement::matchesValue(const std::string* value) const {
  const bool present = value != nullptr;
  switch (op) {
    case SelectorOperator::kEquals:
    case SelectorOperator::kDoubleEquals:
    case SelectorOperator::kIn:
      return present && hasValue(*this, *value);
    case SelectorOperator::kNotEquals:
    case SelectorOperator::kNotIn:
      return !present || !hasValue(*this, *value);
    case SelectorOperator::kExists:
      return present;
    case SelectorOperator::kDoesNotExist:
      return !present;
    case SelectorOperator::kGreaterThan:
    case SelectorOperator::kLessThan: {
      if (!present || values.size() != 1) return false;
      const std::optional<int64_t> actual = parseInt64(*value);
      const std::optional<int64_t> bound = parseInt64(values.front());
      if (!actual || !bound) return false;
      return op == SelectorOperator::kGreaterThan ? *actual > *bound : *actual < *bound;
    }
  }
  return false;
}

std::string Requirement::toString() const {
  std::string out = op == SelectorOperator::kDoesNotExist ? "!" + key : key;
  const char* separator = "";
  bool parenthesised = false;
  switch (op) {
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      return out;
    case SelectorOperator::kEquals:
      separator = "=";
      break;
    case SelectorOperator::kDoubleEquals:
      separator = "==";
      break;
    case SelectorOperator::kNotEquals:
      separator = "!=";
      break;
    case SelectorOperator::kGreaterThan:
      separator = ">";
      break;
    case SelectorOperator::kLessThan:
      separator = "<";
      break;
    case SelectorOperator::kIn:
      separator = " in (";
      parenthesised = true;
      break;
    case SelectorOperator::kNotIn:
      separator = " notin (";
      parenthesised = true;
      break;
  }
  out += separator;
  std::vector<std::string_view> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) out += ',';
    out += sorted[i];
  }
  if (parenthesised) out += ')';
  return out;
}

Result<LabelSelector> LabelSelector::parse(std::string_view text) {
  Result<std::vector<Requirement>> requirements = SelectorParser(text).parse();
  if (!requirements) return requirements.status();
  std::stable_sort(requirements->begin(), requirements->end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
  return LabelSelector(std::move(*requirements));
}

bool LabelSelector::matches(const Labels& labels) const {
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&labels](const Requirement& r) { return r.matches(labels); });
}

std::string LabelSelector::toString() const {
  std::string out;
  for (const Requirement& r : requirements_) {
    if (!out.empty()) out += ',';
    out += r.toString();
  }
  return out;
}

}  // namespace gpuscale::core
