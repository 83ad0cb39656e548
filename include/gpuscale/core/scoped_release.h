// ScopedRelease: a move-only handle on something held (a waiting place, a registration, an admitted
// connection) that gives it back exactly once: when the handle is destroyed or assigned over. A
// moved-from or default-constructed handle holds nothing and gives nothing back.
//
// Why: each owner that hands out such handles otherwise writes the same destructor and move pair
// (release if held, steal and clear the other's hold); here the owner declares only how to give the
// thing back: `Release` is a callable holding what that needs (the owner and the place's id) whose
// `operator()()` releases it. The owner must outlive its handles unless Release keeps it alive
// (e.g. holds a shared_ptr).
//
// Thread safety: a handle is used by one thread at a time; the release runs on the thread that
// destroys or reassigns it, and must be as thread-safe as the owner needs.
#pragma once

#include <optional>
#include <utility>

namespace gpuscale::core {

template <typename Release>
class ScopedRelease {
 public:
  ScopedRelease() = default;
  explicit ScopedRelease(Release release) : release_(std::move(release)) {}
  ~ScopedRelease() { reset(); }

  ScopedRelease(ScopedRelease&& other) noexcept : release_(std::exchange(other.release_, {})) {}
  ScopedRelease& operator=(ScopedRelease&& other) noexcept {
    if (this != &other) {
      reset();
      release_ = std::exchange(other.release_, {});
    }
    return *this;
  }
  ScopedRelease(const ScopedRelease&) = delete;
  ScopedRelease& operator=(const ScopedRelease&) = delete;

  // Whether the handle holds something (not released, moved from or default-constructed).
  bool held() const { return release_.has_value(); }

  // Gives the held thing back now (nothing when none is held).
  void reset() {
    if (release_) {
      Release release = std::move(*release_);
      release_.reset();
      release();
    }
  }

 private:
  std::optional<Release> release_;
};

}  // namespace gpuscale::core
