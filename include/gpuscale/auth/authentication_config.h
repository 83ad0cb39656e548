// AuthenticationConfig: which CAs and headers client authentication trusts, from flags or from the
// kube-system/extension-apiserver-authentication ConfigMap that kube-apiserver publishes.
//
// ConfigMap keys: `client-ca-file` (PEM), `requestheader-client-ca-file` (PEM), and
// `requestheader-username-headers`, `-group-headers`, `-extra-headers-prefix`, `-allowed-names`,
// each a JSON array string such as `["X-Remote-User"]`. As k8s.io/apiserver does, the ConfigMap
// fills only what the flags left unset: the client CA if --client-ca-file is empty, the whole
// request-header block if --requestheader-client-ca-file is empty.
//
// AuthenticationConfigSource holds the current config as an immutable snapshot; with a KubeClient
// it watches the ConfigMap (an Informer on that one object) and swaps in a new snapshot when it
// changes. reloadFiles() re-reads the flags' CA files (rotation on disk) and swaps in a new
// snapshot when their content changed. A ConfigMap or a CA file that fails to parse keeps the
// previous snapshot; lastError() reports it until a later update succeeds. Subscribers are told
// after every swap (so the TLS listener can name the new CAs in its CertificateRequest).
//
// Thread safety: AuthenticationConfig is immutable once built; the source is thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpuscale/auth/ca_bundle.h"
#include "gpuscale/core/result.h"
#include "gpuscale/kube/client.h"

namespace gpuscale::kube {
class Informer;
}

namespace gpuscale::auth {

struct RequestHeaderConfig {
  std::shared_ptr<const CaBundle> ca;  // null: front-proxy authentication off
  std::vector<std::string> usernameHeaders{"X-Remote-User"};
  std::vector<std::string> groupHeaders{"X-Remote-Group"};
  std::vector<std::string> extraHeaderPrefixes{"X-Remote-Extra-"};
  std::vector<std::string> allowedNames;  // empty: any CN the CA signed
};

struct AuthenticationConfig {
  std::shared_ptr<const CaBundle> clientCa;  // null: x509 client certificates off
  RequestHeaderConfig requestHeader;
};

// What the flags set; empty fields may be filled from the ConfigMap.
struct AuthenticationFlags {
  std::string clientCaFile;
  std::string requestHeaderClientCaFile;
  std::vector<std::string> requestHeaderUsernameHeaders{"X-Remote-User"};
  std::vector<std::string> requestHeaderGroupHeaders{"X-Remote-Group"};
  std::vector<std::string> requestHeaderExtraHeaderPrefixes{"X-Remote-Extra-"};
  std::vector<std::string> requestHeaderAllowedNames;
};

inline constexpr const char* kAuthenticationConfigMapNamespace = "kube-system";
inline constexpr const char* kAuthenticationConfigMapName = "extension-apiserver-authentication";

// The CA bundles the HTTPS server should name in its TLS CertificateRequest
// (TlsConfig::clientCaPems): Go clients such as kube-apiserver's front proxy send a certificate
// only if its issuer is listed (or the list is empty), so CAs learnt from the ConfigMap must be
// listed too.
std::vector<std::string> clientCaPemsForTls(const AuthenticationConfig& config);

// The config from flags alone (CA files are read now).
core::Result<AuthenticationConfig> configFromFlags(const AuthenticationFlags& flags);
// `base` (from flags) completed from the ConfigMap object, under the rules above.
core::Result<AuthenticationConfig> mergeConfigMap(const AuthenticationConfig& base,
                                                  const AuthenticationFlags& flags,
                                                  const kube::Object& configMap);

class AuthenticationConfigSource {
 public:
  // `config` is configFromFlags(flags) (the flags say which CA files reloadFiles() re-reads).
  explicit AuthenticationConfigSource(AuthenticationConfig config, AuthenticationFlags flags = {});
  ~AuthenticationConfigSource();

  // Reads the ConfigMap once (error if that fails), then keeps watching it.
  core::Status startWatching(std::shared_ptr<kube::KubeClient> client, AuthenticationFlags flags);

  // Re-reads the flags' CA files; when their content changed, rebuilds the config (completed from
  // the last ConfigMap seen, if any) and swaps it in. Ok when nothing changed or the swap
  // happened; an unreadable or bad file keeps the previous config and is returned (and recorded
  // as lastError()).
  core::Status reloadFiles();

  std::shared_ptr<const AuthenticationConfig> current() const;
  void set(AuthenticationConfig config);
  // The error of the latest rejected update, ok after a successful one.
  core::Status lastError() const;
  // `onChange` runs after every swap, on the thread that made it (under the update lock: it must
  // not block or call back into the source).
  void subscribe(std::function<void()> onChange);

 private:
  void swap(AuthenticationConfig config);  // caller holds updateMu_
  void rebuild(const std::optional<kube::Object>& configMap, const char* what);
  void recordError(core::Status& slot, core::Status error);

  std::mutex updateMu_;  // one update (file reload or ConfigMap event) at a time
  AuthenticationConfig base_;
  AuthenticationFlags flags_;
  std::optional<kube::Object> lastConfigMap_;
  std::vector<std::function<void()>> subscribers_;
  mutable std::mutex mu_;
  std::shared_ptr<const AuthenticationConfig> current_;
  core::Status fileError_;       // of the latest reloadFiles()
  core::Status configMapError_;  // of the latest ConfigMap event
  std::unique_ptr<kube::Informer> informer_;
};

}  // namespace gpuscale::auth
