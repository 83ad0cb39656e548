#include "gpuscale/rules/template.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "gpuscale/core/ascii.h"
#include "template_ast.h"

namespace gpuscale::rules {

using template_detail::Arg;
using template_detail::Node;

namespace {

constexpr std::string_view kLeft = "<<";
constexpr std::string_view kRight = ">>";

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool isAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

struct ParseError {
  size_t offset;
  std::string message;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  bool run(std::vector<Node>& nodes, std::vector<Template::FieldRef>& refs) {
    size_t pos = 0;
    bool trimNextText = false;
    while (pos <= text_.size()) {
      size_t open = text_.find(kLeft, pos);
      std::string_view literal =
          text_.substr(pos, open == std::string_view::npos ? text_.npos : open - pos);
      bool trimLeft = open != std::string_view::npos && open + 3 < text_.size() &&
                      text_[open + 2] == '-' && isSpace(text_[open + 3]);
      if (trimNextText) {
        while (!literal.empty() && isSpace(literal.front())) literal.remove_prefix(1);
      }
      if (trimLeft) {
        while (!literal.empty() && isSpace(literal.back())) literal.remove_suffix(1);
      }
      if (!literal.empty()) {
        Node node;
        node.text = std::string(literal);
        node.offset = pos;
        nodes.push_back(std::move(node));
      }
      if (open == std::string_view::npos) break;
      size_t inner = open + kLeft.size() + (trimLeft ? 2 : 0);
      size_t next = 0;
      if (!parseAction(open, inner, nodes, refs, next, trimNextText)) return false;
      pos = next;
    }
    return true;
  }

  const ParseError& error() const { return error_; }

 private:
  bool fail(size_t offset, std::string message) {
    error_ = {offset, std::move(message)};
    return false;
  }

  // Recognises the closing delimiter at `pos` (optionally preceded by a " -" trim marker).
  bool atRight(size_t pos, size_t& end, bool& trim) const {
    if (text_.substr(pos, 2) == kRight) {
      end = pos + 2;
      trim = false;
      return true;
    }
    if (pos < text_.size() && isSpace(text_[pos]) && text_.substr(pos + 1, 3) == "->>") {
      end = pos + 4;
      trim = true;
      return true;
    }
    return false;
  }

  bool parseAction(size_t open, size_t pos, std::vector<Node>& nodes,
                   std::vector<Template::FieldRef>& refs, size_t& next, bool& trimRight) {
    if (text_.substr(pos, 2) == "/*") {
      size_t close = text_.find("*/", pos + 2);
      if (close == std::string_view::npos) return fail(open, "unclosed comment");
      size_t end = 0;
      if (!atRight(close + 2, end, trimRight)) {
        return fail(close, "comment ends before closing delimiter");
      }
      next = end;
      return true;
    }
    Node node;
    node.isText = false;
    node.offset = open;
    while (true) {
      size_t end = 0;
      while (pos < text_.size() && !atRight(pos, end, trimRight) && isSpace(text_[pos])) ++pos;
      if (pos >= text_.size()) return fail(open, "unclosed action");
      if (atRight(pos, end, trimRight)) {
        if (node.function.empty() && node.args.empty()) {
          return fail(open, "missing value for command");
        }
        if (!node.function.empty() && !checkArity(node)) return false;
        node.source = std::string(text_.substr(open, end - open));
        nodes.push_back(std::move(node));
        next = end;
        return true;
      }
      bool first = node.function.empty() && node.args.empty();
      Arg arg;
      bool isFunction = false;
      if (!parseOperand(pos, arg, first, isFunction)) return false;
      if (isFunction) {
        node.function = arg.text;
      } else {
        if (!first && node.function.empty()) {
          return fail(arg.offset, fmt::format("can't give argument to non-function {}",
                                              node.args.front().source));
        }
        if (arg.kind == Arg::Kind::kField && !arg.chain.empty()) {
          refs.push_back({arg.chain.front(), arg.offset});
        }
        node.args.push_back(std::move(arg));
      }
      if (pos < text_.size() && !isSpace(text_[pos]) && !atRight(pos, end, trimRight)) {
        return fail(pos, fmt::format("unexpected {:?} in operand", std::string(1, text_[pos])));
      }
    }
  }

  bool checkArity(const Node& node) {
    if (node.function == "index" && node.args.empty()) {
      return fail(node.offset, "wrong number of args for index: want at least 1 got 0");
    }
    if (node.function == "len" && node.args.size() != 1) {
      return fail(node.offset,
                  fmt::format("wrong number of args for len: want 1 got {}", node.args.size()));
    }
    return true;
  }

