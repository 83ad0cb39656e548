// Thanos Query's partial responses, turned off in the query URL.
//
// Thanos Query answers with partial responses by default: when a store behind it is down, queries
// and label calls answer 200 with whatever the other stores hold and only a warning, which reads as
// "nothing matched". For an autoscaler that is the worst answer: discovery drops the missing
// store's metrics and an HPA sees fewer pods or none. With `partial_response=false` the same
// outage is an error the adapter reports as such and discovery keeps its last good view. The
// client keeps a URL's query parameters on every call, so the parameter in the base URL covers
// every request.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpuscale/prom/discovery.h"
#include "gpuscale/prom/options.h"

namespace gpuscale::prom {

// `url` with `partial_response=false` added to its query string, or nullopt when the URL already
// says `partial_response=` anything (an operator's explicit choice, `true` included, is kept).
std::optional<std::string> withPartialResponseOff(std::string_view url);

// With Thanos as the discovery backend, `options.url` gets withPartialResponseOff(); returns the
// warning to log once (what was changed and how to keep partial responses), or "" when nothing
// changed (another backend, or the URL chose).
std::string turnOffThanosPartialResponse(PrometheusOptions& options, DiscoveryBackend backend);

}  // namespace gpuscale::prom
