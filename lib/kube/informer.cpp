#include "gpuscale/kube/informer.h"

#include <spdlog/spdlog.h>

#include "gpuscale/k8s/object_accessors.h"

namespace gpuscale::kube {

Informer::Informer(std::shared_ptr<KubeClient> client, InformerOptions options)
    : client_(std::move(client)),
      options_(std::move(options)),
      observer_(client_->observer()),
      resourceLabel_(boundedResourceLabel(options_.resource.resource)) {}

Informer::~Informer() { stop(); }

void Informer::addHandler(InformerHandler handler) { handlers_.push_back(std::move(handler)); }

void Informer::start() {
  loop_ = std::jthread([this](std::stop_token stop) { run(stop); });
  if (options_.resyncPeriod.count() > 0) {
    resync_ = std::jthread([this](std::stop_token stop) { resyncLoop(stop); });
  }
}

void Informer::stop() {
  loop_.request_stop();
  resync_.request_stop();
  cv_.notify_all();
  if (loop_.joinable()) loop_.join();
  if (resync_.joinable()) resync_.join();
}

bool Informer::waitForSync(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return synced_.load(); });
}

std::string Informer::resourceVersion() const {
  std::lock_guard lock(mu_);
  return resourceVersion_;
}

Informer::Stats Informer::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

bool Informer::sleepFor(std::chrono::milliseconds delay, std::stop_token stop) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, stop, delay, [] { return false; });
  return !stop.stop_requested();
}

void Informer::dispatch(const std::vector<ObjectStore::Change>& changes) {
  std::lock_guard lock(dispatchMu_);
  for (const auto& change : changes) {
    for (const auto& handler : handlers_) {
      if (change.before && change.after) {
        if (handler.onUpdate) handler.onUpdate(*change.before, *change.after);
      } else if (change.after) {
        if (handler.onAdd) handler.onAdd(*change.after);
      } else if (change.before) {
        if (handler.onDelete) handler.onDelete(*change.before);
      }
    }
  }
}

bool Informer::relist(std::stop_token stop) {
  ListOptions list;
  list.labelSelector = options_.labelSelector;
  list.fieldSelector = options_.fieldSelector;
  list.limit = options_.pageSize;
  list.metadataOnly = options_.metadataOnly;
  list.transform = options_.transform;  // each page is trimmed as it is decoded
  auto result = client_->list(options_.resource, list);
  {
    std::lock_guard lock(mu_);
    ++stats_.lists;
    if (!result) ++stats_.failures;
  }
  if (!result) {
    spdlog::warn("informer {}: list failed: {}", options_.resource.path(),
                 result.status().toString());
    return false;
  }
  auto changes = store_.replace(std::move(result->items));
  {
    std::lock_guard lock(mu_);
    resourceVersion_ = result->resourceVersion;
    synced_ = true;
  }
  cv_.notify_all();
  if (observer_) observer_->informerListed(resourceLabel_);
  if (!stop.stop_requested()) dispatch(changes);
  return true;
}

bool Informer::applyEvent(const WatchEvent& event) {
  const std::string version =
      k8s::stringField(k8s::objectField(event.object, "metadata"), "resourceVersion");
  ObjectStore::Change change;
  switch (event.type) {
    case WatchEvent::Type::kAdded:
    case WatchEvent::Type::kModified:
      change = store_.upsert(options_.transform ? options_.transform(event.object) : event.object);
      break;
    case WatchEvent::Type::kDeleted:
      change = store_.erase(event.object);
      break;
    case WatchEvent::Type::kBookmark:
      break;
  }
  {
    std::lock_guard lock(mu_);
    if (!version.empty()) resourceVersion_ = version;
    if (event.type == WatchEvent::Type::kBookmark) ++stats_.bookmarks;
  }
  if (change.before || change.after) dispatch({change});
  return true;
}

void Informer::run(std::stop_token stop) {
  auto backoff = options_.initialBackoff;
  const auto failed = [&](const char* what, const core::Status& status) {
    spdlog::warn("informer {}: {}: {}; retrying in {}ms", options_.resource.path(), what,
                 status.toString(), backoff.count());
    const bool keepGoing = sleepFor(backoff, stop);
    backoff = std::min(backoff * 2, options_.maxBackoff);
    return keepGoing;
  };
  bool needList = true;
  while (!stop.stop_requested()) {
    if (needList) {
      if (!relist(stop)) {
        if (!failed("list", core::Status::unavailable("list failed"))) return;
        continue;
      }
      needList = false;
    }
    WatchOptions watch;
    watch.labelSelector = options_.labelSelector;
    watch.fieldSelector = options_.fieldSelector;
    watch.resourceVersion = resourceVersion();
    watch.timeoutSeconds = options_.watchTimeoutSeconds;
    watch.metadataOnly = options_.metadataOnly;
    bool sawEvent = false;
    {
      std::lock_guard lock(mu_);
      ++stats_.watches;
    }
    if (observer_) observer_->watchStarted(resourceLabel_);
    core::Status status = client_->watch(
        options_.resource, watch,
        [&](const WatchEvent& event) {
          sawEvent = true;
          return applyEvent(event);
        },
        stop);
    if (stop.stop_requested()) return;
    if (status.ok()) {
      backoff = options_.initialBackoff;
      continue;
    }
    {
      std::lock_guard lock(mu_);
      if (k8s::isGone(status)) {
        ++stats_.relistsAfterGone;
      } else {
        ++stats_.failures;
      }
    }
    if (k8s::isGone(status)) {
      if (observer_) observer_->relistedAfterGone(resourceLabel_);
      spdlog::info("informer {}: resource version {} expired, relisting", options_.resource.path(),
                   watch.resourceVersion);
      needList = true;
      continue;
    }
    if (sawEvent) backoff = options_.initialBackoff;
    if (!failed("watch", status)) return;
  }
}

void Informer::resyncLoop(std::stop_token stop) {
  while (sleepFor(options_.resyncPeriod, stop)) {
    if (!hasSynced()) continue;
    std::vector<ObjectStore::Change> changes;
    for (auto& object : store_.all()) changes.push_back({object, object});
    dispatch(changes);
  }
}

}  // namespace gpuscale::kube
