#include "gpuscale/rules/label_matchers.h"

#include <gtest/gtest.h>

namespace gpuscale::rules {
namespace label_matchers_test {

struct SelectorRow {
  const char* what;
  const char* selector;
  bool ok;
  const char* matchers;  // joined, or a fragment of the error message
};

// the selector → matcher table (including its error rows) and the external
// examples.
const SelectorRow kSelectorRows[] = {
    {"k=v", "k=v", true, R"(k="v")"},
    {"k==v", "k==v", true, R"(k="v")"},
    {"k!=v", "k!=v", true, R"(k!="v")"},
    {"in with one value", "k in (v)", true, R"(k=~"v")"},
    {"in with two values (sorted)", "k in (b,a)", true, R"(k=~"a|b")"},
    {"notin with one value", "k notin (v)", true, R"(k!~"v")"},
    {"notin with two values", "k notin (a,b)", true, R"(k!~"a|b")"},
    {"exists", "k", true, R"(k!="")"},
    {"does not exist", "!k", true, R"(k="")"},
    {"greater than is unsupported", "k>1", false, "operator not supported"},
    {"less than is unsupported", "k<1", false, "operator not supported"},
    {"external example: foo=bar plus qux in (baz,bar)", "foo=bar,qux in (baz,bar)", true,
     R"(foo="bar",qux=~"bar|baz")"},
    {"requirements are sorted by key", "z=1,a=2", true, R"(a="2",z="1")"},
    {"dots in values are escaped inside regex matchers", "k in (v1.2,v1.3)", true,
     R"(k=~"v1\\.2|v1\\.3")"},
    {"dots stay as they are in equality matchers", "k=v1.2", true, R"(k="v1.2")"},
    {"a key that is not a Prometheus label name", "app.kubernetes.io/name=x", false,
     "not a valid Prometheus label name"},
};

TEST(LabelMatchersSelector, Table) {
  for (const SelectorRow& row : kSelectorRows) {
    SCOPED_TRACE(row.what);
    core::Result<core::LabelSelector> selector = core::LabelSelector::parse(row.selector);
    ASSERT_TRUE(selector.ok()) << selector.status().message();
    LabelMatchers matchers;
    core::Status status = matchers.addSelector(*selector);
    EXPECT_EQ(status.ok(), row.ok) << status.message();
    if (row.ok) {
      EXPECT_EQ(matchers.joined(), row.matchers);
    } else {
      EXPECT_EQ(status.httpCode(), 400);
      EXPECT_NE(status.message().find(row.matchers), std::string::npos) << status.message();
      EXPECT_TRUE(matchers.matchers().empty()) << "nothing is appended on error";
    }
  }
}

struct NamesRow {
  const char* what;
  std::vector<std::string> names;
  const char* matcher;
  const char* valuesByName;
};

const NamesRow kNamesRows[] = {
    {"one name is an equality", {"web-1"}, R"(pod="web-1")", "web-1"},
    {"two names are an alternation in the given order",
     {"somepod1", "somepod2"},
     R"(pod=~"somepod1|somepod2")",
     "somepod1|somepod2"},
    {"a quote cannot end the string",
     {R"(a"}or{x=")"},
     R"(pod="a\"}or{x=\"")",
     R"(a\"\\}or\\{x=\")"},
    {"an alternation in a name cannot widen the match",
     {"a|.*", "b"},
     R"(pod=~"a\\|\\.\\*|b")",
     R"(a\\|\\.\\*|b)"},
    {"a backslash is escaped twice inside regexes",
     {"a\\", "b"},
     R"(pod=~"a\\\\|b")",
     R"(a\\\\|b)"},
    {"a newline is quoted", {"a\nb"}, R"(pod="a\nb")", R"(a\nb)"},
    {"a dot is a literal dot in an alternation", {"a.b", "c"}, R"(pod=~"a\\.b|c")", R"(a\\.b|c)"},
};

TEST(LabelMatchersNames, Table) {
  for (const NamesRow& row : kNamesRows) {
    SCOPED_TRACE(row.what);
    LabelMatchers matchers;
    matchers.addNames("pod", row.names);
    EXPECT_EQ(matchers.joined(), row.matcher);
    EXPECT_EQ(matchers.valuesByName().at("pod"), row.valuesByName);
  }
}

TEST(LabelMatchersOrder, SelectorThenNamespaceThenResource) {
  core::Result<core::LabelSelector> selector = core::LabelSelector::parse("param1=value1");
  ASSERT_TRUE(selector.ok());
  LabelMatchers matchers;
  ASSERT_TRUE(matchers.addSelector(*selector).ok());
  matchers.addEqual("kube_namespace", "somens");
  std::vector<std::string> names = {"somesvc"};
  matchers.addNames("kube_service", names);
  EXPECT_EQ(matchers.joined(), R"(param1="value1",kube_namespace="somens",kube_service="somesvc")");
}

TEST(LabelMatchersFormat, Operators) {
  EXPECT_EQ(formatMatcher("a", MatchOp::kEqual, "x"), R"(a="x")");
  EXPECT_EQ(formatMatcher("a", MatchOp::kNotEqual, "x"), R"(a!="x")");
  EXPECT_EQ(formatMatcher("a", MatchOp::kRegexMatch, "x"), R"(a=~"x")");
  EXPECT_EQ(formatMatcher("a", MatchOp::kRegexNoMatch, "x"), R"(a!~"x")");
}

TEST(LabelMatchersNames, PrometheusLabelNames) {
  for (const char* name : {"pod", "_x9"}) EXPECT_TRUE(isPrometheusLabelName(name)) << name;
  for (const char* name : {"", "9x", "a-b", "a}"})
    EXPECT_FALSE(isPrometheusLabelName(name)) << name;
}

}  // namespace label_matchers_test
}  // namespace gpuscale::rules
