#include "gpuscale/prom/caching_client.h"

#include <gtest/gtest.h>

#include <thread>

#include "fakes/prom_fake_client.h"
#include "gpuscale/prom/errors.h"
#include "gpuscale/prom/http_client.h"
#include "support/http_test_server.h"

namespace gpuscale::prom {
namespace caching_client_test {

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
  explicit Fixture(seconds ttl, seconds errorTtl = seconds(0), size_t maxEntries = 100,
                   size_t maxBytes = size_t{64} << 20) {
    CacheOptions options;
    options.ttl = ttl;
    options.errorTtl = errorTtl;
    options.maxEntries = maxEntries;
    options.maxBytes = maxBytes;
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

// `count` samples whose label values are `width` characters long.
std::vector<Sample> samples(int count, size_t width) {
  std::vector<Sample> out;
  for (int i = 0; i < count; ++i) {
    Sample sample;
    sample.metric = {{"pod", std::string(width, 'p') + std::to_string(i)},
                     {"namespace", "default"}};
    sample.point.value = i;
    out.push_back(std::move(sample));
  }
  return out;
}

TEST(CachingClientTest, ApproximateBytesGrowWithTheResult) {
  QueryResult small;
  small.vector = samples(10, 20);
  QueryResult many;
  many.vector = samples(100, 20);
  QueryResult wide;
  wide.vector = samples(10, 2000);
  EXPECT_GT(approximateBytes(many), 5 * approximateBytes(small));
  EXPECT_GT(approximateBytes(wide), 10 * 2000u);
  EXPECT_LT(approximateBytes(small), 10'000u);
}

TEST(CachingClientTest, BytesAreBoundedLeastRecentlyUsedFirst) {
  // The size of one entry, measured on a cache without a byte cap.
  size_t one = 0;
  {
    Fixture probe(seconds(60));
    probe.fake->setVector("a", samples(50, 40));
    ASSERT_TRUE(probe.cache->query("a", at(1)).ok());
    one = probe.cache->stats().bytes;
    ASSERT_GT(one, 50 * 40u);
  }
  // Room for two entries of that size, not three.
  Fixture f(seconds(60), seconds(0), 100, 2 * one + one / 2);
  for (const char* q : {"a", "b", "c"}) f.fake->setVector(q, samples(50, 40));
  for (const char* q : {"a", "b", "a", "c"}) ASSERT_TRUE(f.cache->query(q, at(1)).ok());
  auto stats = f.cache->stats();
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(stats.bytes, 2 * one);
  EXPECT_LE(stats.bytes, 2 * one + one / 2);
  EXPECT_EQ(stats.evictions, 1u);
  ASSERT_TRUE(f.cache->query("a", at(1)).ok());
  ASSERT_TRUE(f.cache->query("b", at(1)).ok());
  EXPECT_EQ(f.fake->calls("query:a"), 1u) << "the recently used entry stayed";
  EXPECT_EQ(f.fake->calls("query:b"), 2u) << "the least recently used entry went";
}

TEST(CachingClientTest, ResultLargerThanTheCacheIsPassedOnButNotKept) {
  Fixture f(seconds(60), seconds(0), 100, 4096);
  f.fake->setVector("big", samples(200, 40));
  for (int i = 0; i < 2; ++i) {
    auto result = f.cache->query("big", at(1));
    ASSERT_TRUE(result.ok());
    EXPECT_EQ((*result)->vector.size(), 200u);
  }
  EXPECT_EQ(f.fake->calls("query:big"), 2u);
  auto stats = f.cache->stats();
  EXPECT_EQ(stats.tooLarge, 2u);
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.bytes, 0u);
}

TEST(CachingClientTest, ExpiredEntriesAreDroppedWithoutBeingAskedAgain) {
  Fixture f(seconds(5), seconds(1));
  f.fake->setVector("a", samples(20, 40));
  f.fake->setVector("b", samples(20, 40));
  f.fake->setQuery("broken", failure(FailureKind::kTimeout, "slow"));
  ASSERT_TRUE(f.cache->query("a", at(1)).ok());
  ASSERT_TRUE(f.cache->query("b", at(1)).ok());
  EXPECT_FALSE(f.cache->query("broken", at(1)).ok());
  EXPECT_EQ(f.cache->stats().entries, 3u);
  // The error's TTL (1 s) ends first; the results' (5 s) later. Nobody asks a, b or broken again.
  f.clock.now += seconds(1);
  EXPECT_EQ(f.cache->stats().entries, 2u);
  f.clock.now += seconds(4);
  auto stats = f.cache->stats();
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.bytes, 0u);
  EXPECT_EQ(stats.expired, 3u);
  // A new entry after that is all the cache holds.
  ASSERT_TRUE(f.cache->query("c", at(10)).ok());
  EXPECT_EQ(f.cache->stats().entries, 1u);
}

TEST(CachingClientTest, ZeroBytesKeepsNoResults) {
  Fixture f(seconds(60), seconds(0), 100, 0);
  ASSERT_TRUE(f.cache->query("a", at(1)).ok());
  ASSERT_TRUE(f.cache->query("a", at(1)).ok());
  EXPECT_EQ(f.fake->calls("query:a"), 2u);
  EXPECT_EQ(f.cache->stats().entries, 0u);
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
  test::HttpTestServer server([&](const test::HttpTestRequest&) {
    for (int i = 0; i < 2000 && cache.load()->stats().coalesced < kThreads - 1; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    test::HttpTestResponse r;
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

}  // namespace caching_client_test
}  // namespace gpuscale::prom
