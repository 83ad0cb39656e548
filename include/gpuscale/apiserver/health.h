// Health endpoints as k8s.io/apiserver serves them: `/healthz`, `/livez`, `/readyz`, each a list of
// named checks; `/<endpoint>/<check>` runs one check; `?verbose` lists the checks;
// `?exclude=<name>` skips one.
//
// Bodies (text/plain; charset=utf-8):
//   all pass:            200 "ok"  (verbose: "[+]ping ok\n...<endpoint> check passed\n")
//   a check fails:       500 "[+]ping ok\n[-]<name> failed: reason withheld\n<endpoint> check
//   failed\n" single check fails:  500 "internal server error: <reason>\n"
// Every endpoint has "ping"; readyz also has "shutdown" (fails once graceful shutdown began) and
// whatever the owner adds (the adapter adds "metrics-discovery": the first discovery finished).
//
// Thread safety: add checks before serving; evaluate() and beginShutdown() are thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/apiserver/http_message.h"
#include "gpuscale/apiserver/url.h"
#include "gpuscale/core/status.h"

namespace gpuscale::apiserver {

class HealthChecks {
 public:
  // Returns OK when healthy, otherwise a Status whose message is the (withheld-from-clients)
  // reason.
  using Check = std::function<core::Status()>;
  enum Endpoint : unsigned { kHealthz = 1, kLivez = 2, kReadyz = 4, kAll = 7 };

  HealthChecks();

  // Adds a named check to the endpoints in `endpoints` (a mask of Endpoint values).
  void add(std::string name, Check check, unsigned endpoints);

  // Makes readyz's "shutdown" check fail (called when graceful shutdown starts).
  void beginShutdown() { shuttingDown_.store(true); }

  // True when `path` is one of the health endpoints or a single check under one.
  static bool isHealthPath(std::string_view path);

  // Answers a health path (see isHealthPath) with the bodies described above; unknown check -> 404
  // text.
  HttpResponse evaluate(std::string_view path, const QueryParams& query) const;

 private:
  struct Entry {
    std::string name;
    Check check;
    unsigned endpoints;
  };
  std::vector<Entry> entries_;
  std::atomic<bool> shuttingDown_{false};
};

// The plain-text response Go's http.Error writes (body + "\n", nosniff).
HttpResponse plainTextResponse(int status, std::string body);

}  // namespace gpuscale::apiserver
