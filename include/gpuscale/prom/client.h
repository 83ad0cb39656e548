// The seam between gpuscale and a Prometheus-compatible server (Prometheus, Thanos, Mimir,
// VictoriaMetrics): instant queries, series listing, label names and label values.
//
// Every call has an asynchronous form that reports through a callback, so a thread that serves HTTP
// requests never blocks on Prometheus, and a blocking form for threads that may wait (the relister,
// tools, tests).
//
// Contracts:
//  - A failed HTTP call, a Prometheus error or an undecodable answer is an error value (see
//  errors.h), never an
//    empty result: callers must be able to tell "no data" from "could not ask".
//  - Callbacks are called exactly once, possibly on the calling thread (a cache hit, a fake) or on
//  one of the
//    implementation's I/O threads. A callback must not block: it may hand work to another thread,
//    but must not wait for another Prometheus call.
//  - The blocking forms wait for the callback. Never call them on a thread that runs callbacks of a
//  Client
//    (cpprestsdk's pool): when the pool is saturated this deadlocks.
//
// Thread safety: implementations are thread-safe; any number of calls may be in flight.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/prom/types.h"

namespace gpuscale::prom {

using core::Result;

template <typename T>
using Callback = std::function<void(Result<T>)>;

class Client {
 public:
  virtual ~Client() = default;

  // Instant query of `promql` evaluated at `at`. Every result type is returned as such; use
  // expectResultType() to require one.
  virtual void queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) = 0;
  // Label sets of the series matching any of `match` with samples in `window` (/api/v1/series).
  virtual void seriesAsync(Matchers match, TimeRange window,
                           Callback<std::vector<Series>> done) = 0;
  // Values of `label` over the series matching any of `match` (/api/v1/label/<label>/values),
  // sorted.
  virtual void labelValuesAsync(std::string label, Matchers match, TimeRange window,
                                Callback<std::vector<std::string>> done) = 0;
  // Label names over the series matching any of `match` (/api/v1/labels), sorted.
  virtual void labelNamesAsync(Matchers match, TimeRange window,
                               Callback<std::vector<std::string>> done) = 0;
  // The series of seriesAsync reduced to each metric's label names (MetricLabelNames). The default
  // reduces seriesAsync's answer; implementations that decode the body override it to build the
  // view while decoding, without holding every series' label set.
  virtual void seriesLabelNamesAsync(Matchers match, TimeRange window,
                                     Callback<MetricLabelNames> done);

  // Blocking forms of the calls above (see the file comment for where they may be used).
  Result<QueryResultPtr> query(std::string promql, Timestamp at);
  Result<std::vector<Series>> series(Matchers match, TimeRange window);
  Result<std::vector<std::string>> labelValues(std::string label, Matchers match, TimeRange window);
  Result<std::vector<std::string>> labelNames(Matchers match, TimeRange window);
  Result<MetricLabelNames> seriesLabelNames(Matchers match, TimeRange window);
};

}  // namespace gpuscale::prom
