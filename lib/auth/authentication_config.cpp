#include "gpuscale/auth/authentication_config.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>

#include "gpuscale/core/files.h"
#include "gpuscale/kube/informer.h"

namespace gpuscale::auth {
namespace {

core::Result<std::shared_ptr<const CaBundle>> bundleFromFile(const std::string& path,
                                                             const char* flag) {
  auto text = core::readFile(path);
  if (!text) return core::Status::invalid(fmt::format("--{}: cannot read {}", flag, path));
  auto bundle = CaBundle::fromPem(*text);
  if (!bundle) return bundle.status().withContext(fmt::format("--{} {}", flag, path));
  return bundle;
}

core::Result<std::vector<std::string>> jsonStringList(const kube::Object& data, const char* key) {
  std::vector<std::string> out;
  const auto it = data.find(key);
  if (it == data.end() || !it->is_string() || it->get<std::string>().empty()) return out;
  const auto parsed = kube::Object::parse(it->get<std::string>(), nullptr, false);
  if (parsed.is_discarded() || !parsed.is_array()) {
    return core::Status::invalid(fmt::format("ConfigMap key {} is not a JSON array", key));
  }
  for (const auto& item : parsed) {
    if (!item.is_string()) {
      return core::Status::invalid(fmt::format("ConfigMap key {} holds a non-string", key));
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

std::vector<std::string> clientCaPemsForTls(const AuthenticationConfig& config) {
  std::vector<std::string> pems;
  if (config.requestHeader.ca) pems.push_back(config.requestHeader.ca->pem());
  if (config.clientCa) pems.push_back(config.clientCa->pem());
  return pems;
}

core::Result<AuthenticationConfig> configFromFlags(const AuthenticationFlags& flags) {
  AuthenticationConfig config;
  if (!flags.clientCaFile.empty()) {
    auto ca = bundleFromFile(flags.clientCaFile, "client-ca-file");
    if (!ca) return ca.status();
    config.clientCa = *ca;
  }
  if (!flags.requestHeaderClientCaFile.empty()) {
    auto ca = bundleFromFile(flags.requestHeaderClientCaFile, "requestheader-client-ca-file");
    if (!ca) return ca.status();
    config.requestHeader.ca = *ca;
  }
  config.requestHeader.usernameHeaders = flags.requestHeaderUsernameHeaders;
  config.requestHeader.groupHeaders = flags.requestHeaderGroupHeaders;
  config.requestHeader.extraHeaderPrefixes = flags.requestHeaderExtraHeaderPrefixes;
  config.requestHeader.allowedNames = flags.requestHeaderAllowedNames;
  return config;
}

core::Result<AuthenticationConfig> mergeConfigMap(const AuthenticationConfig& base,
                                                  const AuthenticationFlags& flags,
                                                  const kube::Object& configMap) {
  AuthenticationConfig config = base;
  const kube::Object data = configMap.value("data", kube::Object::object());
  if (flags.clientCaFile.empty()) {
    config.clientCa = nullptr;
    if (const std::string pem = data.value("client-ca-file", ""); !pem.empty()) {
      auto ca = CaBundle::fromPem(pem);
      if (!ca) return ca.status().withContext("ConfigMap key client-ca-file");
      config.clientCa = *ca;
    }
  }
  if (flags.requestHeaderClientCaFile.empty()) {
    config.requestHeader = RequestHeaderConfig{};
    if (const std::string pem = data.value("requestheader-client-ca-file", ""); !pem.empty()) {
      auto ca = CaBundle::fromPem(pem);
      if (!ca) return ca.status().withContext("ConfigMap key requestheader-client-ca-file");
      config.requestHeader.ca = *ca;
      const std::pair<const char*, std::vector<std::string>*> lists[] = {
          {"requestheader-username-headers", &config.requestHeader.usernameHeaders},
          {"requestheader-group-headers", &config.requestHeader.groupHeaders},
          {"requestheader-extra-headers-prefix", &config.requestHeader.extraHeaderPrefixes},
          {"requestheader-allowed-names", &config.requestHeader.allowedNames}};
      for (const auto& [key, target] : lists) {
        auto values = jsonStringList(data, key);
        if (!values) return values.status();
        *target = std::move(*values);
      }
    }
  }
  return config;
}

AuthenticationConfigSource::AuthenticationConfigSource(AuthenticationConfig config,
                                                       AuthenticationFlags flags)
    : base_(config),
      flags_(std::move(flags)),
      current_(std::make_shared<const AuthenticationConfig>(std::move(config))) {}

AuthenticationConfigSource::~AuthenticationConfigSource() {
  if (informer_) informer_->stop();
}

std::shared_ptr<const AuthenticationConfig> AuthenticationConfigSource::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

core::Status AuthenticationConfigSource::lastError() const {
  std::lock_guard lock(mu_);
  return fileError_.ok() ? configMapError_ : fileError_;
}

void AuthenticationConfigSource::subscribe(std::function<void()> onChange) {
  std::lock_guard lock(updateMu_);
  subscribers_.push_back(std::move(onChange));
}

void AuthenticationConfigSource::set(AuthenticationConfig config) {
  std::lock_guard lock(updateMu_);
  swap(std::move(config));
}

void AuthenticationConfigSource::swap(AuthenticationConfig config) {
  auto next = std::make_shared<const AuthenticationConfig>(std::move(config));
  {
    std::lock_guard lock(mu_);
    current_ = std::move(next);
  }
  for (const auto& subscriber : subscribers_) subscriber();
}

void AuthenticationConfigSource::recordError(core::Status& slot, core::Status error) {
  std::lock_guard lock(mu_);
  slot = std::move(error);
}

void AuthenticationConfigSource::rebuild(const std::optional<kube::Object>& configMap,
                                         const char* what) {
  if (!configMap) {
    swap(base_);
    return;
  }
  auto next = mergeConfigMap(base_, flags_, *configMap);
  if (!next) {
    spdlog::error("{} rejected, keeping the previous authentication config: {}", what,
                  next.status().toString());
    recordError(configMapError_, next.status().withContext(what));
    return;
  }
  recordError(configMapError_, {});
  lastConfigMap_ = configMap;
  spdlog::info("authentication config reloaded ({})", what);
  swap(std::move(*next));
}

core::Status AuthenticationConfigSource::reloadFiles() {
  std::lock_guard lock(updateMu_);
  if (flags_.clientCaFile.empty() && flags_.requestHeaderClientCaFile.empty()) return {};
  auto fresh = configFromFlags(flags_);
  if (!fresh) {
    // Logged by the caller once per distinct error (a file being rewritten fails once or twice).
    recordError(fileError_, fresh.status());
    return fresh.status();
  }
  recordError(fileError_, {});
  const auto pem = [](const std::shared_ptr<const CaBundle>& ca) {
    return ca ? ca->pem() : std::string();
  };
  if (pem(fresh->clientCa) == pem(base_.clientCa) &&
      pem(fresh->requestHeader.ca) == pem(base_.requestHeader.ca)) {
    return {};
  }
  base_ = std::move(*fresh);
  rebuild(lastConfigMap_, "client CA files");
  return {};
}

core::Status AuthenticationConfigSource::startWatching(std::shared_ptr<kube::KubeClient> client,
                                                       AuthenticationFlags flags) {
  {
    std::lock_guard lock(updateMu_);
    flags_ = std::move(flags);
  }
  const auto configMaps =
      kube::ResourceRef::collection("", "v1", "configmaps", kAuthenticationConfigMapNamespace);
  auto initial = client->get(configMaps.named(kAuthenticationConfigMapName));
  if (!initial) {
    return initial.status().withContext(fmt::format("unable to load configmap {}/{}",
                                                    kAuthenticationConfigMapNamespace,
                                                    kAuthenticationConfigMapName));
  }
  {
    std::lock_guard lock(updateMu_);
    auto merged = mergeConfigMap(base_, flags_, *initial);
    if (!merged) return merged.status();
    lastConfigMap_ = std::move(*initial);
    swap(std::move(*merged));
  }

  kube::InformerOptions options;
  options.resource = configMaps;
  options.fieldSelector = fmt::format("metadata.name={}", kAuthenticationConfigMapName);
  informer_ = std::make_unique<kube::Informer>(std::move(client), options);
  const auto apply = [this](const kube::Object& configMap) {
    std::lock_guard lock(updateMu_);
    rebuild(configMap, "ConfigMap kube-system/extension-apiserver-authentication");
  };
  informer_->addHandler(
      {.onAdd = apply,
       .onUpdate = [apply](const kube::Object&, const kube::Object& after) { apply(after); },
       .onDelete = {}});
  informer_->start();
  return {};
}

}  // namespace gpuscale::auth
