#include "gpuscale/auth/authentication_config.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <sstream>

#include "gpuscale/kube/informer.h"

namespace gpuscale::auth {
namespace {

core::Result<std::shared_ptr<const CaBundle>> bundleFromFile(const std::string& path,
                                                             const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::Status::invalid(fmt::format("--{}: cannot read {}", flag, path));
  std::ostringstream text;
  text << in.rdbuf();
  auto bundle = CaBundle::fromPem(text.str());
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

AuthenticationConfigSource::AuthenticationConfigSource(AuthenticationConfig config)
    : base_(config), current_(std::make_shared<const AuthenticationConfig>(std::move(config))) {}

AuthenticationConfigSource::~AuthenticationConfigSource() {
  if (informer_) informer_->stop();
}

std::shared_ptr<const AuthenticationConfig> AuthenticationConfigSource::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

void AuthenticationConfigSource::set(AuthenticationConfig config) {
  auto next = std::make_shared<const AuthenticationConfig>(std::move(config));
  std::lock_guard lock(mu_);
  current_ = std::move(next);
}

core::Status AuthenticationConfigSource::startWatching(std::shared_ptr<kube::KubeClient> client,
                                                       AuthenticationFlags flags) {
  flags_ = std::move(flags);
  const auto configMaps =
      kube::ResourceRef::collection("", "v1", "configmaps", kAuthenticationConfigMapNamespace);
  auto initial = client->get(configMaps.named(kAuthenticationConfigMapName));
  if (!initial) {
    return initial.status().withContext(fmt::format("unable to load configmap {}/{}",
                                                    kAuthenticationConfigMapNamespace,
                                                    kAuthenticationConfigMapName));
  }
  auto merged = mergeConfigMap(base_, flags_, *initial);
  if (!merged) return merged.status();
  set(std::move(*merged));

  kube::InformerOptions options;
  options.resource = configMaps;
  options.fieldSelector = fmt::format("metadata.name={}", kAuthenticationConfigMapName);
  informer_ = std::make_unique<kube::Informer>(std::move(client), options);
  const auto apply = [this](const kube::Object& configMap) {
    auto next = mergeConfigMap(base_, flags_, configMap);
    if (!next) {
      spdlog::error("authentication ConfigMap rejected, keeping the previous config: {}",
                    next.status().toString());
      return;
    }
    spdlog::info("authentication config reloaded from {}/{}", kAuthenticationConfigMapNamespace,
                 kAuthenticationConfigMapName);
    set(std::move(*next));
  };
  informer_->addHandler(
      {.onAdd = apply,
       .onUpdate = [apply](const kube::Object&, const kube::Object& after) { apply(after); },
       .onDelete = {}});
  informer_->start();
  return {};
}

}  // namespace gpuscale::auth
