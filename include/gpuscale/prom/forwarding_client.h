// ForwardingClient: a Client that passes every call to another one (its backend). Decorators (the
// query cache, the observer) derive from it and override only the calls they change, so a call
// added to Client is forwarded in one place.
//
// Thread safety: as the backend (it holds no state of its own).
#pragma once

#include <memory>

#include "gpuscale/prom/client.h"

namespace gpuscale::prom {

class ForwardingClient : public Client {
 public:
  explicit ForwardingClient(std::shared_ptr<Client> backend) : backend_(std::move(backend)) {}

  void queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) override;
  void seriesAsync(Matchers match, TimeRange window, Callback<std::vector<Series>> done) override;
  void seriesLabelNamesAsync(Matchers match, TimeRange window,
                             Callback<MetricLabelNames> done) override;
  void labelValuesAsync(std::string label, Matchers match, TimeRange window,
                        Callback<std::vector<std::string>> done) override;
  void labelNamesAsync(Matchers match, TimeRange window,
                       Callback<std::vector<std::string>> done) override;

 protected:
  Client& backend() const { return *backend_; }

 private:
  std::shared_ptr<Client> backend_;
};

}  // namespace gpuscale::prom
