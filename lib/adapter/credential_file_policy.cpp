#include "gpuscale/adapter/credential_file_policy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <utility>

#include "gpuscale/core/metric_families.h"

namespace gpuscale::adapter {
namespace {

namespace fs = std::filesystem;

// realpath(3): symbolic links and ".." resolved; an error when the path does not exist.
core::Result<std::string> resolve(const std::string& path) {
  std::error_code error;
  fs::path resolved = fs::canonical(fs::path(path), error);
  if (error)
    return core::Status::invalid(fmt::format("cannot resolve {:?}: {}", path, error.message()));
  return resolved.string();
}

// True when `path` is `dir` or below it, component by component ("/a/bc" is not inside "/a/b").
bool inside(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

}  // namespace

core::Result<std::shared_ptr<const CredentialFilePolicy>> CredentialFilePolicy::create(
    const std::vector<std::string>& dirs, const std::vector<std::string>& flagFiles,
    const std::shared_ptr<prometheus::Registry>& registry) {
  std::shared_ptr<CredentialFilePolicy> policy(new CredentialFilePolicy());
  for (const std::string& dir : dirs) {
    auto resolved = resolve(dir);
    if (!resolved) return resolved.status().withContext("--allowed-credential-dir");
    std::error_code error;
    if (!fs::is_directory(*resolved, error)) {
      return core::Status::invalid(
          fmt::format("--allowed-credential-dir: {:?} is not a directory", dir));
    }
    policy->dirs_.push_back(std::move(*resolved));
  }
  for (const std::string& file : flagFiles) {
    if (file.empty()) continue;
    if (auto resolved = resolve(file)) policy->files_.insert(std::move(*resolved));
  }
  if (registry) {
    policy->rejected_ = &core::counter(*registry, "gpuscale_config_rejected_credential_files_total",
                                       "Credential files named by the rule file outside the "
                                       "--allowed-credential-dir directories (the rule file is "
                                       "rejected)");
  }
  return std::shared_ptr<const CredentialFilePolicy>(std::move(policy));
}

core::Status CredentialFilePolicy::check(const std::string& path) const {
  auto resolved = resolve(path);
  if (!resolved) {
    reject(path, resolved.status().message());
    return core::Status::forbidden(
        fmt::format("credential file {:?} is not allowed: {}", path, resolved.status().message()));
  }
  if (files_.contains(*resolved)) return {};
  for (const std::string& dir : dirs_) {
    if (inside(*resolved, dir)) return {};
  }
  const std::string why =
      *resolved == path
          ? std::string("outside the allowed directories")
          : fmt::format("it resolves to {:?}, outside the allowed directories", *resolved);
  reject(path, why);
  return core::Status::forbidden(fmt::format(
      "credential file {:?} is not allowed: {} (allowed: {}; add one with "
      "--allowed-credential-dir)",
      path, why, dirs_.empty() ? std::string("none") : fmt::format("{}", fmt::join(dirs_, ", "))));
}

core::Status CredentialFilePolicy::checkBackend(const rules::BackendSpec& spec,
                                                const std::string& ruleFile) const {
  for (const auto& [field, path] :
       {std::pair{"bearerTokenFile", &spec.bearerTokenFile}, std::pair{"caFile", &spec.caFile},
        std::pair{"clientCertFile", &spec.clientCertFile},
        std::pair{"clientKeyFile", &spec.clientKeyFile}}) {
    if (path->empty()) continue;
    if (core::Status allowed = check(*path); !allowed.ok()) {
      return core::Status::invalid(
          rules::Diagnostic{spec.pos, spec.path + "." + field, allowed.message()}.format(ruleFile));
    }
  }
  return {};
}

void CredentialFilePolicy::reject(const std::string& path, const std::string& why) const {
  if (rejected_ != nullptr) rejected_->Increment();
  std::lock_guard lock(logMu_);
  if (logged_.insert(path).second) {
    spdlog::warn("rule file: credential file {:?} rejected: {}", path, why);
  }
}

std::vector<std::string> flagCredentialFiles(const prom::PrometheusOptions& options) {
  return {options.tokenFile, options.caFile, options.clientCertFile, options.clientKeyFile};
}

}  // namespace gpuscale::adapter
