// Micro-benchmarks of the core hot paths: the adapter parses a label selector on every request with
// ?labelSelector= or ?metricLabelSelector=, and formats one Quantity per returned item.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "gpuscale/core/go_quote.h"
#include "gpuscale/core/label_selector.h"
#include "gpuscale/core/quantity.h"

namespace {

using gpuscale::core::goQuote;
using gpuscale::core::Labels;
using gpuscale::core::LabelSelector;
using gpuscale::core::Quantity;

const char* const kSelectors[] = {
    "app=triton",
    "app=triton,env in (prod,staging),!canary",
    "example.com/team=ml,tier notin (batch,dev),gpu>0,zone in (a,b,c,d,e,f),owner,release!=old",
};

void BM_ParseSelector(benchmark::State& state) {
  const std::string text = kSelectors[state.range(0)];
  for (auto _ : state) {
    auto selector = LabelSelector::parse(text);
    benchmark::DoNotOptimize(selector);
  }
  state.SetLabel(text);
}
BENCHMARK(BM_ParseSelector)->DenseRange(0, 2);

void BM_MatchSelector(benchmark::State& state) {
  const LabelSelector selector = *LabelSelector::parse(kSelectors[1]);
  const Labels labels = {
      {"app", "triton"}, {"env", "prod"}, {"pod-template-hash", "6d4cf56db6"}, {"version", "v2"}};
  for (auto _ : state) benchmark::DoNotOptimize(selector.matches(labels));
}
BENCHMARK(BM_MatchSelector);

// Sample values as Prometheus returns them for queue times, utilisation and counters.
const std::vector<double> kSamples = {0, 399.3, 4.275, 1.005, 1000, 2.5e6, 0.5, 123.456789, -0.25};

void BM_FormatMetricValue(benchmark::State& state) {
  size_t i = 0;
  for (auto _ : state) {
    const auto q = Quantity::fromMetricValue(kSamples[i++ % kSamples.size()]);
    std::string text = q->toString();
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_FormatMetricValue);

void BM_ParseQuantity(benchmark::State& state) {
  const std::vector<std::string> texts = {"7", "40Gi", "1.5", "500m", "2e3", "399300m"};
  size_t i = 0;
  for (auto _ : state) {
    auto q = Quantity::parse(texts[i++ % texts.size()]);
    benchmark::DoNotOptimize(q);
  }
}
BENCHMARK(BM_ParseQuantity);

void BM_GoQuote(benchmark::State& state) {
  const std::string name = "triton-inference-server-6d4cf56db6-x7k2p";
  for (auto _ : state) {
    std::string quoted = goQuote(name);
    benchmark::DoNotOptimize(quoted);
  }
}
BENCHMARK(BM_GoQuote);

}  // namespace
