#include "gpuscale/kube/client.h"

#include <gtest/gtest.h>

namespace gpuscale::kube {
namespace client_test {

// What a kube-apiserver (or a proxy in front of it) may send back; fields of the wrong type read as
// absent and nothing throws.
TEST(DecodeWatchEventTest, Table) {
  struct Row {
    const char* what;
    const char* line;
    bool ok;
    WatchEvent::Type type;  // when ok
    int code;               // when not ok
    const char* text;       // the object's metadata.name when ok, a message fragment otherwise
  };
  const Row rows[] = {
      {"added", R"({"type":"ADDED","object":{"metadata":{"name":"p"}}})", true,
       WatchEvent::Type::kAdded, 0, "p"},
      {"bookmark", R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})", true,
       WatchEvent::Type::kBookmark, 0, ""},
      {"deleted without an object", R"({"type":"DELETED"})", true, WatchEvent::Type::kDeleted, 0,
       ""},
      {"error event is its Status",
       R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old"}})",
       false,
       {},
       410,
       "too old"},
      {"error event with a non-error code",
       R"({"type":"ERROR","object":{"kind":"Status","code":200}})",
       false,
       {},
       500,
       ""},
      {"error event with a code no HTTP status has",
       R"({"type":"ERROR","object":{"kind":"Status","code":99999}})",
       false,
       {},
       500,
       ""},
      {"error event with a float code",
       R"({"type":"ERROR","object":{"kind":"Status","code":1e300}})",
       false,
       {},
       500,
       ""},
      {"error event of the wrong shape",
       R"({"type":"ERROR","object":[1]})",
       false,
       {},
       500,
       "unexpected error object"},
      {"type of the wrong type",
       R"({"type":7,"object":{}})",
       false,
       {},
       500,
       "unknown watch event type"},
      {"not JSON", "{\"type\":", false, {}, 500, "not JSON"},
      {"not an object", "[]", false, {}, 500, "not JSON"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    auto event = decodeWatchEvent(row.line);
    ASSERT_EQ(event.ok(), row.ok) << (event.ok() ? "" : event.status().message());
    if (row.ok) {
      EXPECT_EQ(event->type, row.type);
      EXPECT_EQ(event->object.is_object() ? event->object["metadata"].value("name", "") : "",
                row.text);
    } else {
      EXPECT_EQ(event.status().httpCode(), row.code);
      EXPECT_NE(event.status().message().find(row.text), std::string::npos)
          << event.status().message();
    }
  }
}

TEST(DecodeListPageTest, Table) {
  struct Row {
    const char* what;
    const char* body;
    bool ok;
    size_t items;
    const char* resourceVersion;
    const char* continueToken;
  };
  const Row rows[] = {
      {"a page", R"({"metadata":{"resourceVersion":"5","continue":"c"},"items":[{},{}]})", true, 2,
       "5", "c"},
      {"the last page", R"({"metadata":{"resourceVersion":"5"},"items":[]})", true, 0, "5", ""},
      {"null items", R"({"metadata":{"resourceVersion":"5"},"items":null})", true, 0, "5", ""},
      {"metadata of the wrong type", R"({"metadata":5,"items":[{}]})", true, 1, "", ""},
      {"resourceVersion of the wrong type",
       R"({"metadata":{"resourceVersion":5,"continue":false},"items":[]})", true, 0, "", ""},
      {"no items", R"({"metadata":{}})", false, 0, "", ""},
      {"items of the wrong type", R"({"items":{"a":1}})", false, 0, "", ""},
      {"not JSON", "<html>", false, 0, "", ""},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    auto page = decodeListPage(row.body);
    ASSERT_EQ(page.ok(), row.ok);
    if (!row.ok) {
      EXPECT_EQ(page.status().httpCode(), 500);
      continue;
    }
    EXPECT_EQ(page->items.size(), row.items);
    EXPECT_EQ(page->resourceVersion, row.resourceVersion);
    EXPECT_EQ(page->continueToken, row.continueToken);
  }
}

TEST(StatusFromResponseTest, FieldsOfTheWrongTypeReadAsAbsent) {
  const auto status = statusFromResponse(
      409,
      R"({"kind":"Status","code":"409","reason":7,"message":["x"],"details":{"name":1,"causes":[{"message":2},3]}})");
  EXPECT_EQ(status.httpCode(), 409);
  EXPECT_EQ(status.reason(), "");
  EXPECT_EQ(status.message(), "");
  EXPECT_TRUE(status.details().present);
  EXPECT_EQ(status.details().causes, std::vector<std::string>{""});
  EXPECT_EQ(statusFromResponse(503, R"({"kind":1})", 2).message(),
            R"({"kind":1} (retry after 2s))");
}

}  // namespace client_test
}  // namespace gpuscale::kube
