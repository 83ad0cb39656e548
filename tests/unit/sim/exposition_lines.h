// Table checks of a rendered Prometheus text exposition, shared by the exporter models' tests: each
// row names what it shows and a fragment the text must (or must not) contain.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpuscale::sim::testing {

struct ExpositionLine {
  const char* what;
  std::string line;
};

// Every row's fragment is in `text` (a failure prints the row and the whole text).
inline void expectLines(const std::string& text, const std::vector<ExpositionLine>& rows) {
  for (const ExpositionLine& row : rows) {
    EXPECT_NE(text.find(row.line), std::string::npos) << row.what << "\n" << text;
  }
}

// No row's fragment is in `text`.
inline void expectNoLines(const std::string& text, const std::vector<ExpositionLine>& rows) {
  for (const ExpositionLine& row : rows) {
    EXPECT_EQ(text.find(row.line), std::string::npos) << row.what;
  }
}

// `labels` ("{a="1"}") with `extra` (`le="0.5"`) added as the last label: {a="1",le="0.5"}.
inline std::string withLabel(const std::string& labels, const std::string& extra) {
  return labels.substr(0, labels.size() - 1) + "," + extra + "}";
}

// The labels vLLM puts on an engine's series, as a set in braces.
inline std::string vllmLabels(const std::string& model, const std::string& engine,
                              const std::string& ns, const std::string& pod) {
  return R"({model_name=")" + model + R"(",engine=")" + engine + R"(",namespace=")" + ns +
         R"(",pod=")" + pod + R"("})";
}

}  // namespace gpuscale::sim::testing
