#include "gpuscale/apiserver/api_handler.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include "gpuscale/apiserver/metric_request.h"
#include "gpuscale/apiserver/request_info.h"
#include "gpuscale/apiserver/url.h"
#include "gpuscale/core/api_call_tally.h"
#include "gpuscale/core/no_wait.h"
#include "gpuscale/core/request_deadline.h"

namespace gpuscale::apiserver {
namespace {

using core::Status;

constexpr std::string_view kJsonType = "application/json";

bool startsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool isParseBoolTrue(std::string_view value) {
  return value == "1" || value == "t" || value == "T" || value == "true" || value == "TRUE" ||
         value == "True";
}

HttpResponse notFoundText() { return plainTextResponse(404, "404 page not found"); }

HttpResponse metricsExposition(const RequestMetrics& metrics) {
  HttpResponse response;
  response.contentType = "text/plain; version=0.0.4; charset=utf-8";
  response.body = metrics.exposition();
  return response;
}

// "healthz" for "/healthz/ping".
std::string firstSegment(std::string_view path) {
  path.remove_prefix(1);
  return std::string(path.substr(0, path.find('/')));
}

HttpResponse notAcceptable(bool pretty) {
  return statusResponse(
      Status(406, "NotAcceptable",
             "only the following media types are accepted: " + std::string(kJsonType)),
      pretty);
}

// Go's MarshalIndent output as Kubernetes' WriteRawJSON sends it (no trailing newline).
HttpResponse rawPrettyJson(const Json& document) {
  HttpResponse response;
  response.contentType = std::string(kJsonType);
  response.body = encodeJson(document, true);
  return response;
}

}  // namespace

struct ApiHandler::Dispatch {
  QueryParams query;
  UserInfo user;  // the authenticated caller
  bool pretty = false;
  std::string route = "other";
};

bool wantsPrettyJson(const QueryParams& query, std::string_view userAgent) {
  if (auto pretty = query.get("pretty"); pretty && !pretty->empty())
    return isParseBoolTrue(*pretty);
  return startsWith(userAgent, "curl") || startsWith(userAgent, "Wget") ||
         startsWith(userAgent, "Mozilla/5.0");
}

bool acceptsPlainJson(std::string_view accept) {
  if (trim(accept).empty()) return true;
  while (!accept.empty()) {
    const size_t comma = accept.find(',');
    std::string_view range = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
    const size_t semicolon = range.find(';');
    const std::string_view type = trim(range.substr(0, semicolon));
    bool conversion = false;
    if (semicolon != std::string_view::npos) {
      std::string_view params = range.substr(semicolon + 1);
      while (!params.empty()) {
        const size_t next = params.find(';');
        const std::string_view param = trim(params.substr(0, next));
        if (startsWith(param, "as=") || startsWith(param, "g=")) conversion = true;
        params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
      }
    }
    if (type == "*/*" || type == "application/*") return true;
    if (type == kJsonType && !conversion) return true;
  }
  return false;
}

HttpResponse jsonTextResponse(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.contentType = std::string(kJsonType);
  response.headers.emplace_back("Cache-Control", "no-cache, private");
  response.body = std::move(body);
  return response;
}

HttpResponse jsonResponse(int status, const Json& document, bool pretty) {
  return jsonTextResponse(status, encodeJson(document, pretty));
}

HttpResponse statusResponse(const core::Status& status, bool pretty) {
  if (status.httpCode() != 429) {
    return jsonResponse(status.httpCode(), status.toKubernetesJson(), pretty);
  }
  // As kube-apiserver: the client is told when to come back, in the body and in Retry-After.
  auto document = status.toKubernetesJson();
  document["details"]["retryAfterSeconds"] = 1;
  HttpResponse response = jsonResponse(429, document, pretty);
  response.headers.emplace_back("Retry-After", "1");
  return response;
}

ApiHandler::ApiHandler(ApiHandlerConfig config) : config_(std::move(config)) {
  if (!config_.authenticator) config_.authenticator = std::make_shared<AllowAllAuthenticator>();
  if (!config_.authorizer) config_.authorizer = std::make_shared<AllowAllAuthorizer>();
  if (!config_.health) config_.health = std::make_shared<HealthChecks>();
  if (config_.discoveryFinished) {
    config_.health->add(
        "metrics-discovery",
        [finished = config_.discoveryFinished] {
          return finished() ? Status()
                            : Status::unavailable("the first metrics discovery has not finished");
        },
        HealthChecks::kReadyz);
  }
  if (!config_.registry) config_.registry = std::make_shared<prometheus::Registry>();
  metrics_ = std::make_unique<RequestMetrics>(config_.registry);
  openApi_ = std::make_unique<const OpenApiDocuments>(servedGroupVersions());
}

std::vector<GroupVersion> ApiHandler::servedGroupVersions() const {
  std::vector<GroupVersion> out;
  if (config_.customMetrics) {
    out.push_back({std::string(kCustomMetricsGroup), "v1beta1"});
    out.push_back({std::string(kCustomMetricsGroup), "v1beta2"});
  }
  if (config_.externalMetrics) out.push_back({std::string(kExternalMetricsGroup), "v1beta1"});
  if (config_.resourceMetrics) out.push_back({std::string(kResourceMetricsGroup), "v1beta1"});
  return out;
}

std::vector<ApiGroupVersions> ApiHandler::servedGroups() const {
  std::vector<ApiGroupVersions> groups;
  // Upstream lists only the highest-priority custom version, v1beta1, although v1beta2 is served
  // too.
  if (config_.customMetrics)
    groups.push_back({std::string(kCustomMetricsGroup), {"v1beta1"}, "v1beta1"});
  if (config_.externalMetrics) {
    groups.push_back({std::string(kExternalMetricsGroup), {"v1beta1"}, "v1beta1"});
  }
  if (config_.resourceMetrics) {
    groups.push_back({std::string(kResourceMetricsGroup), {"v1beta1"}, "v1beta1"});
  }
  return groups;
}

HttpResponse ApiHandler::unauthenticated(const core::Status& status, Dispatch& state) const {
  state.route = "unauthenticated";
  return statusResponse(status, state.pretty);
}

HttpResponse ApiHandler::authorizedResponse(const HttpRequest& request,
                                            const core::Result<AuthorizationDecision>& decision,
                                            const RequestInfo& info, UserInfo user,
                                            Dispatch& state) const {
  if (!decision) {
    state.route = "authorization_error";
    // A refusal to review (429) is passed on; any other failure fails closed with a 500.
    if (decision.status().httpCode() == 429) return statusResponse(decision.status(), state.pretty);
    return statusResponse(Status::internal(decision.status().message()), state.pretty);
  }
  if (!decision->allowed) {
    state.route = "forbidden";
    return statusResponse(forbiddenStatus(user, info, decision->reason), state.pretty);
  }
  state.user = std::move(user);
  return dispatch(request, state);
}

HttpResponse ApiHandler::handle(const HttpRequest& request) const { return *serve(request, false); }

std::optional<HttpResponse> ApiHandler::handleWithoutWaiting(const HttpRequest& request) const {
  if (request.method != "GET" || !startsWith(request.path, "/apis/")) return std::nullopt;
  return serve(request, true);
}

std::optional<HttpResponse> ApiHandler::serve(const HttpRequest& request,
                                              bool withoutWaiting) const {
  const auto started = std::chrono::steady_clock::now();
  const auto inFlight = metrics_->trackInFlight();
  const uint64_t kubeCallsBefore = core::ApiCallTally::count();
  Dispatch state;
  state.query = QueryParams::parse(request.rawQuery);
  state.pretty = wantsPrettyJson(state.query, request.header("User-Agent").value_or(""));

  HttpResponse response;
  try {
    const RequestInfo info = parseRequestInfo(request.method, request.path, state.query);
    std::optional<core::Result<UserInfo>> user;
    if (withoutWaiting) {
      user = config_.authenticator->authenticateWithoutWaiting(request);
      if (!user) return std::nullopt;  // it would have to wait for a review
    } else {
      user = config_.authenticator->authenticate(request);
    }
    if (!*user) {
      response = unauthenticated(user->status(), state);
    } else if (!withoutWaiting) {
      const auto decision = config_.authorizer->authorize(**user, info);
      response = authorizedResponse(request, decision, info, std::move(**user), state);
    } else {
      const auto decision = config_.authorizer->authorizeWithoutWaiting(**user, info);
      if (!decision) return std::nullopt;
      const core::NoWaitScope scope;
      response = authorizedResponse(request, *decision, info, std::move(**user), state);
      if (scope.refused()) return std::nullopt;
    }
  } catch (const std::exception& error) {
    if (withoutWaiting) return std::nullopt;  // again where it may wait, and answered there
    response = statusResponse(Status::internal(error.what()), state.pretty);
  }
  metrics_->observe(state.route, response.status, std::chrono::steady_clock::now() - started);
  metrics_->observeKubeRequests(state.route, core::ApiCallTally::count() - kubeCallsBefore);
  return response;
}

// One request's way through the asynchronous path.
struct ApiHandler::Flow {
  Flow(RequestMetrics& metrics, std::shared_ptr<const HttpRequest> r,
       std::shared_ptr<PendingRequest> p)
      : registry(metrics.registry()),
        request(std::move(r)),
        pending(std::move(p)),
        started(std::chrono::steady_clock::now()),
        inFlight(metrics.trackInFlight()) {}
  // Keeps the in-flight gauge alive should the flow end after the handler (a late review).
  std::shared_ptr<prometheus::Registry> registry;
  std::shared_ptr<const HttpRequest> request;
  std::shared_ptr<PendingRequest> pending;
  std::chrono::steady_clock::time_point started;
  RequestMetrics::InFlight inFlight;
  Dispatch state;
  RequestInfo info;
  uint64_t kubeCalls = 0;
};

void ApiHandler::handleAsync(std::shared_ptr<const HttpRequest> request,
                             std::shared_ptr<PendingRequest> pending) const {
  auto flow = std::make_shared<Flow>(*metrics_, std::move(request), std::move(pending));
  guarded(flow, [&] {
    const HttpRequest& r = *flow->request;
    flow->state.query = QueryParams::parse(r.rawQuery);
    flow->state.pretty = wantsPrettyJson(flow->state.query, r.header("User-Agent").value_or(""));
    flow->info = parseRequestInfo(r.method, r.path, flow->state.query);
    continueOnHandlerThread<core::Result<UserInfo>>(
        flow->pending,
        [&](std::function<void(core::Result<UserInfo>)> done) {
          config_.authenticator->authenticateAsync(r, flow->pending->deadline(), std::move(done));
        },
        [this, flow](core::Result<UserInfo> user) {
          guarded(flow, [&] { authenticated(flow, std::move(user)); });
        });
  });
}

void ApiHandler::authenticated(const std::shared_ptr<Flow>& flow,
                               core::Result<UserInfo> user) const {
  if (!user) return finish(*flow, unauthenticated(user.status(), flow->state));
  auto identity = std::make_shared<UserInfo>(std::move(*user));
  continueOnHandlerThread<core::Result<AuthorizationDecision>>(
      flow->pending,
      [&](std::function<void(core::Result<AuthorizationDecision>)> done) {
        config_.authorizer->authorizeAsync(*identity, flow->info, flow->pending->deadline(),
                                           std::move(done));
      },
      [this, flow, identity](core::Result<AuthorizationDecision> decision) {
        guarded(flow, [&] {
          // Kubernetes calls made on this thread while serving count for the request; reviews
          // are counted by their own metrics.
          const uint64_t before = core::ApiCallTally::count();
          const core::RequestDeadline::Scope deadline(flow->pending->deadline());
          HttpResponse response = authorizedResponse(*flow->request, decision, flow->info,
                                                     std::move(*identity), flow->state);
          flow->kubeCalls = core::ApiCallTally::count() - before;
          finish(*flow, std::move(response));
        });
      });
}

template <typename Step>
void ApiHandler::guarded(const std::shared_ptr<Flow>& flow, Step&& step) const {
  try {
    step();
  } catch (const std::exception& error) {
    finish(*flow, statusResponse(Status::internal(error.what()), flow->state.pretty));
  }
}

void ApiHandler::finish(Flow& flow, HttpResponse response) const {
  metrics_->observe(flow.state.route, response.status,
                    std::chrono::steady_clock::now() - flow.started);
  metrics_->observeKubeRequests(flow.state.route, flow.kubeCalls);
  flow.pending->respond(std::move(response));
}

HttpResponse ApiHandler::handleMetricsOnly(const HttpRequest& request) const {
  const auto started = std::chrono::steady_clock::now();
  const bool metrics = request.path == "/metrics";
  HttpResponse response = metrics ? metricsExposition(*metrics_) : notFoundText();
  metrics_->observe(metrics ? "metrics" : "not_found", response.status,
                    std::chrono::steady_clock::now() - started);
  return response;
}

HttpResponse ApiHandler::dispatch(const HttpRequest& request, Dispatch& state) const {
  const std::string& path = request.path;
  if (HealthChecks::isHealthPath(path)) {
    state.route = firstSegment(path);
    return config_.health->evaluate(path, state.query);
  }
  if (path == "/metrics") {
    state.route = "metrics";
    return metricsExposition(*metrics_);
  }

  const bool get = request.method == "GET";
  const auto accept = request.header("Accept").value_or("");
  if (auto openApi = openApi_->answer(request)) {
    state.route = "openapi";
    return std::move(*openApi);
  }
  if (auto extra = config_.extraRoutes.find(path); extra != config_.extraRoutes.end()) {
    state.route = "extra";
    if (!get) return statusResponse(methodNotAllowedStatus(), state.pretty);
    return extra->second(request, state.query, state.user);
  }
  if (path == "/version") {
    state.route = "version";
    if (!get) return statusResponse(methodNotAllowedStatus(), state.pretty);
    return rawPrettyJson(versionJson(config_.version));
  }
  if (path == "/" || path == "/index.html") {
    state.route = "root";
    std::vector<std::string> paths = {
        "/apis",   "/healthz",     "/healthz/ping",    "/livez",   "/livez/ping", "/metrics",
        "/readyz", "/readyz/ping", "/readyz/shutdown", "/version", "/openapi/v2", "/openapi/v3"};
    for (const auto& [extraPath, route] : config_.extraRoutes) paths.push_back(extraPath);
    for (const auto& group : servedGroups()) {
      paths.push_back("/apis/" + group.name);
      paths.push_back("/apis/" + group.name + "/v1beta1");
      if (group.name == kCustomMetricsGroup) paths.push_back("/apis/" + group.name + "/v1beta2");
    }
    std::sort(paths.begin(), paths.end());
    Json document;
    document["paths"] = paths;
    return rawPrettyJson(document);
  }
  if (path == "/apis" || path == "/apis/") {
    state.route = "discovery";
    if (!get) return statusResponse(methodNotAllowedStatus(), state.pretty);
    if (!acceptsPlainJson(accept)) return notAcceptable(state.pretty);
    return jsonResponse(200, apiGroupListJson(servedGroups(), config_.serverAddress), state.pretty);
  }
  for (const auto& group : servedGroups()) {
    const std::string groupPath = "/apis/" + group.name;
    if (path == groupPath || path == groupPath + "/") {
      state.route = "discovery";
      if (!get) return statusResponse(methodNotAllowedStatus(), state.pretty);
      if (!acceptsPlainJson(accept)) return notAcceptable(state.pretty);
      return jsonResponse(200, apiGroupJson(group), state.pretty);
    }
    const std::vector<std::string> versions = group.name == kCustomMetricsGroup
                                                  ? std::vector<std::string>{"v1beta1", "v1beta2"}
                                                  : std::vector<std::string>{"v1beta1"};
    for (const auto& version : versions) {
      const std::string prefix = groupPath + "/" + version;
      if (path == prefix || startsWith(path, prefix + "/")) {
        if (!acceptsPlainJson(accept)) return notAcceptable(state.pretty);
        return groupVersionResponse(request, state, group.name, version);
      }
    }
  }
  state.route = "not_found";
  return notFoundText();
}

HttpResponse ApiHandler::groupVersionResponse(const HttpRequest& request, Dispatch& state,
                                              std::string_view group,
                                              std::string_view version) const {
  if (group == kResourceMetricsGroup) {
    state.route = "resource_metrics";
    return resourceMetricsResponse(request, state.query, state.pretty);
  }
  auto route = routeMetricsApi(request.method, group, version, request.path, state.query);
  if (!route) {
    state.route = "invalid";
    return statusResponse(route.status(), state.pretty);
  }
  switch (route->kind) {
    case ApiRoute::Kind::kResourceList:
      state.route = "resource_list";
      if (group == kCustomMetricsGroup) {
        return jsonResponse(200,
                            customResourceListJson(version, config_.customMetrics->listMetrics()),
                            state.pretty);
      }
      return jsonResponse(200, externalResourceListJson(config_.externalMetrics->listMetrics()),
                          state.pretty);
    case ApiRoute::Kind::kCustomMetric:
      state.route = "custom_metric";
      return customMetricResponse(route->request, state.pretty);
    case ApiRoute::Kind::kExternalMetric:
      state.route = "external_metric";
      return externalMetricResponse(route->request, state);
  }
  return statusResponse(Status::internal("unroutable request"), state.pretty);
}

HttpResponse ApiHandler::customMetricResponse(const MetricRequest& request, bool pretty) const {
  const CustomMetricInfo info{request.resource, !request.namespaceName.empty(), request.metric};
  std::vector<MetricValue> items;
  if (request.wildcard) {
    auto values = config_.customMetrics->getMetricBySelector(
        request.namespaceName, request.objectSelector, info, request.metricSelector);
    if (!values) return statusResponse(values.status(), pretty);
    items = std::move(*values);
  } else {
    auto value = config_.customMetrics->getMetricByName(request.namespaceName, request.name, info,
                                                        request.metricSelector);
    if (!value) return statusResponse(value.status(), pretty);
    items.push_back(std::move(*value));
  }
  auto text = encodeMetricValueList(request.version, items, pretty);
  if (!text) return statusResponse(text.status(), pretty);
  return jsonTextResponse(200, std::move(*text));
}

HttpResponse ApiHandler::externalMetricResponse(const MetricRequest& request,
                                                const Dispatch& state) const {
  auto values = config_.externalMetrics->getExternalMetricAs(state.user, request.labelSelector,
                                                             request.namespaceName, request.metric,
                                                             request.metricSelector);
  if (!values) return statusResponse(values.status(), state.pretty);
  return jsonTextResponse(200, encodeExternalMetricValueList(*values, state.pretty));
}

}  // namespace gpuscale::apiserver
