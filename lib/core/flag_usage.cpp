// FlagSet::usage() and FlagSet::markdown(): the --help text and the reference, both drawn from
// the declarations.
#include <fmt/format.h>

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

std::string cell(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string code(const std::string& text) { return text.empty() ? "" : "`" + text + "`"; }

}  // namespace

std::string FlagSet::usage() const {
  std::string out = "usage: " + (synopsis_.empty() ? command_ + " [flags]" : synopsis_) + "\n";
  if (!description_.empty()) out += "\n" + wrapped(description_, 0, kWidth) + "\n";
  size_t column = 0;
  for (const Entry& entry : entries_) {
    column = std::max(column, std::min(kMaxNameColumn, 6 + spelled(entry.info).size()));
  }
  column += 2;
  std::vector<Section> sections = sections_;
  sections.insert(sections.begin(), Section{"", ""});
  for (const Section& section : sections) {
    std::string lines;
    for (const Entry& entry : entries_) {
      const FlagInfo& info = entry.info;
      if (info.section != section.title) continue;
      std::string left = (info.shorthand != 0 ? "  " : "      ") + spelled(info);
      std::string text = described(info, /*withDeprecated=*/false);
      if (!info.defaultText.empty() && info.ignoredBecause.empty()) {
        text += " (default " + info.defaultText + ")";
      }
      if (left.size() + 2 > column) {
        lines += left + "\n" + std::string(column, ' ');
      } else {
        lines += left + std::string(column - left.size(), ' ');
      }
      lines += wrapped(text, column, kWidth) + "\n";
    }
    if (lines.empty()) continue;
    out += "\n" + (section.title.empty() ? std::string("Flags") : section.title) + ":\n";
    if (!section.note.empty()) out += wrapped(section.note, 0, kWidth) + "\n";
    out += lines;
  }
  return out;
}

std::string FlagSet::markdown() const {
  std::string out = "## `" + command_ + "`\n\n";
  out += "```\nusage: " + (synopsis_.empty() ? command_ + " [flags]" : synopsis_) + "\n```\n";
  if (!description_.empty()) out += "\n" + wrapped(description_, 0, kWidth) + "\n";
  std::vector<Section> sections = sections_;
  sections.insert(sections.begin(), Section{"", ""});
  for (const Section& section : sections) {
    std::string rows;
    for (const Entry& entry : entries_) {
      const FlagInfo& info = entry.info;
      if (info.section != section.title) continue;
      std::string names = info.shorthand != 0 ? fmt::format("`-{}`, ", info.shorthand) : "";
      names += "`--" + info.name + (info.prefix ? "*" : "") + "`";
      rows += fmt::format("| {} | {} | {} | {} |\n", names,
                          info.ignoredBecause.empty() ? info.type : "",
                          cell(code(info.ignoredBecause.empty() ? info.defaultText : "")),
                          cell(described(info, /*withDeprecated=*/true)));
    }
    if (rows.empty()) continue;
    out += "\n### " + (section.title.empty() ? std::string("Flags") : section.title) + "\n\n";
    if (!section.note.empty()) out += wrapped(section.note, 0, kWidth) + "\n\n";
    out += "| flag | type | default | meaning |\n|---|---|---|---|\n" + rows;
  }
  return out;
}

std::string flagReference(std::string_view program, std::string_view regenerate,
                          const std::vector<const FlagSet*>& commands) {
  std::string out = fmt::format("# `{}` flags\n\n", program);
  out += wrapped(fmt::format("Every flag of every command, generated from the flag declarations "
                             "by `{}` (a test compares this page with its output).",
                             regenerate),
                 0, kWidth);
  out += "\n";
  for (const FlagSet* command : commands) out += "\n" + command->markdown();
  return out;
}

}  // namespace gpuscale::core
