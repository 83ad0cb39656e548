#include "gpuscale/core/metric_families.h"

namespace gpuscale::core {

prometheus::Family<prometheus::Counter>& counterFamily(prometheus::Registry& registry,
                                                       const std::string& name,
                                                       const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

prometheus::Family<prometheus::Gauge>& gaugeFamily(prometheus::Registry& registry,
                                                   const std::string& name,
                                                   const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry);
}

prometheus::Family<prometheus::Histogram>& histogramFamily(prometheus::Registry& registry,
                                                           const std::string& name,
                                                           const std::string& help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(registry);
}

prometheus::Counter& counter(prometheus::Registry& registry, const std::string& name,
                             const std::string& help) {
  return counterFamily(registry, name, help).Add({});
}

prometheus::Gauge& gauge(prometheus::Registry& registry, const std::string& name,
                         const std::string& help) {
  return gaugeFamily(registry, name, help).Add({});
}

}  // namespace gpuscale::core
