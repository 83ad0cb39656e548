// A recursive-descent parser for the CEL subset of dra_cel.h, following CEL's grammar and
// precedence: conditional, ||, &&, relations, + -, * / %, unary, member access, primaries.
#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "dra_cel_ast.h"
#include "gpuscale/partition/dra_cel.h"

namespace gpuscale::partition::cel {
namespace {

// Functions and methods the evaluator knows (dra_cel.cpp); others do not compile.
const std::set<std::string, std::less<>> kFunctions = {"size", "quantity", "semver"};
const std::set<std::string, std::less<>> kMethods = {
    "startsWith", "endsWith",   "contains",  "matches",       "size",
    "lowerAscii", "upperAscii", "compareTo", "isGreaterThan", "isLessThan",
    "major",      "minor",      "patch",     "asInteger",     "isInteger"};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::unique_ptr<Node> parseAll() {
    auto root = expr();
    skipSpace();
    if (pos_ < text_.size()) invalid("unexpected text");
    return root;
  }

  struct Failure {
    std::string reason, message;
  };

 private:
  [[noreturn]] void fail(std::string_view reason, const std::string& what) const {
    throw Failure{std::string(reason), fmt::format("{} at column {}", what, pos_ + 1)};
  }
  [[noreturn]] void invalid(const std::string& what) const { fail("Invalid", what); }
  [[noreturn]] void unsupported(const std::string& what) const {
    fail(kCelUnsupportedReason, what + " is not in the subset of CEL gpuscale evaluates");
  }

  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool peek(std::string_view token) {
    skipSpace();
    return text_.substr(pos_, token.size()) == token;
  }
  bool accept(std::string_view token) {
    if (!peek(token)) return false;
    pos_ += token.size();
    return true;
  }
  void expect(std::string_view token) {
    if (!accept(token)) invalid(fmt::format("expected '{}'", token));
  }

  // Nesting beyond this is refused (CEL parsers bound their recursion too): a selector is at most
  // 10 KiB, and the stack must not be the limit. It bounds both the parser's recursion (brackets,
  // unary operators) and the depth of the tree evaluation walks (long chains such as
  // `a || b || ...` nest without recursing in the parser).
  static constexpr int kMaxDepth = 64;

  // `n` with its depth set from its arguments'; refused beyond kMaxDepth.
  std::unique_ptr<Node> finish(std::unique_ptr<Node> n) const {
    for (const auto& a : n->args) n->depth = std::max(n->depth, a->depth + 1);
    if (n->depth > kMaxDepth) unsupported(fmt::format("nesting deeper than {}", kMaxDepth));
    return n;
  }
  std::unique_ptr<Node> make(Op op, std::vector<std::unique_ptr<Node>> args = {}) const {
    auto n = std::make_unique<Node>();
    n->op = op;
    n->args = std::move(args);
    return finish(std::move(n));
  }
  std::unique_ptr<Node> binary(Op op, std::unique_ptr<Node> a, std::unique_ptr<Node> b) const {
    std::vector<std::unique_ptr<Node>> args;
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return make(op, std::move(args));
  }

  // `parse()` one level of the parser's recursion deeper; refused beyond kMaxDepth.
  template <typename Parse>
  std::unique_ptr<Node> nested(Parse parse) {
    if (++depth_ > kMaxDepth) unsupported(fmt::format("nesting deeper than {}", kMaxDepth));
    auto node = parse();
    --depth_;
    return node;
  }

  std::unique_ptr<Node> expr() {
    return nested([this] { return conditional(); });
  }

  std::unique_ptr<Node> conditional() {
    auto cond = orExpr();
    if (!accept("?")) return cond;
    auto yes = orExpr();
    expect(":");
    auto no = expr();
    std::vector<std::unique_ptr<Node>> args;
    args.push_back(std::move(cond));
    args.push_back(std::move(yes));
    args.push_back(std::move(no));
    return make(Op::kCond, std::move(args));
  }

  struct Infix {
    std::string_view token;
    Op op;
    bool word = false;  // a keyword (`in`): not followed by an identifier character
  };

