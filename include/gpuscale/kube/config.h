// Where the Kubernetes API is and how to authenticate to it: kubeconfig files and in-cluster
// service-account configuration, reduced to one ClientConfig.
//
// kubeconfig: the current context (or a named one) selects a cluster (server, certificate-authority
// or -data, insecure-skip-tls-verify, tls-server-name) and a user (token, tokenFile,
// client-certificate/-key or -data). Relative file paths are resolved against the kubeconfig's
// directory; files are read at load time, except the token file, which is re-read when it changes
// (projected service-account tokens rotate). Unsupported user kinds (exec, auth-provider,
// username/password) are an error, never silently anonymous.
//
// In-cluster: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the CA and the rotating
// token from the service-account directory (/var/run/secrets/kubernetes.io/serviceaccount).
//
// Thread safety: ClientConfig is a value; TokenSource is thread-safe.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "gpuscale/core/result.h"
#include "gpuscale/core/tls_client_config.h"
#include "gpuscale/core/token_file.h"
#include "gpuscale/kube/client_observer.h"
#include "gpuscale/kube/write_fence.h"

namespace gpuscale::kube {

// A bearer token that is either fixed or read from a file (core::TokenFile: re-read when the file
// changes, looked at no more often than once per `recheck`, the last good token kept).
class TokenSource {
 public:
  static std::shared_ptr<TokenSource> fixed(std::string token);
  static std::shared_ptr<TokenSource> file(std::filesystem::path path,
                                           std::chrono::seconds recheck = std::chrono::seconds(10));
  // The current token ("" when the file has never been readable: the request then goes out without
  // one and the server answers 401, which is logged by the caller).
  std::string token();

 private:
  TokenSource() = default;
  std::string fixed_;
  std::unique_ptr<core::TokenFile> file_;
};

struct ClientConfig {
  std::string server;  // "https://host:port" (no trailing slash)
  // Trust anchors (empty: the system's), client certificate and key, verification.
  core::TlsClientConfig tls;
  std::string tlsServerName;
  std::shared_ptr<TokenSource> token;  // null = no bearer token
  std::string defaultNamespace = "default";

  // Client-side rate limit (client-go defaults: 5 QPS, burst 10).
  double qps = 5;
  int burst = 10;
  // Per-read timeout of ordinary requests; watches use their own, above the stream's timeout.
  std::chrono::seconds requestTimeout{30};
  // Per-read timeout of watch streams: above the longest silence a healthy stream has (its
  // timeoutSeconds, bookmarks come about once a minute). Watch timeoutSeconds are clamped below it.
  std::chrono::seconds watchReadTimeout{360};
  // 429 (and 503 with Retry-After) responses are retried this many times, sleeping as told
  // (capped at maxRetryAfter). 0 returns the 429 at once.
  int maxRetries = 3;
  std::chrono::seconds maxRetryAfter{10};
  std::string userAgent = "gpuscale";
  // Told about every request, rate-limiter wait and informer event (client_observer.h); null: none.
  std::shared_ptr<ClientObserver> observer;
  // Asked before every attempt of a write (write_fence.h); null: writes are not fenced.
  std::shared_ptr<WriteFence> writeFence;
};

// Loads `path` with the given context ("" = current-context).
core::Result<ClientConfig> loadKubeconfig(const std::filesystem::path& path,
                                          const std::string& context = "");

// Reads a file that a kubeconfig names (certificate-authority, client-certificate, client-key).
using KubeconfigFileReader =
    std::function<core::Result<std::string>(const std::filesystem::path& file)>;

// What loadKubeconfig does once the file is read: `text` is the kubeconfig, `path` where it came
// from (relative file names resolve against its directory; error messages name it), and `readFile`
// reads the files it names (loadKubeconfig passes core::readFile). Malformed YAML or fields of the
// wrong type are an invalid Status, never an exception.
core::Result<ClientConfig> parseKubeconfig(std::string_view text, const std::filesystem::path& path,
                                           const std::string& context,
                                           const KubeconfigFileReader& readFile);

// In-cluster configuration. `serviceAccountDir` is overridable for tests.
core::Result<ClientConfig> inClusterConfig(const std::filesystem::path& serviceAccountDir =
                                               "/var/run/secrets/kubernetes.io/serviceaccount");

// `kubeconfigPath` if non-empty, otherwise in-cluster, otherwise $KUBECONFIG (as the
// --*-kubeconfig flags of Kubernetes components behave).
core::Result<ClientConfig> loadClientConfig(const std::string& kubeconfigPath);

}  // namespace gpuscale::kube
