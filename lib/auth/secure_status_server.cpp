#include "gpuscale/auth/secure_status_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "gpuscale/apiserver/certificates.h"
#include "gpuscale/apiserver/https_server.h"
#include "gpuscale/apiserver/serving_tls.h"
#include "gpuscale/auth/serving_client_cas.h"

namespace gpuscale::auth {

core::Result<std::unique_ptr<SecureStatusServer>> SecureStatusServer::start(
    const SecureStatusOptions& options, StatusPages pages) {
  auto auth = buildDelegatedAuth(options.delegation);
  if (!auth) return auth.status().withContext("status listener authentication");
  apiserver::ServerOptions server = options.server;
  // The handshake names the flags' CAs so clients send certificates they issued.
  for (const std::string* file : {&options.delegation.authentication.clientCaFile,
                                  &options.delegation.authentication.requestHeaderClientCaFile}) {
    auto& files = server.clientCaFiles;
    if (!file->empty() && std::find(files.begin(), files.end(), *file) == files.end()) {
      files.push_back(*file);
    }
  }
  return start(server, std::move(pages), std::move(*auth));
}

core::Result<std::unique_ptr<SecureStatusServer>> SecureStatusServer::start(
    const apiserver::ServerOptions& server, StatusPages pages, DelegatedAuth auth) {
  if (!pages.registry) pages.registry = std::make_shared<prometheus::Registry>();
  std::shared_ptr<const apiserver::GeneratedCertificate> generated;
  if (server.tlsCertFile.empty() && server.tlsPrivateKeyFile.empty() && server.certDir.empty()) {
    auto pair = apiserver::generateServingCertificate();
    if (!pair) return pair.status().withContext("status listener certificate");
    generated = std::make_shared<const apiserver::GeneratedCertificate>(std::move(*pair));
  }
  auto tls = servingTlsWithClientCas(server, auth.config, pages.registry, std::move(generated));
  if (!tls) return tls.status().withContext("status listener certificate");

  apiserver::ApiHandlerConfig config;
  config.authenticator = auth.authenticator;
  config.authorizer = auth.authorizer;
  config.health = std::move(pages.health);
  config.registry = pages.registry;
  config.extraRoutes = std::move(pages.routes);
  config.serverAddress = server.bindAddress + ":" + std::to_string(server.securePort);

  std::unique_ptr<SecureStatusServer> out(new SecureStatusServer());
  out->auth_ = std::move(auth);
  out->tls_ = *tls;
  out->handler_ = std::make_shared<apiserver::ApiHandler>(std::move(config));
  out->shutdownTimeout_ = server.shutdownTimeout;
  out->server_ = std::make_unique<apiserver::HttpsServer>(
      server, out->tls_, [handler = out->handler_](const apiserver::HttpRequest& request) {
        return handler->handle(request);
      });
  out->server_->setAsyncHandler(
      [handler = out->handler_](std::shared_ptr<const apiserver::HttpRequest> request,
                                std::shared_ptr<apiserver::PendingRequest> pending) {
        handler->handleAsync(std::move(request), std::move(pending));
      });
  out->server_->setMetricsRegistry(pages.registry);
  if (core::Status started = out->server_->start(); !started.ok()) {
    out->stopped_ = true;  // nothing to stop
    return started.withContext("status listener");
  }
  out->tls_->startPolling(server.tlsReloadInterval);
  return out;
}

SecureStatusServer::~SecureStatusServer() { stop(); }

uint16_t SecureStatusServer::port() const { return server_ ? server_->securePort() : 0; }

void SecureStatusServer::stop() {
  if (stopped_ || !server_) return;
  stopped_ = true;
  handler_->health().beginShutdown();
  server_->shutdown(shutdownTimeout_);
  tls_->stopPolling();
}

}  // namespace gpuscale::auth
