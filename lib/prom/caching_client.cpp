#include "gpuscale/prom/caching_client.h"

#include <algorithm>
#include <list>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "gpuscale/core/heap_reclaimer.h"

namespace gpuscale::prom {
namespace {

core::Duration distance(Timestamp a, Timestamp b) {
  return std::chrono::duration_cast<core::Duration>(a > b ? a - b : b - a);
}

}  // namespace

size_t heapBlockBytes(size_t requested) {
  // glibc on 64-bit: a chunk is the request plus an 8-byte header, rounded up to 16, at least 32;
  // requests from the mmap threshold (128 KiB by default) up take whole pages.
  if (requested == 0) return 0;
  constexpr size_t kMmapThreshold = 128 * 1024;
  constexpr size_t kPage = 4096;
  if (requested >= kMmapThreshold) return (requested + 16 + kPage - 1) / kPage * kPage;
  return std::max<size_t>(32, (requested + 8 + 15) / 16 * 16);
}

size_t approximateBytes(const QueryResult& result) {
  // What the allocator hands out for each part, not what the parts' sizes add up to: a label is
  // a red-black tree node holding two std::string objects (112 bytes with its chunk header, when
  // both fit the strings' inline buffer), which is where most of a result's heap goes.
  constexpr size_t kTreeNodeHeader = 4 * sizeof(void*);
  const auto text = [](const std::string& s) {
    return s.capacity() > 15 ? heapBlockBytes(s.capacity() + 1) : 0;
  };
  const auto labels = [&](const Labels& set) {
    size_t bytes = 0;
    for (const auto& [name, value] : set) {
      bytes +=
          heapBlockBytes(kTreeNodeHeader + sizeof(Labels::value_type)) + text(name) + text(value);
    }
    return bytes;
  };
  // make_shared: the result and the control block in one chunk.
  size_t bytes = heapBlockBytes(sizeof(QueryResult) + 2 * sizeof(void*)) + text(result.string);
  bytes += heapBlockBytes(result.vector.capacity() * sizeof(Sample));
  for (const Sample& sample : result.vector) bytes += labels(sample.metric);
  bytes += heapBlockBytes(result.matrix.capacity() * sizeof(RangeSeries));
  for (const RangeSeries& series : result.matrix) {
    bytes += labels(series.metric) + heapBlockBytes(series.points.capacity() * sizeof(Point));
  }
  bytes += heapBlockBytes(result.warnings.capacity() * sizeof(std::string));
  for (const std::string& warning : result.warnings) bytes += text(warning);
  return bytes;
}

struct CachingClient::State {
  using SteadyTime = std::chrono::steady_clock::time_point;
  // The LRU list and the expiry index point at the map's keys (stable in an unordered_map), so a
  // long PromQL text is held once.
  using Key = const std::string*;
  using Expiries = std::multimap<SteadyTime, Key>;

  struct Entry {
    Timestamp at;
    SteadyTime fetched;
    Result<QueryResultPtr> result;
    size_t bytes = 0;
    std::list<Key>::iterator lru;
    Expiries::iterator expiry;
  };
  using Entries = std::unordered_map<std::string, Entry>;
  struct InFlight {
    Timestamp at;
    uint64_t id = 0;
    std::vector<Callback<QueryResultPtr>> waiters;
  };

  explicit State(CacheOptions opts) : options(std::move(opts)) {}

  core::Duration ttlOf(const Result<QueryResultPtr>& result) const {
    return result.ok() ? options.ttl : options.errorTtl;
  }

  // What an entry costs the heap: the result, the key, the three index nodes and a share of the
  // hash table's buckets.
  static size_t entryBytes(const std::string& promql, const Result<QueryResultPtr>& result) {
    constexpr size_t kTreeNodeHeader = 4 * sizeof(void*);
    static const size_t kNodes = heapBlockBytes(2 * sizeof(void*) + sizeof(Entries::value_type)) +
                                 heapBlockBytes(2 * sizeof(void*) + sizeof(Key)) +
                                 heapBlockBytes(kTreeNodeHeader + sizeof(Expiries::value_type)) +
                                 2 * sizeof(void*);
    const size_t key = promql.size() > 15 ? heapBlockBytes(promql.size() + 1) : 0;
    if (result.ok() && *result) return kNodes + key + approximateBytes(**result);
    const auto& status = result.status();
    return kNodes + key + heapBlockBytes(status.message().size() + 1) +
           heapBlockBytes(status.reason().size() + 1);
  }

  // A fresh entry for (promql, at), or null. Requires `mutex`.
  const Entry* fresh(const std::string& promql, Timestamp at, SteadyTime now) {
    auto it = entries.find(promql);
    if (it == entries.end()) return nullptr;
    const Entry& entry = it->second;
    if (now - entry.fetched >= ttlOf(entry.result) || distance(at, entry.at) > options.ttl) {
      return nullptr;
    }
    lru.splice(lru.begin(), lru, entry.lru);
    return &entry;
  }

  // Removes an entry from every index. Requires `mutex`.
  void erase(Entries::iterator it) {
    bytes -= it->second.bytes;
    freed += it->second.bytes;
    lru.erase(it->second.lru);
    expiries.erase(it->second.expiry);
    entries.erase(it);
  }

