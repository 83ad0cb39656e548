#include "gpuscale/k8s/object_accessors.h"

#include <gtest/gtest.h>

namespace gpuscale::k8s {
namespace {

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

}  // namespace
}  // namespace gpuscale::k8s
