// The PromQL the adapter renders for hostile object names and namespaces, run through a real PromQL
// parser and engine: `promtool test rules` (Debian's prometheus package) loads series whose label
// values are the intended strings, evaluates each rendered query and compares the series it
// selects with the expected ones. The series are written with every character escaped (\U or \x),
// independently of core::goQuote, so the check is that the query's matchers *mean* the intended
// values: a quote, backslash, newline, `}` or regex metacharacter in a name can neither end the
// string nor widen the match, and nothing else is selected than the objects asked for.
//
// A value that is not UTF-8 must be refused (400) before any query: Prometheus stores no such label
// value and rejects such a regex. Skipped (with a message) when promtool is not installed.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "compile_text.h"
#include "gpuscale/core/go_quote.h"
#include "gpuscale/rules/namer.h"

namespace gpuscale::rules {
namespace promql_escaping_test {

namespace fs = std::filesystem;
constexpr const char* kPromtool = "/usr/bin/promtool";

// Hostile values for object names and namespaces (the request path reaches them decoded).
struct HostileValue {
  const char* what;
  std::string value;
};

const std::vector<HostileValue>& hostileValues() {
  static const std::vector<HostileValue> values = {
      {"plain", "triton-0"},
      {"double quote", "a\"b"},
      {"quote and brace ending the selector", "x\"}or vector(1) or m{a=\""},
      {"backslash", "a\\b"},
      {"backslash before quote", "a\\\"b"},
      {"trailing backslash", "ab\\"},
      {"newline", "line\nbreak"},
      {"carriage return and tab", "a\r\tb"},
      {"control characters and DEL", std::string("a\x01\x1f\x7f") + "b"},
      {"closing brace", "}"},
      {"comma and equals", "a,b=c"},
      {"regex operator text", "=~.*"},
      {"regex alternation", "a|b"},
      {"regex wildcard", ".*"},
      {"regex class and group", "[a-z]+(x)?{2}"},
      {"regex anchors and escapes", "^$\\d\\"},
      {"unicode", "ünïcødé-名前-🚀"},
      {"unicode line separator", "a\u2028b"},
      {"invalid UTF-8",
       "a\xff"
       "b"},
      {"template delimiters", "<<.Series>>{{.x}}"},
      {"percent escape", "%2A"},
      {"single quote and backtick", "'`"},
      {"empty", ""},
  };
  return values;
}

// `text` as a PromQL string literal with every character escaped: \UXXXXXXXX per code point, \xNN
// for bytes that are not UTF-8.
std::string escapeAll(const std::string& text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t length = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (length == 0 || i + length > text.size()) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    uint32_t rune = length == 1 ? c : c & (0x7f >> length);
    for (size_t k = 1; k < length; ++k) rune = (rune << 6) | (text[i + k] & 0x3f);
    out += fmt::format("\\U{:08x}", rune);
    i += length;
  }
  return out + "\"";
}

// Series notation for metric `m` with these labels (empty values left out, as Prometheus stores
// them).
std::string series(const std::map<std::string, std::string>& labels) {
  std::string out = "m{";
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (value.empty()) continue;
    if (!first) out += ',';
    out += name + "=" + escapeAll(value);
    first = false;
  }
  return out + "}";
}

struct Series {
  std::map<std::string, std::string> labels;
  int value = 0;
};

// One rendered query and the series it must select (and nothing else).
struct ExprCase {
  std::string what;
  std::string expr;
  std::vector<Series> expected;
};

// Runs promtool on a unit-test file; its output, and whether every case passed.
std::pair<bool, std::string> runPromtool(const fs::path& file) {
  const std::string command = std::string(kPromtool) + " test rules " + file.string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {false, "popen failed"};
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) && WEXITSTATUS(status) == 0, output};
}

constexpr const char* kRules = R"(rules:
- seriesQuery: m
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: '<<.Series>>{<<.LabelMatchers>>}'
- seriesQuery: m
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: '<<.Series>>{namespace="ns",pod=~"<<index .LabelValuesByName "pod">>"}'
)";

class PromqlEscapingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kPromtool, X_OK) != 0) {
      GTEST_SKIP() << kPromtool << " is not installed (Debian package prometheus); the rendered "
                   << "PromQL was not checked against a real parser";
    }
    rules_ = compileText(kRules);
    ASSERT_NE(rules_, nullptr);
    dir_ = fs::temp_directory_path() / ("gpuscale-promql-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  core::Result<std::string> tryRender(size_t rule, std::string_view ns,
                                      std::vector<std::string> names) {
    QueryRequest request;
    request.seriesName = "m";
    request.resource = {"", "pods"};
    request.namespaceName = ns;
    request.names = names;
    return rules_->rules.at(rule).queryFor(request);
  }
  std::string render(size_t rule, std::string_view ns, std::vector<std::string> names) {
    auto query = tryRender(rule, ns, std::move(names));
    EXPECT_TRUE(query.ok()) << query.status().message();
    return query.ok() ? *query : "";
  }

  std::shared_ptr<const RuleSet> rules_;
  fs::path dir_;
};

