#include "gpuscale/prom/forwarding_client.h"

namespace gpuscale::prom {

ForwardingClient::CallDone ForwardingClient::onCall(std::string_view /*endpoint*/) { return {}; }

template <typename T>
Callback<T> ForwardingClient::noted(std::string_view endpoint, Callback<T> done) {
  CallDone callDone = onCall(endpoint);
  if (!callDone) return done;
  return [callDone = std::move(callDone), done = std::move(done)](Result<T> result) {
    callDone(result.status());
    done(std::move(result));
  };
}

void ForwardingClient::queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) {
  backend_->queryAsync(std::move(promql), at, noted("query", std::move(done)));
}

void ForwardingClient::seriesAsync(Matchers match, TimeRange window,
                                   Callback<std::vector<Series>> done) {
  backend_->seriesAsync(std::move(match), window, noted("series", std::move(done)));
}

void ForwardingClient::seriesLabelNamesAsync(Matchers match, TimeRange window,
                                             Callback<MetricLabelNames> done) {
  backend_->seriesLabelNamesAsync(std::move(match), window, noted("series", std::move(done)));
}

void ForwardingClient::labelValuesAsync(std::string label, Matchers match, TimeRange window,
                                        Callback<std::vector<std::string>> done) {
  backend_->labelValuesAsync(std::move(label), std::move(match), window,
                             noted("label_values", std::move(done)));
}

void ForwardingClient::labelNamesAsync(Matchers match, TimeRange window,
                                       Callback<std::vector<std::string>> done) {
  backend_->labelNamesAsync(std::move(match), window, noted("labels", std::move(done)));
}

}  // namespace gpuscale::prom
