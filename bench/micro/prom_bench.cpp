// Decoding Prometheus query responses: a 5,000-sample instant vector as a namespace-wide per-pod
// query returns it (the adapter's hot path on a cache miss), against a bare JSON parse of the same
// body.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>
#include <string>

#include "gpuscale/prom/caching_client.h"
#include "gpuscale/prom/wire.h"

namespace {

std::string vectorBody(int samples) {
  std::string body = R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (int i = 0; i < samples; ++i) {
    if (i) body += ',';
    body += R"({"metric":{"namespace":"inference","pod":"triton-7d9f8c6b5-)" + std::to_string(i) +
            R"(","service":"triton"},"value":[1700000000.123,")" + std::to_string(i * 1.25) +
            R"("]})";
  }
  return body + "]}}";
}

// Runs `read` on a 5,000-sample body each iteration, counting the body's bytes as processed;
// returns the body's size.
template <typename Read>
std::size_t overVectorBody(benchmark::State& state, Read read) {
  const std::string body = vectorBody(5000);
  for (auto _ : state) {
    auto result = read(body);
    benchmark::DoNotOptimize(result);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * body.size());
  return body.size();
}

void BM_DecodeVector5000(benchmark::State& state) {
  const std::size_t bytes = overVectorBody(state, [](const std::string& body) {
    return gpuscale::prom::decodeQueryResponse(200, body);
  });
  state.counters["body_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_DecodeVector5000)->Unit(benchmark::kMicrosecond);

void BM_JsonParseOnly5000(benchmark::State& state) {
  overVectorBody(state, [](const std::string& body) { return nlohmann::json::parse(body); });
}
BENCHMARK(BM_JsonParseOnly5000)->Unit(benchmark::kMicrosecond);

void BM_JsonSaxAcceptOnly5000(benchmark::State& state) {
  overVectorBody(state, [](const std::string& body) { return nlohmann::json::accept(body); });
}
BENCHMARK(BM_JsonSaxAcceptOnly5000)->Unit(benchmark::kMicrosecond);

// A backend that answers every query at once with the same 5,000-sample result.
class FixedBackend : public gpuscale::prom::Client {
 public:
  explicit FixedBackend(gpuscale::prom::QueryResultPtr result) : result_(std::move(result)) {}
  void queryAsync(std::string, gpuscale::prom::Timestamp,
                  gpuscale::prom::Callback<gpuscale::prom::QueryResultPtr> done) override {
    done(result_);
  }
  void seriesAsync(gpuscale::prom::Matchers, gpuscale::prom::TimeRange,
                   gpuscale::prom::Callback<std::vector<gpuscale::prom::Series>> done) override {
    done(std::vector<gpuscale::prom::Series>{});
  }
  void labelValuesAsync(std::string, gpuscale::prom::Matchers, gpuscale::prom::TimeRange,
                        gpuscale::prom::Callback<std::vector<std::string>> done) override {
    done(std::vector<std::string>{});
  }
  void labelNamesAsync(gpuscale::prom::Matchers, gpuscale::prom::TimeRange,
                       gpuscale::prom::Callback<std::vector<std::string>> done) override {
    done(std::vector<std::string>{});
  }

 private:
  gpuscale::prom::QueryResultPtr result_;
};

// A cache hit (the repeated-HPA-request path), from several threads at once.
void BM_CacheHit(benchmark::State& state) {
  static gpuscale::prom::CachingClient* cache = nullptr;
  if (state.thread_index() == 0) {
    auto result = gpuscale::prom::decodeQueryResponse(200, vectorBody(5000));
    gpuscale::prom::CacheOptions options;
    options.ttl = std::chrono::hours(1);
    cache = new gpuscale::prom::CachingClient(std::make_shared<FixedBackend>(*result), options);
  }
  auto at = std::chrono::system_clock::now();
  const std::string promql = "avg(rate(nv_inference_queue_duration_us[30s])) by (pod)";
  for (auto _ : state) {
    cache->queryAsync(promql, at, [](gpuscale::core::Result<gpuscale::prom::QueryResultPtr> r) {
      benchmark::DoNotOptimize(r);
    });
  }
  if (state.thread_index() == 0) {
    delete cache;
    cache = nullptr;
  }
}
BENCHMARK(BM_CacheHit)->ThreadRange(1, 2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
