// Text-level handling of series selectors for discovery (declared in gpuscale/prom/discovery.h):
// which labels a selector requires, which of its matchers are on the metric name, and adding
// matchers. Discovery never evaluates a selector itself; it only reshapes it for Prometheus.
#include <vector>

#include "gpuscale/core/files.h"
#include "gpuscale/core/go_quote.h"
#include "gpuscale/prom/discovery.h"
#include "gpuscale/prom/errors.h"

namespace gpuscale::prom {
namespace {

// The parts of a series selector: the metric name before the braces and the matchers inside them.
struct SelectorParts {
  std::string_view name;
  std::string_view matchers;
};

Result<SelectorParts> splitSelector(std::string_view seriesQuery) {
  std::string_view query = core::trimSpace(seriesQuery);
  auto open = query.find('{');
  if (open == std::string_view::npos) {
    if (query.empty()) return Status::badRequest("empty series query");
    return SelectorParts{query, {}};
  }
  if (query.back() != '}') {
    return Status::badRequest("series query \"" + std::string(seriesQuery) +
                              "\" is not a series selector");
  }
  return SelectorParts{core::trimSpace(query.substr(0, open)),
                       core::trimSpace(query.substr(open + 1, query.size() - open - 2))};
}

// One matcher split into its label name and the operator with its quoted value.
struct MatcherText {
  std::string_view text;
  std::string_view label;
  std::string_view tail;  // operator and value, e.g. `!=""`
};

// The matchers inside the braces, split at commas outside quotes.
std::vector<MatcherText> splitMatchers(std::string_view rest) {
  std::vector<MatcherText> out;
  while (!rest.empty()) {
    size_t end = 0;
    char quote = 0;
    for (; end < rest.size(); ++end) {
      char c = rest[end];
      if (quote != 0) {
        if (c == '\\') {
          ++end;
        } else if (c == quote) {
          quote = 0;
        }
      } else if (c == '"' || c == '\'' || c == '`') {
        quote = c;
      } else if (c == ',') {
        break;
      }
    }
    std::string_view matcher = core::trimSpace(rest.substr(0, std::min(end, rest.size())));
    rest = end < rest.size() ? rest.substr(end + 1) : std::string_view();
    if (matcher.empty()) continue;
    auto op = matcher.find_first_of("!=~");
    if (op == std::string_view::npos) {
      out.push_back({matcher, matcher, {}});
      continue;
    }
    out.push_back(
        {matcher, core::trimSpace(matcher.substr(0, op)), core::trimSpace(matcher.substr(op))});
  }
  return out;
}

std::string joinSelector(std::string_view name, std::string_view first, std::string_view rest) {
  std::string out(name);
  out += "{";
  out += first;
  if (!rest.empty()) out += "," + std::string(rest);
  return out + "}";
}

}  // namespace

bool requiresLabel(std::string_view seriesQuery, std::string_view label) {
  auto parts = splitSelector(seriesQuery);
  if (!parts) return false;
  for (const MatcherText& m : splitMatchers(parts->matchers)) {
    if (m.label != label) continue;
    if (m.tail == "!=\"\"" || m.tail == "!=''") return true;
    if (m.tail.size() > 3 && m.tail[0] == '=' && m.tail[1] != '~' && m.tail != "=\"\"" &&
        m.tail != "=''") {
      return true;
    }
  }
  return false;
}

Result<std::string> addMatcher(std::string_view seriesQuery, std::string_view matcher) {
  auto parts = splitSelector(seriesQuery);
  if (!parts) return parts.status();
  return joinSelector(parts->name, matcher, parts->matchers);
}

Result<std::string> restrictToMetric(std::string_view seriesQuery, std::string_view name) {
  auto parts = splitSelector(seriesQuery);
  if (!parts) return parts.status();
  if (!parts->name.empty()) {
    if (parts->name == name) return std::string(core::trimSpace(seriesQuery));
    return Status::badRequest("series query \"" + std::string(seriesQuery) + "\" does not select " +
                              std::string(name));
  }
  return joinSelector("", "__name__=" + core::goQuote(name), parts->matchers);
}

Result<std::string> restrictToMetrics(std::string_view seriesQuery,
                                      const std::vector<std::string>& names) {
  if (names.size() == 1) return restrictToMetric(seriesQuery, names.front());
  std::string alternation;
  for (const auto& name : names) {
    if (!alternation.empty()) alternation += '|';
    alternation += core::regexQuoteMeta(name);
  }
  return addMatcher(seriesQuery, "__name__=~" + core::goQuote(alternation));
}

Result<NameSelector> nameSelectorOf(std::string_view seriesQuery) {
  auto parts = splitSelector(seriesQuery);
  if (!parts) return parts.status();
  NameSelector out;
  std::string inside;
  for (const MatcherText& m : splitMatchers(parts->matchers)) {
    if (m.label == "__name__") {
      if (!inside.empty()) inside += ',';
      inside += m.text;
    } else {
      out.complete = false;
    }
  }
  if (parts->name.empty() && inside.empty()) return out;
  out.selector = std::string(parts->name);
  if (!inside.empty() || parts->name.empty()) out.selector += "{" + inside + "}";
  return out;
}

}  // namespace gpuscale::prom
