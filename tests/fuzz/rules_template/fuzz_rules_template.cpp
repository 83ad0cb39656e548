// Fuzzes the << >> template engine: any text must parse or fail with an error value, and a parsed
// template must execute against query-style data without crashing. Also fuzzes Go expand with the
// text as `as`.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpuscale/rules/go_regexp.h"
#include "gpuscale/rules/template.h"
#include "support/query_template_args.h"

using gpuscale::rules::GoRegex;
using gpuscale::rules::Template;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t offset = 0;
  auto parsed = Template::parse(text, &offset);
  if (!parsed.ok() && offset > text.size()) __builtin_trap();
  if (parsed.ok()) {
    gpuscale::testing::QueryTemplateArgs args("pod");
    (void)parsed->execute(args.data);
  }
  static const GoRegex kRegex = *GoRegex::compile("^(?P<base>.*)_(seconds)_total$");
  std::string out;
  (void)kRegex.expand(text, "http_request_duration_seconds_total", out);
  (void)gpuscale::rules::parseExpandReferences(text);
  return 0;
}
