#include "gpuscale/apiserver/certificates.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "support/temp_dir.h"

namespace gpuscale::apiserver {
namespace certificates_test {

// The SAN entries of the first certificate in `pem`, as "DNS:x" / "IP:1.2.3.4".
std::vector<std::string> subjectAltNames(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  std::vector<std::string> names;
  if (cert == nullptr) return names;
  auto* sans =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; sans != nullptr && i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans, i);
    if (name->type == GEN_DNS) {
      names.push_back("DNS:" + std::string(reinterpret_cast<const char*>(
                                   ASN1_STRING_get0_data(name->d.dNSName))));
    } else if (name->type == GEN_IPADD && ASN1_STRING_length(name->d.iPAddress) == 4) {
      const unsigned char* ip = ASN1_STRING_get0_data(name->d.iPAddress);
      names.push_back("IP:" + std::to_string(ip[0]) + "." + std::to_string(ip[1]) + "." +
                      std::to_string(ip[2]) + "." + std::to_string(ip[3]));
    }
  }
  GENERAL_NAMES_free(sans);
  X509_free(cert);
  return names;
}

// Verifies the leaf of `chainPem` against `caPem`.
bool verifies(const std::string& chainPem, const std::string& caPem) {
  BIO* leafBio = BIO_new_mem_buf(chainPem.data(), static_cast<int>(chainPem.size()));
  X509* leaf = PEM_read_bio_X509(leafBio, nullptr, nullptr, nullptr);
  BIO* caBio = BIO_new_mem_buf(caPem.data(), static_cast<int>(caPem.size()));
  X509* ca = PEM_read_bio_X509(caBio, nullptr, nullptr, nullptr);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  const bool ok = X509_verify_cert(ctx) == 1;
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(leaf);
  X509_free(ca);
  BIO_free(leafBio);
  BIO_free(caBio);
  return ok;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Certificates, GeneratedLeafIsSignedByItsCaWithSans) {
  const auto generated =
      generateSelfSignedCertificate("localhost", {"localhost", "node-a"}, {"127.0.0.1"});
  ASSERT_TRUE(generated.ok()) << generated.status().toString();
  EXPECT_TRUE(verifies(generated->certificateChainPem, generated->caPem));
  EXPECT_EQ(subjectAltNames(generated->certificateChainPem),
            (std::vector<std::string>{"DNS:localhost", "DNS:node-a", "IP:127.0.0.1"}));
  EXPECT_NE(generated->certificateChainPem.find(generated->caPem), std::string::npos);
  EXPECT_NE(generated->privateKeyPem.find("PRIVATE KEY"), std::string::npos);
}

TEST(Certificates, CertDirIsFilledOnceAndReused) {
  testing::TempDir dir;
  ServerOptions options;
  options.certDir = dir.file("certs/nested");
  const auto first = loadServingTls(options);
  ASSERT_TRUE(first.ok()) << first.status().toString();
  const auto crt = std::filesystem::path(options.certDir) / "apiserver.crt";
  const auto key = std::filesystem::path(options.certDir) / "apiserver.key";
  EXPECT_EQ(slurp(crt), first->certificateChainPem);
  EXPECT_EQ(slurp(key), first->privateKeyPem);
  struct stat info {};
  ASSERT_EQ(::stat(key.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  const auto second = loadServingTls(options);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->certificateChainPem, first->certificateChainPem);
}

TEST(Certificates, ExplicitFilesWinAndMustComeInPairs) {
  testing::TempDir dir;
  std::ofstream(dir.file("c.pem")) << "CERT";
  std::ofstream(dir.file("k.pem")) << "KEY";
  std::ofstream(dir.file("ca.pem")) << "CA";
  ServerOptions options;
  options.certDir = dir.file("unused");
  options.tlsCertFile = dir.file("c.pem");
  options.tlsPrivateKeyFile = dir.file("k.pem");
  options.clientCaFiles = {dir.file("ca.pem")};
  const auto loaded = loadServingTls(options);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->certificateChainPem, "CERT");
  EXPECT_EQ(loaded->privateKeyPem, "KEY");
  EXPECT_EQ(loaded->clientCaPems, (std::vector<std::string>{"CA"}));
  EXPECT_FALSE(std::filesystem::exists(options.certDir));

  options.tlsPrivateKeyFile.clear();
  EXPECT_FALSE(loadServingTls(options).ok());
  options.tlsPrivateKeyFile = dir.file("missing.pem");
  EXPECT_FALSE(loadServingTls(options).ok());
}

}  // namespace certificates_test
}  // namespace gpuscale::apiserver
