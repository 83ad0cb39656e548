#include "gpuscale/sim/inference_load_model.h"

#include <algorithm>
#include <tuple>

namespace gpuscale::sim {

InferenceLoadModel::InferenceLoadModel(LoadSpec spec, std::uint64_t seed, double speed)
    : spec_(std::move(spec)), speed_(speed > 0 ? speed : 1.0), rng_(seed) {}

double InferenceLoadModel::offeredRps() const {
  return std::max(0.0, spec_.pattern.rateAt(patternSeconds()));
}

void InferenceLoadModel::advance(double seconds, const std::vector<LoadPod>& pods) {
  syncPods(pods);
  carry_ += seconds;
  // A tiny tolerance so that advance(0.1) ten times makes ten steps each time despite rounding.
  while (carry_ >= kStepSeconds - 1e-9) {
    step();
    carry_ -= kStepSeconds;
  }
}

void InferenceLoadModel::syncPods(const std::vector<LoadPod>& pods) {
  std::map<std::string, const LoadPod*> wanted;
  for (const LoadPod& p : pods) wanted[p.uid] = &p;
  for (auto it = pods_.begin(); it != pods_.end();) {
    if (wanted.contains(it->first)) {
      ++it;
      continue;
    }
    totals_.lostPodGone += it->second.queue.size() + (it->second.current ? 1 : 0);
    it = pods_.erase(it);
  }
  for (const auto& [uid, p] : wanted) {
    auto [it, added] = pods_.try_emplace(uid);
    it->second.pod = *p;
    if (added) {
      it->second.series.namespaceName = p->namespaceName;
      it->second.series.pod = p->name;
      it->second.series.model = spec_.model;
      it->second.vllm.namespaceName = p->namespaceName;
      it->second.vllm.pod = p->name;
      it->second.vllm.modelName = spec_.model;
    }
  }
  order_.clear();
  for (const auto& [uid, state] : pods_) order_.push_back(uid);
  std::sort(order_.begin(), order_.end(), [this](const std::string& a, const std::string& b) {
    const LoadPod& x = pods_.at(a).pod;
    const LoadPod& y = pods_.at(b).pod;
    return std::tie(x.namespaceName, x.name, x.uid) < std::tie(y.namespaceName, y.name, y.uid);
  });
}

void InferenceLoadModel::step() {
  const double t0 = seconds();
  const double t1 = t0 + kStepSeconds;

  const double mean = offeredRps() * kStepSeconds;
  const auto arrivals = mean > 0 ? std::poisson_distribution<std::int64_t>(mean)(rng_) : 0;
  std::vector<double> times(static_cast<std::size_t>(arrivals));
  std::uniform_real_distribution<double> within(t0, t1);
  for (double& t : times) t = within(rng_);
  std::sort(times.begin(), times.end());
  for (double t : times) {
    ++totals_.arrived;
    if (order_.empty()) {
      ++totals_.lostNoPod;
      continue;
    }
    pods_.at(order_[nextPod_++ % order_.size()]).queue.push_back(t);
  }

  std::map<std::string, int> busy;  // device -> pods with work
  for (auto& [uid, state] : pods_) {
    if (state.current || !state.queue.empty()) ++busy[state.pod.device];
  }
  const double u = spec_.gpuUtilization;
  for (auto& [uid, state] : pods_) {
    const auto it = busy.find(state.pod.device);
    const int k = it == busy.end() ? 0 : it->second;
    state.sharersBusy = k;
    // MPS runs its clients side by side, each capped at its thread share; time-slicing switches.
    const double mps = state.pod.mpsThreadFraction;
    const double share = mps > 0 ? mps
                         : k > 1 ? 1.0 / (k * (1.0 + spec_.timeSlicingOverhead))
                                 : 1.0;
    serve(state, t0, t1, std::min(u, share));
  }
  ++steps_;
}

void InferenceLoadModel::serve(PodState& pod, double from, double to, double gpuRate) {
  double cursor = from;
  // Spends up to the rest of the step on one phase; true when the phase is done.
  auto spend = [&](double& left, double rate) {
    const double need = left / rate;
    if (need <= to - cursor) {
      cursor += need;
      left = 0;
      return true;
    }
    left -= (to - cursor) * rate;
    cursor = to;
    return false;
  };
  while (cursor < to) {
    if (!pod.current) {
      if (pod.queue.empty() || pod.queue.front() >= to) return;
      const double arrival = pod.queue.front();
      pod.queue.pop_front();
      cursor = std::max(cursor, arrival);
      const double half = spec_.cpuMillis / 2000.0;
      const double gpu = spec_.gpuMillisOnFullGpu / 1000.0 / pod.pod.computeFraction;
      const double prefill = gpu * spec_.vllm.prefillShare;
      pod.current = Request{.arrival = arrival,
                            .start = cursor,
                            .inputLeft = half,
                            .prefillLeft = prefill,
                            .decodeLeft = gpu - prefill,
                            .decodeWork = gpu - prefill,
                            .outputLeft = half};
    }
    Request& r = *pod.current;
    if (r.inputLeft > 0 && !spend(r.inputLeft, 1.0)) return;
    // The GPU part: prefill up to the first token, then decode up to the last.
    auto spendGpu = [&](double& left) {
      const double before = cursor;
      const bool done = spend(left, gpuRate);
      r.gpuWall += cursor - before;
      deviceBusy_[pod.pod.device] += (cursor - before) * gpuRate;
      return done;
    };
    if (r.prefillLeft > 0 && !spendGpu(r.prefillLeft)) return;
    if (r.firstToken < 0) firstToken(pod, r, cursor);
    if (r.decodeLeft > 0 && !spendGpu(r.decodeLeft)) return;
    if (r.lastToken < 0) r.lastToken = cursor;
    if (r.outputLeft > 0 && !spend(r.outputLeft, 1.0)) return;
    complete(pod, r, cursor);
    pod.current.reset();
  }
}

void InferenceLoadModel::firstToken(PodState& pod, Request& r, double at) {
  r.firstToken = at;
  pod.vllm.promptTokens += spec_.vllm.promptTokens;
  pod.vllm.timeToFirstToken.observe(at - r.arrival);
}

void InferenceLoadModel::complete(PodState& pod, const Request& r, double at) {
  constexpr double kMicros = 1e6;
  TritonPodSeries& s = pod.series;
  s.requestSuccess += 1;
  s.inferenceCount += 1;
  s.execCount += 1;
  s.queueDurationUs += (r.start - r.arrival) * kMicros;
  s.requestDurationUs += (at - r.arrival) * kMicros;
  s.computeInputDurationUs += spec_.cpuMillis / 2 * 1000;
  s.computeInferDurationUs += r.gpuWall * kMicros;
  s.computeOutputDurationUs += spec_.cpuMillis / 2 * 1000;
  VllmEngineSeries& v = pod.vllm;
  v.requestSuccess["stop"] += 1;
  v.generationTokens += spec_.vllm.outputTokens;
  v.e2eRequestLatency.observe(at - r.arrival);
  v.requestQueueTime.observe(r.start - r.arrival);
  v.requestInferenceTime.observe(r.lastToken - r.start);
  v.requestPrefillTime.observe(r.firstToken - r.start);
  v.requestDecodeTime.observe(r.lastToken - r.firstToken);
  if (spec_.vllm.outputTokens > 1) {
    v.interTokenLatency.observe((r.lastToken - r.firstToken) / (spec_.vllm.outputTokens - 1),
                                spec_.vllm.outputTokens - 1);
  }
  ++totals_.completed;
}

std::vector<TritonPodSeries> InferenceLoadModel::tritonSeries() const {
  std::vector<TritonPodSeries> out;
  for (const std::string& uid : order_) {
    const PodState& state = pods_.at(uid);
    out.push_back(state.series);
    out.back().pendingRequests = static_cast<double>(state.queue.size());
  }
  return out;
}

std::vector<VllmEngineSeries> InferenceLoadModel::vllmSeries() const {
  std::vector<VllmEngineSeries> out;
  for (const std::string& uid : order_) {
    const PodState& state = pods_.at(uid);
    out.push_back(state.vllm);
    VllmEngineSeries& v = out.back();
    v.requestsWaiting = static_cast<double>(state.queue.size());
    v.requestsRunning = state.current ? 1 : 0;
    if (state.current) {
      const Request& r = *state.current;
      const double decoded = r.decodeWork > 0 ? 1 - r.decodeLeft / r.decodeWork : 1;
      const double held = spec_.vllm.promptTokens + spec_.vllm.outputTokens * decoded;
      v.kvCacheUsage = std::min(1.0, held / spec_.vllm.kvCacheTokens);
    }
  }
  return out;
}

std::vector<LoadPodTruth> InferenceLoadModel::truth() const {
  std::vector<LoadPodTruth> out;
  for (const std::string& uid : order_) {
    const PodState& s = pods_.at(uid);
    out.push_back({s.pod.namespaceName, s.pod.name, s.pod.device, s.pod.computeFraction,
                   s.sharersBusy, s.queue.size(), s.current.has_value()});
  }
  return out;
}

}  // namespace gpuscale::sim
