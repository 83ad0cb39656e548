// PodList: the snapshot's pods, shared with whoever read them instead of copied.
//
// Why: a pass builds a snapshot every few seconds, and at fleet scale the pods are its bulk (tens
// of thousands beside a thousand nodes). The reconciler's pod cache (reconciler/pod_cache.h) keeps
// every Pod read once into an immutable record; the snapshot points at those records' PodStates
// (std::shared_ptr, aliasing the record) rather than copying each one per pass, so a pass neither
// spends the copies' time nor holds a second set of pods while it runs.
//
// Reading looks like a std::vector<PodState>: iteration, size(), operator[] and front() give
// `const PodState&` in the list's order. The snapshot builder is the only writer: push_back a
// shared PodState or a value (kept in its own allocation), and mutableAt(i) for the rare pod the
// builder completes after reading (DRA devices a pod's claims hold, dra_snapshot.h): the first call
// for a pod replaces the shared PodState with the list's own copy (copy on write), so whoever else
// shares the record never sees the change.
//
// Thread safety: an immutable value once built, like the snapshot. The PodStates it shares are
// immutable (`const`) and kept alive by the list, whatever their reader does with its own
// references meanwhile (the pod cache replacing or dropping a record frees it only when the last
// snapshot holding it is gone).
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <vector>

namespace gpuscale::partition {

struct PodState;  // snapshot.h

class PodList {
  using Slots = std::vector<std::shared_ptr<const PodState>>;

 public:
  // A random-access iterator over the pods (const PodState&).
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = PodState;
    using difference_type = std::ptrdiff_t;
    using pointer = const PodState*;
    using reference = const PodState&;

    const_iterator() = default;
    explicit const_iterator(Slots::const_iterator it) : it_(it) {}
    reference operator*() const { return **it_; }
    pointer operator->() const { return it_->get(); }
    reference operator[](difference_type n) const { return *it_[n]; }
    const_iterator& operator++() { return ++it_, *this; }
    const_iterator operator++(int) { return const_iterator(it_++); }
    const_iterator& operator--() { return --it_, *this; }
    const_iterator operator--(int) { return const_iterator(it_--); }
    const_iterator& operator+=(difference_type n) { return it_ += n, *this; }
    const_iterator& operator-=(difference_type n) { return it_ -= n, *this; }
    friend const_iterator operator+(const_iterator a, difference_type n) { return a += n; }
    friend const_iterator operator+(difference_type n, const_iterator a) { return a += n; }
    friend const_iterator operator-(const_iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return a.it_ - b.it_;
    }
    friend bool operator==(const const_iterator&, const const_iterator&) = default;
    friend auto operator<=>(const const_iterator&, const const_iterator&) = default;

   private:
    Slots::const_iterator it_;
  };
  using iterator = const_iterator;
  using value_type = PodState;
  using size_type = std::size_t;

  const_iterator begin() const { return const_iterator(pods_.begin()); }
  const_iterator end() const { return const_iterator(pods_.end()); }
  std::size_t size() const { return pods_.size(); }
  bool empty() const { return pods_.empty(); }
  const PodState& operator[](std::size_t i) const { return *pods_[i]; }
  const PodState& front() const { return *pods_.front(); }

  void reserve(std::size_t n);
  // Shares `pod` (not null): the list keeps it alive and never changes it.
  void push_back(std::shared_ptr<const PodState> pod);
  void push_back(PodState pod);
  // The i-th pod, the list's own copy from now on (copied from the shared one on the first call).
  PodState& mutableAt(std::size_t i);
  // Whether the i-th pod is still the one pushed (shared), not the list's own copy.
  bool shared(std::size_t i) const { return !owned_[i]; }

 private:
  Slots pods_;
  std::vector<bool> owned_;  // per pod: mutableAt made it the list's own
};

}  // namespace gpuscale::partition
