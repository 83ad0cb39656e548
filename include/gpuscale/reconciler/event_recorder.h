// Kubernetes Events for every decision and outcome of the reconciler, on the HPA or Node they are
// about, so `kubectl describe` shows what gpuscale did and why.
//
// KubeEventRecorder writes core/v1 Events (reason, message, type Normal|Warning, source component
// gpuscale-reconciler, reporting instance = the replica's identity). Node events go to the
// "default" namespace, where kubectl looks for cluster-scoped objects' events. Recording is best
// effort: a failed write is logged, never retried and never fails the caller.
//
// Repeats are folded as Kubernetes does: an event with the same object, type, reason and message
// as one this recorder wrote within the last kSeriesWindow patches that Event's `count` and
// `lastTimestamp` instead of creating another (a storm of retried writes is one Event with a
// count, not hundreds). recordRepeated() folds `times` occurrences seen together into one write.
// A fold whose write fails for any reason but NotFound (the Event expired) is not turned into a
// second Event: the caller may try again later and still grow the same one.
//
// Thread safety: implementations are thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpuscale/kube/client.h"

namespace gpuscale::reconciler {

struct EventTarget {
  std::string kind;  // "Node" | "HorizontalPodAutoscaler"
  std::string apiVersion;
  std::string ns;  // "" for nodes
  std::string name;
  std::string uid;

  static EventTarget node(std::string name, std::string uid = {});
  static EventTarget hpa(std::string ns, std::string name, std::string uid = {});
};

struct RecordedEvent {
  EventTarget target;
  bool warning = false;
  std::string reason;
  std::string message;
  int count = 1;  // occurrences this record stands for
};

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  // One occurrence. False when it could not be written (logged; callers may ignore it).
  bool record(const EventTarget& target, bool warning, std::string_view reason,
              std::string_view message) {
    return recordRepeated(target, warning, reason, message, 1);
  }
  // `times` (>= 1) occurrences of the same event, seen together. False when not written.
  virtual bool recordRepeated(const EventTarget& target, bool warning, std::string_view reason,
                              std::string_view message, int times) = 0;
};

class KubeEventRecorder final : public EventRecorder {
 public:
  // Repeats within this window fold into one Event (client-go's event correlator uses the same).
  static constexpr std::chrono::minutes kSeriesWindow{10};

  KubeEventRecorder(std::shared_ptr<kube::KubeClient> client, std::string instance);
  bool recordRepeated(const EventTarget& target, bool warning, std::string_view reason,
                      std::string_view message, int times) override;

 private:
  struct Series {
    std::string ns, name;  // the Event object
    int count = 0;
    std::chrono::system_clock::time_point last;
  };
  core::Status bump(Series& series, int times, const std::string& now);

  std::shared_ptr<kube::KubeClient> client_;
  std::string instance_;
  std::mutex mu_;                         // guards series_; held across the write so repeats
  std::map<std::string, Series> series_;  // of one key never race into two Events
};

// Keeps events in memory (tests, and --dry-run, where they are only logged).
// Every call is kept as it came (no folding); `count` is the call's `times`.
class MemoryEventRecorder final : public EventRecorder {
 public:
  bool recordRepeated(const EventTarget& target, bool warning, std::string_view reason,
                      std::string_view message, int times) override;
  std::vector<RecordedEvent> events() const;
  // Events whose reason is `reason`.
  std::vector<RecordedEvent> withReason(std::string_view reason) const;

 private:
  mutable std::mutex mu_;
  std::vector<RecordedEvent> events_;
};

}  // namespace gpuscale::reconciler
