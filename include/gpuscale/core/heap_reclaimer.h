// HeapReclaimer: gives memory that caches freed back to the operating system, and runs the
// periodic sweeps that make caches free what expired while nobody called them.
//
// Why: glibc's malloc keeps freed memory in its arenas (one per thread that allocated, up to 8 per
// core) and returns only the top of the main heap to the system. A cache that filled up with
// results decoded on several threads and then dropped them leaves the resident set where the peak
// was, so a byte limit on the cache would not bound what the process holds. malloc_trim(0) hands
// the free pages of every arena back (madvise), which is what this class calls.
//
// - noteFreed(bytes): a cache dropped `bytes` (evictions, expiries). Once at least `trimThreshold`
//   bytes have been noted since the last trim, the background thread trims, at most once per
//   `minTrimInterval`; a trim held back by that interval happens when it ends, so the last drop of
//   a burst is trimmed too.
// - Besides, it trims every `periodicTrim` whatever was noted: memory other code freed (request
//   buffers, decoded answers, TLS state) sits in the arenas of the threads that used it, and
//   without a trim the resident set creeps up with every arena a thread touches.
// - addSweeper(period, sweep): `sweep` runs on the background thread every `period` until the
//   returned registration is destroyed (a cache drops its expired entries there).
// Trimming costs a walk over the heap (about a millisecond per 100 MiB here) on the background
// thread, never on a caller's. Outside glibc, trims are no-ops.
//
// Thread safety: thread-safe. instance() is process-wide (malloc is); its thread starts on first
// use and lives until the process exits.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "gpuscale/core/scoped_release.h"

namespace gpuscale::core {

struct HeapReclaimerStats {
  uint64_t trims = 0;       // malloc_trim calls made
  uint64_t bytesNoted = 0;  // bytes caches reported freed
  uint64_t sweeps = 0;      // sweeper calls made
};

class HeapReclaimer {
  // How a Registration unregisters its sweeper.
  struct SweeperRelease {
    HeapReclaimer* owner;
    uint64_t id;
    void operator()() const { owner->remove(id); }
  };

 public:
  struct Options {
    size_t trimThreshold = size_t{4} << 20;
    std::chrono::milliseconds minTrimInterval{1000};
    std::chrono::milliseconds periodicTrim{60'000};
  };

  // Unregisters its sweeper when destroyed (waits for a sweep in progress to return).
  using Registration = ScopedRelease<SweeperRelease>;

  // The process-wide reclaimer (default options).
  static HeapReclaimer& instance();

  explicit HeapReclaimer(Options options);
  ~HeapReclaimer();
  HeapReclaimer(const HeapReclaimer&) = delete;
  HeapReclaimer& operator=(const HeapReclaimer&) = delete;

  void noteFreed(size_t bytes);
  [[nodiscard]] Registration addSweeper(std::chrono::milliseconds period,
                                        std::function<void()> sweep);
  HeapReclaimerStats stats() const;

  // Bytes in live heap allocations of the whole process now: glibc's mallinfo2() in-use bytes, or
  // the sanitizer allocator's count in AddressSanitizer builds; 0 where neither exists. Unlike the
  // resident set it does not move with allocator caching or fragmentation, so a steady climb per
  // request is a leak (what the soak test checks). glibc counts chunks held in its per-thread
  // caches (tcache, up to about 0.2 MB a thread) as in use: with many threads the figure runs
  // above the live heap by that much.
  static size_t heapInUseBytes();

 private:
  struct State;
  void remove(uint64_t id);
  std::unique_ptr<State> state_;
};

}  // namespace gpuscale::core
