// FlagSet: the flags of one command, declared once and used four ways: parsing a command line, the
// `--help` text, the flag reference in docs/generated/ (markdown), and the checks of what was
// given.
//
// Option groups follow k8s.io/apiserver's option structs: a struct of values with
//   void addFlags(core::FlagSet& flags);   // declares its flags, bound to its fields
//   core::Status validate() const;         // what single flags cannot check (pairs, exclusions)
// and, where its values feed something else, an applyTo(...) or a complete step. A command builds
// one FlagSet, lets every group it uses add its flags (a section each), parses, then validates.
// Adding a flag is one declaration in the group that owns the value: parsing, usage and reference
// follow from it.
//
// Command-line forms (pflag's, as Kubernetes components and prometheus-adapter accept them):
// `--name=value`, `--name value`, a boolean bare (`--name` = true) or with `=value`, a declared
// one-letter shorthand (`-v 4`, `-v=4`), and `--` ending the flags. Everything that is not a flag
// is returned, in order, as a positional argument. Errors (Status::badRequest, the message is what
// to print):
//   unknown flag: --name              unknown shorthand flag: 'x' in -x
//   flag needs an argument: --name    invalid argument "VALUE" for "--name" flag: WHY
//
// Names: besides its name, a flag may have aliases (same meaning, e.g. --workers for
// --worker-threads), deprecated names (accepted with one warning each: "flag --old is deprecated,
// use --new"), and it may accept '_' for '-' (klog's `--log_dir`). A flag may be declared
// "ignored": accepted (with its value) and reported once as a warning, so command lines of tools
// gpuscale replaces keep working. Two groups may declare the same flag with the same type (the
// client CA file is read by serving and by delegated authentication): it is then one flag that sets
// both values, described by the first declaration.
//
// Defaults shown in usage are taken from the bound value when the flag is declared, so set a
// group's defaults before adding its flags (or say it with defaultText()).
//
// Thread safety: a FlagSet and the values it is bound to belong to one thread. The bound values
// must outlive the FlagSet and stay where they are (do not move an option struct between addFlags
// and parse).
#pragma once

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscale/core/duration.h"
#include "gpuscale/core/result.h"

namespace gpuscale::core {

// What usage and the reference say of one flag.
struct FlagInfo {
  std::string name;
  char shorthand = 0;
  std::string type;  // "string", "int", "duration", "strings", ...; "" for a boolean
  std::string usage;
  std::string defaultText;                   // "" = no default shown
  std::vector<std::string> aliases;          // other names with the same meaning
  std::vector<std::string> deprecatedNames;  // accepted with a warning
  std::string ignoredBecause;                // not empty: accepted and ignored, and why
  std::string section;
  bool boolean = false;
  bool repeatable = false;
  bool underscores = false;  // `--a_b` is `--a-b`
  bool prefix = false;       // `name` stands for every flag it starts ("audit-": --audit-*)
};

// How a duration flag bounds its value (a negative duration is never accepted).
enum class DurationBound { kNonNegative, kPositive };

// How a list flag takes its values.
enum class ListForm {
  kCommaSeparated,  // `a,b` (spaces around items trimmed, empty items dropped); each use replaces
  kRepeated,        // one item per use, appended; an empty value adds nothing
};

class FlagSet;

// Says more about the flag just declared (a handle; keep it no longer than the statement).
class Flag {
 public:
  Flag& alias(std::string name);
  Flag& deprecatedName(std::string oldName);
  Flag& shorthand(char letter);
  Flag& defaultText(std::string text);
  Flag& repeatable();
  Flag& acceptUnderscores();

 private:
  friend class FlagSet;
  Flag(FlagSet* set, size_t index) : set_(set), index_(index) {}
  FlagSet* set_;
  size_t index_;
};

class FlagSet {
 public:
  // A value's setter: an error Status (its message says why, e.g. "must be positive") refuses the
  // value; the FlagSet adds the flag and the value to the message.
  using Setter = std::function<Status(std::string_view value)>;

