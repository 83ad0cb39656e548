// FakeKubeClient: an in-memory KubeClient with Kubernetes' semantics where gpuscale depends on them
// (resource versions, list pagination with continue tokens, label/field selectors, watches that
// replay from a resourceVersion, 410 Expired for compacted versions, bookmarks, merge and JSON
// patch, 404/409), plus fault injection for the paths real servers cannot be made to fail on cue.
//
// Thread safety: thread-safe; watch() blocks until stopped, ended by the handler, or ended by a
// fault injected with endWatches().
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>

#include "gpuscale/kube/client.h"

namespace gpuscale::testing {

class FakeKubeClient final : public kube::KubeClient {
 public:
  using CreateHook = std::function<core::Result<kube::Object>(const kube::Object&)>;

  core::Result<kube::Object> get(const kube::ResourceRef& ref) override;
  core::Result<kube::ObjectList> list(const kube::ResourceRef& ref,
                                      const kube::ListOptions& options) override;
  core::Status watch(const kube::ResourceRef& ref, const kube::WatchOptions& options,
                     const kube::WatchHandler& handler, std::stop_token stop) override;
  core::Result<kube::Object> create(const kube::ResourceRef& ref,
                                    const kube::Object& object) override;
  core::Result<kube::Object> update(const kube::ResourceRef& ref,
                                    const kube::Object& object) override;
  core::Result<kube::Object> patch(const kube::ResourceRef& ref, kube::PatchType type,
                                   const kube::Object& patch) override;
  core::Status remove(const kube::ResourceRef& ref) override;
  core::Result<kube::Object> getPath(std::string_view path) override;
  std::shared_ptr<kube::ClientObserver> observer() const override { return observer_; }

  // --- test controls ------------------------------------------------------------------------
  // create() on this resource (plural, e.g. "tokenreviews") answers with the hook instead.
  void setCreateHook(const std::string& resource, CreateHook hook);
  // getPath(path) returns `document` (discovery); unknown paths are 404.
  void setPath(const std::string& path, kube::Object document);
  void removePath(const std::string& path);
  // The next `count` calls of `verb` ("get", "list", "watch", "create", ...) fail with `status`.
  void failNext(const std::string& verb, core::Status status, int count = 1);
  // Watches from a resourceVersion below the current one get 410 Expired from now on.
  void compact();
  // While false, writes change the store without watch events (history a watcher cannot see,
  // as after an etcd compaction).
  void setRecordEvents(bool record);
  // Every open watch ends: OK (stream closed) or with `status` (e.g. 410 Gone mid-stream).
  void endWatches(core::Status status = {});
  // A BOOKMARK event at the current resourceVersion to every open watch of `ref`'s collection.
  void bookmark(const kube::ResourceRef& ref);
  // What observer() returns (informers built afterwards report to it). Call before using the
  // client.
  void setObserver(std::shared_ptr<kube::ClientObserver> observer) { observer_ = observer; }
  int calls(const std::string& verb) const;
  int openWatches() const;
  std::string currentResourceVersion() const;

 private:
  std::shared_ptr<kube::ClientObserver> observer_;
  struct Event {
    std::string collection;
    kube::WatchEvent event;
    int64_t version;
  };
  core::Status injected(const std::string& verb);
  kube::Object storeLocked(const kube::ResourceRef& ref, kube::Object object,
                           kube::WatchEvent::Type type);
  // The stored object `ref` names, nullptr when there is none. Requires mu_.
  kube::Object* findLocked(const kube::ResourceRef& ref);
  static std::string collectionKey(const kube::ResourceRef& ref);
  static std::string objectKey(const kube::ResourceRef& ref, const kube::Object& object);

  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  int64_t version_ = 100;
  int64_t compactedBelow_ = 0;
  uint64_t endGeneration_ = 0;
  core::Status endStatus_;
  std::map<std::string, std::map<std::string, kube::Object>> objects_;  // collection -> key -> obj
  std::deque<Event> events_;
  std::map<std::string, CreateHook> createHooks_;
  std::map<std::string, kube::Object, std::less<>> paths_;
  std::map<std::string, std::deque<core::Status>> failures_;
  std::map<std::string, int> calls_;
  int openWatches_ = 0;
  bool recordEvents_ = true;
};

}  // namespace gpuscale::testing
