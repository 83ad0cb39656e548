#include "gpuscale/core/flag_args.h"

#include <gtest/gtest.h>

#include <map>

namespace gpuscale::core {
namespace {

// A group with a value flag --port (digits only), a boolean flag --fast and a value flag --ca that
// a later group reads too; records what it applied.
class FlagArgsTest : public ::testing::Test {
 protected:
  FlagArgsTest() {
    flags_.apply = [this](std::string_view name, std::string_view value) -> Result<bool> {
      if (name != "port" && name != "fast" && name != "ca") return false;
      if (name == "port" && value.find_first_not_of("0123456789") != std::string_view::npos) {
        return Status::badRequest("bad port " + std::string(value));
      }
      applied_[std::string(name)] = std::string(value);
      return true;
    };
    flags_.isBoolean = [](std::string_view name) { return name == "fast"; };
    flags_.passOn = [](std::string_view name) { return name == "ca"; };
  }

  FlagCallbacks flags_;
  std::map<std::string, std::string> applied_;
};

TEST_F(FlagArgsTest, AppliesEverySpellingAndPassesOnTheRestInOrder) {
  Result<std::vector<std::string>> rest =
      applyFlags({"serve", "--port", "8443", "--other=x", "--fast", "pos", "--ca=a.pem", "--ca",
                  "b.pem", "-v"},
                 flags_);
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  EXPECT_EQ(*rest, (std::vector<std::string>{"serve", "--other=x", "pos", "--ca=a.pem", "--ca",
                                             "b.pem", "-v"}));
  EXPECT_EQ(applied_, (std::map<std::string, std::string>{
                          {"port", "8443"}, {"fast", "true"}, {"ca", "b.pem"}}));
}

TEST_F(FlagArgsTest, BooleanTakesAnExplicitValueButNeverTheNextArgument) {
  Result<std::vector<std::string>> rest = applyFlags({"--fast=false", "--fast", "x"}, flags_);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(*rest, std::vector<std::string>{"x"});
  EXPECT_EQ(applied_.at("fast"), "true");
}

TEST_F(FlagArgsTest, AnUnknownFlagLeavesItsValueToBeSeenAsPositional) {
  Result<std::vector<std::string>> rest = applyFlags({"--unknown", "--port", "1"}, flags_);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(*rest, std::vector<std::string>{"--unknown"});
  EXPECT_EQ(applied_.at("port"), "1");
}

TEST_F(FlagArgsTest, Errors) {
  struct Case {
    const char* what;
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"a claimed flag at the end without its value", {"--ca"}, "flag needs an argument: --ca"},
      {"the group's error value comes back as it is", {"--port=eighty"}, "bad port eighty"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Result<std::vector<std::string>> rest = applyFlags(c.args, flags_);
    ASSERT_FALSE(rest.ok());
    EXPECT_EQ(rest.status().httpCode(), 400);
    EXPECT_EQ(rest.status().message(), c.message);
  }
}

}  // namespace
}  // namespace gpuscale::core
