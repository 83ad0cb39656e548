// Backend: one Prometheus-compatible server the rules query, with the client stack its calls go
// through, and BackendSet: every backend of one rule-file generation, by name.
//
// A backend built by Backend::create() is
//   HttpClient ─► ObservedClient{ClientMetrics backend=<name>} ─► CachingClient (instant queries)
// so caching, coalescing and the `/metrics` of calls (prom/client_metrics.h) work per backend, as
// they did for the one Prometheus of prometheus-adapter. The relister discovers through
// discovery() (uncached); the providers query through queries() (cached).
//
// The `default` backend is what the `--prometheus-*` flags describe; the rule file may declare
// more (rules/backend.h). A declared backend has its own URL, headers and credentials (never the
// default's: a token meant for one server is not sent to another); its timeout and verb default
// to the flags', its response cap and cache TTL are the flags'.
//
// Thread safety: immutable after construction; share as std::shared_ptr<const ...>. The clients
// are thread-safe. Calls in flight keep their client state alive after a Backend is destroyed.
#pragma once

#include <prometheus/registry.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/adapter/credential_file_policy.h"
#include "gpuscale/core/result.h"
#include "gpuscale/prom/caching_client.h"
#include "gpuscale/prom/client.h"
#include "gpuscale/prom/options.h"
#include "gpuscale/rules/rule_set.h"

namespace gpuscale::adapter {

class Backend {
 public:
  // The full stack for `options` (metrics on `registry`, which must not be null). Errors are those
  // of prom::HttpClient::create (unreadable CA, certificate or key files, bad URL).
  static core::Result<std::shared_ptr<const Backend>> create(
      std::string name, const prom::PrometheusOptions& options,
      const std::shared_ptr<prometheus::Registry>& registry);

  // Over clients built elsewhere (tests): `cache` may be null and is only read for statistics.
  Backend(std::string name, std::shared_ptr<prom::Client> discovery,
          std::shared_ptr<prom::Client> queries, std::shared_ptr<prom::CachingClient> cache);

  const std::string& name() const { return name_; }
  prom::Client& discovery() const { return *discovery_; }
  prom::Client& queries() const { return *queries_; }
  const std::shared_ptr<prom::CachingClient>& cache() const { return cache_; }

 private:
  std::string name_;
  std::shared_ptr<prom::Client> discovery_;
  std::shared_ptr<prom::Client> queries_;
  std::shared_ptr<prom::CachingClient> cache_;
};

class BackendSet {
 public:
  explicit BackendSet(std::vector<std::shared_ptr<const Backend>> backends);

  // The backend called `name`, or null.
  const Backend* find(std::string_view name) const;
  const std::vector<std::shared_ptr<const Backend>>& all() const { return backends_; }

 private:
  std::vector<std::shared_ptr<const Backend>> backends_;
};

// The options of a declared backend, completed from the default backend's (see the file comment).
prom::PrometheusOptions backendOptions(const rules::BackendSpec& spec,
                                       const prom::PrometheusOptions& defaults);

// Makes one backend from its name and options (Backend::create in the program, fakes in tests).
using BackendFactory = std::function<core::Result<std::shared_ptr<const Backend>>(
    const std::string& name, const prom::PrometheusOptions& options)>;

// The factory of real backends, with metrics on `registry`.
BackendFactory httpBackends(std::shared_ptr<prometheus::Registry> registry);

// `fallback` (the `default` backend, built once from `defaults`: the flags do not change on a
// reload) and every backend `rules` declares, made new by `make`. An error names the backend where
// it is declared ("FILE:LINE:COL: backends[1]: ..."). With `credentialFiles`, every file a declared
// backend names is checked against it first (credential_file_policy.h); null: not limited (the
// explain command, whose user runs it on files they can read anyway).
core::Result<std::shared_ptr<const BackendSet>> buildBackends(
    const rules::RuleSet& rules, std::shared_ptr<const Backend> fallback,
    const prom::PrometheusOptions& defaults, const BackendFactory& make,
    const CredentialFilePolicy* credentialFiles = nullptr);

}  // namespace gpuscale::adapter
