#include "gpuscale/prom/caching_client.h"

#include <algorithm>
#include <list>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace gpuscale::prom {
namespace {

core::Duration distance(Timestamp a, Timestamp b) {
  return std::chrono::duration_cast<core::Duration>(a > b ? a - b : b - a);
}

}  // namespace

struct CachingClient::State {
  using SteadyTime = std::chrono::steady_clock::time_point;

  struct Entry {
    Timestamp at;
    SteadyTime fetched;
    Result<QueryResultPtr> result;
    std::list<std::string>::iterator lru;
  };
  struct InFlight {
    Timestamp at;
    uint64_t id = 0;
    std::vector<Callback<QueryResultPtr>> waiters;
  };

  explicit State(CacheOptions opts) : options(std::move(opts)) {}

  // A fresh entry for (promql, at), or null. Requires `mutex`.
  const Entry* fresh(const std::string& promql, Timestamp at, SteadyTime now) {
    auto it = entries.find(promql);
    if (it == entries.end()) return nullptr;
    const Entry& entry = it->second;
    core::Duration ttl = entry.result.ok() ? options.ttl : options.errorTtl;
    if (now - entry.fetched >= ttl || distance(at, entry.at) > options.ttl) return nullptr;
    lru.splice(lru.begin(), lru, entry.lru);
    return &entry;
  }

  // Keeps `result` unless caching is off for it. Requires `mutex`.
  void store(const std::string& promql, Timestamp at, SteadyTime fetched,
             const Result<QueryResultPtr>& result) {
    core::Duration ttl = result.ok() ? options.ttl : options.errorTtl;
    if (ttl <= core::Duration::zero() || options.maxEntries == 0) return;
    auto it = entries.find(promql);
    if (it != entries.end()) {
      if (it->second.at > at) return;  // a newer evaluation is already cached
      it->second.at = at;
      it->second.fetched = fetched;
      it->second.result = result;
      lru.splice(lru.begin(), lru, it->second.lru);
      return;
    }
    lru.push_front(promql);
    entries.emplace(promql, Entry{at, fetched, result, lru.begin()});
    while (entries.size() > options.maxEntries) {
      entries.erase(lru.back());
      lru.pop_back();
      ++stats.evictions;
    }
  }

  CacheOptions options;
  mutable std::mutex mutex;
  std::unordered_map<std::string, Entry> entries;
  std::list<std::string> lru;  // most recently used first
  std::unordered_map<std::string, InFlight> inFlight;
  uint64_t nextId = 1;
  CacheStats stats;
};

CachingClient::CachingClient(std::shared_ptr<Client> backend, CacheOptions options)
    : backend_(std::move(backend)), state_(std::make_shared<State>(std::move(options))) {}

CachingClient::~CachingClient() = default;

void CachingClient::queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) {
  uint64_t id = 0;
  {
    std::unique_lock lock(state_->mutex);
    if (const State::Entry* entry = state_->fresh(promql, at, state_->options.now())) {
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
  backend_->queryAsync(
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
          state->store(promql, at, state->options.now(), result);
        }
        done(result);
        for (auto& waiter : waiters) waiter(result);
      });
}

void CachingClient::seriesAsync(Matchers match, TimeRange window,
                                Callback<std::vector<Series>> done) {
  backend_->seriesAsync(std::move(match), window, std::move(done));
}

void CachingClient::labelValuesAsync(std::string label, Matchers match, TimeRange window,
                                     Callback<std::vector<std::string>> done) {
  backend_->labelValuesAsync(std::move(label), std::move(match), window, std::move(done));
}

void CachingClient::labelNamesAsync(Matchers match, TimeRange window,
                                    Callback<std::vector<std::string>> done) {
  backend_->labelNamesAsync(std::move(match), window, std::move(done));
}

CacheStats CachingClient::stats() const {
  std::lock_guard lock(state_->mutex);
  CacheStats out = state_->stats;
  out.entries = state_->entries.size();
  return out;
}

}  // namespace gpuscale::prom
