#include "gpuscale/prom/caching_client.h"

#include <algorithm>
#include <list>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace gpuscale::prom {
namespace {

core::Duration distance(Timestamp a, Timestamp b) {
  return std::chrono::duration_cast<core::Duration>(a > b ? a - b : b - a);
}

}  // namespace

size_t approximateBytes(const QueryResult& result) {
  // Heap blocks of a std::map node and of a long std::string, roughly; exactness is not the point,
  // proportionality is: a result with many series or long label values costs more.
  constexpr size_t kNode = 64;
  const auto text = [](const std::string& s) { return s.size() > 15 ? s.capacity() + 1 : 0; };
  const auto labels = [&](const Labels& set) {
    size_t bytes = 0;
    for (const auto& [name, value] : set) bytes += kNode + text(name) + text(value);
    return bytes;
  };
  size_t bytes = sizeof(QueryResult) + text(result.string);
  bytes += result.vector.capacity() * sizeof(Sample);
  for (const Sample& sample : result.vector) bytes += labels(sample.metric);
  bytes += result.matrix.capacity() * sizeof(RangeSeries);
  for (const RangeSeries& series : result.matrix) {
    bytes += labels(series.metric) + series.points.capacity() * sizeof(Point);
  }
  for (const std::string& warning : result.warnings) bytes += sizeof(std::string) + text(warning);
  return bytes;
}

struct CachingClient::State {
  using SteadyTime = std::chrono::steady_clock::time_point;
  using Expiries = std::multimap<SteadyTime, std::string>;

  struct Entry {
    Timestamp at;
    SteadyTime fetched;
    Result<QueryResultPtr> result;
    size_t bytes = 0;
    std::list<std::string>::iterator lru;
    Expiries::iterator expiry;
  };
  struct InFlight {
    Timestamp at;
    uint64_t id = 0;
    std::vector<Callback<QueryResultPtr>> waiters;
  };

  explicit State(CacheOptions opts) : options(std::move(opts)) {}

  core::Duration ttlOf(const Result<QueryResultPtr>& result) const {
    return result.ok() ? options.ttl : options.errorTtl;
  }

  // What an entry costs: the result, the key (held by the map, the LRU list and the expiry index)
  // and the bookkeeping around it.
  static size_t entryBytes(const std::string& promql, const Result<QueryResultPtr>& result) {
    constexpr size_t kOverhead = sizeof(Entry) + 3 * 64;
    size_t bytes = kOverhead + 3 * promql.size();
    if (result.ok() && *result) return bytes + approximateBytes(**result);
    return bytes + sizeof(core::Status) + result.status().message().size();
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
  void erase(std::unordered_map<std::string, Entry>::iterator it) {
    bytes -= it->second.bytes;
    lru.erase(it->second.lru);
    expiries.erase(it->second.expiry);
    entries.erase(it);
  }

  // Drops every entry whose TTL has passed, so memory follows the TTL and not only the next use of
  // the same query. Requires `mutex`.
  void dropExpired(SteadyTime now) {
    while (!expiries.empty() && expiries.begin()->first <= now) {
      erase(entries.find(expiries.begin()->second));
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
    lru.push_front(promql);
    const auto expiry =
        expiries.emplace(fetched + std::chrono::duration_cast<SteadyTime::duration>(ttl), promql);
    entries.emplace(promql, Entry{at, fetched, result, size, lru.begin(), expiry});
    bytes += size;
    while (entries.size() > options.maxEntries || bytes > options.maxBytes) {
      erase(entries.find(lru.back()));
      ++stats.evictions;
    }
  }

  CacheOptions options;
  mutable std::mutex mutex;
  std::unordered_map<std::string, Entry> entries;
  std::list<std::string> lru;  // most recently used first
  Expiries expiries;           // when each entry's TTL ends, soonest first
  size_t bytes = 0;            // entryBytes() of every entry
  std::unordered_map<std::string, InFlight> inFlight;
  uint64_t nextId = 1;
  CacheStats stats;
};

CachingClient::CachingClient(std::shared_ptr<Client> backend, CacheOptions options)
    : ForwardingClient(std::move(backend)), state_(std::make_shared<State>(std::move(options))) {}

CachingClient::~CachingClient() = default;

void CachingClient::queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) {
  uint64_t id = 0;
  {
    std::unique_lock lock(state_->mutex);
    const auto now = state_->options.now();
    state_->dropExpired(now);
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
        }
        done(result);
        for (auto& waiter : waiters) waiter(result);
      });
}

CacheStats CachingClient::stats() const {
  std::lock_guard lock(state_->mutex);
  state_->dropExpired(state_->options.now());
  CacheStats out = state_->stats;
  out.entries = state_->entries.size();
  out.bytes = state_->bytes;
  return out;
}

}  // namespace gpuscale::prom
