#include "gpuscale/core/subcommands.h"

#include <gtest/gtest.h>

#include <sstream>

#include "gpuscale/core/version.h"

namespace gpuscale::core {
namespace subcommands_test {

struct CountArgs {
  int64_t n = 1;
};

FlagSet countFlagSet(CountArgs& a) {
  FlagSet flags("prog count", "prog count [--n N] [WORD...]", "Counts.");
  flags.addInt("n", &a.n, "how many");
  return flags;
}

// `count`: flags only; `words`: flags and the words after them.
int printCount(CountArgs& a, const FlagSet&, std::ostream& out, std::ostream&) {
  out << a.n << "\n";
  return 0;
}
int printCountAndWords(CountArgs& a, const std::vector<std::string>& words, const FlagSet& flags,
                       std::ostream& out, std::ostream& err) {
  if (words.empty()) return flags.usageError(err, "expected a WORD");
  out << a.n;
  for (const auto& word : words) out << " " << word;
  out << "\n";
  return 0;
}

Program testProgram() {
  Program program{"prog",
                  {{"hello",
                    "say hello",
                    {[](const std::vector<std::string>& args, std::ostream& out, std::ostream&) {
                       out << "hello " << args.size() << "\n";
                       return 0;
                     },
                     [] { return std::string("## `prog hello`\n"); }}},
                   {"count", "count", flagCommand(countFlagSet, printCount)},
                   {"words", "count words", flagCommand(countFlagSet, printCountAndWords)}}};
  return program;
}

TEST(SubcommandsTest, TheProgramsOwnFlagsAndCommands) {
  const std::string version = "prog " + std::string(core::version()) + "\n";
  CountArgs unused;
  const std::string countUsage = countFlagSet(unused).usage();
  struct Row {
    const char* what;
    std::vector<std::string> args;
    int code;
    std::string out;  // exactly, or "" = nothing
    const char* err;  // a fragment, "" = nothing
  };
  const Row rows[] = {
      {"--version", {"--version"}, 0, version, ""},
      {"--version=true", {"--version=true"}, 0, version, ""},
      {"the word version", {"version"}, 0, version, ""},
      {"--version=false prints nothing", {"--version=false"}, 0, "", ""},
      {"--version takes no arguments", {"--version", "x"}, 2, "", "unexpected argument x"},
      {"a command", {"hello", "a", "b"}, 0, "hello 2\n", ""},
      {"an unknown command", {"bye"}, 2, "", "unknown command \"bye\""},
      {"no command", {}, 2, "", "usage: prog <command>"},
      {"a flag command", {"count", "--n=3"}, 0, "3\n", ""},
      {"a flag command's --help", {"count", "--help"}, 0, countUsage, ""},
      {"a flag command's flag error", {"count", "--n=x"}, 2, "", "prog count: "},
      {"a flag command takes no words", {"count", "a"}, 2, "", "unexpected argument a"},
      {"a command with words gets them after the flags",
       {"words", "--n=2", "a", "b"},
       0,
       "2 a b\n",
       ""},
      {"and checks them", {"words", "--n=2"}, 2, "", "expected a WORD"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    std::ostringstream out, err;
    EXPECT_EQ(runProgram(testProgram(), row.args, out, err), row.code);
    EXPECT_EQ(out.str(), row.out);
    if (std::string(row.err).empty()) {
      EXPECT_EQ(err.str(), "");
    } else {
      EXPECT_NE(err.str().find(row.err), std::string::npos) << err.str();
    }
  }
}

TEST(SubcommandsTest, TheReferenceOpensWithTheProgramsOwnFlags) {
  std::ostringstream out, err;
  ASSERT_EQ(runProgram(testProgram(), {"flags", "--markdown"}, out, err), 0);
  const std::string reference = out.str();
  const size_t own = reference.find("## `prog`\n");
  const size_t hello = reference.find("## `prog hello`\n");
  ASSERT_NE(own, std::string::npos) << reference;
  ASSERT_NE(hello, std::string::npos) << reference;
  EXPECT_LT(own, hello);
  EXPECT_NE(reference.find("| `--version` |"), std::string::npos) << reference;
}

}  // namespace subcommands_test
}  // namespace gpuscale::core
