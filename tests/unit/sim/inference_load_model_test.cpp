#include "gpuscale/sim/inference_load_model.h"

#include <gtest/gtest.h>

#include <numeric>

namespace gpuscale::sim {
namespace inference_load_model_test {

constexpr double kSlice = 1.0 / 7;  // a 1g instance of an A100

LoadSpec constantLoad(double rps, double gpuMillis, double cpuMillis, double utilization,
                      double overhead) {
  LoadSpec spec;
  spec.podSelector = "app=triton";
  spec.pattern.kind = LoadPatternKind::kConstant;
  spec.pattern.baseRps = rps;
  spec.gpuMillisOnFullGpu = gpuMillis;
  spec.cpuMillis = cpuMillis;
  spec.gpuUtilization = utilization;
  spec.timeSlicingOverhead = overhead;
  return spec;
}

std::vector<LoadPod> podsOn(const std::vector<std::string>& devices, double fraction) {
  std::vector<LoadPod> pods;
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string name = "triton-" + std::to_string(i);
    pods.push_back({"uid-" + name, "default", name, devices[i], fraction});
  }
  return pods;
}

double sum(const std::vector<TritonPodSeries>& series, double TritonPodSeries::*field) {
  return std::accumulate(series.begin(), series.end(), 0.0,
                         [field](double acc, const TritonPodSeries& s) { return acc + s.*field; });
}

// Saturated pods (offered load far above what they can serve): what each serves per second and how
// long the GPU part of one request takes, against the figures the parameters are grounded in
// (gpu-partitioning.md §6: NOS YOLOS-small on an A100, MIG 1g flat at ~0.342 s, time-slicing
// 1 -> 7 pods 0.088 -> 0.685 s per inference).
TEST(InferenceLoadModelTest, SaturatedServiceRates) {
  struct Row {
    const char* what;
    double gpuMillis, cpuMillis, utilization, overhead, fraction;
    std::vector<std::string> devices;
    double wantRpsPerPod;     // completions per second per pod
    double wantInferSeconds;  // mean GPU part (compute infer) per request
  };
  const std::vector<Row> rows = {
      {"a 1g slice alone takes 0.342 s per inference (NOS MIG 1g)",
       48.9,
       0,
       1.0,
       0.112,
       kSlice,
       {"s0"},
       1 / 0.3423,
       0.3423},
      {"seven 1g slices stay flat at 0.342 s each",
       48.9,
       0,
       1.0,
       0.112,
       kSlice,
       {"s0", "s1", "s2", "s3", "s4", "s5", "s6"},
       1 / 0.3423,
       0.3423},
      {"one pod alone on a whole A100: 0.088 s", 88, 0, 1.0, 0.112, 1.0, {"g"}, 1 / 0.088, 0.088},
      {"seven pods time-sliced on a whole A100: 0.685 s each (NOS)",
       88,
       0,
       1.0,
       0.112,
       1.0,
       {"g", "g", "g", "g", "g", "g", "g"},
       1 / (7 * 0.088 * 1.112),
       7 * 0.088 * 1.112},
      {"gpuUtilization 0.4: one pod keeps 40% of its slice busy",
       48.9,
       0,
       0.4,
       0.112,
       kSlice,
       {"s0"},
       0.4 / 0.3423,
       0.3423 / 0.4},
      {"gpuUtilization 0.4, two pods time-sliced on one slice: each still gets 0.4",
       48.9,
       0,
       0.4,
       0.112,
       kSlice,
       {"s0", "s0"},
       0.4 / 0.3423,
       0.3423 / 0.4},
      {"gpuUtilization 0.9, two pods time-sliced: each gets 1/(2 x 1.112) of the slice",
       48.9,
       0,
       0.9,
       0.112,
       kSlice,
       {"s0", "s0"},
       1 / (2 * 1.112) / 0.3423,
       0.3423 * 2 * 1.112},
      {"the non-GPU part adds to every request", 100, 100, 1.0, 0.112, 1.0, {"g"}, 1 / 0.2, 0.1},
  };
  for (const Row& row : rows) {
    const double seconds = 300;
    InferenceLoadModel model(
        constantLoad(1000, row.gpuMillis, row.cpuMillis, row.utilization, row.overhead), 7);
    const auto pods = podsOn(row.devices, row.fraction);
    model.advance(seconds, pods);
    const auto series = model.tritonSeries();
    ASSERT_EQ(series.size(), row.devices.size()) << row.what;
    for (const TritonPodSeries& s : series) {
      EXPECT_NEAR(s.requestSuccess / seconds, row.wantRpsPerPod, row.wantRpsPerPod * 0.02)
          << row.what << " (" << s.pod << ")";
      ASSERT_GT(s.requestSuccess, 0) << row.what;
      EXPECT_NEAR(s.computeInferDurationUs / s.requestSuccess / 1e6, row.wantInferSeconds,
                  row.wantInferSeconds * 0.02)
          << row.what;
      EXPECT_GT(s.pendingRequests, 0) << row.what << ": saturated pods keep a queue";
    }
  }
}

// Where time-slicing pays: total throughput of one slice with 1 vs 2 pods, by utilisation.
TEST(InferenceLoadModelTest, TimeSlicingHelpsOnlyUnderUsedPartitions) {
  struct Row {
    const char* what;
    double utilization;
    bool twoPodsServeMore;
  };
  const std::vector<Row> rows = {
      {"a pod that leaves its slice 60% idle: a second replica nearly doubles throughput", 0.4,
       true},
      {"a pod that keeps its slice 90% busy: a second replica adds only context switches", 0.9,
       false},
  };
  for (const Row& row : rows) {
    auto served = [&](const std::vector<std::string>& devices) {
      InferenceLoadModel model(constantLoad(1000, 48.9, 5, row.utilization, 0.112), 3);
      model.advance(200, podsOn(devices, kSlice));
      return sum(model.tritonSeries(), &TritonPodSeries::requestSuccess);
    };
    const double one = served({"s0"});
    const double two = served({"s0", "s0"});
    EXPECT_EQ(two > one * 1.2, row.twoPodsServeMore) << row.what << ": " << one << " vs " << two;
    EXPECT_GT(served({"s0", "s1"}), one * 1.9) << row.what << ": a second slice doubles it";
  }
}

// MPS: pods on one GPU run side by side, each capped at its active-thread share (1 / replicas),
// without context switches and whether or not its neighbours are busy.
TEST(InferenceLoadModelTest, MpsCapsEachClientAtItsThreadShare) {
  struct Row {
    const char* what;
    double utilization, threadShare;
    int pods;
    double wantRpsPerPod;  // saturated, 88 ms of GPU per request on a whole GPU
  };
  const std::vector<Row> rows = {
      {"one client of four replicas alone still gets a quarter", 1.0, 0.25, 1, 0.25 / 0.088},
      {"four clients of four replicas: a quarter each, no switching overhead", 1.0, 0.25, 4,
       0.25 / 0.088},
      {"a pod using 20% of its GPU is not held back by a 25% share", 0.2, 0.25, 4, 0.2 / 0.088},
  };
  for (const Row& row : rows) {
    const double seconds = 300;
    InferenceLoadModel model(constantLoad(1000, 88, 0, row.utilization, 0.112), 5);
    auto pods = podsOn(std::vector<std::string>(row.pods, "g"), 1.0);
    for (auto& p : pods) p.mpsThreadFraction = row.threadShare;
    model.advance(seconds, pods);
    for (const TritonPodSeries& s : model.tritonSeries()) {
      EXPECT_NEAR(s.requestSuccess / seconds, row.wantRpsPerPod, row.wantRpsPerPod * 0.02)
          << row.what << " (" << s.pod << ")";
    }
  }
}

TEST(InferenceLoadModelTest, QueueTimeGrowsWithLoad) {
  // One 1g slice serves ~2.9 req/s.
  auto meanQueueUs = [](double rps) {
    InferenceLoadModel model(constantLoad(rps, 48.9, 5, 1.0, 0.112), 11);
    model.advance(300, podsOn({"s0"}, kSlice));
    const auto s = model.tritonSeries().at(0);
    return s.queueDurationUs / s.requestSuccess;
  };
  const double light = meanQueueUs(0.5), busy = meanQueueUs(2.5), over = meanQueueUs(5);
  EXPECT_LT(light, busy);
  EXPECT_LT(busy * 10, over) << "overload: the queue grows without bound";
}

TEST(InferenceLoadModelTest, EvenBalancerAndTritonCounters) {
  LoadSpec spec = constantLoad(0, 10, 2, 1.0, 0.112);
  spec.pattern = {LoadPatternKind::kSpike, 0, 6, 0, 100};  // 6 req/s for 100 s, then nothing
  InferenceLoadModel model(spec, 5);
  model.advance(130, podsOn({"a", "b", "c"}, 1.0));
  const auto series = model.tritonSeries();
  ASSERT_EQ(series.size(), 3u);
  const double total = sum(series, &TritonPodSeries::requestSuccess);
  EXPECT_EQ(total, static_cast<double>(model.totals().arrived)) << "all served once idle";
  EXPECT_EQ(model.totals().completed, model.totals().arrived);
  for (const TritonPodSeries& s : series) {
    EXPECT_LE(std::abs(s.requestSuccess - total / 3), 1) << s.pod << ": round-robin";
    EXPECT_EQ(s.inferenceCount, s.requestSuccess) << "batch size 1";
    EXPECT_EQ(s.execCount, s.requestSuccess);
    EXPECT_NEAR(s.computeInputDurationUs, s.requestSuccess * 1000, 1e-6) << "half of cpuMillis";
    EXPECT_NEAR(s.computeOutputDurationUs, s.requestSuccess * 1000, 1e-6);
    EXPECT_NEAR(s.requestDurationUs,
                s.queueDurationUs + s.computeInputDurationUs + s.computeInferDurationUs +
                    s.computeOutputDurationUs,
                1)
        << "request = queue + compute";
    EXPECT_EQ(s.pendingRequests, 0);
    EXPECT_EQ(s.namespaceName, "default");
    EXPECT_EQ(s.model, "simple");
  }
}

TEST(InferenceLoadModelTest, PodsComeAndGo) {
  InferenceLoadModel model(constantLoad(20, 48.9, 0, 1.0, 0.112), 9);
  model.advance(5, {});
  EXPECT_GT(model.totals().lostNoPod, 0u) << "no Running pod: requests are lost";
  EXPECT_EQ(model.totals().lostNoPod, model.totals().arrived);

  auto pods = podsOn({"s0", "s1"}, kSlice);
  model.advance(20, pods);
  const auto truth = model.truth();
  ASSERT_EQ(truth.size(), 2u);
  const std::size_t queuedOnSecond = truth[1].queueLength + (truth[1].serving ? 1 : 0);
  EXPECT_GT(queuedOnSecond, 0u) << "overloaded";

  const std::uint64_t lostBefore = model.totals().lostPodGone;
  pods.pop_back();
  model.advance(1, pods);
  EXPECT_EQ(model.tritonSeries().size(), 1u) << "a vanished pod's series go with it";
  EXPECT_EQ(model.totals().lostPodGone, lostBefore + queuedOnSecond);

  pods.push_back({"uid-new", "default", "triton-1", "s1", kSlice});
  model.advance(0.5, pods);
  const auto series = model.tritonSeries();
  ASSERT_EQ(series.size(), 2u);
  EXPECT_LT(series[1].requestSuccess, 2) << "a new pod (new uid) starts its counters at 0";
}

TEST(InferenceLoadModelTest, DeterministicPerSeedAndStepGranularity) {
  LoadSpec spec = constantLoad(0, 48.9, 5, 0.5, 0.112);
  spec.pattern = {LoadPatternKind::kRamp, 1, 20, 5, 30};
  const auto pods = podsOn({"s0", "s0", "s1"}, kSlice);
  auto run = [&](std::uint64_t seed, double chunk, double speed) {
    InferenceLoadModel model(spec, seed, speed);
    for (double t = 0; t < 60 - 1e-9; t += chunk) model.advance(chunk, pods);
    return model;
  };
  const auto a = run(42, 60, 1), b = run(42, 0.1, 1), c = run(43, 60, 1);
  EXPECT_DOUBLE_EQ(a.seconds(), b.seconds());
  EXPECT_EQ(a.totals().arrived, b.totals().arrived) << "call granularity does not matter";
  EXPECT_EQ(sum(a.tritonSeries(), &TritonPodSeries::queueDurationUs),
            sum(b.tritonSeries(), &TritonPodSeries::queueDurationUs));
  EXPECT_NE(a.totals().arrived, c.totals().arrived) << "another seed, other arrivals";

  const auto fast = run(42, 15, 4);
  EXPECT_DOUBLE_EQ(fast.seconds(), 60);
  EXPECT_DOUBLE_EQ(fast.patternSeconds(), 240) << "speed compresses the pattern";
  EXPECT_DOUBLE_EQ(fast.offeredRps(), 20) << "past the ramp";
  EXPECT_GT(fast.totals().arrived, a.totals().arrived);
}

// The device busy time behind dcgm's engine activity: a saturated pod keeps its device busy
// `gpuUtilization` of the time; two saturated pods time-slicing one device keep it busy
// 1 / (1 + overhead) (the switching is lost); an idle device does nothing.
TEST(InferenceLoadModelTest, DeviceBusySeconds) {
  struct Row {
    const char* what;
    double utilization;
    std::vector<std::string> devices;  // one pod per entry
    double rps;
    double wantShare;  // busy seconds per second, of device "a"
  };
  const std::vector<Row> rows = {
      {"one pod at 40%", 0.4, {"a"}, 100, 0.4},
      {"one pod at 90%", 0.9, {"a"}, 100, 0.9},
      {"two pods share at 90%: 1/(1+0.112)", 0.9, {"a", "a"}, 100, 1 / 1.112},
      {"no requests", 0.9, {"a"}, 0, 0},
  };
  for (const Row& row : rows) {
    InferenceLoadModel model(constantLoad(row.rps, 48.9, 0, row.utilization, 0.112), 7);
    model.advance(60, podsOn(row.devices, kSlice));
    const auto& busy = model.deviceBusySeconds();
    const double got = busy.contains("a") ? busy.at("a") / 60 : 0;
    EXPECT_NEAR(got, row.wantShare, 0.02) << row.what;
  }
}

// vLLM's series are another view of the same requests: after a burst has drained, every identity
// between them and Triton's holds, and the request shape splits the service time.
TEST(InferenceLoadModelTest, VllmSeriesAgreeWithTritonAfterADrain) {
  struct Row {
    const char* what;
    std::vector<std::string> devices;
    double rps, utilization;
    VllmRequestShape shape;
    bool alone;  // one pod per device: prefill takes exactly its share of the GPU part
  };
  const std::vector<Row> rows = {
      {"light load, one pod", {"s0"}, 0.5, 0.4, {256, 64, 0.1, 16384}, true},
      {"overload, one pod", {"s0"}, 3, 0.4, {512, 128, 0.25, 4096}, true},
      {"two pods time-sliced on one slice", {"s0", "s0"}, 3, 0.9, {100, 20, 0.5, 1000}, false},
      {"one token: no inter-token latency", {"s0", "s1"}, 2, 0.4, {10, 1, 0.1, 100}, true},
  };
  for (const Row& row : rows) {
    LoadSpec spec = constantLoad(0, 48.9, 6, row.utilization, 0.112);
    spec.pattern = {LoadPatternKind::kSpike, 0, row.rps, 0, 60};
    spec.vllm = row.shape;
    spec.model = "Qwen/Qwen2.5-0.5B-Instruct";
    InferenceLoadModel model(spec, 9);
    model.advance(400, podsOn(row.devices, kSlice));
    const auto triton = model.tritonSeries();
    const auto vllm = model.vllmSeries();
    ASSERT_EQ(vllm.size(), triton.size()) << row.what;
    for (std::size_t i = 0; i < vllm.size(); ++i) {
      const VllmEngineSeries& v = vllm[i];
      const TritonPodSeries& t = triton[i];
      const double n = t.requestSuccess;
      ASSERT_GT(n, 0) << row.what;
      EXPECT_EQ(v.pod, t.pod);
      EXPECT_EQ(v.modelName, "Qwen/Qwen2.5-0.5B-Instruct");
      EXPECT_EQ(v.engine, "0");
      EXPECT_EQ(v.requestSuccess.at("stop"), n) << row.what;
      EXPECT_EQ(v.requestsWaiting, 0) << row.what << ": drained";
      EXPECT_EQ(v.requestsRunning, 0) << row.what;
      EXPECT_EQ(v.kvCacheUsage, 0) << row.what;
      EXPECT_EQ(v.promptTokens, n * row.shape.promptTokens) << row.what;
      EXPECT_EQ(v.generationTokens, n * row.shape.outputTokens) << row.what;
      for (const Histogram* h :
           {&v.timeToFirstToken, &v.e2eRequestLatency, &v.requestQueueTime, &v.requestInferenceTime,
            &v.requestPrefillTime, &v.requestDecodeTime}) {
        EXPECT_EQ(h->count(), n) << row.what;
      }
      EXPECT_NEAR(v.requestQueueTime.sum() * 1e6, t.queueDurationUs, 1e-3) << row.what;
      EXPECT_NEAR(v.e2eRequestLatency.sum() * 1e6, t.requestDurationUs, 1e-3) << row.what;
      EXPECT_NEAR((v.requestInferenceTime.sum() + n * 0.003) * 1e6,
                  t.requestDurationUs - t.queueDurationUs, 1e-3)
          << row.what << ": running = e2e - queue - the output part (cpuMillis / 2)";
      EXPECT_NEAR(v.requestPrefillTime.sum() + v.requestDecodeTime.sum(),
                  v.requestInferenceTime.sum(), 1e-6)
          << row.what;
      EXPECT_NEAR(v.timeToFirstToken.sum(), v.requestQueueTime.sum() + v.requestPrefillTime.sum(),
                  1e-6)
          << row.what << ": TTFT = queue + prefill (input included)";
      EXPECT_EQ(v.interTokenLatency.count(), n * (row.shape.outputTokens - 1)) << row.what;
      if (row.shape.outputTokens > 1) {
        EXPECT_NEAR(v.interTokenLatency.sum(), v.requestDecodeTime.sum(), 1e-6) << row.what;
      }
      if (row.alone) {
        const double gpu = 0.0489 / kSlice / row.utilization;
        EXPECT_NEAR(v.requestPrefillTime.sum() / n, 0.003 + gpu * row.shape.prefillShare, 1e-9)
            << row.what << ": input + prefill";
        EXPECT_NEAR(v.requestDecodeTime.sum() / n, gpu * (1 - row.shape.prefillShare), 1e-9)
            << row.what;
      }
    }
  }
}

// While saturated: the gauges vLLM's scheduler reports.
TEST(InferenceLoadModelTest, VllmGaugesWhileBusy) {
  LoadSpec spec = constantLoad(20, 48.9, 0, 0.4, 0.112);
  spec.vllm = {1000, 3000, 0.1, 8000};
  InferenceLoadModel model(spec, 4);
  const auto pods = podsOn({"s0", "s1"}, kSlice);
  for (int i = 0; i < 30; ++i) {
    model.advance(1.37, pods);
    const auto triton = model.tritonSeries();
    const auto vllm = model.vllmSeries();
    for (std::size_t p = 0; p < vllm.size(); ++p) {
      EXPECT_EQ(vllm[p].requestsWaiting, triton[p].pendingRequests);
      EXPECT_EQ(vllm[p].requestsRunning, 1) << "saturated: always one request in service";
      EXPECT_GE(vllm[p].kvCacheUsage, 1000.0 / 8000) << "at least the prompt";
      EXPECT_LE(vllm[p].kvCacheUsage, 4000.0 / 8000) << "at most prompt + output";
    }
  }
}

}  // namespace inference_load_model_test
}  // namespace gpuscale::sim
