// Which backend of the test matrix the real-backend tests start, chosen by the environment the
// CMake test variants set: VictoriaMetrics single-node when $GPUSCALE_VICTORIAMETRICS_DIR is set,
// Thanos (sidecar + query in front of the Prometheus under test) when $GPUSCALE_THANOS_DIR is set,
// else Prometheus (Debian's, or the release in $GPUSCALE_PROMETHEUS_DIR). A backend named by the
// environment must be there: a missing binary then fails the tests instead of skipping them.
//
// Thread safety: functions without shared state.
#pragma once

#include <string_view>

namespace gpuscale::test {

enum class Backend {
  kPrometheus,       // Debian's /usr/bin/prometheus, or the release in $GPUSCALE_PROMETHEUS_DIR
  kVictoriaMetrics,  // victoria-metrics in $GPUSCALE_VICTORIAMETRICS_DIR
  kThanos,           // thanos in $GPUSCALE_THANOS_DIR, in front of the Prometheus above
};

Backend backendUnderTest();
inline bool victoriaMetricsUnderTest() { return backendUnderTest() == Backend::kVictoriaMetrics; }
inline bool thanosUnderTest() { return backendUnderTest() == Backend::kThanos; }
// "prometheus", "victoriametrics" or "thanos", for skip messages and logs.
std::string_view backendName(Backend backend);

}  // namespace gpuscale::test
