#include "support/backend.h"

#include <cstdlib>

#include "gpuscale/core/enum_names.h"

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

std::string_view backendName(Backend backend) {
  static constexpr core::EnumNames<Backend, 3> kNames{
      {{Backend::kVictoriaMetrics, "victoriametrics"},
       {Backend::kThanos, "thanos"},
       {Backend::kPrometheus, "prometheus"}}};
  return core::enumName(kNames, backend, "prometheus");
}

}  // namespace gpuscale::test
