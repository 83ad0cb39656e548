#include "gpuscale/rules/go_regexp.h"

#include <gtest/gtest.h>

namespace gpuscale::rules {
namespace go_regexp_test {

struct ExpandRow {
  const char* what;
  const char* pattern;
  const char* as;
  const char* input;
  bool matched;
  const char* expected;
};

// every row of the Go expand table, the $1_per_second trap, unanchored matching.
const ExpandRow kExpandRows[] = {
    {"braced number", "^(?P<base>.*)_(seconds)_total$", "${1}",
     "http_request_duration_seconds_total", true, "http_request_duration"},
    {"braced name", "^(?P<base>.*)_(seconds)_total$", "${base}",
     "http_request_duration_seconds_total", true, "http_request_duration"},
    {"bare name", "^(?P<base>.*)_(seconds)_total$", "$base", "http_request_duration_seconds_total",
     true, "http_request_duration"},
    {"second group", "^(?P<base>.*)_(seconds)_total$", "$2", "http_request_duration_seconds_total",
     true, "seconds"},
    {"group out of range is empty", "^(?P<base>.*)_(seconds)_total$", "$3",
     "http_request_duration_seconds_total", true, ""},
    {"greedy name $base_x means group base_x", "^(?P<base>.*)_(seconds)_total$", "$base_x",
     "http_request_duration_seconds_total", true, ""},
    {"braced name then text", "^(?P<base>.*)_(seconds)_total$", "${base}_x",
     "http_request_duration_seconds_total", true, "http_request_duration_x"},
    {"$1a is group named 1a", "^(?P<base>.*)_(seconds)_total$", "$1a",
     "http_request_duration_seconds_total", true, ""},
    {"$$ is a dollar", "^(?P<base>.*)_(seconds)_total$", "$$",
     "http_request_duration_seconds_total", true, "$"},
    {"malformed $-x is literal", "^(?P<base>.*)_(seconds)_total$", "$-x",
     "http_request_duration_seconds_total", true, "$-x"},
    {"trailing $ is literal", "^(?P<base>.*)_(seconds)_total$", "a$",
     "http_request_duration_seconds_total", true, "a$"},
    {"unclosed brace is literal", "^(.*)_total$", "${1", "x_total", true, "${1"},
    {"trap: $1_per_second is empty", "^(.*)_total$", "$1_per_second", "http_requests_total", true,
     ""},
    {"fix: ${1}_per_second", "^(.*)_total$", "${1}_per_second", "http_requests_total", true,
     "http_requests_per_second"},
    {"unanchored: only the match, not a substitution", "requests", "$0", "http_requests_total",
     true, "requests"},
    {"default $0 with no groups", ".*", "$0", "up", true, "up"},
    {"leading zero is a name, not a number", "^(a)$", "$01", "a", true, ""},
    {"$0 is the whole match", "^(.*)_total$", "$0", "x_total", true, "x_total"},
    {"no match", "^foo$", "$0", "bar", false, ""},
    {"literal as", "nv_inference_queue_duration_us", "avg_time_queue_us",
     "nv_inference_queue_duration_us", true, "avg_time_queue_us"},
    {"unmatched optional group is empty", "^a(b)?$", "[$1]", "a", true, "[]"},
};

TEST(GoRegexExpand, Table) {
  for (const ExpandRow& row : kExpandRows) {
    SCOPED_TRACE(row.what);
    core::Result<GoRegex> re = GoRegex::compile(row.pattern);
    ASSERT_TRUE(re.ok()) << re.status().message();
    std::string out;
    EXPECT_EQ(re->expand(row.as, row.input, out), row.matched);
    if (row.matched) {
      EXPECT_EQ(out, row.expected);
    }
  }
}

struct CompileRow {
  const char* what;
  const char* pattern;
  bool ok;
  int groups;
};

const CompileRow kCompileRows[] = {
    {"no groups", "^container_.*$", true, 0},
    {"one group", "^container_(.*)_total$", true, 1},
    {"named group counts", "^(?P<base>.*)$", true, 1},
    {"non-capturing groups do not count", "^(?:a|b)(c)$", true, 1},
    {"two groups", "^(a)(b)$", true, 2},
    {"unbalanced parenthesis", "^(a$", false, 0},
    {"bad repetition", "*a", false, 0},
    {"backreferences are not RE2", "(a)\\1", false, 0},
    {"lookahead is not RE2", "a(?=b)", false, 0},
};

TEST(GoRegexCompile, Table) {
  for (const CompileRow& row : kCompileRows) {
    SCOPED_TRACE(row.what);
    core::Result<GoRegex> re = GoRegex::compile(row.pattern);
    EXPECT_EQ(re.ok(), row.ok);
    if (re.ok()) {
      EXPECT_EQ(re->captureGroups(), row.groups);
    }
    if (!re.ok()) {
      EXPECT_NE(re.status().message().find("error parsing regexp"), std::string::npos);
    }
  }
}

TEST(GoRegexMatch, UnanchoredLikeMatchString) {
  core::Result<GoRegex> re = GoRegex::compile("_seconds_total");
  ASSERT_TRUE(re.ok());
  EXPECT_TRUE(re->matches("container_cpu_usage_seconds_total"));
  EXPECT_TRUE(re->matches("a_seconds_total_b"));
  EXPECT_FALSE(re->matches("container_memory_bytes"));
}

struct RefRow {
  const char* what;
  const char* tmpl;
  std::vector<std::string> names;
};

const RefRow kRefRows[] = {
    {"bare and braced", "$1_per_second ${1}_x", {"1_per_second", "1"}},
    {"dollar-dollar is not a reference", "$$1", {}},
    {"malformed is not a reference", "$-x $", {}},
    {"named", "${base}$other", {"base", "other"}},
};

TEST(ExpandReferences, Table) {
  for (const RefRow& row : kRefRows) {
    SCOPED_TRACE(row.what);
    std::vector<std::string> names;
    for (const ExpandReference& ref : parseExpandReferences(row.tmpl)) names.push_back(ref.name);
    EXPECT_EQ(names, row.names);
  }
}

}  // namespace go_regexp_test
}  // namespace gpuscale::rules