TEST_F(PromqlEscapingTest, RenderedMatchersSelectExactlyTheIntendedObjects) {
  int index = 0;
  for (const auto& [what, value] : hostileValues()) {
    SCOPED_TRACE(what);
    if (!core::isValidUtf8(value)) {
      // No Prometheus label value can equal it, and Prometheus rejects a regex that is not UTF-8:
      // a bad request, before any query.
      for (const auto& query : {tryRender(0, "ns", {value}), tryRender(0, "ns", {value, "other"}),
                                tryRender(1, "ns", {value}), tryRender(0, value, {"p"})}) {
        EXPECT_EQ(query.status().httpCode(), 400) << (query.ok() ? *query : "");
      }
      continue;
    }
    // The object itself, a second object, near misses a broken escape or regex would select, and
    // objects in a namespace of that name.
    std::vector<Series> input;
    std::set<std::map<std::string, std::string>> seen;
    const auto add = [&](std::map<std::string, std::string> labels) {
      if (!seen.insert(labels).second) return;
      input.push_back({std::move(labels), static_cast<int>(input.size()) + 1});
    };
    add({{"namespace", "ns"}, {"pod", value}});
    add({{"namespace", "ns"}, {"pod", "other"}});
    for (const std::string& near :
         {value + "x", "x" + value, value + "\n", std::string("a"), std::string(".")}) {
      if (near != value) add({{"namespace", "ns"}, {"pod", near}});
    }
    if (!value.empty()) {
      add({{"namespace", value}, {"pod", "p"}});
      add({{"namespace", value + "x"}, {"pod", "p"}});
      add({{"namespace", "ns"}, {"pod", "p"}});
    }
    const auto selected = [&](auto predicate) {
      std::vector<Series> out;
      for (const auto& s : input) {
        if (predicate(s.labels)) out.push_back(s);
      }
      return out;
    };
    const auto inNs = [](const auto& labels, const std::string& ns) {
      return labels.at("namespace") == ns;
    };

    std::vector<ExprCase> cases = {
        {"one name (pod=\"...\")", render(0, "ns", {value}),
         selected([&](const auto& l) { return inNs(l, "ns") && l.at("pod") == value; })},
        {"two names (pod=~\"a|b\")", render(0, "ns", {value, "other"}),
         selected([&](const auto& l) {
           return inNs(l, "ns") && (l.at("pod") == value || l.at("pod") == "other");
         })},
        {".LabelValuesByName between quotes", render(1, "ns", {value}),
         selected([&](const auto& l) { return inNs(l, "ns") && l.at("pod") == value; })},
    };
    if (!value.empty()) {
      cases.push_back(
          {"namespace (namespace=\"...\")", render(0, value, {"p"}),
           selected([&](const auto& l) { return inNs(l, value) && l.at("pod") == "p"; })});
    }

    nlohmann::json test = {{"interval", "1m"}};
    for (const auto& s : input) {
      test["input_series"].push_back(
          {{"series", series(s.labels)}, {"values", fmt::format("{0} {0}", s.value)}});
    }
    for (const auto& c : cases) {
      nlohmann::json expr = {
          {"expr", c.expr}, {"eval_time", "1m"}, {"exp_samples", nlohmann::json::array()}};
      for (const auto& s : c.expected) {
        expr["exp_samples"].push_back({{"labels", series(s.labels)}, {"value", s.value}});
      }
      test["promql_expr_test"].push_back(expr);
    }
    const nlohmann::json file = {
        {"rule_files", nlohmann::json::array()}, {"evaluation_interval", "1m"}, {"tests", {test}}};
    const fs::path path = dir_ / fmt::format("case-{}.yaml", index++);
    std::ofstream(path) << file.dump(2);
    const auto [passed, output] = runPromtool(path);
    std::string queries;
    for (const auto& c : cases) queries += "  " + c.what + ": " + c.expr + "\n";
    EXPECT_TRUE(passed) << "value " << escapeAll(value) << ", queries:\n" << queries << output;
  }
}

}  // namespace promql_escaping_test
}  // namespace gpuscale::rules
