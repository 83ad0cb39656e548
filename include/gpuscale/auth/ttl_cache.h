// TtlCache: a bounded map whose entries expire, for caching TokenReview and SubjectAccessReview
// answers (--authentication-token-webhook-cache-ttl, --authorization-webhook-cache-*-ttl).
//
// Expired entries are dropped whenever an entry is put (and a lookup drops the one it finds
// expired), so the cache holds what the TTL keeps and not more, even when new keys keep coming
// (tokens or paths made up by anonymous callers); when full, the entry that expires soonest goes.
// Only answers are cached, never errors: a failed review is retried by the next request. Time comes
// from a clock function (steady_clock by default) so tests can drive expiry with a fake clock.
//
// Thread safety: thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace gpuscale::auth {

// Where a cache reads the time.
using CacheClock = std::function<std::chrono::steady_clock::time_point()>;

template <typename V>
class TtlCache {
 public:
  using Clock = std::chrono::steady_clock;

  explicit TtlCache(size_t maxEntries = 4096, CacheClock clock = Clock::now)
      : maxEntries_(maxEntries), clock_(std::move(clock)) {}

  // The value while its TTL lasts; nullopt when absent or expired (an expired entry is dropped).
  std::optional<V> get(const std::string& key) {
    const auto now = clock_();
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    if (it->second.expires <= now) {
      eraseLocked(it);
      return std::nullopt;
    }
    return it->second.value;
  }

  // Keeps `value` for `ttl` from now, replacing an entry with the same key. A TTL of zero or
  // less caches nothing.
  void put(const std::string& key, V value, Clock::duration ttl) {
    if (ttl <= Clock::duration::zero() || maxEntries_ == 0) return;
    const auto now = clock_();
    std::lock_guard lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) eraseLocked(it);
    while (!byExpiry_.empty() && byExpiry_.begin()->first <= now) {
      eraseLocked(entries_.find(byExpiry_.begin()->second));
    }
    while (entries_.size() >= maxEntries_) {
      // byExpiry_ is ordered by expiry, so this drops expired entries first, then the soonest.
      eraseLocked(entries_.find(byExpiry_.begin()->second));
    }
    const auto expires = now + ttl;
    auto order = byExpiry_.emplace(expires, key);
    entries_.emplace(key, Entry{std::move(value), expires, order});
  }

  size_t size() const {
    std::lock_guard lock(mu_);
    return entries_.size();
  }

 private:
  struct Entry {
    V value;
    Clock::time_point expires;
    typename std::multimap<Clock::time_point, std::string>::iterator order;
  };
  void eraseLocked(typename std::unordered_map<std::string, Entry>::iterator it) {
    byExpiry_.erase(it->second.order);
    entries_.erase(it);
  }

  const size_t maxEntries_;
  const CacheClock clock_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
  std::multimap<Clock::time_point, std::string> byExpiry_;
};

}  // namespace gpuscale::auth