  // `command` as typed ("gpuscale-adapter serve"); `synopsis` the usage line(s) after "usage: ";
  // `description` one paragraph. They open the usage text and the command's reference section.
  explicit FlagSet(std::string command, std::string synopsis = "", std::string description = "");

  // Flags declared from now on belong to `title` ("Serving flags"); `note` is said under it.
  void section(std::string title, std::string note = "");

  Flag addString(std::string name, std::string* target, std::string usage);
  // The same, refusing an empty value.
  Flag addNonEmptyString(std::string name, std::string* target, std::string usage);
  Flag addBool(std::string name, bool* target, std::string usage);
  // A boolean whose absence means "decide later" (nullopt).
  Flag addOptionalBool(std::string name, std::optional<bool>* target, std::string usage);
  template <typename Rep, typename Period>
  Flag addDuration(std::string name, std::chrono::duration<Rep, Period>* target, std::string usage,
                   DurationBound bound = DurationBound::kNonNegative);
  template <std::integral T>
  Flag addInt(std::string name, T* target, std::string usage,
              int64_t min = std::numeric_limits<T>::min(),
              int64_t max = static_cast<int64_t>(std::min<uint64_t>(
                  std::numeric_limits<T>::max(), std::numeric_limits<int64_t>::max())));
  Flag addFloat(std::string name, double* target, std::string usage, double min = 0);
  Flag addStringList(std::string name, std::vector<std::string>* target, std::string usage,
                     ListForm form);
  // One of fixed words, each standing for a value of `target`'s type.
  template <typename T>
  Flag addChoice(std::string name, T* target, std::string usage,
                 std::vector<std::pair<std::string, T>> choices);
  // Any other value: `type` names it in usage ("Name=Value"); `boolean` flags take no argument.
  Flag addCustom(std::string name, std::string type, std::string usage, Setter set,
                 bool boolean = false);
  // Accepted and ignored, with a warning saying `why`.
  Flag addIgnored(std::string name, bool boolean, std::string why);
  // Every flag starting with `prefix` is accepted and ignored; `isBoolean` says which take no
  // argument.
  Flag addIgnoredPrefix(std::string prefix, std::function<bool(std::string_view)> isBoolean,
                        std::string why);

  // Applies every flag of `args` in order and returns the positional arguments. Stops at the first
  // error.
  Result<std::vector<std::string>> parse(const std::vector<std::string>& args);
  // True when the flag (in any of its spellings) was given.
  bool changed(std::string_view name) const;
  // One line per ignored flag and per deprecated name used, in the order given.
  const std::vector<std::string>& warnings() const { return warnings_; }

  // parse() as a command does it: `--help` prints usage() on `out`; a parse error, or a positional
  // argument when `positional` is null, prints usageError(); the warnings go to `err` as
  // "COMMAND: warning". Returns the exit code to end with (0 after --help, 2 after an error), or
  // nullopt when the command should run (with the positional arguments in `*positional`).
  std::optional<int> parseCommand(const std::vector<std::string>& args, std::ostream& out,
                                  std::ostream& err,
                                  std::vector<std::string>* positional = nullptr);
  // Prints "COMMAND: MESSAGE" and the usage on `err`; returns 2, the exit code of a usage error.
  int usageError(std::ostream& err, std::string_view message) const;

  // The --help text: the usage line, the description, then each section's flags in columns.
  std::string usage() const;
  // The command's part of the flag reference: a heading, the usage line, one table per section.
  std::string markdown() const;

  const std::string& command() const { return command_; }
  std::vector<FlagInfo> flags() const;

  // Parses a Go boolean (strconv.ParseBool: 1 t T TRUE true True 0 f F FALSE false False).
  static Result<bool> parseBool(std::string_view text);

 private:
  friend class Flag;
  struct Entry {
    FlagInfo info;
    std::vector<Setter> setters;
    std::function<bool(std::string_view)> prefixIsBoolean;
  };
  struct Section {
    std::string title;
    std::string note;
  };

