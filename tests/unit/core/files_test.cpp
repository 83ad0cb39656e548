#include "gpuscale/core/files.h"

#include <gtest/gtest.h>

#include <fstream>

#include "gpuscale/core/token_file.h"
#include "support/temp_dir.h"

namespace gpuscale::core {
namespace files_test {

void write(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

TEST(ReadFileTest, ReadsBytesAsTheyAre) {
  testing::TempDir dir;
  write(dir.file("f"), std::string("a\0b\n", 4));
  auto content = readFile(dir.file("f"));
  ASSERT_TRUE(content.ok());
  EXPECT_EQ(*content, std::string("a\0b\n", 4));
}

TEST(ReadFileTest, AMissingFileIsAnErrorNamingThePath) {
  testing::TempDir dir;
  auto content = readFile(dir.file("missing"));
  ASSERT_FALSE(content.ok());
  EXPECT_EQ(content.status().payload<FileFailure>(), FileFailure::kUnreadable);
  EXPECT_NE(content.status().message().find(dir.file("missing")), std::string::npos);
}

TEST(TrimSpaceTest, Table) {
  struct Row {
    const char* in;
    const char* out;
  };
  for (const Row& row : {Row{"", ""}, Row{" \t\r\n", ""}, Row{" a b\n", "a b"}, Row{"x", "x"}}) {
    EXPECT_EQ(trimSpace(row.in), row.out) << "[" << row.in << "]";
  }
}

TEST(TokenFileTest, ReadsTrimmedAndFollowsRotation) {
  testing::TempDir dir;
  write(dir.file("token"), "first\n");
  TokenFile file(dir.file("token"));
  EXPECT_EQ(file.token().valueOr(""), "first");
  write(dir.file("token"), "second-token\n");  // another size: seen as a change
  EXPECT_EQ(file.token().valueOr(""), "second-token");
}

TEST(TokenFileTest, KeepsTheLastGoodTokenWhileTheFileIsGoneOrEmpty) {
  testing::TempDir dir;
  write(dir.file("token"), "good");
  TokenFile file(dir.file("token"));
  EXPECT_EQ(file.token().valueOr(""), "good");
  std::filesystem::remove(dir.file("token"));
  EXPECT_EQ(file.token().valueOr(""), "good");
  write(dir.file("token"), "   \n");
  EXPECT_EQ(file.token().valueOr(""), "good");
}

TEST(TokenFileTest, NeverReadIsAnError) {
  testing::TempDir dir;
  TokenFile missing(dir.file("none"));
  auto token = missing.token();
  ASSERT_FALSE(token.ok());
  EXPECT_EQ(token.status().payload<FileFailure>(), FileFailure::kUnreadable);
  write(dir.file("empty"), "\n");
  EXPECT_FALSE(TokenFile(dir.file("empty")).token().ok());
}

TEST(TokenFileTest, RecheckIntervalDelaysRereads) {
  testing::TempDir dir;
  write(dir.file("token"), "first");
  TokenFile file(dir.file("token"), std::chrono::hours(1));
  EXPECT_EQ(file.token().valueOr(""), "first");
  write(dir.file("token"), "second-token");
  EXPECT_EQ(file.token().valueOr(""), "first");  // not looked at again within the hour
}

}  // namespace files_test
}  // namespace gpuscale::core
