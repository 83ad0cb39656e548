#include "gpuscale/kube/config.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gpuscale/core/files.h"
#include "gpuscale/core/go_quote.h"

namespace gpuscale::kube {
namespace fs = std::filesystem;
namespace {

core::Result<std::string> decodeBase64(std::string_view text, std::string_view what) {
  std::string compact;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) compact += c;
  }
  if (compact.size() % 4 != 0) {
    return core::Status::invalid(fmt::format("{}: invalid base64 (length)", what));
  }
  std::string out(compact.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(compact.data()),
                                static_cast<int>(compact.size()));
  if (n < 0) return core::Status::invalid(fmt::format("{}: invalid base64", what));
  size_t padding = 0;
  if (!compact.empty() && compact.back() == '=') ++padding;
  if (compact.size() > 1 && compact[compact.size() - 2] == '=') ++padding;
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

// A PEM value given either inline (`<key>-data`, base64) or as a file (`<key>`).
core::Result<std::string> pemField(const YAML::Node& node, const std::string& key,
                                   const fs::path& baseDir, const KubeconfigFileReader& readFile) {
  if (const auto data = node[key + "-data"]; data && !data.as<std::string>().empty()) {
    return decodeBase64(data.as<std::string>(), key + "-data");
  }
  if (const auto file = node[key]; file && !file.as<std::string>().empty()) {
    fs::path path = file.as<std::string>();
    if (path.is_relative()) path = baseDir / path;
    return readFile(path);
  }
  return std::string();
}

YAML::Node findNamed(const YAML::Node& list, const std::string& name, const char* field) {
  if (!list || !list.IsSequence()) return {};
  for (const auto& entry : list) {
    if (entry["name"] && entry["name"].as<std::string>() == name) return entry[field];
  }
  return {};
}

core::Result<ClientConfig> fromYaml(const YAML::Node& root, const fs::path& path,
                                    const std::string& contextName,
                                    const KubeconfigFileReader& readFile) {
  const fs::path baseDir = path.parent_path();
  std::string current = contextName;
  if (current.empty() && root["current-context"])
    current = root["current-context"].as<std::string>();
  if (current.empty()) {
    return core::Status::invalid(fmt::format("{}: no current-context", path.string()));
  }
  const YAML::Node context = findNamed(root["contexts"], current, "context");
  if (!context) {
    return core::Status::invalid(
        fmt::format("{}: context {} not found", path.string(), core::goQuote(current)));
  }
  const std::string clusterName = context["cluster"] ? context["cluster"].as<std::string>() : "";
  const std::string userName = context["user"] ? context["user"].as<std::string>() : "";
  const YAML::Node cluster = findNamed(root["clusters"], clusterName, "cluster");
  if (!cluster || !cluster["server"]) {
    return core::Status::invalid(fmt::format("{}: cluster {} not found or has no server",
                                             path.string(), core::goQuote(clusterName)));
  }

  ClientConfig config;
  config.server = cluster["server"].as<std::string>();
  while (!config.server.empty() && config.server.back() == '/') config.server.pop_back();
  if (context["namespace"]) config.defaultNamespace = context["namespace"].as<std::string>();
  config.tls.insecureSkipTlsVerify =
      cluster["insecure-skip-tls-verify"] && cluster["insecure-skip-tls-verify"].as<bool>();
  if (cluster["tls-server-name"])
    config.tlsServerName = cluster["tls-server-name"].as<std::string>();
  auto ca = pemField(cluster, "certificate-authority", baseDir, readFile);
  if (!ca) return ca.status();
  config.tls.caPem = *ca;

  const YAML::Node user = findNamed(root["users"], userName, "user");
  if (!user || user.IsNull()) return config;  // a user-less context: no credentials
  for (const char* unsupported : {"exec", "auth-provider", "username"}) {
    if (user[unsupported]) {
      return core::Status::invalid(fmt::format("{}: user {}: {} credentials are not supported",
                                               path.string(), core::goQuote(userName),
                                               unsupported));
    }
  }
  auto cert = pemField(user, "client-certificate", baseDir, readFile);
  if (!cert) return cert.status();
  auto key = pemField(user, "client-key", baseDir, readFile);
  if (!key) return key.status();
  if (cert->empty() != key->empty()) {
    return core::Status::invalid(
        fmt::format("{}: user {}: client certificate and key must be given together", path.string(),
                    core::goQuote(userName)));
  }
  config.tls.clientCertPem = *cert;
  config.tls.clientKeyPem = *key;
  if (user["token"] && !user["token"].as<std::string>().empty()) {
    config.token = TokenSource::fixed(user["token"].as<std::string>());
  } else if (user["tokenFile"] && !user["tokenFile"].as<std::string>().empty()) {
    fs::path tokenFile = user["tokenFile"].as<std::string>();
    if (tokenFile.is_relative()) tokenFile = baseDir / tokenFile;
    config.token = TokenSource::file(tokenFile);
  }
  return config;
}

}  // namespace

std::shared_ptr<TokenSource> TokenSource::fixed(std::string token) {
  std::shared_ptr<TokenSource> source(new TokenSource());
  source->fixed_ = std::string(core::trimSpace(token));
  return source;
}

std::shared_ptr<TokenSource> TokenSource::file(fs::path path, std::chrono::seconds recheck) {
  std::shared_ptr<TokenSource> source(new TokenSource());
  source->file_ = std::make_unique<core::TokenFile>(std::move(path), recheck);
  return source;
}

std::string TokenSource::token() {
  if (!file_) return fixed_;
  return file_->token().valueOr("");
}

core::Result<ClientConfig> parseKubeconfig(std::string_view text, const fs::path& path,
                                           const std::string& context,
                                           const KubeconfigFileReader& readFile) {
  try {
    return fromYaml(YAML::Load(std::string(text)), path, context, readFile);
  } catch (const YAML::Exception& e) {
    return core::Status::invalid(fmt::format("{}: {}", path.string(), e.what()));
  }
}

core::Result<ClientConfig> loadKubeconfig(const fs::path& path, const std::string& context) {
  auto text = core::readFile(path);
  if (!text) return text.status();
  return parseKubeconfig(*text, path, context, core::readFile);
}

core::Result<ClientConfig> inClusterConfig(const fs::path& serviceAccountDir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
    return core::Status::invalid(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset");
  }
  ClientConfig config;
  const std::string hostText = host;
  const bool ipv6 = hostText.find(':') != std::string::npos;
  config.server = fmt::format("https://{}:{}", ipv6 ? "[" + hostText + "]" : hostText, port);
  auto ca = core::readFile(serviceAccountDir / "ca.crt");
  if (!ca) return ca.status();
  config.tls.caPem = *ca;
  if (!fs::exists(serviceAccountDir / "token")) {
    return core::Status::invalid(
        fmt::format("no service-account token in {}", serviceAccountDir.string()));
  }
  config.token = TokenSource::file(serviceAccountDir / "token");
  if (auto ns = core::readFile(serviceAccountDir / "namespace"))
    config.defaultNamespace = std::string(core::trimSpace(*ns));
  return config;
}

core::Result<ClientConfig> loadClientConfig(const std::string& kubeconfigPath) {
  if (!kubeconfigPath.empty()) return loadKubeconfig(kubeconfigPath);
  auto inCluster = inClusterConfig();
  if (inCluster) return inCluster;
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr && *env != '\0') {
    return loadKubeconfig(env);
  }
  return inCluster.status();
}

}  // namespace gpuscale::kube
