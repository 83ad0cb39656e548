#include "gpuscale/prom/credentials.h"

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpuscale/core/files.h"

namespace gpuscale::prom {
namespace {

constexpr std::string_view kInClusterToken = "/var/run/secrets/kubernetes.io/serviceaccount/token";
constexpr std::string_view kInClusterCa = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";

Result<std::string> decodeBase64(std::string_view field, const std::string& text) {
  std::string compact;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) compact += c;
  }
  if (compact.size() % 4 != 0) return Status::invalid(std::string(field) + ": bad base64");
  std::string out(compact.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(compact.data()),
                          static_cast<int>(compact.size()));
  if (n < 0) return Status::invalid(std::string(field) + ": bad base64");
  size_t padding = compact.empty() ? 0
                                   : (compact.back() == '=') +
                                         (compact.size() > 1 && compact[compact.size() - 2] == '=');
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

// Reads PEM material from `<key>-data` (base64) or `<key>` (a file relative to `dir`).
Result<std::string> pemField(const YAML::Node& node, const std::string& key,
                             const std::filesystem::path& dir) {
  if (auto data = node[key + "-data"]; data && data.IsScalar()) {
    return decodeBase64(key + "-data", data.as<std::string>());
  }
  if (auto file = node[key]; file && file.IsScalar()) {
    return core::readFile((dir / file.as<std::string>()).string());
  }
  return std::string();
}

YAML::Node namedEntry(const YAML::Node& list, const std::string& name, const char* member) {
  if (!list || !list.IsSequence()) return YAML::Node();
  for (const auto& entry : list) {
    if (entry["name"] && entry["name"].as<std::string>() == name) return entry[member];
  }
  return YAML::Node();
}

Result<Credentials> parseAuthConfig(const std::string& path) {
  YAML::Node root = YAML::LoadFile(path);
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  Credentials out;
  std::string context = root["current-context"] ? root["current-context"].as<std::string>() : "";
  YAML::Node ctx = namedEntry(root["contexts"], context, "context");
  if (!ctx && root["contexts"] && root["contexts"].size() == 1)
    ctx = root["contexts"][0]["context"];
  std::string userName = ctx && ctx["user"] ? ctx["user"].as<std::string>() : "";
  std::string clusterName = ctx && ctx["cluster"] ? ctx["cluster"].as<std::string>() : "";
  if (YAML::Node user = namedEntry(root["users"], userName, "user"); user) {
    if (user["token"]) out.bearerToken = user["token"].as<std::string>();
    if (user["tokenFile"]) out.tokenFile = (dir / user["tokenFile"].as<std::string>()).string();
    if (user["username"] && user["password"]) {
      out.basicAuth = user["username"].as<std::string>() + ":" + user["password"].as<std::string>();
    }
    auto cert = pemField(user, "client-certificate", dir);
    if (!cert) return cert.status();
    out.tls.clientCertPem = std::move(*cert);
    auto key = pemField(user, "client-key", dir);
    if (!key) return key.status();
    out.tls.clientKeyPem = std::move(*key);
  }
  if (YAML::Node cluster = namedEntry(root["clusters"], clusterName, "cluster"); cluster) {
    auto ca = pemField(cluster, "certificate-authority", dir);
    if (!ca) return ca.status();
    out.tls.caPem = std::move(*ca);
    if (cluster["insecure-skip-tls-verify"]) {
      out.tls.insecureSkipTlsVerify = cluster["insecure-skip-tls-verify"].as<bool>();
    }
  }
  return out;
}

}  // namespace

Result<Credentials> loadAuthConfig(const std::string& path) {
  try {
    auto out = parseAuthConfig(path);
    if (!out) return out.status().withContext(path);
    return out;
  } catch (const YAML::Exception& e) {
    return Status::invalid(path + ": " + e.what());
  }
}

Result<Credentials> resolveCredentials(const PrometheusOptions& options) {
  Credentials out;
  if (!options.authConfigFile.empty()) {
    auto loaded = loadAuthConfig(options.authConfigFile);
    if (!loaded) return loaded.status();
    out = std::move(*loaded);
  }
  if (options.authInCluster) {
    out.tokenFile = kInClusterToken;
    auto ca = core::readFile(std::string(kInClusterCa));
    if (!ca) return ca.status();
    out.tls.caPem = std::move(*ca);
  }
  auto readInto = [](const std::string& path, std::string& target) -> Status {
    if (path.empty()) return Status();
    auto content = core::readFile(path);
    if (!content) return content.status();
    target = std::move(*content);
    return Status();
  };
  for (auto [path, target] : {std::pair{&options.caFile, &out.tls.caPem},
                              std::pair{&options.clientCertFile, &out.tls.clientCertPem},
                              std::pair{&options.clientKeyFile, &out.tls.clientKeyPem}}) {
    if (Status s = readInto(*path, *target); !s.ok()) return s;
  }
  if (!options.tokenFile.empty()) {
    out.tokenFile = options.tokenFile;
    out.bearerToken.clear();
  }
  out.tls.insecureSkipTlsVerify = out.tls.insecureSkipTlsVerify || options.insecureSkipTlsVerify;
  if (!options.sigv4Region.empty()) {
    auto environment = [](const char* name) {
      const char* value = std::getenv(name);
      return std::string(value ? value : "");
    };
    out.aws = {environment("AWS_ACCESS_KEY_ID"), environment("AWS_SECRET_ACCESS_KEY"),
               environment("AWS_SESSION_TOKEN")};
    if (out.aws.accessKeyId.empty() || out.aws.secretAccessKey.empty()) {
      return Status::badRequest(
          "--prometheus-sigv4-region needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the "
          "environment");
    }
    out.bearerToken.clear();
    out.basicAuth.clear();
  }
  return out;
}

}  // namespace gpuscale::prom
