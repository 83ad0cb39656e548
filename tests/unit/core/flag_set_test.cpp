#include "gpuscale/core/flag_set.h"

#include <gtest/gtest.h>

namespace gpuscale::core {
namespace flag_set_test {

using Args = std::vector<std::string>;

// One option group of every kind of flag, as a command would declare it.
struct Options {
  std::string name = "web";
  std::string required;
  bool fast = false;
  std::optional<bool> cache;
  std::chrono::milliseconds timeout{1500};
  std::chrono::seconds period{0};
  uint16_t port = 443;
  int verbosity = 0;
  double qps = 5;
  std::vector<std::string> paths{"/healthz"};
  std::vector<std::string> files;
  enum class Mode { kNode, kDcgm } mode = Mode::kNode;
  std::vector<std::string> headers;

  void addFlags(FlagSet& flags) {
    flags.section("Main flags", "The flags every test uses.");
    flags.addString("name", &name, "a name").alias("title").deprecatedName("old-name");
    flags.addNonEmptyString("required", &required, "not empty");
    flags.addBool("fast", &fast, "go fast");
    flags.addOptionalBool("cache", &cache, "cache answers");
    flags.addDuration("timeout", &timeout, "a bound");
    flags.addDuration("period", &period, "how often", DurationBound::kPositive);
    flags.addInt("port", &port, "a port", 1, 65535);
    flags.addInt("v", &verbosity, "log verbosity", 0).shorthand('v');
    flags.addFloat("qps", &qps, "requests per second");
    flags.section("List flags");
    flags.addStringList("paths", &paths, "paths", ListForm::kCommaSeparated);
    flags.addStringList("file", &files, "a file", ListForm::kRepeated);
    flags.addChoice("mode", &mode, "node or dcgm", {{"node", Mode::kNode}, {"dcgm", Mode::kDcgm}});
    flags.addCustom("header", "Name=Value", "a header", [this](std::string_view value) {
      if (value.find('=') == std::string_view::npos) return Status::badRequest("want Name=Value");
      headers.emplace_back(value);
      return Status();
    });
    flags.section("Ignored");
    flags.addIgnored("log-dir", false, "klog flag").acceptUnderscores();
    flags.addIgnored("logtostderr", true, "klog flag");
    flags.addIgnoredPrefix(
        "audit-", [](std::string_view name) { return name.ends_with("compress"); }, "no audit");
  }
};

TEST(FlagSet, AppliesEveryFormAndReturnsThePositionalArguments) {
  Options options;
  FlagSet flags("test");
  options.addFlags(flags);
  auto rest = flags.parse({"first",       "--name=api",
                           "--fast",      "--cache=false",
                           "--timeout",   "2s",
                           "--period=1m", "--port",
                           "8443",        "-v",
                           "4",           "--qps=0.5",
                           "second",      "--paths=/a, /b,,",
                           "--file=x",    "--file",
                           "y",           "--file=",
                           "--mode=dcgm", "--header",
                           "A=1",         "--",
                           "--not-a-flag"});
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  EXPECT_EQ(*rest, (Args{"first", "second", "--not-a-flag"}));
  EXPECT_EQ(options.name, "api");
  EXPECT_TRUE(options.fast);
  EXPECT_EQ(options.cache, false);
  EXPECT_EQ(options.timeout, std::chrono::seconds(2));
  EXPECT_EQ(options.period, std::chrono::minutes(1));
  EXPECT_EQ(options.port, 8443);
  EXPECT_EQ(options.verbosity, 4);
  EXPECT_EQ(options.qps, 0.5);
  EXPECT_EQ(options.paths, (Args{"/a", "/b"}));
  EXPECT_EQ(options.files, (Args{"x", "y"}));
  EXPECT_EQ(options.mode, Options::Mode::kDcgm);
  EXPECT_EQ(options.headers, Args{"A=1"});
  EXPECT_TRUE(flags.changed("port"));
  EXPECT_FALSE(flags.changed("required"));
  EXPECT_TRUE(flags.warnings().empty());
}

TEST(FlagSet, OtherNamesIgnoredFlagsAndTheirWarnings) {
  Options options;
  FlagSet flags("test");
  options.addFlags(flags);
  auto rest = flags.parse({"--title=a", "--old-name", "b", "--old-name=c", "--log_dir", "/x",
                           "--log-dir=/y", "--logtostderr", "keep", "--audit-log-compress",
                           "--audit-log-path", "-", "--audit_log_path=/z"});
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  EXPECT_EQ(*rest, Args{"keep"}) << "a boolean ignored flag takes no argument";
  EXPECT_EQ(options.name, "c");
  EXPECT_TRUE(flags.changed("name"));
  EXPECT_TRUE(flags.changed("log-dir"));
  EXPECT_EQ(flags.warnings(), (Args{"flag --old-name is deprecated, use --name",
                                    "flag --log_dir is ignored (klog flag)",
                                    "flag --logtostderr is ignored (klog flag)",
                                    "flag --audit-log-compress is ignored (no audit)",
                                    "flag --audit-log-path is ignored (no audit)"}));
}

TEST(FlagSet, Errors) {
  struct Case {
    std::string what;
    Args args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"unknown flag", {"--nope=1"}, "unknown flag: --nope"},
      {"unknown shorthand", {"-x"}, "unknown shorthand flag: 'x' in -x"},
      {"long name with one dash", {"-port=1"}, "unknown shorthand flag: 'p' in -port=1"},
      {"value missing at the end", {"--port"}, "flag needs an argument: --port"},
      {"shorthand value missing", {"-v"}, "flag needs an argument: -v"},
      {"integer out of range",
       {"--port=70000"},
       "invalid argument \"70000\" for \"--port\" flag: must be an integer from 1 to 65535"},
      {"integer with junk", {"--v=3x"}, "invalid argument \"3x\" for \"--v\" flag"},
      {"negative integer", {"-v", "-1"}, "must be an integer of at least 0"},
      {"duration without unit", {"--timeout=30"}, "invalid argument \"30\" for \"--timeout\" flag"},
      {"negative duration", {"--timeout=-1s"}, "must not be negative"},
      {"zero where positive", {"--period=0s"}, "must be positive"},
      {"boolean junk",
       {"--fast=maybe"},
       "invalid argument \"maybe\" for \"--fast\" flag: must be true or false"},
      {"empty where required", {"--required="}, "for \"--required\" flag: must not be empty"},
      {"float below its minimum", {"--qps=-1"}, "must be a number of at least 0"},
      {"unknown choice", {"--mode=gpu"}, "must be one of node, dcgm"},
      {"custom setter's reason", {"--header=x"}, "for \"--header\" flag: want Name=Value"},
      {"the spelling given is named", {"-v=x"}, "invalid argument \"x\" for \"-v\" flag"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Options options;
    FlagSet flags("test");
    options.addFlags(flags);
    auto rest = flags.parse(c.args);
    ASSERT_FALSE(rest.ok());
    EXPECT_EQ(rest.status().httpCode(), 400);
    EXPECT_NE(rest.status().message().find(c.message), std::string::npos)
        << rest.status().message();
  }
}

TEST(FlagSet, GoBooleans) {
  for (std::string yes : {"1", "t", "T", "TRUE", "true", "True"}) {
    EXPECT_EQ(FlagSet::parseBool(yes).valueOr(false), true) << yes;
  }
  for (std::string no : {"0", "f", "F", "FALSE", "false", "False"}) {
    EXPECT_EQ(FlagSet::parseBool(no).valueOr(true), false) << no;
  }
  for (std::string junk : {"", "yes", "on", "tRUE"}) EXPECT_FALSE(FlagSet::parseBool(junk).ok());
}

TEST(FlagSet, TwoGroupsReadingOneFlagBothGetIt) {
  std::vector<std::string> servingCas;
  std::string authenticationCa;
  FlagSet flags("test");
  flags.section("Serving");
  flags.addStringList("client-ca-file", &servingCas, "CA bundle", ListForm::kRepeated);
  flags.section("Authentication");
  flags.addString("client-ca-file", &authenticationCa, "another description");
  ASSERT_TRUE(flags.parse({"--client-ca-file=/a.pem"}).ok());
  EXPECT_EQ(servingCas, Args{"/a.pem"});
  EXPECT_EQ(authenticationCa, "/a.pem");
  ASSERT_EQ(flags.flags().size(), 1u);
  EXPECT_EQ(flags.flags()[0].section, "Serving");
}

TEST(FlagSet, DeclarationMistakesFailTheParse) {
  bool a = false;
  int b = 0;
  FlagSet flags("test");
  flags.addBool("same", &a, "a boolean");
  flags.addInt("same", &b, "an integer");
  auto parsed = flags.parse({});
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("--same declared twice with different types"),
            std::string::npos);
}

TEST(FlagSet, UsageShowsSectionsDefaultsAndOtherNames) {
  Options options;
  FlagSet flags("test", "test [flags] FILE", "Tests the flag set.");
  options.addFlags(flags);
  const std::string usage = flags.usage();
  for (const std::string& line : {
           std::string("usage: test [flags] FILE\n\nTests the flag set.\n\nMain flags:\nThe flags "
                       "every test uses.\n"),
           std::string("      --name string"),
           std::string("a name (also --title) (default web)\n"),
           std::string("  -v, --v int "),
           std::string("      --timeout duration"),
           std::string("a bound (default 1.5s)\n"),
           std::string("requests per second (default 5)\n"),
           std::string("\nList flags:\n"),
           std::string("a file (repeatable)\n"),
           std::string("      --mode string"),
           std::string("node or dcgm (default node)\n"),
           std::string("      --log-dir"),
           std::string("ignored: klog flag\n"),
           std::string("      --audit-*"),
       }) {
    EXPECT_NE(usage.find(line), std::string::npos) << line << "\nin:\n" << usage;
  }
  EXPECT_EQ(usage.find("old-name"), std::string::npos) << "deprecated names are not advertised";
  for (size_t start = 0, end; start < usage.size(); start = end + 1) {
    end = usage.find('\n', start);
    EXPECT_LE(end - start, 100u) << usage.substr(start, end - start);
  }
}

TEST(FlagSet, MarkdownHasOneTablePerSection) {
  Options options;
  FlagSet flags("test", "test [flags]");
  options.addFlags(flags);
  const std::string markdown = flagReference("test", "test flags --markdown", {flags.markdown()});
  for (const std::string& part : {
           std::string("# `test` flags\n"),
           std::string("## `test`\n\n```\nusage: test [flags]\n```\n"),
           std::string("### Main flags\n\nThe flags every test uses.\n\n| flag | type | default | "
                       "meaning |\n|---|---|---|---|\n"),
           std::string("| `--name` | string | `web` | a name (also --title) (deprecated name: "
                       "--old-name) |\n"),
           std::string("| `-v`, `--v` | int |  | log verbosity |\n"),
           std::string("| `--fast` |  |  | go fast |\n"),
           std::string("| `--audit-*` |  |  | ignored: no audit |\n"),
       }) {
    EXPECT_NE(markdown.find(part), std::string::npos) << part << "\nin:\n" << markdown;
  }
}

TEST(FlagSet, AsksForHelp) {
  EXPECT_TRUE(asksForHelp({"--config=x", "--help"}));
  EXPECT_TRUE(asksForHelp({"-h"}));
  EXPECT_FALSE(asksForHelp({"--", "--help"}));
  EXPECT_FALSE(asksForHelp({"--helpful"}));
}

}  // namespace flag_set_test
}  // namespace gpuscale::core
