#include "gpuscale/k8s/object_accessors.h"

#include <gtest/gtest.h>

namespace gpuscale::k8s {
namespace object_accessors_test {

using nlohmann::json;

TEST(ObjectAccessorsTest, ReadsMetadataAndToleratesWhatIsMissing) {
  struct Row {
    const char* what;
    json object;
    const char* label;
    const char* annotation;
    const char* name;
    const char* ns;
  };
  const Row rows[] = {
      {"full", json::parse(R"({"metadata":{"name":"n","namespace":"ns","labels":{"k":"l"},
                       "annotations":{"k":"a"}}})"),
       "l", "a", "n", "ns"},
      {"no metadata", json::object(), "", "", "", ""},
      {"not an object", json::array(), "", "", "", ""},
      {"metadata of the wrong type", json::parse(R"({"metadata":"x"})"), "", "", "", ""},
      {"maps of the wrong type", json::parse(R"({"metadata":{"labels":[],"annotations":3}})"), "",
       "", "", ""},
      {"values of the wrong type",
       json::parse(R"({"metadata":{"name":1,"labels":{"k":2},"annotations":{"k":null}}})"), "", "",
       "", ""},
      {"other keys", json::parse(R"({"metadata":{"labels":{"x":"y"}}})"), "", "", "", ""},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    EXPECT_EQ(labelOf(row.object, "k"), row.label);
    EXPECT_EQ(annotationOf(row.object, "k"), row.annotation);
    EXPECT_EQ(nameOf(row.object), row.name);
    EXPECT_EQ(namespaceOf(row.object), row.ns);
  }
}

TEST(ObjectAccessorsTest, FieldsOfTheWrongTypeReadAsTheFallback) {
  const json object = json::parse(R"({"s":"text","b":true,"i":-7,"big":4294967296,"f":1e300,
      "u":18446744073709551615,"o":{"k":"v"},"n":null})");
  EXPECT_EQ(stringField(object, "s"), "text");
  EXPECT_EQ(stringField(object, "b"), "");
  EXPECT_EQ(stringField(json::array(), "s"), "");
  EXPECT_TRUE(boolField(object, "b", false));
  EXPECT_FALSE(boolField(object, "s", false));
  EXPECT_TRUE(boolField(object, "missing", true));
  EXPECT_EQ(intField(object, "i", 1), -7);
  EXPECT_EQ(intField(object, "big", 1), 1);
  EXPECT_EQ(intField(object, "u", 1), 1);
  EXPECT_EQ(intField(object, "f", 1), 1);
  EXPECT_EQ(intField(object, "s", 1), 1);
  EXPECT_EQ(objectField(object, "o").value("k", ""), "v");
  EXPECT_TRUE(objectField(object, "n").empty());
  EXPECT_TRUE(objectField(json("x"), "o").is_object());
}

TEST(ObjectAccessorsTest, ReadsAlongAPathAndToleratesWhatIsMissing) {
  const json object = json::parse(R"({"spec":{"mig":{"strategy":"mixed","n":1},"list":[1]}})");
  struct Row {
    const char* what;
    std::initializer_list<std::string_view> path;
    json field;
    const char* text;
  };
  const Row rows[] = {
      {"a string", {"spec", "mig", "strategy"}, "mixed", "mixed"},
      {"a number reads as no string", {"spec", "mig", "n"}, 1, ""},
      {"an object", {"spec", "mig"}, json{{"strategy", "mixed"}, {"n", 1}}, ""},
      {"the empty path is the object", {}, object, ""},
      {"a missing key", {"spec", "gone", "strategy"}, nullptr, ""},
      {"a step through a list", {"spec", "list", "x"}, nullptr, ""},
      {"a step through a string", {"spec", "mig", "strategy", "x"}, nullptr, ""},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    EXPECT_EQ(fieldAt(object, row.path), row.field);
    EXPECT_EQ(stringAt(object, row.path), row.text);
  }
  EXPECT_TRUE(fieldAt(json("x"), {"a"}).is_null());
}

}  // namespace object_accessors_test
}  // namespace gpuscale::k8s
