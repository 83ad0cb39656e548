#include "gpuscale/auth/serving_client_cas.h"

#include <algorithm>

namespace gpuscale::auth {

std::vector<std::string> unionOfPemBundles(std::vector<std::string> pems,
                                           const std::vector<std::string>& more) {
  for (const auto& pem : more) {
    if (std::find(pems.begin(), pems.end(), pem) == pems.end()) pems.push_back(pem);
  }
  return pems;
}

apiserver::TlsConfigLoader servingTlsLoader(
    apiserver::ServerOptions options, std::shared_ptr<AuthenticationConfigSource> source,
    std::shared_ptr<const apiserver::GeneratedCertificate> inMemory) {
  return [options = std::move(options), source = std::move(source),
          inMemory = std::move(inMemory)]() -> core::Result<apiserver::TlsConfig> {
    if (source) {
      if (auto files = source->reloadFiles(); !files.ok()) return files;
      if (auto rejected = source->lastError(); !rejected.ok()) return rejected;
    }
    auto tls = apiserver::loadServingTls(options, inMemory.get());
    if (!tls) return tls.status();
    if (source) {
      tls->clientCaPems =
          unionOfPemBundles(std::move(tls->clientCaPems), clientCaPemsForTls(*source->current()));
    }
    return tls;
  };
}

core::Result<std::shared_ptr<apiserver::ServingTls>> servingTlsWithClientCas(
    const apiserver::ServerOptions& options, std::shared_ptr<AuthenticationConfigSource> source,
    const std::shared_ptr<prometheus::Registry>& registry,
    std::shared_ptr<const apiserver::GeneratedCertificate> inMemory) {
  auto tls = apiserver::ServingTls::create(servingTlsLoader(options, source, std::move(inMemory)),
                                           registry);
  if (!tls) return tls.status();
  if (source) {
    source->subscribe([weak = std::weak_ptr<apiserver::ServingTls>(*tls)] {
      if (auto alive = weak.lock()) alive->requestReload();
    });
  }
  return tls;
}

}  // namespace gpuscale::auth
