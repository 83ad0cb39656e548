#include "gpuscale/prom/client.h"

#include <chrono>
#include <future>
#include <utility>

#include "gpuscale/core/no_wait.h"
#include "gpuscale/prom/discovery.h"

namespace gpuscale::prom {
namespace {

// Runs an asynchronous call and waits for its callback. Where waiting is not allowed
// (core/no_wait.h), an answer that is not there at once (a cache hit calls back at once) is a
// refusal; the call goes on and its callback lands nowhere.
template <typename T, typename Start>
Result<T> await(Start start) {
  auto promise = std::make_shared<std::promise<Result<T>>>();
  auto future = promise->get_future();
  start([promise](Result<T> result) { promise->set_value(std::move(result)); });
  if (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready && !core::mayWait()) {
    return core::wouldBlock();
  }
  return future.get();
}

}  // namespace

void Client::seriesLabelNamesAsync(Matchers match, TimeRange window,
                                   Callback<MetricLabelNames> done) {
  seriesAsync(std::move(match), window,
              [done = std::move(done)](Result<std::vector<Series>> series) {
                if (!series) return done(series.status());
                done(labelNamesOf(*series));
              });
}

Result<MetricLabelNames> Client::seriesLabelNames(Matchers match, TimeRange window) {
  return await<MetricLabelNames>([&](Callback<MetricLabelNames> done) {
    seriesLabelNamesAsync(std::move(match), window, std::move(done));
  });
}

Result<QueryResultPtr> Client::query(std::string promql, Timestamp at) {
  return await<QueryResultPtr>(
      [&](Callback<QueryResultPtr> done) { queryAsync(std::move(promql), at, std::move(done)); });
}

Result<std::vector<Series>> Client::series(Matchers match, TimeRange window) {
  return await<std::vector<Series>>([&](Callback<std::vector<Series>> done) {
    seriesAsync(std::move(match), window, std::move(done));
  });
}

Result<std::vector<std::string>> Client::labelValues(std::string label, Matchers match,
                                                     TimeRange window) {
  return await<std::vector<std::string>>([&](Callback<std::vector<std::string>> done) {
    labelValuesAsync(std::move(label), std::move(match), window, std::move(done));
  });
}

Result<std::vector<std::string>> Client::labelNames(Matchers match, TimeRange window) {
  return await<std::vector<std::string>>([&](Callback<std::vector<std::string>> done) {
    labelNamesAsync(std::move(match), window, std::move(done));
  });
}

}  // namespace gpuscale::prom
