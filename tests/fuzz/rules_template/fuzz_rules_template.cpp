// Fuzzes the << >> template engine: any text must parse or fail with an error value, and a parsed
// template must execute against query-style data without crashing. Also fuzzes Go expand with the
// text as `as`.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpuscale/rules/go_regexp.h"
#include "gpuscale/rules/template.h"

using gpuscale::rules::GoRegex;
using gpuscale::rules::StringMap;
using gpuscale::rules::Template;
using gpuscale::rules::TemplateData;
using gpuscale::rules::TemplateValue;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t offset = 0;
  auto parsed = Template::parse(text, &offset);
  if (!parsed.ok() && offset > text.size()) __builtin_trap();
  if (parsed.ok()) {
    TemplateValue series = std::string("http_requests_total");
    TemplateValue matchers = std::string(R"(namespace="ns",pod=~"a|b")");
    TemplateValue values = StringMap{{"namespace", "ns"}, {"pod", "a|b"}};
    TemplateValue groupBy = std::string("pod");
    TemplateValue slice = std::vector<std::string>{"pod", "container"};
    TemplateData args{"naming.queryTemplateArgs",
                      {{"Series", &series},
                       {"LabelMatchers", &matchers},
                       {"LabelValuesByName", &values},
                       {"GroupBy", &groupBy},
                       {"GroupBySlice", &slice}}};
    (void)parsed->execute(args);
  }
  static const GoRegex kRegex = *GoRegex::compile("^(?P<base>.*)_(seconds)_total$");
  std::string out;
  (void)kRegex.expand(text, "http_request_duration_seconds_total", out);
  (void)gpuscale::rules::parseExpandReferences(text);
  return 0;
}
