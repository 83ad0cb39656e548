#include "gpuscale/core/yaml_fields.h"

#include <gtest/gtest.h>

#include "gpuscale/core/yaml_input.h"

namespace gpuscale::core {
namespace yaml_fields_test {

// A small format: `size`, `colour` (old name `color`) and a nested `limits` mapping.
struct Shape {
  int size = 1;
  std::string colour = "red";
  int high = 10;
};

void declare(YamlFields& fields, Shape& s) {
  fields
      .add("size", "integer", "how big",
           [&s](const YAML::Node& v) { s.size = yamlAs<int>(v, "size"); })
      .defaultText(std::to_string(s.size));
  fields
      .add("colour", "string", "its colour | hue",
           [&s](const YAML::Node& v) { s.colour = yamlAs<std::string>(v, "colour"); })
      .defaultText(s.colour)
      .deprecatedName("color");
  fields.addMapping("limits", "bounds", [&s](YamlFields& limits) {
    limits
        .add("high", "integer", "the top",
             [&s](const YAML::Node& v) { s.high = yamlAs<int>(v, "high"); })
        .defaultText(std::to_string(s.high));
  });
}

struct Parsed {
  Shape shape;
  std::vector<std::string> warnings;
  std::string error;
};

Parsed parse(const std::string& text) {
  Parsed out;
  auto result = guardYaml<bool>("shape", [&] {
    YamlFields fields("", "shape");
    declare(fields, out.shape);
    fields.parse(YAML::Load(text), &out.warnings);
    return true;
  });
  if (!result) out.error = result.status().message();
  return out;
}

TEST(YamlFieldsTest, ParsesDeclaredKeysAndRefusesOthers) {
  struct Row {
    const char* what;
    const char* yaml;
    Shape want;
    const char* warning;  // "" = none
    const char* error;    // "" = parses
  };
  const Row rows[] = {
      {"nothing given: the defaults", "{}", {1, "red", 10}, "", ""},
      {"every key", "size: 3\ncolour: blue\nlimits: {high: 7}\n", {3, "blue", 7}, "", ""},
      {"old name",
       "color: green\n",
       {1, "green", 10},
       "line 1, column 1: color is deprecated, use colour",
       ""},
      {"unknown key",
       "size: 3\nshade: dark\n",
       {3, "red", 10},
       "",
       "line 2, column 1: unexpected field \"shade\" in shape"},
      {"unknown nested key",
       "limits: {low: 1}\n",
       {1, "red", 10},
       "",
       "unexpected field \"low\" in limits"},
      {"nested not a mapping", "limits: 4\n", {1, "red", 10}, "", "limits must be a mapping"},
      {"top not a mapping", "- a\n", {1, "red", 10}, "", "shape must be a mapping"},
      {"bad value", "size: big\n", {1, "red", 10}, "", "field \"size\" has the wrong type"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    const Parsed parsed = parse(row.yaml);
    if (std::string(row.error).empty()) {
      EXPECT_EQ(parsed.error, "");
      EXPECT_EQ(parsed.shape.size, row.want.size);
      EXPECT_EQ(parsed.shape.colour, row.want.colour);
      EXPECT_EQ(parsed.shape.high, row.want.high);
    } else {
      EXPECT_NE(parsed.error.find(row.error), std::string::npos) << parsed.error;
    }
    if (std::string(row.warning).empty()) {
      EXPECT_TRUE(parsed.warnings.empty());
    } else {
      ASSERT_EQ(parsed.warnings.size(), 1u);
      EXPECT_EQ(parsed.warnings[0], row.warning);
    }
  }
}

TEST(YamlFieldsTest, TheReferenceListsEveryKeyNestedAfterItsMapping) {
  Shape scratch;
  YamlFields fields("", "shape");
  declare(fields, scratch);
  EXPECT_EQ(yamlKeysMarkdown(fields.keys()),
            "| key | type | default | meaning |\n"
            "|---|---|---|---|\n"
            "| `size` | integer | `1` | how big |\n"
            "| `colour` | string | `red` | its colour \\| hue (deprecated name: `color`) |\n"
            "| `limits` | mapping |  | bounds |\n"
            "| `limits.high` | integer | `10` | the top |\n");
}

}  // namespace yaml_fields_test
}  // namespace gpuscale::core
