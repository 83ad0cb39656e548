// ApiHandler: everything the metrics API server answers, as a function from HttpRequest to
// HttpResponse.
//
// Per request, in Kubernetes' filter order: RequestInfo -> authenticate (error: its Status,
// normally 401) -> authorize (deny: 403 forbiddenStatus(); error: 500) -> dispatch:
//   /healthz /livez /readyz[/<check>]  health (HealthChecks)
//   /metrics                           Prometheus text exposition of the shared registry
//   /version, /, /index.html           version.Info and the root path list (pretty, as Kubernetes
//                                      writes them)
//   /apis, /apis/<group>               APIGroupList / APIGroup (custom lists only v1beta1, as
//                                      upstream)
//   /apis/<group>/<version>[/...]      routeMetricsApi() -> resource list or provider call -> JSON
//                                      (metrics.k8s.io: routeResourceMetricsApi())
//   /openapi/v2, /openapi/v3[/...]     OpenAPI documents of the served groups (openapi.h)
//   extraRoutes (e.g. /debug/explain)  the configured handler (GET only)
//   anything else                      plain-text "404 page not found"
// JSON responses honour `?pretty=` and the curl/Wget/Mozilla user-agent rule, and answer 406 when
// the Accept header admits no plain JSON (the aggregated-discovery Accept of kube-aggregator falls
// back on 406). Provider errors are written as Status bodies with their HTTP codes (a 429 also
// with `Retry-After: 1`, as kube-apiserver); provider exceptions become 500s. A 429 from the
// authenticator or authorizer (too many reviews) is passed on as such. The resource lists come from
// the providers' listMetrics() and never wait for discovery.
//
// Thread safety: handle() is called concurrently from server worker threads; it is thread-safe as
// long as the providers, authenticator and authorizer are.
#pragma once

#include <prometheus/registry.h>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "gpuscale/apiserver/auth.h"
#include "gpuscale/apiserver/health.h"
#include "gpuscale/apiserver/http_message.h"
#include "gpuscale/apiserver/openapi.h"
#include "gpuscale/apiserver/pending_request.h"
#include "gpuscale/apiserver/provider.h"
#include "gpuscale/apiserver/request_metrics.h"
#include "gpuscale/apiserver/resource_metrics.h"
#include "gpuscale/apiserver/url.h"
#include "gpuscale/apiserver/wire_format.h"

namespace gpuscale::apiserver {

// A handler for one extra path: the request, its parsed query parameters and the authenticated
// caller (a route that serves data of several scopes authorizes each part for this user).
using ExtraRoute =
    std::function<HttpResponse(const HttpRequest&, const QueryParams&, const UserInfo&)>;

struct ApiHandlerConfig {
  // Null providers: that group is not served (its paths are plain 404s and /apis leaves it out).
  std::shared_ptr<CustomMetricsProvider> customMetrics;
  std::shared_ptr<ExternalMetricsProvider> externalMetrics;
  // metrics.k8s.io/v1beta1 (resource_metrics.h); null: not served.
  std::shared_ptr<ResourceMetricsProvider> resourceMetrics;
  // Null: AllowAllAuthenticator / AllowAllAuthorizer (standalone mode).
  std::shared_ptr<Authenticator> authenticator;
  std::shared_ptr<Authorizer> authorizer;
  // Null: ping (+ shutdown on readyz).
  std::shared_ptr<HealthChecks> health;
  // When set, readyz gets the check "metrics-discovery", failing until this returns true (the
  // adapter passes "the first discovery finished"). Discovery documents are served either way.
  std::function<bool()> discoveryFinished;
  // Null: a new registry. Share one to expose other modules' metrics on /metrics.
  std::shared_ptr<prometheus::Registry> registry;
  VersionInfo version;
  // serverAddressByClientCIDRs in /apis, e.g. "127.0.0.1:6443".
  std::string serverAddress;
  // Extra GET paths (exact match) served after authentication and authorization, such as the
  // adapter's /debug/explain. They are non-resource requests, so the authorizer sees {path, verb
  // "get"}. Other methods get 405. Listed in the root path list.
  std::map<std::string, ExtraRoute> extraRoutes;
};

class ApiHandler {
 public:
  explicit ApiHandler(ApiHandlerConfig config);

