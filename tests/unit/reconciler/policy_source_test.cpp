#include "gpuscale/reconciler/policy_source.h"

#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

namespace gpuscale::reconciler {
namespace policy_source_test {

class PolicySourceTest : public ::testing::Test {
 protected:
  void write(const std::string& text) {
    std::ofstream(path_) << text;
    // A different size makes the change visible even within one mtime tick.
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_ = ::testing::TempDir() + "policy-" + std::to_string(getpid()) + ".yaml";
};

TEST_F(PolicySourceTest, BadReloadKeepsThePreviousPolicies) {
  write("policies:\n- name: a\n  hpaNamespaces: [x]\n");
  auto source = PolicySource::open(path_);
  ASSERT_TRUE(source.ok()) << source.status().toString();
  EXPECT_EQ((*source)->current()->policies.at(0).name, "a");

  write("policies:\n- name: a\n  hpaNamespaces: [x]\n  levers: [teleport]\n");
  EXPECT_FALSE((*source)->reloadIfChanged());
  EXPECT_FALSE((*source)->lastReloadSuccessful());
  EXPECT_EQ((*source)->current()->policies.at(0).name, "a");

  write("policies:\n- name: bigger-name\n  hpaNamespaces: [x]\n");
  EXPECT_TRUE((*source)->reloadIfChanged());
  EXPECT_TRUE((*source)->lastReloadSuccessful());
  EXPECT_EQ((*source)->current()->policies.at(0).name, "bigger-name");
  EXPECT_FALSE((*source)->reloadIfChanged());  // unchanged file
}

TEST_F(PolicySourceTest, UnreadableFileIsOneFailedReloadUntilItIsBack) {
  write("policies:\n- name: a\n  hpaNamespaces: [x]\n");
  auto source = PolicySource::open(path_);
  ASSERT_TRUE(source.ok()) << source.status().toString();
  std::filesystem::remove(path_);
  for (int pass = 0; pass < 3; ++pass) EXPECT_FALSE((*source)->reloadIfChanged());
  EXPECT_EQ((*source)->reloads(), 1u);
  EXPECT_FALSE((*source)->lastReloadSuccessful());
  EXPECT_EQ((*source)->current()->policies.at(0).name, "a");

  write("policies:\n- name: a\n  hpaNamespaces: [x]\n");  // back, even with the same size
  EXPECT_TRUE((*source)->reloadIfChanged());
  EXPECT_EQ((*source)->reloads(), 2u);
  EXPECT_TRUE((*source)->lastReloadSuccessful());
}

TEST_F(PolicySourceTest, BadFileAtStartIsAnError) {
  write("policies: [1, 2\n");
  EXPECT_FALSE(PolicySource::open(path_).ok());
}

TEST_F(PolicySourceTest, NoFileMeansNoPolicyAtAll) {
  auto source = PolicySource::open("");
  ASSERT_TRUE(source.ok());
  EXPECT_TRUE((*source)->current()->policies.empty())
      << "nothing applies cluster-wide unless the operator configured it";
  EXPECT_EQ((*source)->current()->forHpa("default", "triton", {},
                                         {{"gpuscale.io/partition-policy", "default"}}),
            nullptr);
}

TEST_F(PolicySourceTest, APolicyWithoutScopeIsRejectedAtStart) {
  write("policies:\n- name: a\n");
  auto source = PolicySource::open(path_);
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.status().message().find("has no HPA scope"), std::string::npos)
      << source.status().message();
}

}  // namespace policy_source_test
}  // namespace gpuscale::reconciler
