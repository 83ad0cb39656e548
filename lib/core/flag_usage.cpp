// FlagSet::usage() and FlagSet::markdown(): the --help text and the reference, both drawn from
// the declarations.
#include <fmt/format.h>

#include <ostream>

#include "gpuscale/core/flag_set.h"

namespace gpuscale::core {
namespace {

constexpr size_t kWidth = 100;
constexpr size_t kMaxNameColumn = 40;

// "-v, --v int", "--audit-*", "--config string".
std::string spelled(const FlagInfo& info) {
  std::string out = info.shorthand != 0 ? fmt::format("-{}, ", info.shorthand) : "";
  out += "--" + info.name + (info.prefix ? "*" : "");
  if (!info.type.empty() && info.ignoredBecause.empty()) out += " " + info.type;
  return out;
}

// What a flag's description says after its usage: default, other names, repetition.
std::string described(const FlagInfo& info, bool withDeprecated) {
  if (!info.ignoredBecause.empty()) return "ignored: " + info.ignoredBecause;
  std::string out = info.usage;
  auto add = [&out](const std::string& text) { out += (out.empty() ? "" : " ") + text; };
  if (info.repeatable) add("(repeatable)");
  for (const std::string& alias : info.aliases) {
    add(fmt::format("(also {}{})", alias.size() == 1 ? "-" : "--", alias));
  }
  if (withDeprecated) {
    for (const std::string& old : info.deprecatedNames) add("(deprecated name: --" + old + ")");
  }
  return out;
}

// `text` in lines of at most `width` characters (longer words stay whole), each after `indent`.
std::string wrapped(std::string_view text, size_t indent, size_t width) {
  std::string out;
  size_t column = indent;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    if (word.empty()) continue;
    if (column > indent && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    }
    if (column > indent) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
  return out;
}

std::string usageCell(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string code(const std::string& text) { return text.empty() ? "" : "`" + text + "`"; }

// Calls `each(title, note, flags)` for every section that has flags, the flags declared before any
// section first (titled "Flags"), in declaration order.
template <typename Sections, typename Entries, typename Each>
void forEachSection(const Sections& sections, const Entries& entries, Each each) {
  std::vector<std::pair<std::string, std::string>> all = {{"", ""}};
  for (const auto& section : sections) all.emplace_back(section.title, section.note);
  for (const auto& [title, note] : all) {
    std::vector<const FlagInfo*> flags;
    for (const auto& entry : entries) {
      if (entry.info.section == title) flags.push_back(&entry.info);
    }
    if (!flags.empty()) each(title.empty() ? std::string("Flags") : title, note, flags);
  }
}

}  // namespace

std::string FlagSet::usage() const {
  std::string out = "usage: " + (synopsis_.empty() ? command_ + " [flags]" : synopsis_) + "\n";
  if (!description_.empty()) out += "\n" + wrapped(description_, 0, kWidth) + "\n";
  size_t column = 0;
  for (const Entry& entry : entries_) {
    column = std::max(column, std::min(kMaxNameColumn, 6 + spelled(entry.info).size()));
  }
  column += 2;
  forEachSection(sections_, entries_,
                 [&](const std::string& title, const std::string& note,
                     const std::vector<const FlagInfo*>& flags) {
                   out += "\n" + title + ":\n";
                   if (!note.empty()) out += wrapped(note, 0, kWidth) + "\n";
                   for (const FlagInfo* info : flags) {
                     std::string left = (info->shorthand != 0 ? "  " : "      ") + spelled(*info);
                     std::string text = described(*info, /*withDeprecated=*/false);
                     if (!info->defaultText.empty() && info->ignoredBecause.empty()) {
                       text += " (default " + info->defaultText + ")";
                     }
                     out +=
                         left + (left.size() + 2 > column ? "\n" + std::string(column, ' ')
                                                          : std::string(column - left.size(), ' '));
                     out += wrapped(text, column, kWidth) + "\n";
                   }
                 });
  return out;
}

std::string FlagSet::markdown() const {
  std::string out = "## `" + command_ + "`\n\n";
  out += "```\nusage: " + (synopsis_.empty() ? command_ + " [flags]" : synopsis_) + "\n```\n";
  if (!description_.empty()) out += "\n" + wrapped(description_, 0, kWidth) + "\n";
  forEachSection(sections_, entries_,
                 [&](const std::string& title, const std::string& note,
                     const std::vector<const FlagInfo*>& flags) {
                   out += "\n### " + title + "\n\n";
                   if (!note.empty()) out += wrapped(note, 0, kWidth) + "\n\n";
                   out += "| flag | type | default | meaning |\n|---|---|---|---|\n";
                   for (const FlagInfo* info : flags) {
                     std::string names =
                         info->shorthand != 0 ? fmt::format("`-{}`, ", info->shorthand) : "";
                     names += "`--" + info->name + (info->prefix ? "*" : "") + "`";
                     const bool ignored = !info->ignoredBecause.empty();
                     out += fmt::format("| {} | {} | {} | {} |\n", names, ignored ? "" : info->type,
                                        usageCell(code(ignored ? "" : info->defaultText)),
                                        usageCell(described(*info, /*withDeprecated=*/true)));
                   }
                 });
  return out;
}

std::optional<int> FlagSet::parseCommand(const std::vector<std::string>& args, std::ostream& out,
                                         std::ostream& err, std::vector<std::string>* positional) {
  if (asksForHelp(args)) {
    out << usage();
    return 0;
  }
  auto parsed = parse(args);
  if (!parsed) return usageError(err, parsed.status().message());
  if (positional == nullptr && !parsed->empty()) {
    return usageError(err, "unexpected argument " + parsed->front());
  }
  for (const std::string& warning : warnings()) err << command_ << ": " << warning << "\n";
  if (positional != nullptr) *positional = std::move(*parsed);
  return std::nullopt;
}

int FlagSet::usageError(std::ostream& err, std::string_view message) const {
  err << command_ << ": " << message << "\n" << usage();
  return 2;
}

std::string flagReference(std::string_view program, std::string_view regenerate,
                          const std::vector<std::string>& commands) {
  std::string out = fmt::format("# `{}` flags\n\n", program);
  out += wrapped(fmt::format("Every flag of every command, generated from the flag declarations "
                             "by `{}` (a test compares this page with its output).",
                             regenerate),
                 0, kWidth);
  out += "\n";
  for (const std::string& command : commands) out += "\n" + command;
  return out;
}

int runFlagsCommand(std::string_view program, const std::vector<std::string>& args,
                    const std::vector<std::string>& commands, std::ostream& out,
                    std::ostream& err) {
  if (args != std::vector<std::string>{"--markdown"}) {
    err << "usage: " << program << " flags --markdown\n";
    return 2;
  }
  out << flagReference(program, std::string(program) + " flags --markdown", commands);
  return 0;
}

}  // namespace gpuscale::core
