#include "gpuscale/reconciler/optional_informer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "gpuscale/core/enum_names.h"
#include "gpuscale/k8s/status_predicates.h"

namespace gpuscale::reconciler {
namespace {

using State = OptionalResourceState;

bool degradedState(State s) {
  return s == State::kAbsent || s == State::kUnreadable || s == State::kUnknown;
}

std::string degradedWhat(State s) {
  return "optional_resource_" + std::string(optionalResourceStateName(s));
}

}  // namespace

std::string_view optionalResourceStateName(OptionalResourceState state) {
  static constexpr core::EnumNames<State, 6> kNames{{{State::kDiscovering, "discovering"},
                                                     {State::kStarting, "starting"},
                                                     {State::kServed, "served"},
                                                     {State::kAbsent, "absent"},
                                                     {State::kUnreadable, "unreadable"},
                                                     {State::kUnknown, "unknown"}}};
  return core::enumName(kNames, state, "unknown");
}

bool discoveryNames(const kube::Object& document, std::string_view resource) {
  if (!document.is_object()) return false;
  auto resources = document.find("resources");
  if (resources == document.end() || !resources->is_array()) return false;
  for (const auto& r : *resources) {
    auto name = r.is_object() ? r.find("name") : r.end();
    if (name != r.end() && name->is_string() && name->get<std::string>() == resource) return true;
  }
  return false;
}

OptionalInformer::OptionalInformer(std::shared_ptr<kube::KubeClient> client,
                                   OptionalInformerOptions options,
                                   std::shared_ptr<ReconcilerMetrics> metrics)
    : client_(std::move(client)),
      options_(std::move(options)),
      metrics_(std::move(metrics)),
      degraded_(metrics_) {
  const auto& ref = options_.informer.resource;
  resourceName_ = ref.group.empty() ? ref.resource : ref.resource + "." + ref.group;
  if (metrics_) metrics_->optionalResourceServed(resourceName_, false);
}

OptionalInformer::~OptionalInformer() { stop(); }

void OptionalInformer::start() {
  monitor_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

void OptionalInformer::stop() {
  if (monitor_.joinable()) {
    monitor_.request_stop();
    cv_.notify_all();
    monitor_.join();
  }
  std::shared_ptr<kube::Informer> informer;
  {
    std::lock_guard lock(mu_);
    informer = std::move(informer_);
  }
  if (informer) informer->stop();
}

OptionalResourceState OptionalInformer::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

bool OptionalInformer::ready() const {
  std::lock_guard lock(mu_);
  if (state_ == State::kDiscovering) return false;
  return state_ != State::kStarting || (informer_ && informer_->hasSynced());
}

std::vector<kube::ObjectStore::Ptr> OptionalInformer::objects() const {
  auto informer = this->informer();
  if (!informer || !informer->hasSynced()) return {};
  return informer->store().all();
}

std::shared_ptr<kube::Informer> OptionalInformer::informer() const {
  std::lock_guard lock(mu_);
  return informer_;
}

void OptionalInformer::run(std::stop_token stop) {
  recheck();
  while (!stop.stop_requested()) {
    auto informer = this->informer();
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, stop, informer ? options_.failurePoll : options_.recheckPeriod,
                   [] { return false; });
    }
    if (stop.stop_requested()) return;
    if (!informer) {
      recheck();
      continue;
    }
    // A failed LIST or WATCH may mean the collection went away: ask discovery again.
    if (const uint64_t failures = informer->stats().failures; failures > seenFailures_) {
      seenFailures_ = failures;
      recheck();
    } else if (informer->hasSynced()) {
      setState(State::kServed, "");
    }
  }
}

void OptionalInformer::recheck() {
  const auto& ref = options_.informer.resource;
  const std::string path =
      ref.group.empty() ? "/api/" + ref.version : "/apis/" + ref.group + "/" + ref.version;
  auto document = client_->getPath(path);
  auto informer = this->informer();
  const bool served = document && discoveryNames(*document, ref.resource);
  if (!document && !k8s::isNotFound(document.status())) {
    // Discovery itself failed: a running informer stays (it retries on its own).
    if (informer && informer->hasSynced()) return;
    setState(informer ? State::kUnreadable : State::kUnknown,
             fmt::format("discovery of {} failed: {}", path, document.status().message()));
    return;
  }
  if (!served) {
    {
      std::lock_guard lock(mu_);
      informer_.reset();
    }
    if (informer) informer->stop();
    setState(State::kAbsent, document ? fmt::format("{} does not name {}", path, ref.resource)
                                      : fmt::format("{} is not served", path));
    return;
  }
  if (!informer) {
    auto started = std::make_shared<kube::Informer>(client_, options_.informer);
    started->addHandler(options_.handler);
    seenFailures_ = 0;
    {
      std::lock_guard lock(mu_);
      informer_ = started;
    }
    started->start();
    setState(State::kStarting, "");
  } else if (informer->hasSynced()) {
    setState(State::kServed, "");
  } else if (seenFailures_ > 0) {
    setState(State::kUnreadable,
             fmt::format("served, but listing it failed {} time(s) (forbidden by RBAC? the kube "
                         "client's log says why); retried with backoff",
                         seenFailures_));
  }
}

void OptionalInformer::setState(State state, const std::string& why) {
  {
    std::lock_guard lock(mu_);
    if (state_ == state) return;
    state_ = state;
  }
  if (metrics_) metrics_->optionalResourceServed(resourceName_, state == State::kServed);
  for (State s : {State::kAbsent, State::kUnreadable, State::kUnknown}) {
    if (s != state) degraded_.cleared(degradedWhat(s), resourceName_);
  }
  if (degradedState(state)) {
    degraded_.failed(degradedWhat(state), resourceName_,
                     fmt::format("{}: planned without {} objects; rechecked every {}s", why,
                                 options_.kind, options_.recheckPeriod.count() / 1000));
  } else if (state == State::kServed) {
    spdlog::info("watching {} ({})", resourceName_, options_.kind);
  }
  if (options_.onChange) options_.onChange();
}

}  // namespace gpuscale::reconciler
