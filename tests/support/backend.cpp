#include "support/backend.h"

#include <cstdlib>

namespace gpuscale::test {
namespace {

bool isSet(const char* variable) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0';
}

}  // namespace

Backend backendUnderTest() {
  if (isSet("GPUSCALE_VICTORIAMETRICS_DIR")) return Backend::kVictoriaMetrics;
  if (isSet("GPUSCALE_THANOS_DIR")) return Backend::kThanos;
  return Backend::kPrometheus;
}

const char* backendName(Backend backend) {
  switch (backend) {
    case Backend::kVictoriaMetrics:
      return "victoriametrics";
    case Backend::kThanos:
      return "thanos";
    case Backend::kPrometheus:
      break;
  }
  return "prometheus";
}

}  // namespace gpuscale::test
