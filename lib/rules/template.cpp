#include "gpuscale/rules/template.h"

#include <fmt/format.h>
#include <charconv>

#include <algorithm>
#include <array>

namespace gpuscale::rules {
namespace template_detail {

// An operand: a field chain (`.A.b`; empty chain = `.`), a string literal or an integer literal.
struct Arg {
  enum class Kind { kField, kString, kInt };
  Kind kind = Kind::kField;
  std::vector<std::string> chain;
  std::string text;
  int64_t number = 0;
  size_t offset = 0;
  std::string source;  // as written, for error messages
};

// A text node, or an action that prints one operand or the result of one function call.
struct Node {
  bool isText = true;
  std::string text;
  std::string function;  // empty: print args[0]
  std::vector<Arg> args;
  size_t offset = 0;
  std::string source;
};

}  // namespace template_detail

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
    bool decimal = !digits.empty() && std::all_of(digits.begin(), digits.end(),
                                                  [](char d) { return d >= '0' && d <= '9'; });
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

// A value during execution: "no value" (a missing map key via a field), a borrowed string, an owned
// string, a slice, a map, an int, or the data struct itself.
using EvalValue =
    std::variant<std::monostate, std::string_view, std::string, const std::vector<std::string>*,
                 const StringMap*, int64_t, const TemplateData*>;

std::string_view goTypeName(const EvalValue& v) {
  switch (v.index()) {
    case 1:
    case 2:
      return "string";
    case 3:
      return "[]string";
    case 4:
      return "map[string]string";
    case 5:
      return "int";
    case 6:
      return std::get<const TemplateData*>(v)->typeName;
    default:
      return "<nil>";
  }
}

EvalValue fromTemplateValue(const TemplateValue* value) {
  if (const auto* s = std::get_if<std::string>(value)) return std::string_view(*s);
  if (const auto* v = std::get_if<std::vector<std::string>>(value)) return v;
  return &std::get<StringMap>(*value);
}

void print(const EvalValue& v, std::string& out);

void printTemplateValue(const TemplateValue* value, std::string& out) {
  print(fromTemplateValue(value), out);
}

void print(const EvalValue& v, std::string& out) {
  switch (v.index()) {
    case 0:
      out += "<no value>";
      break;
    case 1:
      out += std::get<std::string_view>(v);
      break;
    case 2:
      out += std::get<std::string>(v);
      break;
    case 3:
      out += formatGoStringSlice(*std::get<const std::vector<std::string>*>(v));
      break;
    case 4: {
      out += "map[";
      bool first = true;
      for (const auto& [key, value] : *std::get<const StringMap*>(v)) {
        if (!first) out += ' ';
        first = false;
        out += key;
        out += ':';
        out += value;
      }
      out += ']';
      break;
    }
    case 5:
      out += std::to_string(std::get<int64_t>(v));
      break;
    case 6: {
      const TemplateData* data = std::get<const TemplateData*>(v);
      out += '{';
      for (size_t i = 0; i < data->fields.size(); ++i) {
        if (i > 0) out += ' ';
        printTemplateValue(data->fields[i].second, out);
      }
      out += '}';
      break;
    }
  }
}

class Executor {
 public:
  explicit Executor(const TemplateData& data) : data_(data) {}

  Result<EvalValue> evalArg(const Arg& arg, const Node& node) const {
    switch (arg.kind) {
      case Arg::Kind::kString:
        return EvalValue(std::string_view(arg.text));
      case Arg::Kind::kInt:
        return EvalValue(arg.number);
      case Arg::Kind::kField:
        break;
    }
    EvalValue current = &data_;
    for (const std::string& name : arg.chain) {
      if (const auto* data = std::get_if<const TemplateData*>(&current)) {
        const TemplateValue* field = (*data)->field(name);
        if (field == nullptr) {
          return failAt(node, arg,
                        fmt::format("can't evaluate field {} in type {}", name, (*data)->typeName));
        }
        current = fromTemplateValue(field);
      } else if (const auto* map = std::get_if<const StringMap*>(&current)) {
        auto it = (*map)->find(name);
        current = it == (*map)->end() ? EvalValue() : EvalValue(std::string_view(it->second));
      } else {
        return failAt(node, arg,
                      fmt::format("can't evaluate field {} in type {}", name, goTypeName(current)));
      }
    }
    return current;
  }