  // The secure port: authentication, authorization and every route above.
  HttpResponse handle(const HttpRequest& request) const;
  // The same, for HttpsServer::setAsyncHandler(): a request whose authentication or authorization
  // waits for a remote review is parked (no thread held) and continues on a handler thread when
  // the answer comes (Authenticator::authenticateAsync, Authorizer::authorizeAsync); the rest runs
  // under the request's deadline (core::RequestDeadline), so Kubernetes calls made while serving
  // give up instead of waiting past it.
  void handleAsync(std::shared_ptr<const HttpRequest> request,
                   std::shared_ptr<PendingRequest> pending) const;
  // The same for a GET of the metrics APIs (/apis/...), when it can be answered without waiting:
  // authentication and authorization answer at once (Authenticator::authenticateWithoutWaiting)
  // and the provider finds everything in its caches (it runs under a core::NoWaitScope: a query or
  // call that would wait refuses, see core/no_wait.h). nullopt otherwise, having recorded nothing:
  // then handle() it where waiting is allowed (a refused query started at once and is joined
  // there). The server's I/O threads answer cache hits this way, without the hop to a handler
  // thread (https_server.h).
  std::optional<HttpResponse> handleWithoutWaiting(const HttpRequest& request) const;
  // The optional plain metrics port: `/metrics` only, no authentication; other paths 404.
  HttpResponse handleMetricsOnly(const HttpRequest& request) const;

  HealthChecks& health() const { return *config_.health; }
  RequestMetrics& metrics() const { return *metrics_; }

 private:
  struct Dispatch;
  struct Flow;
  HttpResponse unauthenticated(const core::Status& status, Dispatch& state) const;
  // 500 (or 429) for a failed review, 403 for a denial, else dispatch().
  HttpResponse authorizedResponse(const HttpRequest& request,
                                  const core::Result<AuthorizationDecision>& decision,
                                  const RequestInfo& info, UserInfo user, Dispatch& state) const;
  void authenticated(const std::shared_ptr<Flow>& flow, core::Result<UserInfo> user) const;
  template <typename Step>
  void guarded(const std::shared_ptr<Flow>& flow, Step&& step) const;
  void finish(Flow& flow, HttpResponse response) const;
  // handle() and, with `withoutWaiting`, handleWithoutWaiting().
  std::optional<HttpResponse> serve(const HttpRequest& request, bool withoutWaiting) const;
  HttpResponse dispatch(const HttpRequest& request, Dispatch& state) const;
  HttpResponse groupVersionResponse(const HttpRequest& request, Dispatch& state,
                                    std::string_view group, std::string_view version) const;
  HttpResponse customMetricResponse(const MetricRequest& request, bool pretty) const;
  HttpResponse externalMetricResponse(const MetricRequest& request, const Dispatch& state) const;
  // metrics.k8s.io/v1beta1 (resource_metrics_handler.cpp).
  HttpResponse resourceMetricsResponse(const HttpRequest& request, const QueryParams& query,
                                       bool pretty) const;
  std::vector<ApiGroupVersions> servedGroups() const;
  std::vector<GroupVersion> servedGroupVersions() const;

  ApiHandlerConfig config_;
  std::unique_ptr<RequestMetrics> metrics_;
  std::unique_ptr<const OpenApiDocuments> openApi_;
};

// True when Kubernetes would pretty-print: `pretty` parses as true, or it is absent/empty and the
// user agent starts with "curl", "Wget" or "Mozilla/5.0".
bool wantsPrettyJson(const QueryParams& query, std::string_view userAgent);

// True when the Accept header admits application/json without an `as=` conversion (or is absent, or
// */*).
bool acceptsPlainJson(std::string_view accept);

// A JSON response (Cache-Control: no-cache, private) and a Status response with the Status's HTTP
// code.
HttpResponse jsonResponse(int status, const Json& document, bool pretty);
HttpResponse jsonTextResponse(int status, std::string body);
HttpResponse statusResponse(const core::Status& status, bool pretty);

}  // namespace gpuscale::apiserver