  // A left-associative chain of `next` joined by the operators of `ops` (tried in order).
  template <typename Next>
  std::unique_ptr<Node> chain(std::initializer_list<Infix> ops, Next next) {
    auto left = next();
    for (;;) {
      auto hit = std::find_if(ops.begin(), ops.end(), [&](const Infix& i) {
        return i.word ? keyword(i.token) : accept(i.token);
      });
      if (hit == ops.end()) return left;
      left = binary(hit->op, std::move(left), next());
    }
  }

  std::unique_ptr<Node> orExpr() {
    return chain({{"||", Op::kOr}}, [this] { return andExpr(); });
  }

  std::unique_ptr<Node> andExpr() {
    return chain({{"&&", Op::kAnd}}, [this] { return relation(); });
  }

  // `<=` and `>=` are tried before `<` and `>`.
  std::unique_ptr<Node> relation() {
    return chain({{"==", Op::kEq},
                  {"!=", Op::kNe},
                  {"<=", Op::kLe},
                  {">=", Op::kGe},
                  {"<", Op::kLt},
                  {">", Op::kGt},
                  {"in", Op::kIn, true}},
                 [this] { return addition(); });
  }

  std::unique_ptr<Node> addition() {
    return chain({{"+", Op::kAdd}, {"-", Op::kSub}}, [this] { return multiplication(); });
  }

  std::unique_ptr<Node> multiplication() {
    return chain({{"*", Op::kMul}, {"/", Op::kDiv}, {"%", Op::kMod}}, [this] { return unary(); });
  }

  std::unique_ptr<Node> unary() {
    return nested([this] { return unaryOperand(); });
  }

  std::unique_ptr<Node> unaryOperand() {
    if (accept("!")) {
      std::vector<std::unique_ptr<Node>> args;
      args.push_back(unary());
      return make(Op::kNot, std::move(args));
    }
    if (accept("-")) {
      std::vector<std::unique_ptr<Node>> args;
      args.push_back(unary());
      return make(Op::kNeg, std::move(args));
    }
    return member();
  }

  // An identifier at the current position, or "".
  std::string identifier() {
    skipSpace();
    std::size_t end = pos_;
    if (end < text_.size() &&
        (std::isalpha(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) {
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
        ++end;
    }
    std::string id(text_.substr(pos_, end - pos_));
    pos_ = end;
    return id;
  }

  bool keyword(std::string_view word) {
    skipSpace();
    if (text_.substr(pos_, word.size()) != word) return false;
    const std::size_t after = pos_ + word.size();
    if (after < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[after])) || text_[after] == '_'))
      return false;
    pos_ = after;
    return true;
  }

  std::vector<std::unique_ptr<Node>> arguments(std::string_view close) {
    std::vector<std::unique_ptr<Node>> args;
    if (accept(close)) return args;
    for (;;) {
      args.push_back(expr());
      if (accept(close)) return args;
      expect(",");
      if (accept(close)) return args;  // a trailing comma
    }
  }

  std::unique_ptr<Node> member() {
    auto node = primary();
    for (;;) {
      if (accept(".")) {
        const std::string field = identifier();
        if (field.empty()) invalid("expected a field or method name");
        if (accept("(")) {
          if (!kMethods.contains(field)) unsupported("the method " + field + "()");
          auto call = make(Op::kCall);
          call->text = field;
          call->method = true;
          call->args.push_back(std::move(node));
          for (auto& a : arguments(")")) call->args.push_back(std::move(a));
          node = finish(std::move(call));
        } else {
          auto select = make(Op::kSelect);
          select->text = field;
          select->args.push_back(std::move(node));
          node = finish(std::move(select));
        }
      } else if (accept("[")) {
        auto index = expr();
        expect("]");
        node = binary(Op::kIndex, std::move(node), std::move(index));
      } else if (peek("{")) {
        unsupported("a message or map literal");
      } else {
        return node;
      }
    }
  }

