// Fuzzes the adapter's API server where untrusted bytes arrive before anyone is authenticated: the
// raw HTTP/1.1 request is read as a server connection reads it (the server's RequestParser with
// the server's real limits, RequestLimits' defaults, through a read buffer bounded as the
// connection's, in reads of a size the first input byte picks) and handed to the ApiHandler:
// authentication (the delegating authenticator: Authorization bearer parsing, front-proxy
// headers), request info, routing and the in-memory providers. Runs in the input (request_bytes.h)
// make requests at and far beyond those limits (a 64 KiB field, a megabyte target) out of a few
// bytes.
//
// Invariants beyond "no crash": a refused request is answered 400, 413 or 431, and an accepted one
// is within every limit; the handler never throws; every response has a status in [200, 599] and a
// JSON content type only over a body that is JSON; percent-encoding every byte of the decoded path
// decodes back to it; re-encoding the parsed query parameters parses back to the same pairs;
// request info keeps the decoded path (empty segments included, as Kubernetes keeps them).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fakes/fake_metrics_provider.h"
#include "fuzz_harness.h"
#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/apiserver/request_info.h"
#include "gpuscale/apiserver/url.h"
#include "gpuscale/auth/delegating_authenticator.h"
#include "request_bytes.h"

namespace {

using namespace gpuscale;  // NOLINT: a fuzz harness, one file

[[noreturn]] void fail(const char* what, std::string_view input) {
  gpuscale::fuzz::fail("fuzz_api_request", what, input);
}

std::string percentEncodeAll(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    out += '%';
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

apiserver::ApiHandler& handler() {
  static apiserver::ApiHandler* instance = [] {
    auto custom = std::make_shared<testing::FakeCustomMetricsProvider>();
    const apiserver::CustomMetricInfo pods{{"", "pods"}, true, "avg_time_queue_us"};
    custom->addValue({pods,
                      {"Pod", "default", "triton-0", "/v1"},
                      {{"app", "triton"}},
                      core::Quantity::fromMilli(399300)});
    custom->addValue({pods,
                      {"Pod", "default", "triton-1", "/v1"},
                      {{"app", "triton"}},
                      core::Quantity::fromMilli(4275)});
    custom->addValue({{{"", "namespaces"}, false, "avg_time_queue_us"},
                      {"Namespace", "", "default", "/v1"},
                      {},
                      core::Quantity::fromMilli(1000)});
    custom->addMetric({{"", "pods"}, true, "broken"});
    custom->failMetric("broken", core::Status::unavailable("Prometheus is down"));
    auto external = std::make_shared<testing::FakeExternalMetricsProvider>();
    external->addSample({"queue_depth", "default",
                         std::map<std::string, std::string>{{"topic", "t1"}},
                         core::Quantity::fromMilli(42'000)});
    apiserver::ApiHandlerConfig config;
    config.customMetrics = custom;
    config.externalMetrics = external;
    // No CA and no TokenReview: front-proxy headers are ignored, bearer tokens fail (401), a
    // request without credentials is anonymous; everything authenticated is then allowed.
    config.authenticator = std::make_shared<auth::DelegatingAuthenticator>(
        std::make_shared<auth::AuthenticationConfigSource>(auth::AuthenticationConfig{}), nullptr);
    config.serverAddress = "127.0.0.1:6443";
    return new apiserver::ApiHandler(std::move(config));
  }();
  return *instance;
}

void checkUrl(const apiserver::HttpRequest& request) {
  auto again = apiserver::decodePath(percentEncodeAll(request.path));
  if (!again || *again != request.path)
    fail("path does not survive percent-encoding", request.path);
  const auto query = apiserver::QueryParams::parse(request.rawQuery);
  std::string encoded;
  for (const auto& [key, value] : query.pairs()) {
    if (!encoded.empty()) encoded += '&';
    encoded += percentEncodeAll(key) + '=' + percentEncodeAll(value);
  }
  if (apiserver::QueryParams::parse(encoded).pairs() != query.pairs()) {
    fail("query pairs do not survive re-encoding", request.rawQuery);
  }
  const auto info = apiserver::parseRequestInfo(request.method, request.path, query);
  if (info.path != request.path) fail("request info changed the path", request.path);
}

void checkResponse(const apiserver::HttpResponse& response, std::string_view target) {
  if (response.status < 200 || response.status > 599) fail("HTTP status out of range", target);
  if (response.contentType.starts_with("application/json") &&
      !nlohmann::json::accept(response.body)) {
    fail("a JSON response whose body is not JSON", response.body);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const apiserver::RequestLimits limits;
  fuzz::ReadRequest read = fuzz::readFuzzInput(data, size, limits);
  if (!read.request) {
    if (!fuzz::refusedAsTheServerAnswers(read)) fail("refused with a bad status", "");
    return 0;
  }
  apiserver::HttpRequest& request = *read.request;
  request.secure = true;
  request.remoteAddress = "10.0.0.7:51234";
  if (const char* exceeded = fuzz::exceededLimit(request, limits)) fail(exceeded, request.target);
  checkUrl(request);
  checkResponse(handler().handle(request), request.target);
  return 0;
}
