#include "gpuscale/core/tls_client_config.h"

#include <boost/asio/ssl/context.hpp>

#include "gpuscale/core/files.h"

namespace gpuscale::core {

Result<TlsClientConfig> TlsClientConfig::fromFiles(const std::string& caFile,
                                                   const std::string& certFile,
                                                   const std::string& keyFile) {
  TlsClientConfig config;
  for (auto [file, pem] :
       {std::pair{&caFile, &config.caPem}, std::pair{&certFile, &config.clientCertPem},
        std::pair{&keyFile, &config.clientKeyPem}}) {
    if (file->empty()) continue;
    auto content = readFile(*file);
    if (!content) return content.status();
    *pem = std::move(*content);
  }
  return config;
}

Status TlsClientConfig::configure(boost::asio::ssl::context& context) const {
  namespace ssl = boost::asio::ssl;
  boost::system::error_code ec;
  context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                          ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                          ssl::context::no_tlsv1_1,
                      ec);
  if (!ec) context.set_verify_mode(insecureSkipTlsVerify ? ssl::verify_none : ssl::verify_peer, ec);
  if (!ec) {
    if (caPem.empty()) {
      context.set_default_verify_paths(ec);
    } else {
      context.add_certificate_authority(boost::asio::buffer(caPem), ec);
      if (ec) return Status::invalid("certificate authority is not a PEM certificate");
    }
  }
  if (!ec && !clientCertPem.empty()) {
    context.use_certificate_chain(boost::asio::buffer(clientCertPem), ec);
    if (!ec) context.use_private_key(boost::asio::buffer(clientKeyPem), ssl::context::pem, ec);
    if (ec) return Status::invalid("client certificate or key is not valid PEM: " + ec.message());
  }
  if (ec) return Status::invalid("TLS client configuration: " + ec.message());
  return Status();
}

Status TlsClientConfig::check() const {
  boost::asio::ssl::context scratch(boost::asio::ssl::context::tls_client);
  return configure(scratch);
}

}  // namespace gpuscale::core
