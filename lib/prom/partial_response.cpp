#include "gpuscale/prom/partial_response.h"

#include <algorithm>

namespace gpuscale::prom {

std::optional<std::string> withPartialResponseOff(std::string_view url) {
  constexpr std::string_view kKey = "partial_response";
  const size_t fragment = std::min(url.find('#'), url.size());
  const std::string_view beforeFragment = url.substr(0, fragment);
  const size_t question = beforeFragment.find('?');
  if (question != std::string_view::npos) {
    std::string_view query = beforeFragment.substr(question + 1);
    while (!query.empty()) {
      const size_t amp = std::min(query.find('&'), query.size());
      const std::string_view param = query.substr(0, amp);
      const std::string_view name = param.substr(0, std::min(param.find('='), param.size()));
      if (name == kKey) return std::nullopt;
      query.remove_prefix(std::min(amp + 1, query.size()));
    }
  }
  std::string out(beforeFragment);
  if (question == std::string_view::npos) {
    out += '?';
  } else if (!out.ends_with('?') && !out.ends_with('&')) {
    out += '&';
  }
  out += kKey;
  out += "=false";
  out += url.substr(fragment);
  return out;
}

std::string turnOffThanosPartialResponse(PrometheusOptions& options, DiscoveryBackend backend) {
  if (backend != DiscoveryBackend::kThanos) return "";
  auto url = withPartialResponseOff(options.url);
  if (!url) return "";
  options.url = std::move(*url);
  return "--discovery-backend=thanos: querying " + options.url +
         " (partial responses turned off: Thanos answers a store outage with an empty 200 "
         "otherwise; put partial_response=true in --prometheus-url to keep them)";
}

}  // namespace gpuscale::prom
