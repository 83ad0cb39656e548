// A Client decorator that makes repeated instant queries cheap: identical PromQL asked while a
// query for it is in flight waits for that query instead of sending another (coalescing), and
// results are kept for a TTL
// (`--metrics-cache-ttl`). This is what keeps "at most one Prometheus query per (rule, namespace,
// selector) per TTL however many callers" true.
//
// Semantics:
//  - Key: the PromQL text. A cached result answers a query whose evaluation time `at` lies within
//  `ttl` of the
//    cached result's evaluation time and was fetched less than `ttl` ago; callers therefore see
//    data up to `ttl` old. A query in flight is joined when the evaluation times differ by at most
//    max(ttl, joinWindow), so even with ttl 0 a burst of identical "now" queries runs once.
//  - Errors are not cached unless `errorTtl` > 0 (a short error TTL shields a struggling
//  Prometheus), but an
//    error is delivered to every caller that joined the failed query.
//  - Memory is bounded: at most `maxEntries` results and `maxBytes` bytes of them are kept, the
//    least recently used evicted first; a result larger than maxBytes on its own is passed on but
//    not kept. Bytes are what the heap hands out for an entry (approximateBytes() of the result,
//    plus the key and the index nodes, each rounded up to the allocator's chunk size), so the
//    limit bounds what the process holds for the cache, not only the payload. Entries whose TTL has
//    passed are dropped on the next call to the cache (any query, or stats()) and, with a
//    `sweepInterval`, by a periodic sweep while nobody calls. What is dropped is reported to
//    core::HeapReclaimer, which hands the freed pages back to the system (malloc_trim), so the
//    resident set falls when entries go and does not stay at the peak of a burst.
//  - Series and label calls pass through unchanged (the relister deduplicates those itself).
//  - Callbacks of joined callers run on the thread that completes the backend call, in join order.
//
// Thread safety: thread-safe. The backend is shared; calls in flight keep the cache state alive
// after the CachingClient is destroyed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "gpuscale/core/duration.h"
#include "gpuscale/core/heap_reclaimer.h"
#include "gpuscale/prom/forwarding_client.h"

namespace gpuscale::prom {

struct CacheOptions {
  core::Duration ttl = std::chrono::seconds(2);
  core::Duration errorTtl = core::Duration::zero();
  core::Duration joinWindow = std::chrono::seconds(1);
  size_t maxEntries = 4096;
  // Heap bytes the cached entries may take (see above); 0 keeps none.
  size_t maxBytes = size_t{64} << 20;
  // How often expired entries are dropped while the cache is not called; 0: only on calls.
  core::Duration sweepInterval = core::Duration::zero();
  // The clock that ages entries (tests substitute their own).
  std::function<std::chrono::steady_clock::time_point()> now = std::chrono::steady_clock::now;
};

struct CacheStats {
  uint64_t hits = 0;       // answered from the cache
  uint64_t misses = 0;     // sent to the backend
  uint64_t coalesced = 0;  // joined a query in flight
  uint64_t evictions = 0;  // dropped to stay within maxEntries or maxBytes
  uint64_t expired = 0;    // dropped because their TTL had passed
  uint64_t tooLarge = 0;   // results larger than maxBytes, never cached
  size_t entries = 0;      // results held now
  size_t bytes = 0;        // their approximate size
};

// The heap bytes a cached result holds: every allocation it owns (label tree nodes, strings beyond
// the inline buffer, vectors' capacity, the shared result itself) rounded up to glibc's chunk size
// (heapBlockBytes). Within a few percent of what malloc really keeps for it.
size_t approximateBytes(const QueryResult& result);
// The size of the heap chunk glibc's malloc uses for a request of `requested` bytes.
size_t heapBlockBytes(size_t requested);

class CachingClient final : public ForwardingClient {
 public:
  CachingClient(std::shared_ptr<Client> backend, CacheOptions options);
  ~CachingClient() override;

  void queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) override;

  CacheStats stats() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  core::HeapReclaimer::Registration sweeper_;  // after state_: unregistered first
};

}  // namespace gpuscale::prom
