// InferenceLoadDriver: runs the InferenceLoadModel (inference_load_model.h) in real time for
// `gpuscale-sim run`, one model per service of the scenario (Scenario::loadServices()). Every tick
// it takes the Running pods of each service's Deployment (its load's namespace and podSelector)
// with the devices they hold (from the GPU Operator emulator's informers and allocation, via
// `pods`), advances every model by the wall time elapsed (from the first tick that finds a pod of
// any service: the load patterns start together, with the first service), and keeps the exposition
// that /metrics serves: the series of every pod as its server exports them (Triton's,
// triton_exposition.h, or vLLM's, vllm_exposition.h: options.server) and the model truth for
// reports:
//   gpuscale_sim_load_offered_rps            requests/s the pattern offers now
//   gpuscale_sim_load_pattern_seconds        the patterns' clock (wall time x speed)
//   gpuscale_sim_load_requests_total{result} arrived | completed | lost_no_pod | lost_pod_gone
//   gpuscale_sim_load_pod_queue_length{namespace,pod}  requests waiting (not in service)
//   gpuscale_sim_load_pod_device_busy{namespace,pod}   pods with work on the pod's device
//   gpuscale_sim_load_pod_compute_fraction{namespace,pod}  the device's share of a whole GPU
// and, for the dcgm-exporter series of `gpuscale-sim run` (dcgm_exposition.h), each device's busy
// fraction over the last kBusyWindowSeconds of model time (deviceBusyFraction()). Named services
// (a `services:` scenario) add the label `service` to the offered rate and the request counters.
//
// Limit: the models are independent, so pods of two services time-sharing one device do not slow
// each other down (each model sees only its own pods on the device).
//
// Thread safety: start/stop from one thread; render() from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/sim/pod_devices.h"
#include "gpuscale/sim/scenario.h"

namespace gpuscale::sim {

struct LoadDriverOptions {
  std::uint64_t seed = 1;
  double speed = 1.0;  // the load pattern's clock runs this much faster than wall time
  std::chrono::milliseconds tick{100};
  InferenceServer server = InferenceServer::kTriton;  // whose series the pods export
};

class InferenceLoadDriver {
 public:
  using PodSource = std::function<std::vector<PodDevice>()>;

  // Errors (Status::invalid) for no service, a podSelector that does not parse or a speed <= 0.
  // Service i's model draws from the seed options.seed + i.
  static core::Result<std::unique_ptr<InferenceLoadDriver>> create(
      std::vector<ServiceSpec> services, LoadDriverOptions options, PodSource pods);
  ~InferenceLoadDriver();

  // Starts the clock and the tick thread.
  void start();
  void stop();

  // The exposition as of the last tick (empty before the first).
  std::string render() const;

  // Averaging window of deviceBusyFraction(), seconds of model time.
  static constexpr double kBusyWindowSeconds = 5.0;
  // Per device (PodDevice::device): the share of the window the device was doing the pods' GPU
  // work, in [0, 1], as of the last tick. Devices that never had work are absent.
  std::map<std::string, double> deviceBusyFraction() const;

 private:
  InferenceLoadDriver() = default;
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscale::sim
