// ApiHandler's answers under /apis/metrics.k8s.io/v1beta1 (kept apart from the custom and external
// metrics routes in api_handler.cpp).
#include <chrono>
#include <utility>

#include "gpuscale/apiserver/api_handler.h"
#include "gpuscale/apiserver/resource_metrics.h"

namespace gpuscale::apiserver {
namespace {

template <typename Item>
void keepFieldMatches(std::vector<Item>& items, const core::LabelSelector& fieldSelector) {
  std::erase_if(items, [&](const Item& item) {
    if constexpr (requires { item.namespaceName; }) {
      return !matchesFieldSelector(fieldSelector, item.namespaceName, item.name);
    } else {
      return !matchesFieldSelector(fieldSelector, "", item.name);
    }
  });
}

template <typename Item, typename Encode>
HttpResponse objectResponse(const core::Result<Item>& item, bool pretty, Encode encode) {
  if (!item) return statusResponse(item.status(), pretty);
  return jsonResponse(200, encode(*item, std::chrono::system_clock::now(), true), pretty);
}

template <typename Item, typename Encode>
HttpResponse listResponse(core::Result<std::vector<Item>> items,
                          const core::LabelSelector& fieldSelector, bool pretty, Encode encode) {
  if (!items) return statusResponse(items.status(), pretty);
  keepFieldMatches(*items, fieldSelector);
  return jsonResponse(200, encode(*items, std::chrono::system_clock::now()), pretty);
}

}  // namespace

HttpResponse ApiHandler::resourceMetricsResponse(const HttpRequest& request,
                                                 const QueryParams& query, bool pretty) const {
  auto route = routeResourceMetricsApi(request.method, request.path, query);
  if (!route) return statusResponse(route.status(), pretty);
  ResourceMetricsProvider& provider = *config_.resourceMetrics;
  switch (route->kind) {
    case ResourceMetricsRoute::Kind::kResourceList:
      return jsonResponse(200, resourceMetricsResourceListJson(), pretty);
    case ResourceMetricsRoute::Kind::kPods:
      if (!route->name.empty()) {
        return objectResponse(provider.getPodMetrics(route->namespaceName, route->name), pretty,
                              podMetricsJson);
      }
      return listResponse(provider.listPodMetrics(route->namespaceName, route->labelSelector),
                          route->fieldSelector, pretty, podMetricsListJson);
    case ResourceMetricsRoute::Kind::kNodes:
      if (!route->name.empty()) {
        return objectResponse(provider.getNodeMetrics(route->name), pretty, nodeMetricsJson);
      }
      return listResponse(provider.listNodeMetrics(route->labelSelector), route->fieldSelector,
                          pretty, nodeMetricsListJson);
  }
  return statusResponse(core::Status::internal("unroutable request"), pretty);
}

}  // namespace gpuscale::apiserver
