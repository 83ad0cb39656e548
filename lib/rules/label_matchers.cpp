#include "gpuscale/rules/label_matchers.h"

#include <fmt/format.h>

#include "gpuscale/core/enum_names.h"
#include "gpuscale/core/go_quote.h"

namespace gpuscale::rules {
namespace {

std::string_view opText(MatchOp op) {
  static constexpr core::EnumNames<MatchOp, 4> kNames{{{MatchOp::kEqual, "="},
                                                       {MatchOp::kNotEqual, "!="},
                                                       {MatchOp::kRegexMatch, "=~"},
                                                       {MatchOp::kRegexNoMatch, "!~"}}};
  return core::enumName(kNames, op, "=");
}

// The inside of a Go-quoted string: safe between double quotes in PromQL.
std::string quotedBody(std::string_view text) {
  std::string quoted = core::goQuote(text);
  return quoted.substr(1, quoted.size() - 2);
}

}  // namespace

std::string formatMatcher(std::string_view label, MatchOp op, std::string_view value) {
  std::string out(label);
  out += opText(op);
  out += core::goQuote(value);
  return out;
}

std::string literalAlternation(std::span<const std::string> values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += '|';
    out += core::regexQuoteMeta(values[i]);
  }
  return out;
}

bool isPrometheusLabelName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && (i == 0 || c < '0' || c > '9')) return false;
  }
  return true;
}

void LabelMatchers::add(std::string_view label, MatchOp op, std::string_view value,
                        std::span<const std::string> values) {
  matchers_.push_back(formatMatcher(label, op, value));
  valuesByName_[std::string(label)] = quotedBody(literalAlternation(values));
}

core::Status LabelMatchers::addSelector(const core::LabelSelector& selector) {
  using core::SelectorOperator;
  LabelMatchers staged;
  for (const core::Requirement& req : selector.requirements()) {
    if (!isPrometheusLabelName(req.key)) {
      return core::Status::badRequest(fmt::format(
          "metric label selector key {:?} is not a valid Prometheus label name", req.key));
    }
    const size_t n = req.values.size();
    const bool negated =
        req.op == SelectorOperator::kNotEquals || req.op == SelectorOperator::kNotIn;
    if (req.op == SelectorOperator::kGreaterThan || req.op == SelectorOperator::kLessThan) {
      return core::Status::badRequest(
          fmt::format("operator not supported by query builder in {:?}", req.toString()));
    }
    if (req.op == SelectorOperator::kExists || req.op == SelectorOperator::kDoesNotExist) {
      if (n != 0) {
        return core::Status::badRequest(
            fmt::format("unsupported values in requirement {:?}", req.toString()));
      }
      staged.add(req.key,
                 req.op == SelectorOperator::kExists ? MatchOp::kNotEqual : MatchOp::kEqual, "",
                 req.values);
      continue;
    }
    if (n == 0) {
      return core::Status::badRequest(
          fmt::format("malformed requirement {:?}: no values", req.toString()));
    }
    if (n == 1 &&
        (req.op == SelectorOperator::kEquals || req.op == SelectorOperator::kDoubleEquals ||
         req.op == SelectorOperator::kNotEquals)) {
      staged.add(req.key, negated ? MatchOp::kNotEqual : MatchOp::kEqual, req.values.front(),
                 req.values);
      continue;
    }
    staged.add(req.key, negated ? MatchOp::kRegexNoMatch : MatchOp::kRegexMatch,
               literalAlternation(req.values), req.values);
  }
  for (std::string& m : staged.matchers_) matchers_.push_back(std::move(m));
  for (auto& [k, v] : staged.valuesByName_) valuesByName_[k] = std::move(v);
  return core::Status();
}

void LabelMatchers::addEqual(std::string_view label, std::string_view value) {
  std::string v(value);
  add(label, MatchOp::kEqual, value, std::span<const std::string>(&v, 1));
}

void LabelMatchers::addNames(std::string_view label, std::span<const std::string> names) {
  if (names.size() == 1) {
    add(label, MatchOp::kEqual, names.front(), names);
  } else {
    add(label, MatchOp::kRegexMatch, literalAlternation(names), names);
  }
}

void LabelMatchers::addAnyValue(std::string_view label) {
  matchers_.push_back(formatMatcher(label, MatchOp::kNotEqual, ""));
  valuesByName_[std::string(label)] = ".+";
}

std::string LabelMatchers::joined() const {
  std::string out;
  for (size_t i = 0; i < matchers_.size(); ++i) {
    if (i > 0) out += ',';
    out += matchers_[i];
  }
  return out;
}

}  // namespace gpuscale::rules
