// Removing children of a prometheus-cpp family by their labels, for series whose subject (a rule,
// a metric) no longer exists after a reload or a relist: without this a removed rule would keep
// reporting its last value in /metrics forever.
//
// Thread safety: prometheus-cpp families are thread-safe, but Family::Remove destroys the child, so
// the caller must make sure no one holds a pointer to a child it removes (the callers guard every
// write and every removal of these children with one mutex).
#pragma once

#include <prometheus/family.h>

#include <utility>
#include <vector>

namespace gpuscale::adapter {

// Removes every child of `family` whose labels satisfy `stale(const prometheus::Labels&)`.
template <typename T, typename Predicate>
void removeChildrenWhere(prometheus::Family<T>& family, Predicate stale) {
  std::vector<prometheus::Labels> doomed;
  for (const prometheus::MetricFamily& collected : family.Collect()) {
    for (const prometheus::ClientMetric& child : collected.metric) {
      prometheus::Labels labels;
      for (const prometheus::ClientMetric::Label& label : child.label) {
        labels.emplace(label.name, label.value);
      }
      if (stale(std::as_const(labels))) doomed.push_back(std::move(labels));
    }
  }
  // Add() returns the existing child for labels it already has.
  for (const prometheus::Labels& labels : doomed) family.Remove(&family.Add(labels));
}

}  // namespace gpuscale::adapter
