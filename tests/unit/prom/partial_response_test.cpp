#include "gpuscale/prom/partial_response.h"

#include <gtest/gtest.h>

namespace gpuscale::prom {
namespace partial_response_test {

TEST(PartialResponseTest, AddsTheParameterUnlessTheUrlChoseAlready) {
  struct Row {
    const char* url;
    std::optional<std::string> want;  // nullopt: left as it is
  };
  const Row rows[] = {
      {"http://thanos-query:9090", "http://thanos-query:9090?partial_response=false"},
      {"http://thanos-query:9090/", "http://thanos-query:9090/?partial_response=false"},
      {"https://q/prefix/?dedup=true", "https://q/prefix/?dedup=true&partial_response=false"},
      {"https://q/?", "https://q/?partial_response=false"},
      {"https://q/?a=1&", "https://q/?a=1&partial_response=false"},
      {"https://q/#frag", "https://q/?partial_response=false#frag"},
      {"https://q/?partial_response=false", std::nullopt},
      {"https://q/?a=1&partial_response=true", std::nullopt},  // the operator's explicit choice
      {"https://q/?partial_response", std::nullopt},
      // A parameter that only starts with the name is another parameter.
      {"https://q/?partial_response_x=1", "https://q/?partial_response_x=1&partial_response=false"},
      {"https://q/?x=partial_response", "https://q/?x=partial_response&partial_response=false"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(withPartialResponseOff(row.url), row.want) << row.url;
  }
}

TEST(PartialResponseTest, OnlyThanosChangesTheUrlAndSaysHow) {
  PrometheusOptions options;
  options.url = "http://q:9090/";
  EXPECT_EQ(turnOffThanosPartialResponse(options, DiscoveryBackend::kPrometheus), "");
  EXPECT_EQ(turnOffThanosPartialResponse(options, DiscoveryBackend::kVictoriaMetrics), "");
  EXPECT_EQ(options.url, "http://q:9090/");
  const std::string warning = turnOffThanosPartialResponse(options, DiscoveryBackend::kThanos);
  EXPECT_EQ(options.url, "http://q:9090/?partial_response=false");
  EXPECT_NE(warning.find("partial_response=true"), std::string::npos) << warning;
  EXPECT_EQ(turnOffThanosPartialResponse(options, DiscoveryBackend::kThanos), "")
      << "the second time the URL has chosen";
}

}  // namespace partial_response_test
}  // namespace gpuscale::prom
