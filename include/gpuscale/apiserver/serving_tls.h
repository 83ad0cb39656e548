// ServingTls: the TLS context the HTTPS listener hands to new connections, rebuilt when what it is
// made of changes: the serving certificate and key (rotated on disk) and the client CA bundles the
// server names in its CertificateRequest (flags' files rotated on disk, or the authentication
// ConfigMap changed).
//
// A TlsConfigLoader says what the context should be made of right now (it reads files, asks the
// authentication config source, ...). reload() calls it; when the result differs from the config
// of the context in use, a new OpenSSL context is built and swapped in atomically. Connections
// take the context when they are accepted and keep it for their lifetime, so existing connections
// are never disturbed. A loader error or material OpenSSL rejects (bad PEM, a key that does not
// match the certificate, a CA bundle without certificates) keeps the old context: it is logged once
// per distinct error and counted in /metrics:
//   gpuscale_serving_tls_reloads_total{result="success"|"failure"}   (a success is a new context)
//   gpuscale_serving_tls_last_reload_successful                      (1, or 0 after a failure)
//   gpuscale_serving_certificate_expiry_timestamp_seconds            (notAfter of the leaf in use)
// This is what kube-apiserver's dynamic serving certificate controller does: files re-read, the new
// pair validated (a key that does not match the certificate is refused) before the swap, the old
// one kept on error.
//
// Polling: startPolling() calls reload() every interval on a background thread (how file rotation
// is noticed); requestReload() wakes it at once (how a ConfigMap change is passed on).
//
// Thread safety: thread-safe. current() is cheap (a shared_ptr copy under a short lock).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "gpuscale/apiserver/certificates.h"
#include "gpuscale/core/result.h"

namespace boost::asio::ssl {
class context;
}
namespace prometheus {
class Registry;
}

namespace gpuscale::apiserver {

using TlsConfigLoader = std::function<core::Result<TlsConfig>()>;

class ServingTls {
 public:
  // Loads and builds the first context; an error here is a start-up error. `registry` may be null
  // (no metrics).
  static core::Result<std::shared_ptr<ServingTls>> create(
      TlsConfigLoader loader, const std::shared_ptr<prometheus::Registry>& registry = nullptr);
  ~ServingTls();
  ServingTls(const ServingTls&) = delete;
  ServingTls& operator=(const ServingTls&) = delete;

  // The context for a connection accepted now.
  std::shared_ptr<boost::asio::ssl::context> current() const;
  // What current() was built from.
  TlsConfig currentConfig() const;
  // How many contexts have been built (1 after create()).
  uint64_t generation() const;

  // Loads; builds and swaps when the material changed. Ok when nothing changed or the swap
  // happened; otherwise the error (the old context stays).
  core::Status reload();

  void startPolling(std::chrono::milliseconds interval);
  void requestReload();
  void stopPolling();

 private:
  struct Metrics;
  ServingTls(TlsConfigLoader loader, std::unique_ptr<Metrics> metrics);
  void recordFailure(const core::Status& error);

  const TlsConfigLoader loader_;
  const std::unique_ptr<Metrics> metrics_;

  std::mutex reloadMu_;  // one reload at a time
  std::string lastLoggedError_;

  mutable std::mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> context_;
  TlsConfig config_;
  uint64_t generation_ = 0;

  std::mutex pollMu_;
  std::condition_variable_any pollCv_;
  bool reloadRequested_ = false;
  std::jthread poller_;
};

}  // namespace gpuscale::apiserver
