#include "gpuscale/adapter/credential_file_policy.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace gpuscale::adapter {
namespace credential_file_policy_test {

namespace fs = std::filesystem;

// allowed/token, allowed/link -> ../outside/secret, allowed-evil/token, outside/secret,
// outside/flag-token (named by a --prometheus-* flag).
class CredentialFilePolicyTest : public ::testing::Test {
 protected:
  CredentialFilePolicyTest() {
    for (const char* dir : {"allowed", "allowed-evil", "outside"}) fs::create_directory(at(dir));
    for (const char* file :
         {"allowed/token", "allowed-evil/token", "outside/secret", "outside/flag-token"}) {
      std::ofstream(at(file)) << "t";
    }
    fs::create_symlink("../outside/secret", at("allowed/link"));
  }

  std::string at(const std::string& name) const { return dir_.file(name); }

  std::shared_ptr<const CredentialFilePolicy> policy(std::vector<std::string> dirs) {
    auto made = CredentialFilePolicy::create(dirs, {at("outside/flag-token"), ""}, registry_);
    EXPECT_TRUE(made.ok()) << made.status().message();
    return made.ok() ? *made : nullptr;
  }

  std::string exposition() { return prometheus::TextSerializer().Serialize(registry_->Collect()); }

  testing::TempDir dir_;
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
};

TEST_F(CredentialFilePolicyTest, OnlyFilesInsideAllowedDirectoriesOrNamedByFlags) {
  auto allowed = policy({at("allowed")});
  struct Row {
    std::string what;
    std::string path;
    bool ok;
  };
  for (const Row& row : std::vector<Row>{
           {"a file in an allowed directory", at("allowed/token"), true},
           {"the same through a relative-looking but resolvable path",
            at("allowed/../allowed/token"), true},
           {"the file a --prometheus-* flag names", at("outside/flag-token"), true},
           {"a file outside", at("outside/secret"), false},
           {"a .. escape", at("allowed/../outside/secret"), false},
           {"a symlink escape", at("allowed/link"), false},
           {"a sibling sharing the prefix", at("allowed-evil/token"), false},
           {"a file that does not exist", at("allowed/missing"), false},
           {"the ServiceAccount token", "/var/run/secrets/kubernetes.io/serviceaccount/token",
            false},
       }) {
    core::Status status = allowed->check(row.path);
    EXPECT_EQ(status.ok(), row.ok) << row.what << ": " << status.message();
    if (!row.ok) {
      EXPECT_EQ(status.httpCode(), 403) << row.what;
    }
  }
  EXPECT_NE(exposition().find("gpuscale_config_rejected_credential_files_total 6"),
            std::string::npos)
      << exposition();
}

TEST_F(CredentialFilePolicyTest, NoDirectoryAllowedByDefault) {
  auto none = policy({});
  core::Status status = none->check(at("allowed/token"));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("allowed: none; add one with --allowed-credential-dir"),
            std::string::npos)
      << status.message();
  EXPECT_TRUE(none->check(at("outside/flag-token")).ok());
}

TEST_F(CredentialFilePolicyTest, SymlinkedDirectoryIsResolvedOnce) {
  fs::create_directory_symlink(at("allowed"), at("mounted"));
  auto viaLink = policy({at("mounted")});
  EXPECT_TRUE(viaLink->check(at("allowed/token")).ok());
  EXPECT_TRUE(viaLink->check(at("mounted/token")).ok());
  EXPECT_FALSE(viaLink->check(at("mounted/link")).ok());
}

TEST_F(CredentialFilePolicyTest, AMissingOrNonDirectoryIsAStartError) {
  EXPECT_FALSE(CredentialFilePolicy::create({at("nope")}, {}, nullptr).ok());
  EXPECT_FALSE(CredentialFilePolicy::create({at("allowed/token")}, {}, nullptr).ok());
}

TEST_F(CredentialFilePolicyTest, BackendErrorsNameTheField) {
  auto allowed = policy({at("allowed")});
  rules::BackendSpec spec;
  spec.path = "backends[1]";
  spec.pos = {4, 3};
  spec.caFile = at("allowed/token");
  spec.clientCertFile = at("allowed/token");
  spec.clientKeyFile = at("allowed/link");
  core::Status status = allowed->checkBackend(spec, "rules.yaml");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(
      status.message().rfind("rules.yaml:4:3: backends[1].clientKeyFile: credential file ", 0), 0u)
      << status.message();
  spec.clientKeyFile = at("allowed/token");
  EXPECT_TRUE(allowed->checkBackend(spec, "rules.yaml").ok());
}

}  // namespace credential_file_policy_test
}  // namespace gpuscale::adapter