  Flag declare(FlagInfo info, Setter set);
  void index(const std::string& name, size_t entry);
  Flag addDurationNanos(std::string name, std::string usage, Duration current, DurationBound bound,
                        std::function<void(Duration)> store);
  Flag addInteger(std::string name, std::string usage, std::string current, int64_t min,
                  int64_t max, bool saysMax, std::function<void(int64_t)> store);
  // The entry `name` (as written, without dashes) stands for, and whether it was a deprecated name.
  const Entry* find(std::string_view name, size_t* at, bool* deprecated) const;
  Status apply(size_t at, const std::string& spelling, std::string_view value, bool deprecated);

  std::string command_;
  std::string synopsis_;
  std::string description_;
  std::vector<Section> sections_;
  std::vector<Entry> entries_;
  std::map<std::string, size_t, std::less<>> names_;
  std::map<char, size_t> shorthands_;
  std::set<std::string, std::less<>> deprecated_;  // names that warn
  std::set<size_t> changed_;
  std::set<std::string> warned_;
  std::vector<std::string> warnings_;
  std::vector<std::string> problems_;  // declaration mistakes, reported by parse()
};

// The items of a comma-separated list ("a, b,,c" -> a, b, c): spaces around items trimmed, empty
// items dropped (ListForm::kCommaSeparated).
std::vector<std::string> splitCommaList(std::string_view text);

// True when `args` ask for help (`-h`, `--help`, `--help=true`) before a `--`.
bool asksForHelp(const std::vector<std::string>& args);

// The reference of a program's commands, for docs/generated/flags-PROGRAM.md: a title, one line
// saying how the page is made (`regenerate`, the command that prints it), then each command's
// markdown().
std::string flagReference(std::string_view program, std::string_view regenerate,
                          const std::vector<std::string>& commands);

// A command's markdown() over its default values, from the function that declares its flags (the
// same one its parsing uses): `return core::markdownOf(runFlagSet);`.
template <typename Args>
std::string markdownOf(FlagSet (*declare)(Args&)) {
  Args defaults;
  return declare(defaults).markdown();
}

// The `flags` command every program has: `PROGRAM flags --markdown` prints flagReference() of the
// commands' markdown (what docs/generated/flags-PROGRAM.md holds). Returns the exit code: 0, or 2
// with a message for any other argument.
int runFlagsCommand(std::string_view program, const std::vector<std::string>& args,
                    const std::vector<std::string>& commands, std::ostream& out, std::ostream& err);

template <typename Rep, typename Period>
Flag FlagSet::addDuration(std::string name, std::chrono::duration<Rep, Period>* target,
                          std::string usage, DurationBound bound) {
  return addDurationNanos(
      std::move(name), std::move(usage), std::chrono::duration_cast<Duration>(*target), bound,
      [target](Duration value) {
        *target = std::chrono::duration_cast<std::chrono::duration<Rep, Period>>(value);
      });
}

template <std::integral T>
Flag FlagSet::addInt(std::string name, T* target, std::string usage, int64_t min, int64_t max) {
  // A maximum as large as an int's goes unsaid in messages ("an integer of at least 0").
  const bool saysMax = max < std::numeric_limits<int32_t>::max();
  return addInteger(std::move(name), std::move(usage), std::to_string(*target), min, max, saysMax,
                    [target](int64_t value) { *target = static_cast<T>(value); });
}

template <typename T>
Flag FlagSet::addChoice(std::string name, T* target, std::string usage,
                        std::vector<std::pair<std::string, T>> choices) {
  std::string words;
  std::string current;
  for (const auto& [word, value] : choices) {
    words += (words.empty() ? "" : ", ") + word;
    if (current.empty() && value == *target) current = word;
  }
  Flag flag = addCustom(std::move(name), "string", std::move(usage),
                        [target, choices, words](std::string_view text) -> Status {
                          for (const auto& [word, value] : choices) {
                            if (word == text) {
                              *target = value;
                              return {};
                            }
                          }
                          return Status::badRequest("must be one of " + words);
                        });
  return flag.defaultText(std::move(current));
}

}  // namespace gpuscale::core
