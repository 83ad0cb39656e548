#include "gpuscale/adapter/backend.h"

#include "gpuscale/prom/client_metrics.h"
#include "gpuscale/prom/http_client.h"
#include "gpuscale/prom/observed_client.h"

namespace gpuscale::adapter {

core::Result<std::shared_ptr<const Backend>> Backend::create(
    std::string name, const prom::PrometheusOptions& options,
    const std::shared_ptr<prometheus::Registry>& registry) {
  auto http = prom::HttpClient::create(options);
  if (!http) return http.status();
  auto instrumented = std::make_shared<prom::ObservedClient>(
      std::shared_ptr<prom::Client>(std::move(*http)),
      std::make_shared<prom::ClientMetrics>(*registry, "gpuscale_adapter", name));
  prom::CacheOptions cacheOptions;
  cacheOptions.ttl = options.cacheTtl;
  cacheOptions.maxBytes = options.cacheMaxBytes;
  // Expired results go (and their memory back to the system) within a second of their TTL even
  // when no request comes.
  cacheOptions.sweepInterval = std::chrono::seconds(1);
  auto cache = std::make_shared<prom::CachingClient>(instrumented, cacheOptions);
  return std::make_shared<const Backend>(std::move(name), instrumented, cache, cache);
}

Backend::Backend(std::string name, std::shared_ptr<prom::Client> discovery,
                 std::shared_ptr<prom::Client> queries, std::shared_ptr<prom::CachingClient> cache)
    : name_(std::move(name)),
      discovery_(std::move(discovery)),
      queries_(std::move(queries)),
      cache_(std::move(cache)) {}

BackendSet::BackendSet(std::vector<std::shared_ptr<const Backend>> backends)
    : backends_(std::move(backends)) {}

const Backend* BackendSet::find(std::string_view name) const {
  for (const auto& backend : backends_) {
    if (backend->name() == name) return backend.get();
  }
  return nullptr;
}

prom::PrometheusOptions backendOptions(const rules::BackendSpec& spec,
                                       const prom::PrometheusOptions& defaults) {
  prom::PrometheusOptions options;
  options.url = spec.url;
  options.verb =
      spec.post ? (*spec.post ? prom::HttpVerb::kPost : prom::HttpVerb::kGet) : defaults.verb;
  options.timeout = spec.timeout.value_or(defaults.timeout);
  options.tokenFile = spec.bearerTokenFile;
  options.caFile = spec.caFile;
  options.clientCertFile = spec.clientCertFile;
  options.clientKeyFile = spec.clientKeyFile;
  options.insecureSkipTlsVerify = spec.insecureSkipTlsVerify;
  options.headers = spec.headers;
  options.maxBodyBytes = defaults.maxBodyBytes;
  options.cacheTtl = defaults.cacheTtl;
  options.cacheMaxBytes = defaults.cacheMaxBytes;
  return options;
}

BackendFactory httpBackends(std::shared_ptr<prometheus::Registry> registry) {
  return [registry = std::move(registry)](const std::string& name,
                                          const prom::PrometheusOptions& options) {
    return Backend::create(name, options, registry);
  };
}

core::Result<std::shared_ptr<const BackendSet>> buildBackends(
    const rules::RuleSet& rules, std::shared_ptr<const Backend> fallback,
    const prom::PrometheusOptions& defaults, const BackendFactory& make,
    const CredentialFilePolicy* credentialFiles) {
  std::vector<std::shared_ptr<const Backend>> backends;
  backends.push_back(std::move(fallback));
  for (const rules::BackendSpec& spec : rules.backends) {
    if (credentialFiles != nullptr) {
      if (core::Status allowed = credentialFiles->checkBackend(spec, rules.file); !allowed.ok()) {
        return allowed;
      }
    }
    auto backend = make(spec.name, backendOptions(spec, defaults));
    if (!backend) {
      return core::Status::invalid(
          rules::Diagnostic{spec.pos, spec.path, backend.status().message()}.format(rules.file));
    }
    backends.push_back(std::move(*backend));
  }
  return std::make_shared<const BackendSet>(std::move(backends));
}

}  // namespace gpuscale::adapter
