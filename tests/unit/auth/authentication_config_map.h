// The kube-system/extension-apiserver-authentication ConfigMap as kube-apiserver publishes it, for
// the auth unit tests.
#pragma once

#include <string>

#include "gpuscale/auth/authentication_config.h"

namespace gpuscale::auth {

inline kube::Object authenticationConfigMap(
    const std::string& clientCa, const std::string& frontProxyCa,
    const std::string& allowedNames = R"(["front-proxy-client"])") {
  return {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata",
       {{"name", kAuthenticationConfigMapName}, {"namespace", kAuthenticationConfigMapNamespace}}},
      {"data",
       {{"client-ca-file", clientCa},
        {"requestheader-client-ca-file", frontProxyCa},
        {"requestheader-username-headers", R"(["X-Remote-User"])"},
        {"requestheader-group-headers", R"(["X-Remote-Group"])"},
        {"requestheader-extra-headers-prefix", R"(["X-Remote-Extra-"])"},
        {"requestheader-allowed-names", allowedNames}}}};
}

}  // namespace gpuscale::auth
