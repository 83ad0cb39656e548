#include "gpuscale/prom/forwarding_client.h"

namespace gpuscale::prom {

void ForwardingClient::queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) {
  backend_->queryAsync(std::move(promql), at, std::move(done));
}

void ForwardingClient::seriesAsync(Matchers match, TimeRange window,
                                   Callback<std::vector<Series>> done) {
  backend_->seriesAsync(std::move(match), window, std::move(done));
}

void ForwardingClient::seriesLabelNamesAsync(Matchers match, TimeRange window,
                                             Callback<MetricLabelNames> done) {
  backend_->seriesLabelNamesAsync(std::move(match), window, std::move(done));
}

void ForwardingClient::labelValuesAsync(std::string label, Matchers match, TimeRange window,
                                        Callback<std::vector<std::string>> done) {
  backend_->labelValuesAsync(std::move(label), std::move(match), window, std::move(done));
}

void ForwardingClient::labelNamesAsync(Matchers match, TimeRange window,
                                       Callback<std::vector<std::string>> done) {
  backend_->labelNamesAsync(std::move(match), window, std::move(done));
}

}  // namespace gpuscale::prom