  Result<EvalValue> call(const Node& node) const {
    std::vector<EvalValue> args;
    for (const Arg& arg : node.args) {
      Result<EvalValue> value = evalArg(arg, node);
      if (!value) return value.status();
      args.push_back(std::move(*value));
    }
    if (node.function == "len") return callLen(node, args.front());
    EvalValue current = args.front();
    for (size_t i = 1; i < args.size(); ++i) {
      if (const auto* map = std::get_if<const StringMap*>(&current)) {
        std::string_view key;
        if (const auto* sv = std::get_if<std::string_view>(&args[i]))
          key = *sv;
        else if (const auto* s = std::get_if<std::string>(&args[i]))
          key = *s;
        else {
          return failCall(node,
                          fmt::format("value has type {}; should be string", goTypeName(args[i])));
        }
        auto it = (*map)->find(key);
        current = it == (*map)->end() ? EvalValue(std::string_view())
                                      : EvalValue(std::string_view(it->second));
      } else if (const auto* slice = std::get_if<const std::vector<std::string>*>(&current)) {
        const auto* index = std::get_if<int64_t>(&args[i]);
        if (index == nullptr) {
          return failCall(
              node, fmt::format("cannot index slice/array with type {}", goTypeName(args[i])));
        }
        if (*index < 0 || static_cast<uint64_t>(*index) >= (*slice)->size()) {
          return failCall(node, fmt::format("index out of range: {}", *index));
        }
        current = std::string_view((**slice)[static_cast<size_t>(*index)]);
      } else {
        return failCall(node, fmt::format("can't index item of type {}", goTypeName(current)));
      }
    }
    return current;
  }

 private:
  Result<EvalValue> callLen(const Node& node, const EvalValue& value) const {
    switch (value.index()) {
      case 1:
        return EvalValue(static_cast<int64_t>(std::get<std::string_view>(value).size()));
      case 2:
        return EvalValue(static_cast<int64_t>(std::get<std::string>(value).size()));
      case 3:
        return EvalValue(
            static_cast<int64_t>(std::get<const std::vector<std::string>*>(value)->size()));
      case 4:
        return EvalValue(static_cast<int64_t>(std::get<const StringMap*>(value)->size()));
      default:
        return failCall(node, fmt::format("len of type {}", goTypeName(value)));
    }
  }

  static Status failAt(const Node& node, const Arg& arg, const std::string& message) {
    return Status::invalid(fmt::format("template: executing {} at <{}> (offset {}): {}",
                                       node.source, arg.source, arg.offset, message));
  }
  static Status failCall(const Node& node, const std::string& message) {
    return Status::invalid(fmt::format("template: executing {} (offset {}): error calling {}: {}",
                                       node.source, node.offset, node.function, message));
  }

  const TemplateData& data_;
};

}  // namespace

const TemplateValue* TemplateData::field(std::string_view name) const {
  for (const auto& [fieldName, value] : fields) {
    if (fieldName == name) return value;
  }
  return nullptr;
}

std::string formatGoStringSlice(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ' ';
    out += values[i];
  }
  out += ']';
  return out;
}

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

Result<std::string> Template::execute(const TemplateData& data) const {
  std::string out;
  Executor executor(data);
  for (const Node& node : nodes_) {
    if (node.isText) {
      out += node.text;
      continue;
    }
    Result<EvalValue> value =
        node.function.empty() ? executor.evalArg(node.args.front(), node) : executor.call(node);
    if (!value) return value.status();
    print(*value, out);
  }
  return out;
}

}  // namespace gpuscale::rules
