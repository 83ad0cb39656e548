#include "gpuscale/apiserver/provider.h"

namespace gpuscale::apiserver {

core::Status metricNotFound(const GroupResource& resource, std::string_view metric) {
  return core::Status::notFound("the server could not find the metric " + std::string(metric) +
                                " for " + resource.toString());
}

core::Status objectMetricNotFound(const GroupResource& resource, std::string_view metric,
                                  std::string_view name) {
  return core::Status::notFound("the server could not find the metric " + std::string(metric) +
                                " for " + resource.toString() + " " + std::string(name));
}

}  // namespace gpuscale::apiserver