  std::unique_ptr<Node> primary() {
    skipSpace();
    if (pos_ >= text_.size()) invalid("unexpected end of the expression");
    const char c = text_[pos_];
    if (accept("(")) {
      auto inner = expr();
      expect(")");
      return inner;
    }
    if (accept("[")) return make(Op::kList, arguments("]"));
    if (c == '{') unsupported("a map literal");
    if (c == '\'' || c == '"') return stringLiteral();
    if (std::isdigit(static_cast<unsigned char>(c))) return number();
    if (c == '.') unsupported("a leading-dot identifier");
    const std::string id = identifier();
    if (id.empty()) invalid(fmt::format("unexpected '{}'", c));
    if (id == "true" || id == "false") {
      auto n = make(Op::kBool);
      n->number = id == "true";
      return n;
    }
    if (id == "null") return make(Op::kNull);
    if ((id == "r" || id == "R" || id == "b" || id == "B") && pos_ < text_.size() &&
        (text_[pos_] == '\'' || text_[pos_] == '"'))
      unsupported("a raw or bytes string literal");
    if (accept("(")) {
      if (id == "has") {
        auto args = arguments(")");
        if (args.size() != 1 || (args[0]->op != Op::kSelect && args[0]->op != Op::kIndex))
          invalid("has() takes one field selection");
        return make(Op::kHas, std::move(args));
      }
      if (!kFunctions.contains(id)) unsupported("the function " + id + "()");
      auto call = make(Op::kCall, arguments(")"));
      call->text = id;
      return call;
    }
    if (id == "cel") unsupported("cel.bind()");
    if (id != "device") unsupported("the variable " + id);
    auto n = make(Op::kIdent);
    n->text = id;
    return n;
  }

  std::unique_ptr<Node> number() {
    std::size_t end = pos_;
    std::int64_t value = 0;
    const bool hex = text_.substr(pos_, 2) == "0x" || text_.substr(pos_, 2) == "0X";
    if (hex) end += 2;
    const std::size_t digits = end;
    while (end < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[end])) &&
           (hex || std::isdigit(static_cast<unsigned char>(text_[end])))) {
      const int d = std::isdigit(static_cast<unsigned char>(text_[end]))
                        ? text_[end] - '0'
                        : std::tolower(static_cast<unsigned char>(text_[end])) - 'a' + 10;
      if (value > (std::numeric_limits<std::int64_t>::max() - d) / (hex ? 16 : 10))
        invalid("integer literal out of range");
      value = value * (hex ? 16 : 10) + d;
      ++end;
    }
    if (end == digits) invalid("malformed number");
    if (end < text_.size() && (text_[end] == '.' || text_[end] == 'e' || text_[end] == 'E')) {
      pos_ = end;
      unsupported("a floating-point literal");
    }
    if (end < text_.size() && (text_[end] == 'u' || text_[end] == 'U')) ++end;
    pos_ = end;
    auto n = make(Op::kInt);
    n->number = value;
    return n;
  }

  std::unique_ptr<Node> stringLiteral() {
    const char quote = text_[pos_];
    if (text_.substr(pos_, 3) == std::string(3, quote)) unsupported("a triple-quoted string");
    ++pos_;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\\') {
        if (pos_ >= text_.size()) break;
        const char e = text_[pos_++];
        switch (e) {
          case 'n':
            c = '\n';
            break;
          case 't':
            c = '\t';
            break;
          case 'r':
            c = '\r';
            break;
          case '\\':
          case '\'':
          case '"':
          case '`':
          case '?':
            c = e;
            break;
          default:
            unsupported(fmt::format("the string escape \\{}", e));
        }
      }
      out.push_back(c);
    }
    if (pos_ >= text_.size()) invalid("unterminated string");
    ++pos_;
    auto n = make(Op::kString);
    n->text = std::move(out);
    return n;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

core::Result<std::unique_ptr<Node>> parse(std::string_view expression) {
  try {
    return Parser(expression).parseAll();
  } catch (const Parser::Failure& f) {
    return core::Status(422, f.reason, f.message);
  }
}

}  // namespace gpuscale::partition::cel
