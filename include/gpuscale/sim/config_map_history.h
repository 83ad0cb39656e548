// ConfigMapHistory: what a component that reads a ConfigMap as a mounted file sees at a given time.
//
// The GPU Operator's components (mig-manager, the device plugin's config manager) read their
// ConfigMaps as files in a volume, which the kubelet refreshes within its sync period: a file lags
// its ConfigMap. At time t the file holds the newest version written at or before t - delay; a
// ConfigMap with no version that old reads as absent. Versions recorded as initial (those that
// existed before the emulator started) count as written long ago.
//
// Thread safety: thread-safe.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "gpuscale/kube/client.h"

namespace gpuscale::sim {

class ConfigMapHistory {
 public:
  using Ptr = std::shared_ptr<const kube::Object>;
  using Clock = std::chrono::steady_clock;

  explicit ConfigMapHistory(std::chrono::milliseconds delay) : delay_(delay) {}

  // A version of `name` written at `seen` (Clock::time_point::min(): an initial one); a null
  // `object` records a deletion.
  void record(const std::string& name, Ptr object, Clock::time_point seen);
  // The version a file of `name` shows at `now`.
  Ptr asOf(const std::string& name, Clock::time_point now) const;

 private:
  const std::chrono::milliseconds delay_;
  mutable std::mutex mu_;
  std::map<std::string, std::deque<std::pair<Clock::time_point, Ptr>>> versions_;
};

}  // namespace gpuscale::sim
