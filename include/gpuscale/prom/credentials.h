// Credentials and TLS material for talking to Prometheus, resolved from the `--prometheus-*` flags
// and a kubeconfig-style auth config file (`--prometheus-auth-config`, as prometheus-adapter reads
// it: the current context's user and cluster sections; the server URL in it is ignored).
//
// Thread safety: functions that read files; no shared state.
#pragma once

#include <string>

#include "gpuscale/core/result.h"
#include "gpuscale/core/tls_client_config.h"
#include "gpuscale/prom/options.h"
#include "gpuscale/prom/sigv4.h"

namespace gpuscale::prom {

// Credentials and TLS material, resolved from the flags and the auth config (flags win).
struct Credentials {
  std::string bearerToken;    // a fixed token (auth config `token`)
  std::string tokenFile;      // re-read when it changes
  std::string basicAuth;      // "user:password", sent as Basic
  core::TlsClientConfig tls;  // extra trusted CAs, client certificate, verification
  // Set with --prometheus-sigv4-region: requests are signed with these keys (sigv4.h).
  AwsCredentials aws;
};

// Reads the kubeconfig-style file's current context (user and cluster sections) into Credentials.
// Relative file paths in it are relative to the file's folder, as kubectl resolves them.
Result<Credentials> loadAuthConfig(const std::string& path);

// Resolves all credential sources of `options` and reads the CA and client key material; with
// --prometheus-sigv4-region, the AWS keys from the environment (an error when they are missing).
Result<Credentials> resolveCredentials(const PrometheusOptions& options);

}  // namespace gpuscale::prom