  // Drops every entry whose TTL has passed, so memory follows the TTL and not only the next use of
  // the same query. Requires `mutex`.
  void dropExpired(SteadyTime now) {
    while (!expiries.empty() && expiries.begin()->first <= now) {
      erase(entries.find(*expiries.begin()->second));
      ++stats.expired;
    }
  }

  // Keeps `result` unless caching is off for it or it is larger than the whole cache; evicts the
  // least recently used entries beyond maxEntries or maxBytes. Requires `mutex`.
  void store(const std::string& promql, Timestamp at, SteadyTime fetched,
             const Result<QueryResultPtr>& result) {
    const core::Duration ttl = ttlOf(result);
    if (ttl <= core::Duration::zero() || options.maxEntries == 0) return;
    auto it = entries.find(promql);
    if (it != entries.end()) {
      if (it->second.at > at) return;  // a newer evaluation is already cached
      erase(it);
    }
    const size_t size = entryBytes(promql, result);
    if (size > options.maxBytes) {
      ++stats.tooLarge;
      return;
    }
    auto slot = entries.emplace(promql, Entry{at, fetched, result, size, {}, {}}).first;
    const Key key = &slot->first;
    lru.push_front(key);
    slot->second.lru = lru.begin();
    slot->second.expiry =
        expiries.emplace(fetched + std::chrono::duration_cast<SteadyTime::duration>(ttl), key);
    bytes += size;
    while (entries.size() > options.maxEntries || bytes > options.maxBytes) {
      erase(entries.find(*lru.back()));
      ++stats.evictions;
    }
  }

  // Passes what erase() dropped since the last call on to the heap reclaimer. Requires `mutex`.
  void reportFreed() {
    if (freed == 0) return;
    core::HeapReclaimer::instance().noteFreed(freed);
    freed = 0;
  }

  CacheOptions options;
  mutable std::mutex mutex;
  Entries entries;
  std::list<Key> lru;  // most recently used first
  Expiries expiries;   // when each entry's TTL ends, soonest first
  size_t bytes = 0;    // entryBytes() of every entry
  size_t freed = 0;    // entryBytes() of entries dropped since reportFreed()
  std::unordered_map<std::string, InFlight> inFlight;
  uint64_t nextId = 1;
  CacheStats stats;
};

CachingClient::CachingClient(std::shared_ptr<Client> backend, CacheOptions options)
    : ForwardingClient(std::move(backend)), state_(std::make_shared<State>(std::move(options))) {
  const auto interval = state_->options.sweepInterval;
  if (interval <= core::Duration::zero()) return;
  sweeper_ = core::HeapReclaimer::instance().addSweeper(
      std::chrono::duration_cast<std::chrono::milliseconds>(interval),
      [weak = std::weak_ptr<State>(state_)] {
        auto state = weak.lock();
        if (!state) return;
        std::lock_guard lock(state->mutex);
        state->dropExpired(state->options.now());
        state->reportFreed();
      });
}

CachingClient::~CachingClient() = default;

void CachingClient::queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) {
  uint64_t id = 0;
  {
    std::unique_lock lock(state_->mutex);
    const auto now = state_->options.now();
    state_->dropExpired(now);
    state_->reportFreed();
    if (const State::Entry* entry = state_->fresh(promql, at, now)) {
      ++state_->stats.hits;
      Result<QueryResultPtr> result = entry->result;
      lock.unlock();
      return done(std::move(result));
    }
    auto joinWindow = std::max(state_->options.ttl, state_->options.joinWindow);
    auto flight = state_->inFlight.find(promql);
    if (flight != state_->inFlight.end() && distance(at, flight->second.at) <= joinWindow) {
      ++state_->stats.coalesced;
      flight->second.waiters.push_back(std::move(done));
      return;
    }
    ++state_->stats.misses;
    if (flight == state_->inFlight.end()) {
      id = state_->nextId++;
      state_->inFlight.emplace(promql, State::InFlight{at, id, {}});
    }
  }
  backend().queryAsync(
      promql, at,
      [state = state_, promql, at, id, done = std::move(done)](Result<QueryResultPtr> result) {
        std::vector<Callback<QueryResultPtr>> waiters;
        {
          std::lock_guard lock(state->mutex);
          if (auto flight = state->inFlight.find(promql);
              id != 0 && flight != state->inFlight.end() && flight->second.id == id) {
            waiters = std::move(flight->second.waiters);
            state->inFlight.erase(flight);
          }
          const auto now = state->options.now();
          state->dropExpired(now);
          state->store(promql, at, now, result);
          state->reportFreed();
        }
        done(result);
        for (auto& waiter : waiters) waiter(result);
      });
}

CacheStats CachingClient::stats() const {
  std::lock_guard lock(state_->mutex);
  state_->dropExpired(state_->options.now());
  state_->reportFreed();
  CacheStats out = state_->stats;
  out.entries = state_->entries.size();
  out.bytes = state_->bytes;
  return out;
}

}  // namespace gpuscale::prom
