// Kubernetes Events for every decision and outcome of the reconciler, on the HPA or Node they are
// about, so `kubectl describe` shows what gpuscale did and why.
//
// KubeEventRecorder writes core/v1 Events (reason, message, type Normal|Warning, source component
// gpuscale-reconciler, reporting instance = the replica's identity). Node events go to the
// "default" namespace, where kubectl looks for cluster-scoped objects' events. Recording is best
// effort: a failed write is logged and counted, never retried and never fails the caller.
//
// Thread safety: implementations are thread-safe.
#pragma once

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
};

class EventRecorder {
 public:
  virtual ~EventRecorder() = default;
  virtual void record(const EventTarget& target, bool warning, std::string_view reason,
                      std::string_view message) = 0;
};

class KubeEventRecorder final : public EventRecorder {
 public:
  KubeEventRecorder(std::shared_ptr<kube::KubeClient> client, std::string instance);
  void record(const EventTarget& target, bool warning, std::string_view reason,
              std::string_view message) override;

 private:
  std::shared_ptr<kube::KubeClient> client_;
  std::string instance_;
};

// Keeps events in memory (tests, and --dry-run, where they are only logged).
class MemoryEventRecorder final : public EventRecorder {
 public:
  void record(const EventTarget& target, bool warning, std::string_view reason,
              std::string_view message) override;
  std::vector<RecordedEvent> events() const;
  // Events whose reason is `reason`.
  std::vector<RecordedEvent> withReason(std::string_view reason) const;

 private:
  mutable std::mutex mu_;
  std::vector<RecordedEvent> events_;
};

}  // namespace gpuscale::reconciler
