#include "gpuscale/kube/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <thread>

namespace gpuscale::kube {
namespace config_test {

namespace fs = std::filesystem;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A parameterized test's name is "Name/N": one directory, not a parent left behind.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fs::temp_directory_path() /
           ("gpuscale-kubeconfig-" + std::to_string(::getpid()) + "-" + name);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  fs::path dir_;
};

// "hello" / "key" / "ca" in base64.
constexpr const char* kTwoUsers = R"(apiVersion: v1
kind: Config
current-context: second
clusters:
- name: c1
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority-data: Y2E=
- name: c2
  cluster:
    server: https://10.0.0.1
    insecure-skip-tls-verify: true
users:
- name: cert-user
  user:
    client-certificate-data: aGVsbG8=
    client-key-data: a2V5
- name: token-user
  user:
    token: abc123
- name: file-user
  user:
    tokenFile: token.txt
- name: exec-user
  user:
    exec: {command: aws}
contexts:
- name: first
  context: {cluster: c1, user: cert-user, namespace: team}
- name: second
  context: {cluster: c2, user: token-user}
- name: third
  context: {cluster: c1, user: file-user}
- name: fourth
  context: {cluster: c1, user: exec-user}
- name: broken
  context: {cluster: missing, user: token-user}
)";

TEST_F(ConfigTest, CurrentContextWithToken) {
  auto config = loadKubeconfig(write("kc", kTwoUsers));
  ASSERT_TRUE(config.ok()) << config.status().toString();
  EXPECT_EQ(config->server, "https://10.0.0.1");
  EXPECT_TRUE(config->tls.insecureSkipTlsVerify);
  ASSERT_TRUE(config->token);
  EXPECT_EQ(config->token->token(), "abc123");
  EXPECT_EQ(config->defaultNamespace, "default");
}

TEST_F(ConfigTest, NamedContextWithInlineCertificates) {
  auto config = loadKubeconfig(write("kc", kTwoUsers), "first");
  ASSERT_TRUE(config.ok()) << config.status().toString();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");
  EXPECT_EQ(config->tls.caPem, "ca");
  EXPECT_EQ(config->tls.clientCertPem, "hello");
  EXPECT_EQ(config->tls.clientKeyPem, "key");
  EXPECT_EQ(config->token, nullptr);
  EXPECT_EQ(config->defaultNamespace, "team");
}

TEST_F(ConfigTest, TokenFileIsRelativeAndReReadWhenItChanges) {
  const auto tokenPath = write("token.txt", "first-token\n");
  auto config = loadKubeconfig(write("kc", kTwoUsers), "third");
  ASSERT_TRUE(config.ok()) << config.status().toString();
  auto source = TokenSource::file(tokenPath, std::chrono::seconds(0));
  EXPECT_EQ(source->token(), "first-token");
  EXPECT_EQ(config->token->token(), "first-token");
  write("token.txt", "rotated-token");
  fs::last_write_time(tokenPath, fs::last_write_time(tokenPath) + std::chrono::seconds(5));
  EXPECT_EQ(source->token(), "rotated-token");
}

TEST_F(ConfigTest, FilesAreResolvedAgainstTheKubeconfigDirectory) {
  write("ca.crt", "CA-PEM");
  write("client.crt", "CERT-PEM");
  write("client.key", "KEY-PEM");
  auto config = loadKubeconfig(write("kc", R"(
clusters: [{name: c, cluster: {server: "https://h:1", certificate-authority: ca.crt}}]
users: [{name: u, user: {client-certificate: client.crt, client-key: client.key}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
)"));
  ASSERT_TRUE(config.ok()) << config.status().toString();
  EXPECT_EQ(config->tls.caPem, "CA-PEM");
  EXPECT_EQ(config->tls.clientCertPem, "CERT-PEM");
  EXPECT_EQ(config->tls.clientKeyPem, "KEY-PEM");
}

TEST(ParseKubeconfigTest, ReadsNamedFilesThroughTheGivenReader) {
  std::vector<std::filesystem::path> asked;
  const auto reader = [&asked](const std::filesystem::path& file) -> core::Result<std::string> {
    asked.push_back(file);
    return "PEM of " + file.filename().string();
  };
  auto config = parseKubeconfig(R"(
clusters: [{name: c, cluster: {server: "https://h:1", certificate-authority: ca.crt}}]
users: [{name: u, user: {client-certificate: /pki/client.crt, client-key: client.key}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
)",
                                "/etc/kc/config", "", reader);
  ASSERT_TRUE(config.ok()) << config.status().toString();
  EXPECT_EQ(config->tls.caPem, "PEM of ca.crt");
  EXPECT_EQ(asked, (std::vector<std::filesystem::path>{"/etc/kc/ca.crt", "/pki/client.crt",
                                                       "/etc/kc/client.key"}));
}

struct BadCase {
  const char* what;
  std::string text;
  std::string context;
};

class BadKubeconfigTest : public ConfigTest, public ::testing::WithParamInterface<BadCase> {};

TEST_P(BadKubeconfigTest, IsInvalid) {
  auto config = loadKubeconfig(write("kc", GetParam().text), GetParam().context);
  ASSERT_FALSE(config.ok()) << GetParam().what;
  EXPECT_EQ(config.status().reason(), "Invalid") << GetParam().what;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadKubeconfigTest,
    ::testing::Values(BadCase{"exec credentials are refused, not ignored", kTwoUsers, "fourth"},
                      BadCase{"context names a missing cluster", kTwoUsers, "broken"},
                      BadCase{"unknown context", kTwoUsers, "nope"},
                      BadCase{"no current context", "clusters: []", ""},
                      BadCase{"not YAML", "{{{", ""},
                      BadCase{"bad base64",
                              "clusters: [{name: c, cluster: {server: 'https://h', "
                              "certificate-authority-data: '@@@'}}]\ncontexts: [{name: x, "
                              "context: {cluster: c}}]\ncurrent-context: x\n",
                              ""},
                      BadCase{"certificate without key",
                              "clusters: [{name: c, cluster: {server: 'https://h'}}]\nusers: "
                              "[{name: u, user: {client-certificate-data: aGVsbG8=}}]\ncontexts: "
                              "[{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n",
                              ""}));

TEST_F(ConfigTest, InClusterUsesServiceEnvironmentAndServiceAccount) {
  write("ca.crt", "CLUSTER-CA");
  write("token", "sa-token\n");
  write("namespace", "monitoring");
  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto config = inClusterConfig(dir_);
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(config.ok()) << config.status().toString();
  EXPECT_EQ(config->server, "https://[fd00::1]:443");
  EXPECT_EQ(config->tls.caPem, "CLUSTER-CA");
  EXPECT_EQ(config->token->token(), "sa-token");
  EXPECT_EQ(config->defaultNamespace, "monitoring");
}

TEST_F(ConfigTest, InClusterWithoutEnvironmentIsAnError) {
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_FALSE(inClusterConfig(dir_).ok());
}

}  // namespace config_test
}  // namespace gpuscale::kube
