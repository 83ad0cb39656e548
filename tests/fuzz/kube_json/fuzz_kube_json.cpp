// Fuzzes what the Kubernetes client decodes from the API server: watch event lines applied to an
// informer's ObjectStore, LIST pages replacing it, error Statuses and discovery documents. No input
// may crash or throw; a store must hold exactly one object per distinct key it was given, and an
// error Status must carry an HTTP error code. The first byte picks the decoder (and the HTTP code
// of an error answer); the rest is the body.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_harness.h"
#include "gpuscale/core/label_selector.h"
#include "gpuscale/kube/client.h"
#include "gpuscale/kube/discovery.h"
#include "gpuscale/kube/object_store.h"

namespace {

using gpuscale::kube::ObjectStore;

[[noreturn]] void fail(const char* what, std::string_view input) {
  gpuscale::fuzz::fail("fuzz_kube_json", what, input);
}

// Reads the store as the adapter and the reconciler do: by key, by namespace and by label.
void readStore(const ObjectStore& store) {
  static const auto selector = *gpuscale::core::LabelSelector::parse("app=triton,tier!=batch");
  for (const auto& object : store.all()) {
    const std::string key = ObjectStore::keyOf(*object);
    (void)store.labelsOf(*object);
    (void)store.list(selector, key.substr(0, key.find('/')));
  }
  (void)store.list({}, "");
}

// Watch events, one JSON document per line, applied as the informer applies them.
void watchStream(std::string_view body) {
  ObjectStore store;
  std::set<std::string> keys;
  while (!body.empty()) {
    const size_t end = std::min(body.find('\n'), body.size());
    const std::string_view line = body.substr(0, end);
    body.remove_prefix(std::min(end + 1, body.size()));
    auto event = gpuscale::kube::decodeWatchEvent(line);
    if (!event) {
      if (event.status().httpCode() < 400) fail("a failed event with a non-error code", line);
      continue;
    }
    const std::string key = ObjectStore::keyOf(event->object);
    switch (event->type) {
      case gpuscale::kube::WatchEvent::Type::kAdded:
      case gpuscale::kube::WatchEvent::Type::kModified:
        store.upsert(event->object);
        keys.insert(key);
        break;
      case gpuscale::kube::WatchEvent::Type::kDeleted:
        store.erase(event->object);
        keys.erase(key);
        break;
      case gpuscale::kube::WatchEvent::Type::kBookmark:
        break;
    }
    if (store.size() != keys.size()) fail("store size differs from the keys applied", line);
  }
  readStore(store);
}

void listPage(std::string_view body) {
  auto page = gpuscale::kube::decodeListPage(body);
  if (!page) return;
  std::set<std::string> keys;
  for (const auto& item : page->items) keys.insert(ObjectStore::keyOf(item));
  ObjectStore store;
  store.replace(page->items);
  if (store.size() != keys.size()) fail("store size differs from the distinct keys listed", body);
  readStore(store);
  // A relist onto a full store: what is not listed again is deleted.
  (void)store.replace({});
  if (store.size() != 0) fail("an empty relist left objects behind", body);
}

void errorAnswer(int code, std::string_view body) {
  const auto status = gpuscale::kube::statusFromResponse(code, body, code % 3);
  if (status.ok()) fail("an error answer became OK", body);
  if (status.httpCode() < 400 || status.httpCode() > 599) fail("a non-error HTTP code", body);
}

void discovery(std::string_view body) {
  const auto document = gpuscale::kube::Object::parse(body, nullptr, /*allow_exceptions=*/false);
  for (const auto& info : gpuscale::kube::parseResourceList(document, "apps", "v1")) {
    if (info.groupResource.resource.empty() ||
        info.groupResource.resource.find('/') != std::string::npos) {
      fail("a resource without a name, or a subresource", body);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr int kCodes[] = {400, 401, 403, 404, 409, 410, 422, 429, 500, 503, 504, 418};
  // The error answer's code comes from the first byte's upper bits.
  const auto error = [&](std::string_view body) { errorAnswer(kCodes[(data[0] >> 2) % 12], body); };
  return gpuscale::fuzz::dispatch(data, size, {watchStream, listPage, error, discovery});
}
