#include "gpuscale/prom/options.h"

#include <boost/algorithm/string/predicate.hpp>

namespace gpuscale::prom {

Status PrometheusOptions::validate() const {
  const PrometheusOptions& options = *this;
  std::string_view url = options.url;
  auto scheme = url.find("://");
  if (scheme == std::string_view::npos ||
      (url.substr(0, scheme) != "http" && url.substr(0, scheme) != "https") ||
      url.size() == scheme + 3 || url[scheme + 3] == '/') {
    return Status::badRequest("invalid --prometheus-url \"" + options.url +
                              "\": want http(s)://host[:port][/prefix]");
  }
  if (options.clientCertFile.empty() != options.clientKeyFile.empty()) {
    return Status::badRequest(
        "--prometheus-client-tls-cert-file and --prometheus-client-tls-key-file go together");
  }
  if (options.authInCluster && !options.authConfigFile.empty()) {
    return Status::badRequest(
        "--prometheus-auth-incluster and --prometheus-auth-config are mutually exclusive");
  }
  if (!options.sigv4Region.empty()) {
    bool authorization = options.authInCluster || !options.tokenFile.empty();
    for (const auto& header : options.headers) {
      authorization = authorization || boost::iequals(header.first, "Authorization");
    }
    if (authorization) {
      return Status::badRequest(
          "--prometheus-sigv4-region signs requests itself: it does not go with a bearer token "
          "(--prometheus-token-file, --prometheus-auth-incluster) or an Authorization header");
    }
  }
  if (options.timeout <= core::Duration::zero()) {
    return Status::badRequest("--prometheus-timeout must be positive");
  }
  return Status();
}

}  // namespace gpuscale::prom
