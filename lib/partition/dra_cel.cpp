// Evaluation of the CEL subset (dra_cel.h) over one device.
#include "gpuscale/partition/dra_cel.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <re2/re2.h>

#include "dra_cel_ast.h"
#include "gpuscale/core/ascii.h"
#include "gpuscale/core/quantity.h"

namespace gpuscale::partition {
namespace cel {
namespace {

struct Value {
  enum class Kind {
    kNull,
    kBool,
    kInt,
    kString,
    kVersion,
    kQuantity,
    kList,
    kDevice,
    kAttributes,  // device.attributes: domain -> map
    kCapacities,  // device.capacity: domain -> map
    kAttrMap,     // one domain's attributes (text: the domain)
    kCapMap,      // one domain's capacities (text: the domain)
  };
  Kind kind = Kind::kNull;
  bool flag = false;
  std::int64_t number = 0;
  std::string text;
  core::Quantity quantity;
  std::vector<Value> list;
};
using K = Value::Kind;
using Eval = core::Result<Value>;

Value boolean(bool b) { return {.kind = K::kBool, .flag = b}; }
Value integer(std::int64_t n) { return {.kind = K::kInt, .number = n}; }
Value string(std::string s, K kind = K::kString) { return {.kind = kind, .text = std::move(s)}; }
Value quantity(core::Quantity q) { return {.kind = K::kQuantity, .quantity = q}; }

core::Status error(std::string message) { return core::Status::invalid(std::move(message)); }

std::string_view kindName(K k) {
  // In the order of Value::Kind; the kinds after kDevice are the device's maps.
  constexpr std::string_view kNames[] = {"null",   "bool",     "int",  "string",
                                         "semver", "quantity", "list", "device"};
  const auto index = static_cast<std::size_t>(k);
  return index < std::size(kNames) ? kNames[index] : "map";
}

core::Status noOverload(std::string_view what, const Value& a) {
  return error(fmt::format("no such overload: {}({})", what, kindName(a.kind)));
}

// A semantic version: MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD], numbers without leading zeros.
struct Semver {
  std::int64_t major = 0, minor = 0, patch = 0;
  std::string pre;
};

std::optional<Semver> parseSemver(std::string_view text) {
  auto plus = text.find('+');
  if (plus != std::string_view::npos) text = text.substr(0, plus);
  Semver v;
  auto dash = text.find('-');
  if (dash != std::string_view::npos) {
    v.pre = std::string(text.substr(dash + 1));
    if (v.pre.empty()) return std::nullopt;
    text = text.substr(0, dash);
  }
  std::int64_t* parts[] = {&v.major, &v.minor, &v.patch};
  for (int i = 0; i < 3; ++i) {
    auto dot = text.find('.');
    std::string_view part = i < 2 ? text.substr(0, dot) : text;
    if (part.empty() || part.size() > 18 || (part.size() > 1 && part[0] == '0') ||
        !std::all_of(part.begin(), part.end(), core::isAsciiDigit))
      return std::nullopt;
    *parts[i] = std::stoll(std::string(part));
    if (i < 2) {
      if (dot == std::string_view::npos) return std::nullopt;
      text = text.substr(dot + 1);
    }
  }
  return v;
}

// Semantic-version precedence, pre-release identifiers compared as text (a release sorts after its
// pre-releases).
int compareSemver(const Semver& a, const Semver& b) {
  auto key = [](const Semver& v) { return std::tie(v.major, v.minor, v.patch); };
  if (key(a) != key(b)) return key(a) < key(b) ? -1 : 1;
  if (a.pre == b.pre) return 0;
  if (a.pre.empty()) return 1;
  if (b.pre.empty()) return -1;
  return a.pre < b.pre ? -1 : 1;
}

core::Result<Semver> semverOf(const Value& v) {
  auto s = parseSemver(v.text);
  if (!s) return error("invalid semantic version: " + v.text);
  return *s;
}

// UTF-8 code points, as CEL's size() of a string counts.
std::int64_t codePoints(std::string_view s) {
  return std::count_if(s.begin(), s.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

class Evaluator {
 public:
  Evaluator(const DraDevice& device, std::string_view driver) : device_(device), driver_(driver) {}

  Eval eval(const Node& n) {
    switch (n.op) {
      case Op::kString:
        return string(n.text);
      case Op::kInt:
        return integer(n.number);
      case Op::kBool:
        return boolean(n.number != 0);
      case Op::kNull:
        return Value{};
      case Op::kList: {
        Value list;
        list.kind = K::kList;
        for (const auto& a : n.args) {
          auto v = eval(*a);
          if (!v) return v;
          list.list.push_back(std::move(*v));
        }
        return list;
      }
      case Op::kIdent: {
        Value v;
        v.kind = K::kDevice;
        return v;
      }
      case Op::kSelect:
      case Op::kIndex:
        return access(n, false);
      case Op::kHas:
        return access(*n.args[0], true);
      case Op::kCall:
        return call(n);
      case Op::kNot: {
        auto v = operand(n, K::kBool, "!_");
        if (!v) return v;
        return boolean(!v->flag);
      }
      case Op::kNeg: {
        auto v = operand(n, K::kInt, "-_");
        if (!v) return v;
        if (v->number == std::numeric_limits<std::int64_t>::min()) return error("int overflow");
        return integer(-v->number);
      }
      case Op::kAnd:
      case Op::kOr:
        return logic(n);
      case Op::kCond: {
        auto c = operand(n, K::kBool, "_?_:_");
        if (!c) return c;
        return eval(*n.args[c->flag ? 1 : 2]);
      }
      default:
        return binary(n);
    }
  }

 private:
  // The first argument of `n` evaluated, when it is of `kind`; else an error (the operator `op`
  // has no overload for its kind).
  Eval operand(const Node& n, K kind, std::string_view op) {
    auto v = eval(*n.args[0]);
    if (v && v->kind != kind) return noOverload(op, *v);
    return v;
  }

  const DraValue* attribute(const std::string& domain, const std::string& name) const {
    auto it = device_.attributes.find(domain + "/" + name);
    return it == device_.attributes.end() ? nullptr : &it->second;
  }
  const std::string* capacity(const std::string& domain, const std::string& name) const {
    auto it = device_.capacity.find(domain + "/" + name);
    return it == device_.capacity.end() ? nullptr : &it->second;
  }

  static Value fromAttribute(const DraValue& a) {
    switch (a.type) {
      case DraValue::Type::kString:
        return string(a.text);
      case DraValue::Type::kVersion:
        return string(a.text, K::kVersion);
      case DraValue::Type::kInt:
        return integer(a.number);
      case DraValue::Type::kBool:
        break;
    }
    return boolean(a.flag);
  }

  // x.name, x[key], or with `presence` the has() test of them.
  Eval access(const Node& n, bool presence) {
    auto base = eval(*n.args[0]);
    if (!base) return base;
    std::string key;
    if (n.op == Op::kSelect) {
      key = n.text;
    } else {
      auto k = eval(*n.args[1]);
      if (!k) return k;
      if (base->kind == K::kList) {
        if (presence) return error("has() needs a field selection");
        if (k->kind != K::kInt) return noOverload("_[_]", *k);
        if (k->number < 0 || k->number >= static_cast<std::int64_t>(base->list.size()))
          return error(fmt::format("index out of range: {}", k->number));
        return base->list[static_cast<std::size_t>(k->number)];
      }
      if (k->kind != K::kString) return noOverload("_[_]", *k);
      key = k->text;
    }
    switch (base->kind) {
      case K::kDevice:
        if (key == "driver") return presence ? boolean(true) : string(std::string(driver_));
        if (key == "allowMultipleAllocations")
          return presence ? boolean(true) : boolean(device_.allowMultipleAllocations);
        if (key == "attributes" || key == "capacity") {
          if (presence) return boolean(true);
          Value v;
          v.kind = key == "attributes" ? K::kAttributes : K::kCapacities;
          return v;
        }
        if (presence) return boolean(false);
        return error("no such key: " + key);
      case K::kAttributes:
      case K::kCapacities: {
        // An unknown domain is an empty map.
        if (presence) {
          const std::string prefix = key + "/";
          auto has = [&](const auto& map) {
            auto it = map.lower_bound(prefix);
            return it != map.end() && it->first.compare(0, prefix.size(), prefix) == 0;
          };
          return boolean(base->kind == K::kAttributes ? has(device_.attributes)
                                                      : has(device_.capacity));
        }
        return string(key, base->kind == K::kAttributes ? K::kAttrMap : K::kCapMap);
      }
      case K::kAttrMap: {
        const DraValue* a = attribute(base->text, key);
        if (presence) return boolean(a != nullptr);
        if (a == nullptr) return error("no such key: " + key);
        return fromAttribute(*a);
      }
      case K::kCapMap: {
        const std::string* c = capacity(base->text, key);
        if (presence) return boolean(c != nullptr);
        if (c == nullptr) return error("no such key: " + key);
        auto q = core::Quantity::parse(*c);
        if (!q) return error("capacity " + key + ": " + q.status().message());
        return quantity(*q);
      }
      default:
        if (presence) return error("has() needs a field selection of a map");
        return noOverload(n.op == Op::kSelect ? "_._" : "_[_]", *base);
    }
  }

  // CEL's commutative && and ||: a deciding operand wins over an error on the other side.
  Eval logic(const Node& n) {
    const bool isAnd = n.op == Op::kAnd;
    auto a = eval(*n.args[0]);
    if (a && a->kind == K::kBool && a->flag != isAnd) return boolean(!isAnd);
    auto b = eval(*n.args[1]);
    if (b && b->kind == K::kBool && b->flag != isAnd) return boolean(!isAnd);
    if (!a) return a;
    if (!b) return b;
    if (a->kind != K::kBool) return noOverload(isAnd ? "_&&_" : "_||_", *a);
    if (b->kind != K::kBool) return noOverload(isAnd ? "_&&_" : "_||_", *b);
    return boolean(isAnd);
  }

  static core::Result<bool> equal(const Value& a, const Value& b) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
      case K::kNull:
        return true;
      case K::kBool:
        return a.flag == b.flag;
      case K::kInt:
        return a.number == b.number;
      case K::kString:
        return a.text == b.text;
      case K::kVersion: {
        auto x = semverOf(a), y = semverOf(b);
        if (!x) return x.status();
        if (!y) return y.status();
        return compareSemver(*x, *y) == 0;
      }
      case K::kQuantity:
        return a.quantity == b.quantity;
      case K::kList: {
        if (a.list.size() != b.list.size()) return false;
        for (std::size_t i = 0; i < a.list.size(); ++i) {
          auto e = equal(a.list[i], b.list[i]);
          if (!e || !*e) return e;
        }
        return true;
      }
      default:
        return error("no such overload: _==_(map, map)");
    }
  }

  Eval binary(const Node& n) {
    auto a = eval(*n.args[0]);
    if (!a) return a;
    auto b = eval(*n.args[1]);
    if (!b) return b;
    switch (n.op) {
      case Op::kEq:
      case Op::kNe: {
        auto e = equal(*a, *b);
        if (!e) return e.status();
        return boolean(*e == (n.op == Op::kEq));
      }
      case Op::kIn:
        return membership(*a, *b);
      case Op::kLt:
      case Op::kLe:
      case Op::kGt:
      case Op::kGe:
        return order(n.op, *a, *b);
      default:
        return arithmetic(n.op, *a, *b);
    }
  }

  Eval membership(const Value& item, const Value& in) {
    if (in.kind == K::kList) {
      for (const auto& e : in.list) {
        auto eq = equal(item, e);
        if (!eq) return eq.status();
        if (*eq) return boolean(true);
      }
      return boolean(false);
    }
    if ((in.kind == K::kAttrMap || in.kind == K::kCapMap) && item.kind == K::kString) {
      return boolean(in.kind == K::kAttrMap ? attribute(in.text, item.text) != nullptr
                                            : capacity(in.text, item.text) != nullptr);
    }
    if ((in.kind == K::kAttributes || in.kind == K::kCapacities) && item.kind == K::kString) {
      return boolean(true);  // every domain reads as a map (an unknown one is empty)
    }
    return noOverload("@in", in);
  }

  static Eval order(Op op, const Value& a, const Value& b) {
    int c = 0;
    if (a.kind != b.kind) return error("no such overload: ordering of different types");
    switch (a.kind) {
      case K::kInt:
        c = a.number < b.number ? -1 : a.number > b.number ? 1 : 0;
        break;
      case K::kString:
        c = a.text.compare(b.text);
        break;
      case K::kBool:
        c = static_cast<int>(a.flag) - static_cast<int>(b.flag);
        break;
      default:
        return noOverload("ordering", a);
    }
    switch (op) {
      case Op::kLt:
        return boolean(c < 0);
      case Op::kLe:
        return boolean(c <= 0);
      case Op::kGt:
        return boolean(c > 0);
      default:
        return boolean(c >= 0);
    }
  }

  static Eval arithmetic(Op op, const Value& a, const Value& b) {
    if (op == Op::kAdd && a.kind == K::kString && b.kind == K::kString)
      return string(a.text + b.text);
    if (a.kind != K::kInt || b.kind != K::kInt) return noOverload("arithmetic", a);
    std::int64_t r = 0;
    bool overflow = false;
    switch (op) {
      case Op::kAdd:
        overflow = __builtin_add_overflow(a.number, b.number, &r);
        break;
      case Op::kSub:
        overflow = __builtin_sub_overflow(a.number, b.number, &r);
        break;
      case Op::kMul:
        overflow = __builtin_mul_overflow(a.number, b.number, &r);
        break;
      default:
        if (b.number == 0) return error(op == Op::kDiv ? "division by zero" : "modulus by zero");
        if (a.number == std::numeric_limits<std::int64_t>::min() && b.number == -1)
          return error("int overflow");
        r = op == Op::kDiv ? a.number / b.number : a.number % b.number;
    }
    if (overflow) return error("int overflow");
    return integer(r);
  }

  Eval call(const Node& n) {
    std::vector<Value> args;
    for (const auto& a : n.args) {
      auto v = eval(*a);
      if (!v) return v;
      args.push_back(std::move(*v));
    }
    if (!n.method) return function(n.text, args);
    const Value& self = args[0];
    const std::size_t arity = args.size() - 1;
    auto argOf = [&](K kind) -> const Value* {
      return arity == 1 && args[1].kind == kind ? &args[1] : nullptr;
    };
    const std::string& m = n.text;
    if (self.kind == K::kString) {
      if (const Value* s = argOf(K::kString)) {
        if (m == "startsWith") return boolean(self.text.starts_with(s->text));
        if (m == "endsWith") return boolean(self.text.ends_with(s->text));
        if (m == "contains") return boolean(self.text.find(s->text) != std::string::npos);
        if (m == "matches") {
          RE2 re(s->text, RE2::Quiet);
          if (!re.ok()) return error("invalid regular expression: " + re.error());
          return boolean(RE2::PartialMatch(self.text, re));
        }
      }
      if (arity == 0 && m == "size") return integer(codePoints(self.text));
      if (arity == 0 && (m == "lowerAscii" || m == "upperAscii")) {
        std::string out = self.text;
        for (char& c : out) {
          if (m == "lowerAscii" && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
          if (m == "upperAscii" && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        }
        return string(out);
      }
    }
    if (self.kind == K::kVersion) {
      auto v = semverOf(self);
      if (!v) return v.status();
      if (const Value* o = argOf(K::kVersion)) {
        auto w = semverOf(*o);
        if (!w) return w.status();
        return compared(m, compareSemver(*v, *w));
      }
      if (arity == 0 && m == "major") return integer(v->major);
      if (arity == 0 && m == "minor") return integer(v->minor);
      if (arity == 0 && m == "patch") return integer(v->patch);
    }
    if (self.kind == K::kQuantity) {
      if (const Value* o = argOf(K::kQuantity))
        return compared(m, self.quantity.compare(o->quantity));
      if (arity == 0 && m == "isInteger")
        return boolean(self.quantity.milliValue() % 1000 == 0 &&
                       self.quantity.value() != std::numeric_limits<std::int64_t>::max());
      if (arity == 0 && m == "asInteger") {
        if (self.quantity.milliValue() % 1000 != 0) return error("quantity is not an integer");
        return integer(self.quantity.value());
      }
    }
    return error(
        fmt::format("no such overload: {}.{}({} argument(s))", kindName(self.kind), m, arity));
  }

  static Eval compared(const std::string& method, int c) {
    c = c < 0 ? -1 : c > 0 ? 1 : 0;
    if (method == "compareTo") return integer(c);
    if (method == "isGreaterThan") return boolean(c > 0);
    if (method == "isLessThan") return boolean(c < 0);
    return error("no such overload: " + method);
  }

  static Eval function(const std::string& f, const std::vector<Value>& args) {
    if (args.size() != 1) return error(fmt::format("{}() takes one argument", f));
    const Value& a = args[0];
    if (f == "size") {
      if (a.kind == K::kString) return integer(codePoints(a.text));
      if (a.kind == K::kList) return integer(static_cast<std::int64_t>(a.list.size()));
      return noOverload("size", a);
    }
    if (a.kind != K::kString) return noOverload(f, a);
    if (f == "quantity") {
      auto q = core::Quantity::parse(a.text);
      if (!q) return error("invalid quantity: " + a.text);
      return quantity(*q);
    }
    if (!parseSemver(a.text)) return error("invalid semantic version: " + a.text);
    return string(a.text, K::kVersion);
  }

  const DraDevice& device_;
  std::string_view driver_;
};

}  // namespace
}  // namespace cel

core::Result<DeviceSelector> DeviceSelector::compile(std::string_view expression) {
  auto root = cel::parse(expression);
  if (!root) return root.status();
  DeviceSelector s;
  s.root_ = std::shared_ptr<const cel::Node>(std::move(*root));
  s.expression_ = std::string(expression);
  return s;
}

core::Result<bool> DeviceSelector::matches(const DraDevice& device, std::string_view driver) const {
  if (!root_) return false;
  auto v = cel::Evaluator(device, driver).eval(*root_);
  if (!v) return v.status();
  if (v->kind != cel::K::kBool)
    return core::Status::invalid("the selector's result is not a bool: " + expression_);
  return v->flag;
}

}  // namespace gpuscale::partition
