// KubeClient: the seam between gpuscale and the Kubernetes API.
//
// Objects travel as parsed JSON (kube-apiserver ignores key order, so plain nlohmann::json is
// used). Every call returns a value or the Kubernetes Status of the failed response: the HTTP code,
// reason and message exactly as the server sent them (404 NotFound, 409 Conflict/AlreadyExists, 410
// Gone/Expired, 422 Invalid, 429 TooManyRequests ...), or a transport failure as 503
// ServiceUnavailable / 504 Timeout. Use the is*() helpers below to branch on the kind of error.
//
// Blocking: every method blocks the calling thread until the response (watch: the whole stream) is
// done. Call them from your own threads (server workers, informer threads), never from a cpprestsdk
// (pplx) pool thread: blocking a pool thread deadlocks the pool. Implementations are thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/k8s/status_predicates.h"

#include "gpuscale/kube/client_observer.h"

namespace gpuscale::kube {

using Object = nlohmann::json;

// Addresses a collection, an object or a subresource. An empty `namespaceName` means a
// cluster-scoped resource or, for a list/watch of a namespaced one, all namespaces.
struct ResourceRef {
  std::string group;  // "" for the core group (/api/v1)
  std::string version;
  std::string resource;  // plural, lower case
  std::string namespaceName;
  std::string name;
  std::string subresource;

  // A collection: ResourceRef::collection("apps", "v1", "deployments", "default").
  static ResourceRef collection(std::string_view group, std::string_view version,
                                std::string_view resource, std::string_view ns = {});
  // "/api/v1/namespaces/ns/pods/name/status"; segments are percent-encoded.
  std::string path() const;
  ResourceRef named(std::string_view objectName) const;
  ResourceRef inNamespace(std::string_view ns) const;
};

struct ListOptions {
  std::string labelSelector;
  std::string fieldSelector;
  // Page size; 0 lists everything in one response. list() follows `continue` tokens itself.
  int64_t limit = 500;
  // "" = a consistent read from etcd; "0" = any cached version.
  std::string resourceVersion;
  // Ask for metadata only (Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;
  // v=v1): items are PartialObjectMetadata objects {apiVersion, kind, metadata}, a fraction of the
  // bytes to send, decode and keep. Served for every resource, built-in or custom.
  bool metadataOnly = false;
  // Applied to each item as its page is decoded, before the next page is asked for; null keeps
  // items as they came. A LIST of many large objects then never holds more than one page of them
  // whole (an informer that trims what it caches would otherwise hold every page at full size
  // first: a peak the allocator keeps). It must keep metadata.name, metadata.namespace and
  // metadata.resourceVersion. Every KubeClient applies it (a proxy forwards it with the options).
  std::function<Object(Object)> transform;
};

struct ObjectList {
  std::string resourceVersion;  // of the list, the point a watch resumes from
  std::vector<Object> items;
};

struct WatchOptions {
  std::string labelSelector;
  std::string fieldSelector;
  std::string resourceVersion;  // resume point; "" = start with synthetic ADDED events
  bool allowWatchBookmarks = true;
  int timeoutSeconds = 300;  // the server ends the stream after this; callers re-watch
  // Events carry PartialObjectMetadata objects (Accept: ...;as=PartialObjectMetadata;...).
  bool metadataOnly = false;
};

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark };
  Type type = Type::kAdded;
  Object object;
};

// Called for every event; return false to end the watch.
using WatchHandler = std::function<bool(const WatchEvent&)>;

enum class PatchType {
  kMerge,  // application/merge-patch+json (RFC 7386)
  kJson,   // application/json-patch+json (RFC 6902)
};

class KubeClient {
 public:
  virtual ~KubeClient() = default;

  virtual core::Result<Object> get(const ResourceRef& ref) = 0;
  // Lists every page. If a continue token expires mid-way (410), the list restarts unpaginated, as
  // client-go's pager does.
  virtual core::Result<ObjectList> list(const ResourceRef& ref, const ListOptions& options) = 0;
  // Streams events until the server closes the stream (OK), the handler returns false (OK),
  // `stop` is requested (OK), or an error: an ERROR event (its Status, e.g. 410 Expired when the
  // resource version is too old), a non-200 response, or a transport failure/read timeout.
  virtual core::Status watch(const ResourceRef& ref, const WatchOptions& options,
                             const WatchHandler& handler, std::stop_token stop) = 0;
  virtual core::Result<Object> create(const ResourceRef& ref, const Object& object) = 0;
  // create() without holding the calling thread: `done` runs once with the outcome, possibly on
  // another thread (never block in it). The default calls create() on the calling thread.
  virtual void createAsync(const ResourceRef& ref, const Object& object,
                           std::function<void(core::Result<Object>)> done) {
    done(create(ref, object));
  }
  virtual core::Result<Object> update(const ResourceRef& ref, const Object& object) = 0;
  virtual core::Result<Object> patch(const ResourceRef& ref, PatchType type,
                                     const Object& patch) = 0;
  virtual core::Status remove(const ResourceRef& ref) = 0;
  // GET of an arbitrary API path (discovery documents: /api, /apis, /apis/<g>/<v>).
  virtual core::Result<Object> getPath(std::string_view path) = 0;
  // Where this client and informers built on it report their traffic; null when nobody listens.
  virtual std::shared_ptr<ClientObserver> observer() const { return nullptr; }
};

// What a metadata-only list or watch carries for `object`: its apiVersion "meta.k8s.io/v1", kind
// "PartialObjectMetadata" and its metadata (fakes serve this; kube-apiserver does the same).
Object partialObjectMetadata(const Object& object);

// The Accept headers of metadata-only lists and watches.
inline constexpr const char* kPartialMetadataListAccept =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
inline constexpr const char* kPartialMetadataAccept =
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

// The Status of a failed API response: the body's metav1.Status when it is one, otherwise one
// built from the HTTP code. `retryAfterSeconds` > 0 is mentioned in the message (429, 503).
core::Status statusFromResponse(int httpCode, std::string_view body, int retryAfterSeconds = 0);
// The Status carried by a watch ERROR event's object.
core::Status statusFromObject(const Object& object, int fallbackCode);

// The decoders of what a kube-apiserver (or anything pretending to be one) sends back. They never
// throw: a malformed answer is an error value, and fields of the wrong type read as absent.
//
// One line of a watch stream: {"type":"ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK","object":{...}}. An
// ERROR event is its Status (statusFromObject, e.g. 410 Expired); a line that is not a JSON object
// or has an unknown type is an InternalError.
core::Result<WatchEvent> decodeWatchEvent(std::string_view line);

// One page of a LIST response: its items, the list's resourceVersion and the `continue` token (""
// on the last page). A body that is not a JSON object with an `items` array is an InternalError.
struct ListPage {
  std::vector<Object> items;
  std::string resourceVersion;
  std::string continueToken;
};
core::Result<ListPage> decodeListPage(std::string_view body);

}  // namespace gpuscale::kube
