#include "gpuscale/rules/template.h"

#include <gtest/gtest.h>

#include "support/query_template_args.h"

namespace gpuscale::rules {
namespace template_test {

// Query-style data: the fields prometheus-adapter passes to metricsQuery.
using QueryData = testing::QueryTemplateArgs;

struct RenderRow {
  const char* what;
  const char* text;
  const char* expected;
};

const RenderRow kRenderRows[] = {
    {"literal text only", "up", "up"},
    {"empty template", "", ""},
    {"field", "<<.Series>>", "http_requests_total"},
    {"classic query", "sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)",
     R"(sum(rate(http_requests_total{namespace="ns",pod=~"a|b"}[1m])) by (pod,container))"},
    {"GroupBySlice prints as a Go []string", "<<.GroupBySlice>>", "[pod container]"},
    {"index on the map", R"(<<index .LabelValuesByName "pod">>)", "a|b"},
    {"index with a missing key is empty", R"([<<index .LabelValuesByName "node">>])", "[]"},
    {"index with a raw string key", "<<index .LabelValuesByName `namespace`>>", "ns"},
    {"index on the slice", "<<index .GroupBySlice 1>>", "container"},
    {"map field access", "<<.LabelValuesByName.pod>>", "a|b"},
    {"map field access with a missing key prints <no value>", "<<.LabelValuesByName.node>>",
     "<no value>"},
    {"map prints sorted", "<<.LabelValuesByName>>", "map[namespace:ns pod:a|b]"},
    {"len of a slice", "<<len .GroupBySlice>>", "2"},
    {"len of a string", "<<len .Series>>", "19"},
    {"string literal", R"(<<"a\tb">>)", "a\tb"},
    {"integer literal", "<<42>>", "42"},
    {"spaces inside the action", "<<  .Series  >>", "http_requests_total"},
    {"left trim marker", "a  \n <<- .GroupBy>>", "apod,container"},
    {"right trim marker", "<<.GroupBy ->>  \n b", "pod,containerb"},
    {"both trim markers", "x <<- .GroupBy ->> y", "xpod,containery"},
    {"minus without space is not a trim marker", "<<-3>>", "-3"},
    {"comment", "a<</* note */>>b", "ab"},
    {"trimmed comment", "a <<- /* note */ ->> b", "ab"},
    {"single > in text", "a > b <<.GroupBy>>", "a > b pod,container"},
    {"delimiters inside a string literal", R"(<<">>">>)", ">>"},
    {"the struct itself", "<<.>>",
     R"({http_requests_total namespace="ns",pod=~"a|b" map[namespace:ns pod:a|b] pod,container [pod container]})"},
};

TEST(TemplateRender, Table) {
  QueryData q;
  for (const RenderRow& row : kRenderRows) {
    SCOPED_TRACE(row.what);
    Result<Template> t = Template::parse(row.text);
    ASSERT_TRUE(t.ok()) << t.status().message();
    Result<std::string> out = t->execute(q.data);
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_EQ(*out, row.expected);
  }
}

struct ParseErrorRow {
  const char* what;
  const char* text;
  size_t offset;
  const char* message;
};

const ParseErrorRow kParseErrors[] = {
    {"unclosed action", "sum(<<.Series", 4, "unclosed action"},
    {"stray parenthesis", "sum(<<.Series)", 13, "unexpected \")\" in operand"},
    {"unclosed action at the end", "<<", 0, "unclosed action"},
    {"empty action", "a<<>>", 1, "missing value for command"},
    {"unknown function", "<<join .GroupBySlice>>", 2, "function \"join\" not defined"},
    {"range is not supported", "<<range .GroupBySlice>>x<<end>>", 2, "\"range\" is not supported"},
    {"if is not supported", "<<if .Series>>", 2, "\"if\" is not supported"},
    {"pipelines are not supported", "<<.Series | printf>>", 10, "pipelines (|) are not supported"},
    {"variables are not supported", "<<$x := .Series>>", 2, "variables are not supported"},
    {"parentheses are not supported", "<<(.Series)>>", 2, "parenthesized"},
    {"argument to a field", "<<.Series .GroupBy>>", 10,
     "can't give argument to non-function .Series"},
    {"unterminated string", "<<index .LabelValuesByName \"pod>>", 27, "unterminated quoted string"},
    {"unclosed comment", "<</* x >>", 0, "unclosed comment"},
    {"comment not followed by the delimiter", "<</* x */ .Series>>", 7,
     "comment ends before closing delimiter"},
    {"index without arguments", "<<index>>", 0, "wrong number of args for index"},
    {"len with two arguments", "<<len .Series .GroupBy>>", 0, "wrong number of args for len"},
    {"bad field name", "<<.Series.>>", 10, "bad field name"},
    {"hex number", "<<0x1F>>", 2, "bad number syntax"},
};

TEST(TemplateParse, ErrorsTable) {
  for (const ParseErrorRow& row : kParseErrors) {
    SCOPED_TRACE(row.what);
    size_t offset = 999;
    Result<Template> t = Template::parse(row.text, &offset);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(offset, row.offset);
    EXPECT_NE(t.status().message().find(row.message), std::string::npos) << t.status().message();
  }
}

struct ExecErrorRow {
  const char* what;
  const char* text;
  const char* message;
};

const ExecErrorRow kExecErrors[] = {
    {"unknown field (the field prometheus-adapter's docs mention but that does not exist)",
     "<<.LabelMatchersByName>>",
     "can't evaluate field LabelMatchersByName in type naming.queryTemplateArgs"},
    {"field of a string", "<<.Series.Name>>", "can't evaluate field Name in type string"},
    {"slice index out of range", "<<index .GroupBySlice 5>>", "index out of range: 5"},
    {"slice index with a string", "<<index .GroupBySlice \"a\">>", "cannot index slice/array"},
    {"map index with an int", "<<index .LabelValuesByName 1>>", "should be string"},
    {"index a string", "<<index .Series 0>>", "can't index item of type string"},
    {"len of an int", "<<len 3>>", "len of type int"},
};

TEST(TemplateExecute, ErrorsTable) {
  QueryData q;
  for (const ExecErrorRow& row : kExecErrors) {
    SCOPED_TRACE(row.what);
    Result<Template> t = Template::parse(row.text);
    ASSERT_TRUE(t.ok()) << t.status().message();
    Result<std::string> out = t->execute(q.data);
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find(row.message), std::string::npos)
        << out.status().message();
  }
}

TEST(TemplateFields, ReferencesAreRecordedWithOffsets) {
  Result<Template> t =
      Template::parse(R"(<<.Series>>{<<index .LabelValuesByName "pod">>} <<.Nope.x>>)");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->fieldReferences().size(), 3u);
  EXPECT_EQ(t->fieldReferences()[0].name, "Series");
  EXPECT_EQ(t->fieldReferences()[0].offset, 2u);
  EXPECT_EQ(t->fieldReferences()[1].name, "LabelValuesByName");
  EXPECT_EQ(t->fieldReferences()[2].name, "Nope");
  EXPECT_TRUE(t->referencesField("Series"));
  EXPECT_FALSE(t->referencesField("GroupBy"));
}

TEST(TemplateFormat, GoStringSlice) {
  EXPECT_EQ(formatGoStringSlice({}), "[]");
  EXPECT_EQ(formatGoStringSlice({"pod"}), "[pod]");
  EXPECT_EQ(formatGoStringSlice({"pod", "container"}), "[pod container]");
}

}  // namespace template_test
}  // namespace gpuscale::rules
