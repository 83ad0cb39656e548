// The Client that talks HTTP(S) to a real Prometheus-compatible server, on cpprestsdk's
// asynchronous http_client (never `.get()` on a serving thread: it deadlocks once the pool is
// saturated).
//
// Behaviour:
//  - Endpoint paths are joined to the URL's path prefix ("/prometheus" + "/api/v1/query").
//    Parameters go in the query string (GET) or in a form body (POST), encoded as Go's
//    url.Values.Encode. Query parameters already in the URL are kept.
//  - Verb: `verb` for the endpoints that accept POST (query, series, labels), so long selector
//    sets travel in the body; label values (/api/v1/label/<name>/values) always GET, the only
//    method Prometheus' HTTP API gives it (POST is answered 405).
//  - Every call is bounded by `timeout` as a whole (connect, send, headers and body); the query
//    call also sends it as Prometheus' `timeout` parameter. Expiry cancels the connection and
//    reports kTimeout.
//  - Bodies larger than `maxBodyBytes` are cut off (the connection is cancelled) and reported as
//    kBodyTooLarge naming the flag; a declared Content-Length over the cap fails before reading.
//  - seriesLabelNamesAsync decodes the /api/v1/series body while it arrives, 64 KiB at a time, on a
//    thread of its own (it waits for each chunk), and keeps only the label-name view: memory does
//    not grow with the body. Its cap is `maxSeriesBodyBytes`. Every other body is buffered whole,
//    then decoded.
//  - A bearer token file is trimmed and re-read when its modification time or size changes; an
//    explicit `Authorization` header from the options wins over the token and basic auth. Extra
//    headers go on every request.
//  - TLS: system CAs plus `caPem`; client certificate and key; hostname verification unless
//    insecureSkipTlsVerify.
//  - Callbacks run on cpprestsdk's thread pool, or on the decoding thread of a streamed call (see
//    client.h for what they may do).
//
// Thread safety: thread-safe; calls may be issued from any thread. Calls in flight keep the
// connection state alive after the HttpClient is destroyed and still call their callbacks.
#pragma once

#include <cstdint>
#include <memory>

#include "gpuscale/prom/client.h"
#include "gpuscale/prom/credentials.h"

namespace gpuscale::prom {

class HttpClient final : public Client {
 public:
  // Validates `options` and reads the credentials they name; errors say which flag or file is
  // wrong.
  static Result<std::unique_ptr<HttpClient>> create(const PrometheusOptions& options);
  ~HttpClient() override;

  void queryAsync(std::string promql, Timestamp at, Callback<QueryResultPtr> done) override;
  void seriesAsync(Matchers match, TimeRange window, Callback<std::vector<Series>> done) override;
  void seriesLabelNamesAsync(Matchers match, TimeRange window,
                             Callback<MetricLabelNames> done) override;
  void labelValuesAsync(std::string label, Matchers match, TimeRange window,
                        Callback<std::vector<std::string>> done) override;
  void labelNamesAsync(Matchers match, TimeRange window,
                       Callback<std::vector<std::string>> done) override;

  // Counters since creation (for /metrics and benchmarks).
  struct Stats {
    uint64_t requests = 0;   // HTTP exchanges started
    uint64_t failures = 0;   // exchanges that ended without a complete response
    uint64_t bodyBytes = 0;  // response body bytes received
  };
  Stats stats() const;

  struct Connection;

 private:
  explicit HttpClient(std::shared_ptr<Connection> connection);
  std::shared_ptr<Connection> connection_;
};

}  // namespace gpuscale::prom
