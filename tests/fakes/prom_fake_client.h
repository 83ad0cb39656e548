// A prom::Client that answers from canned results keyed by the exact query text, for tests of code
// above the Prometheus seam (providers, relister, cache). Unknown queries answer with an empty
// vector (no data), unless a default error is set. Calls are counted per key; callbacks run on the
// calling thread.
//
// Thread safety: thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "gpuscale/prom/client.h"
#include "gpuscale/prom/errors.h"

namespace gpuscale::fakes {

class FakePrometheusClient : public prom::Client {
 public:
  using StringList = std::vector<std::string>;

  void setQuery(const std::string& promql, prom::Result<prom::QueryResultPtr> result) {
    std::lock_guard lock(mutex_);
    queries_.insert_or_assign(promql, std::move(result));
  }
  // Convenience: a vector result of `samples`.
  void setVector(const std::string& promql, std::vector<prom::Sample> samples) {
    auto result = std::make_shared<prom::QueryResult>();
    result->vector = std::move(samples);
    setQuery(promql, prom::QueryResultPtr(std::move(result)));
  }
  // Keyed by the matchers joined with " or ".
  void setSeries(const prom::Matchers& match, prom::Result<std::vector<prom::Series>> result) {
    std::lock_guard lock(mutex_);
    series_.insert_or_assign(join(match), std::move(result));
  }
  // Keyed by "<label>|" + the matchers joined with " or ".
  void setLabelValues(const std::string& label, const prom::Matchers& match,
                      prom::Result<StringList> result) {
    std::lock_guard lock(mutex_);
    labelValues_.insert_or_assign(label + "|" + join(match), std::move(result));
  }
  void setLabelNames(const prom::Matchers& match, prom::Result<StringList> result) {
    std::lock_guard lock(mutex_);
    labelNames_.insert_or_assign(join(match), std::move(result));
  }
  // Convenience: the seriesQuery `query` discovers the one metric `name`, whose series carry
  // `labels` (and __name__). Discovery asks for candidates by the metric name, then for the full
  // query; both are answered.
  void setDiscoverable(const std::string& query, const std::string& name, StringList labels) {
    labels.insert(labels.begin(), "__name__");
    for (const std::string& match : {name, query}) {
      setLabelValues("__name__", {match}, StringList{name});
      setLabelNames({match}, labels);
    }
  }
  // The answer for every key without a canned result (default: no data).
  void setDefaultError(core::Status status) {
    std::lock_guard lock(mutex_);
    defaultError_ = std::move(status);
  }

  // How often each key was asked ("query:<promql>", "series:<m>", "values:<label>|<m>",
  // "labels:<m>").
  size_t calls(const std::string& key) const {
    std::lock_guard lock(mutex_);
    auto it = calls_.find(key);
    return it == calls_.end() ? 0 : it->second;
  }
  size_t totalCalls() const {
    std::lock_guard lock(mutex_);
    size_t total = 0;
    for (const auto& [key, n] : calls_) total += n;
    return total;
  }

  void queryAsync(std::string promql, prom::Timestamp,
                  prom::Callback<prom::QueryResultPtr> done) override {
    done(lookup(queries_, "query:", promql,
                [] { return prom::QueryResultPtr(std::make_shared<prom::QueryResult>()); }));
  }
  void seriesAsync(prom::Matchers match, prom::TimeRange,
                   prom::Callback<std::vector<prom::Series>> done) override {
    done(lookup(series_, "series:", join(match), [] { return std::vector<prom::Series>{}; }));
  }
  void labelValuesAsync(std::string label, prom::Matchers match, prom::TimeRange,
                        prom::Callback<StringList> done) override {
    done(lookup(labelValues_, "values:", label + "|" + join(match), [] { return StringList{}; }));
  }
  void labelNamesAsync(prom::Matchers match, prom::TimeRange,
                       prom::Callback<StringList> done) override {
    done(lookup(labelNames_, "labels:", join(match), [] { return StringList{}; }));
  }

 private:
  static std::string join(const prom::Matchers& match) {
    std::string out;
    for (const auto& m : match) out += (out.empty() ? "" : " or ") + m;
    return out;
  }

  template <typename T, typename Empty>
  prom::Result<T> lookup(const std::map<std::string, prom::Result<T>>& table,
                         const std::string& kind, const std::string& key, Empty empty) {
    std::lock_guard lock(mutex_);
    ++calls_[kind + key];
    auto it = table.find(key);
    if (it != table.end()) return it->second;
    if (!defaultError_.ok()) return defaultError_;
    return empty();
  }

  mutable std::mutex mutex_;
  std::map<std::string, prom::Result<prom::QueryResultPtr>> queries_;
  std::map<std::string, prom::Result<std::vector<prom::Series>>> series_;
  std::map<std::string, prom::Result<StringList>> labelValues_;
  std::map<std::string, prom::Result<StringList>> labelNames_;
  std::map<std::string, size_t> calls_;
  core::Status defaultError_;
};

}  // namespace gpuscale::fakes
