// Metric families registered on a prometheus-cpp registry: the one place that spells out
// prometheus-cpp's Builder chain (Name, Help, Register), so every module that exports `/metrics`
// declares a family as one call with its name and help text.
//
// Why: each module that counts something registered its families through the same four-call
// chain, repeated per family; the chain is the library's mechanics, not the module's meaning.
// These live in their own target (`gpuscale_core_metrics`) so that `gpuscale_core` itself does
// not depend on prometheus-cpp.
//
// Contract: as prometheus-cpp's Register on a default (Merge) registry: registering a name again
// with the same type and constant labels returns the family already there; the same name with
// another type throws std::invalid_argument, a programming error found at start-up. The returned
// references live as long as the registry.
//
// Thread safety: as prometheus::Registry (registration is thread-safe; families and series are
// thread-safe to add to and update).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <chrono>
#include <string>

namespace gpuscale::core {

prometheus::Family<prometheus::Counter>& counterFamily(prometheus::Registry& registry,
                                                       const std::string& name,
                                                       const std::string& help);
prometheus::Family<prometheus::Gauge>& gaugeFamily(prometheus::Registry& registry,
                                                   const std::string& name,
                                                   const std::string& help);
prometheus::Family<prometheus::Histogram>& histogramFamily(prometheus::Registry& registry,
                                                           const std::string& name,
                                                           const std::string& help);

// The one series without labels of a new family: a metric that has no dimensions.
prometheus::Counter& counter(prometheus::Registry& registry, const std::string& name,
                             const std::string& help);
prometheus::Gauge& gauge(prometheus::Registry& registry, const std::string& name,
                         const std::string& help);

// `at` as seconds since the Unix epoch: the value of a timestamp gauge (`..._timestamp_seconds`).
inline double unixSeconds(std::chrono::system_clock::time_point at) {
  return std::chrono::duration<double>(at.time_since_epoch()).count();
}

}  // namespace gpuscale::core
