#include "gpuscale/prom/caching_client.h"

#include <gtest/gtest.h>

#include <thread>

#include "fakes/prom_fake_client.h"
#include "gpuscale/prom/errors.h"
#include "gpuscale/prom/http_client.h"
#include "support/prometheus_stub_server.h"

namespace gpuscale::prom {
namespace {

using std::chrono::seconds;

Timestamp at(long long s) { return Timestamp(seconds(s)); }

// A steady clock the test moves by hand.
struct ManualClock {
  std::chrono::steady_clock::time_point now{};
  std::function<std::chrono::steady_clock::time_point()> fn() {
    return [this] { return now; };
  }
};

struct Fixture {
  explicit Fixture(seconds ttl, seconds errorTtl = seconds(0), size_t maxEntries = 100) {
    CacheOptions options;
    options.ttl = ttl;
    options.errorTtl = errorTtl;
    options.maxEntries = maxEntries;
    options.now = clock.fn();
    cache = std::make_unique<CachingClient>(fake, options);
  }
  ManualClock clock;
  std::shared_ptr<fakes::FakePrometheusClient> fake =
      std::make_shared<fakes::FakePrometheusClient>();
  std::unique_ptr<CachingClient> cache;
};

TEST(CachingClientTest, TtlRules) {
  struct Row {
    const char* what;
    seconds ttl;
    seconds advance;     // steady time between the two calls
    long long secondAt;  // evaluation time of the second call (the first is at 100)
    size_t wantBackendCalls;
  } rows[] = {
      {"same time within the TTL is a hit", seconds(5), seconds(1), 100, 1},
      {"a later evaluation time within the TTL is a hit", seconds(5), seconds(1), 104, 1},
      {"evaluation time beyond the TTL misses", seconds(5), seconds(1), 106, 2},
      {"an entry older than the TTL misses", seconds(5), seconds(5), 100, 2},
      {"TTL 0 never caches", seconds(0), seconds(0), 100, 2},
  };
  for (const auto& row : rows) {
    Fixture f(row.ttl);
    ASSERT_TRUE(f.cache->query("up", at(100)).ok());
    f.clock.now += row.advance;
    ASSERT_TRUE(f.cache->query("up", at(row.secondAt)).ok());
    EXPECT_EQ(f.fake->calls("query:up"), row.wantBackendCalls) << row.what;
  }
}

TEST(CachingClientTest, ErrorsAreNotCachedUnlessAskedTo) {
  Fixture plain(seconds(5));
  plain.fake->setQuery("up", failure(FailureKind::kTimeout, "slow"));
  EXPECT_FALSE(plain.cache->query("up", at(1)).ok());
  EXPECT_FALSE(plain.cache->query("up", at(1)).ok());
  EXPECT_EQ(plain.fake->calls("query:up"), 2u) << "errors are retried";

  Fixture brief(seconds(5), seconds(1));
  brief.fake->setQuery("up", failure(FailureKind::kTimeout, "slow"));
  EXPECT_FALSE(brief.cache->query("up", at(1)).ok());
  EXPECT_FALSE(brief.cache->query("up", at(1)).ok());
  EXPECT_EQ(brief.fake->calls("query:up"), 1u) << "an error TTL shields the backend";
  brief.clock.now += seconds(1);
  EXPECT_FALSE(brief.cache->query("up", at(1)).ok());
  EXPECT_EQ(brief.fake->calls("query:up"), 2u) << "error TTL is shorter than the TTL";
}

TEST(CachingClientTest, SizeIsBounded) {
  Fixture f(seconds(60), seconds(0), 2);
  for (const char* q : {"a", "b", "a", "c", "a", "b"}) ASSERT_TRUE(f.cache->query(q, at(1)).ok());
  auto stats = f.cache->stats();
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(f.fake->calls("query:a"), 1u) << "recently used entry survives";
  EXPECT_EQ(f.fake->calls("query:b"), 2u) << "least recently used entry was evicted";
  EXPECT_EQ(stats.evictions, 2u);
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.misses, 4u);
}

TEST(CachingClientTest, PassesSeriesAndLabelCallsThrough) {
  Fixture f(seconds(60));
  ASSERT_TRUE(f.cache->series({"up"}, {}).ok());
  ASSERT_TRUE(f.cache->series({"up"}, {}).ok());
  EXPECT_EQ(f.fake->calls("series:up"), 2u);
}

// N threads ask the same query of a real HTTP client while the server holds the first answer back
// until the others have joined it: the server sees one request; later asks within the TTL are hits;
// after the TTL, one more request.
TEST(CachingClientTest, ConcurrentIdenticalQueriesReachTheServerOncePerTtl) {
  constexpr int kThreads = 16;
  std::atomic<CachingClient*> cache{nullptr};
  test::PrometheusStubServer server([&](const test::StubRequest&) {
    for (int i = 0; i < 2000 && cache.load()->stats().coalesced < kThreads - 1; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    test::StubResponse r;
    r.body = R"({"status":"success","data":{"resultType":"vector","result":[]}})";
    return r;
  });
  PrometheusOptions options;
  options.url = server.url();
  auto http = HttpClient::create(options);
  ASSERT_TRUE(http.ok());
  ManualClock clock;
  CacheOptions cacheOptions;
  cacheOptions.ttl = seconds(30);
  cacheOptions.now = clock.fn();
  CachingClient caching(std::shared_ptr<Client>(std::move(*http)), cacheOptions);
  cache = &caching;

  auto burst = [&] {
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&] {
        if (caching.query("sum(rate(x[1m]))", at(1000)).ok()) ++ok;
      });
    }
    for (auto& t : threads) t.join();
    return ok.load();
  };
  EXPECT_EQ(burst(), kThreads);
  EXPECT_EQ(server.requestCount(), 1u);
  EXPECT_EQ(caching.stats().coalesced, static_cast<uint64_t>(kThreads - 1));

  EXPECT_EQ(burst(), kThreads);
  EXPECT_EQ(server.requestCount(), 1u) << "within the TTL every caller is a hit";
  EXPECT_EQ(caching.stats().hits, static_cast<uint64_t>(kThreads));

  clock.now += seconds(30);
  ASSERT_TRUE(caching.query("sum(rate(x[1m]))", at(1000)).ok());
  EXPECT_EQ(server.requestCount(), 2u) << "after the TTL, one more request";
}

}  // namespace
}  // namespace gpuscale::prom