  bool parseOperand(size_t& pos, Arg& arg, bool mayBeFunction, bool& isFunction) {
    arg.offset = pos;
    char c = text_[pos];
    if (c == '.') {
      arg.kind = Arg::Kind::kField;
      size_t p = pos;
      while (p < text_.size() && text_[p] == '.') {
        size_t start = ++p;
        while (p < text_.size() && isAlnum(text_[p])) ++p;
        if (p == start) {
          if (start == pos + 1 && arg.chain.empty()) break;  // a lone "."
          return fail(start, "bad field name after \".\"");
        }
        if (text_[start] >= '0' && text_[start] <= '9') return fail(start, "bad number syntax");
        arg.chain.emplace_back(text_.substr(start, p - start));
      }
      arg.source = std::string(text_.substr(pos, p - pos));
      pos = p;
      return true;
    }
    if (c == '"' || c == '`') return parseString(pos, arg);
    if ((c >= '0' && c <= '9') || c == '-' || c == '+') return parseNumber(pos, arg);
    if (isAlnum(c)) {
      size_t start = pos;
      while (pos < text_.size() && isAlnum(text_[pos])) ++pos;
      std::string word(text_.substr(start, pos - start));
      static constexpr std::array<std::string_view, 13> kKeywords = {
          "if",    "else",  "end",      "range", "with", "define", "template",
          "block", "break", "continue", "nil",   "true", "false"};
      if (std::find(kKeywords.begin(), kKeywords.end(), word) != kKeywords.end()) {
        return fail(start, fmt::format("{:?} is not supported (rule templates support fields, "
                                       "string and integer literals, index and len)",
                                       word));
      }
      if (word != "index" && word != "len") {
        return fail(start, fmt::format("function {:?} not defined", word));
      }
      if (!mayBeFunction) {
        return fail(start, fmt::format("function {:?} used as an argument is not supported", word));
      }
      arg.text = word;
      arg.source = word;
      isFunction = true;
      return true;
    }
    if (c == '$') return fail(pos, "variables are not supported");
    if (c == '|') return fail(pos, "pipelines (|) are not supported");
    if (c == '(' || c == ')') return fail(pos, "parenthesized pipelines are not supported");
    return fail(pos, fmt::format("unexpected {:?} in command", std::string(1, c)));
  }

  bool parseNumber(size_t& pos, Arg& arg) {
    size_t start = pos;
    if (text_[pos] == '-' || text_[pos] == '+') ++pos;
    while (pos < text_.size() && isAlnum(text_[pos])) ++pos;
    std::string_view word = text_.substr(start, pos - start);
    std::string_view digits = word;
    if (!digits.empty() && (digits.front() == '+' || digits.front() == '-'))
      digits.remove_prefix(1);
    bool decimal = !digits.empty() && std::all_of(digits.begin(), digits.end(), core::isAsciiDigit);
    int64_t value = 0;
    if (decimal) {
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec != std::errc() || ptr != digits.data() + digits.size()) decimal = false;
    }
    if (!decimal) {
      return fail(start,
                  fmt::format("bad number syntax: {:?} (only decimal integers are supported)",
                              std::string(word)));
    }
    arg.kind = Arg::Kind::kInt;
    arg.number = word.front() == '-' ? -value : value;
    arg.source = std::string(word);
    return true;
  }

  bool parseString(size_t& pos, Arg& arg) {
    size_t start = pos;
    char quote = text_[pos++];
    arg.kind = Arg::Kind::kString;
    if (quote == '`') {
      size_t close = text_.find('`', pos);
      if (close == std::string_view::npos) return fail(start, "unterminated raw quoted string");
      arg.text = std::string(text_.substr(pos, close - pos));
      pos = close + 1;
      arg.source = std::string(text_.substr(start, pos - start));
      return true;
    }
    std::string out;
    while (true) {
      if (pos >= text_.size() || text_[pos] == '\n') {
        return fail(start, "unterminated quoted string");
      }
      char c = text_[pos++];
      if (c == '"') break;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos >= text_.size()) return fail(start, "unterminated quoted string");
      char e = text_[pos++];
      switch (e) {
        case 'a':
          out.push_back('\a');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'v':
          out.push_back('\v');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '"':
          out.push_back('"');
          break;
        case 'x': {
          if (!appendHexByte(pos, out)) return fail(pos - 2, "invalid syntax in quoted string");
          break;
        }
        default:
          return fail(pos - 2, fmt::format("unsupported escape \\{} in quoted string", e));
      }
    }
    arg.text = std::move(out);
    arg.source = std::string(text_.substr(start, pos - start));
    return true;
  }

  bool appendHexByte(size_t& pos, std::string& out) {
    if (pos + 2 > text_.size()) return false;
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(text_.data() + pos, text_.data() + pos + 2, value, 16);
    if (ec != std::errc() || ptr != text_.data() + pos + 2) return false;
    out.push_back(static_cast<char>(value));
    pos += 2;
    return true;
  }

  std::string_view text_;
  ParseError error_{0, ""};
};

}  // namespace

Template::Template() = default;
Template::~Template() = default;
Template::Template(const Template&) = default;
Template& Template::operator=(const Template&) = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

Result<Template> Template::parse(std::string_view text, size_t* errorOffset) {
  Template result;
  result.text_ = std::string(text);
  Parser parser(result.text_);
  if (!parser.run(result.nodes_, result.fieldRefs_)) {
    if (errorOffset != nullptr) *errorOffset = parser.error().offset;
    return Status::invalid(
        fmt::format("template: offset {}: {}", parser.error().offset, parser.error().message));
  }
  return result;
}

bool Template::referencesField(std::string_view name) const {
  return std::any_of(fieldRefs_.begin(), fieldRefs_.end(),
                     [&](const FieldRef& ref) { return ref.name == name; });
}

}  // namespace gpuscale::rules
