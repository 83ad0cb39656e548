#include "gpuscale/core/plain_http.h"

#include <gtest/gtest.h>

namespace gpuscale::core {
namespace plain_http_test {

TEST(ParseHostPortTest, Table) {
  struct Row {
    const char* text;
    bool ok;
    const char* host;
    std::uint16_t port;
  };
  const Row rows[] = {
      {"127.0.0.1:8081", true, "127.0.0.1", 8081},
      {"0.0.0.0:0", true, "0.0.0.0", 0},
      {"[::1]:9", true, "::1", 9},
      {"localhost", false, "", 0},
      {":80", false, "", 0},
      {"h:65536", false, "", 0},
      {"h:8x", false, "", 0},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.text);
    auto parsed = parseHostPort(row.text);
    ASSERT_EQ(parsed.has_value(), row.ok);
    if (row.ok) {
      EXPECT_EQ(parsed->first, row.host);
      EXPECT_EQ(parsed->second, row.port);
    }
  }
}

}  // namespace plain_http_test
}  // namespace gpuscale::core
