// ForwardingClient: a Client that passes every call to another one (its backend). Decorators (the
// query cache, the observer) derive from it and override only the calls they change, so a call
// added to Client is forwarded in one place. Every call it forwards first passes through one hook,
// onCall(), which a decorator overrides to note calls (their endpoint, their outcome) without
// restating the whole interface; a call a subclass overrides does not reach the hook.
//
// Thread safety: as the backend and the subclass's onCall() (it holds no state of its own).
#pragma once

#include <functional>
#include <memory>
#include <string_view>

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

  // Called as a call is passed on, with its endpoint: "query", "series" (also for
  // seriesLabelNamesAsync: the same endpoint), "label_values" or "labels". The function it returns,
  // when not null, gets the call's outcome (ok, or the failure) once the call completes, before the
  // caller's callback does. The default notes nothing.
  using CallDone = std::function<void(const core::Status& outcome)>;
  virtual CallDone onCall(std::string_view endpoint);

 private:
  template <typename T>
  Callback<T> noted(std::string_view endpoint, Callback<T> done);

  std::shared_ptr<Client> backend_;
};

}  // namespace gpuscale::prom
