#include "gpuscale/core/heap_reclaimer.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUSCALE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define GPUSCALE_ASAN 1
#endif
#if defined(GPUSCALE_ASAN)
#include <sanitizer/allocator_interface.h>
#endif

#include <condition_variable>
#include <map>
#include <mutex>
#include <stop_token>
#include <thread>

namespace gpuscale::core {
namespace {

using Clock = std::chrono::steady_clock;

void trimHeap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace

struct HeapReclaimer::State {
  struct Sweeper {
    Clock::duration period;
    Clock::time_point next;
    std::function<void()> sweep;
  };

  explicit State(Options o) : options(o) {}

  // The next moment the thread has work: a sweep due, or a trim the interval held back.
  Clock::time_point nextWake() const {
    auto wake = Clock::now() + std::chrono::hours(1);
    for (const auto& [id, sweeper] : sweepers) wake = std::min(wake, sweeper.next);
    if (pending >= options.trimThreshold) wake = std::min(wake, lastTrim + options.minTrimInterval);
    return std::min(wake, lastTrim + options.periodicTrim);
  }

  void run(std::stop_token stop) {
    std::unique_lock lock(mutex);
    while (!stop.stop_requested()) {
      wake.wait_until(lock, stop, nextWake(), [this] { return kicked; });
      kicked = false;
      if (stop.stop_requested()) return;
      const auto now = Clock::now();
      for (auto it = sweepers.begin(); it != sweepers.end();) {
        if (it->second.next > now) {
          ++it;
          continue;
        }
        const uint64_t id = it->first;
        it->second.next = now + it->second.period;
        auto sweep = it->second.sweep;
        running = id;
        lock.unlock();
        sweep();  // may call noteFreed()
        lock.lock();
        running = 0;
        ++stats.sweeps;
        done.notify_all();
        it = sweepers.upper_bound(id);  // the map may have changed meanwhile
      }
      const auto after = Clock::now();
      const bool noted =
          pending >= options.trimThreshold && after >= lastTrim + options.minTrimInterval;
      if (noted || after >= lastTrim + options.periodicTrim) {
        pending = 0;
        lock.unlock();
        trimHeap();
        lock.lock();
        lastTrim = Clock::now();
        ++stats.trims;
      }
    }
  }

  const Options options;
  mutable std::mutex mutex;
  std::condition_variable_any wake;
  std::condition_variable_any done;
  std::map<uint64_t, Sweeper> sweepers;
  uint64_t nextId = 1;
  bool kicked = false;   // nextWake() may have moved earlier
  uint64_t running = 0;  // the sweeper being called, 0: none
  size_t pending = 0;    // bytes noted since the last trim
  Clock::time_point lastTrim;
  HeapReclaimerStats stats;
  std::jthread thread;  // last: stopped and joined before the members above go
};

HeapReclaimer& HeapReclaimer::instance() {
  // Never destroyed: caches may note frees during static destruction.
  static HeapReclaimer* reclaimer = new HeapReclaimer(Options{});
  return *reclaimer;
}

HeapReclaimer::HeapReclaimer(Options options) : state_(std::make_unique<State>(options)) {
  state_->thread = std::jthread([state = state_.get()](std::stop_token stop) { state->run(stop); });
}

HeapReclaimer::~HeapReclaimer() {
  state_->thread.request_stop();
  state_->thread.join();
}

void HeapReclaimer::noteFreed(size_t bytes) {
  if (bytes == 0) return;
  bool wake = false;
  {
    std::lock_guard lock(state_->mutex);
    const bool below = state_->pending < state_->options.trimThreshold;
    state_->pending += bytes;
    state_->stats.bytesNoted += bytes;
    wake = below && state_->pending >= state_->options.trimThreshold;
    if (wake) state_->kicked = true;
  }
  if (wake) state_->wake.notify_all();
}

HeapReclaimer::Registration HeapReclaimer::addSweeper(std::chrono::milliseconds period,
                                                      std::function<void()> sweep) {
  uint64_t id = 0;
  {
    std::lock_guard lock(state_->mutex);
    id = state_->nextId++;
    const auto every = std::max<Clock::duration>(period, std::chrono::milliseconds(10));
    state_->sweepers.emplace(id, State::Sweeper{every, Clock::now() + every, std::move(sweep)});
    state_->kicked = true;
  }
  state_->wake.notify_all();
  return Registration(SweeperRelease{this, id});
}

void HeapReclaimer::remove(uint64_t id) {
  std::unique_lock lock(state_->mutex);
  state_->sweepers.erase(id);
  state_->done.wait(lock, [&] { return state_->running != id; });
}

size_t HeapReclaimer::heapInUseBytes() {
#if defined(GPUSCALE_ASAN)
  return __sanitizer_get_current_allocated_bytes();
#elif defined(__GLIBC__)
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#else
  return 0;
#endif
}

HeapReclaimerStats HeapReclaimer::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

}  // namespace gpuscale::core
