#include "gpuscale/adapter/explain_endpoint.h"

#include <fmt/format.h>

#include <mutex>
#include <optional>

#include "gpuscale/adapter/explain.h"
#include "gpuscale/apiserver/health.h"
#include "gpuscale/apiserver/request_info.h"
#include "gpuscale/apiserver/wire_format.h"
#include "gpuscale/core/label_selector.h"
#include "gpuscale/rules/resource_converter.h"

namespace gpuscale::adapter {
namespace {

// One path segment: no '/', not empty, not a dot segment.
bool isSegment(std::string_view text) {
  return !text.empty() && text != "." && text != ".." && text.find('/') == std::string_view::npos;
}

}  // namespace

core::Result<apiserver::RequestInfo> sampleRequestInfo(const SampleScope& scope) {
  if (!isSegment(scope.metric)) {
    return core::Status::invalid(fmt::format("metric {:?} is not a path segment", scope.metric));
  }
  if (!scope.namespaceName.empty() && !core::isDns1123Label(scope.namespaceName)) {
    return core::Status::invalid(
        fmt::format("namespace {:?} is not a namespace name", scope.namespaceName));
  }
  const std::string& ns = scope.namespaceName;
  std::string path;
  if (scope.kind == rules::RuleKind::kExternal) {
    if (ns.empty()) {
      return core::Status::invalid(
          "external metrics are read per namespace: name one with namespace=");
    }
    path = fmt::format("/apis/{}/v1beta1/namespaces/{}/{}", apiserver::kExternalMetricsGroup, ns,
                       scope.metric);
  } else {
    const std::string resource = scope.resource.toString();
    if (!isSegment(resource)) {
      return core::Status::invalid(fmt::format("resource {:?} is not a path segment", resource));
    }
    const std::string group = std::string(apiserver::kCustomMetricsGroup) + "/v1beta1";
    if (scope.resource == rules::namespacesResource()) {
      if (ns.empty()) return core::Status::invalid("no namespace to read the metric of");
      path = fmt::format("/apis/{}/namespaces/{}/metrics/{}", group, ns, scope.metric);
    } else if (scope.namespaced) {
      if (ns.empty()) {
        return core::Status::invalid(
            fmt::format("no namespace to read {} of: name one with namespace=", scope.metric));
      }
      path = fmt::format("/apis/{}/namespaces/{}/{}/*/{}", group, ns, resource, scope.metric);
    } else {
      path = fmt::format("/apis/{}/{}/*/{}", group, resource, scope.metric);
    }
  }
  return apiserver::parseRequestInfo("GET", path, apiserver::QueryParams());
}

apiserver::ExtraRoute explainRoute(ExplainEndpointConfig config) {
  auto shared = std::make_shared<const ExplainEndpointConfig>(std::move(config));
  return [shared](const apiserver::HttpRequest&, const apiserver::QueryParams& query,
                  const apiserver::UserInfo& user) {
    const std::string output = query.get("output").value_or("json");
    if (output != "json" && output != "text") {
      return apiserver::statusResponse(
          core::Status::badRequest("output must be json or text, not " + output), false);
    }
    ExplainOptions options;
    options.metric = query.get("metric").value_or("");
    options.rule = query.get("rule").value_or("");
    options.namespaceName = query.get("namespace").value_or("");
    options.liveSample = query.get("sample").value_or("true") != "false";
    options.maxAge = shared->maxAge;
    options.discovery = shared->discovery;
    if (!options.namespaceName.empty() && !core::isDns1123Label(options.namespaceName)) {
      return apiserver::statusResponse(
          core::Status::badRequest("namespace must be a namespace name, not " +
                                   options.namespaceName),
          false);
    }
    // The first refusal for the namespace the caller named: the request is refused as a whole.
    auto refused = std::make_shared<std::optional<core::Status>>();
    auto refusedMu = std::make_shared<std::mutex>();
    if (shared->authorizer) {
      options.authorizeSample = [authorizer = shared->authorizer, &user, refused, refusedMu,
                                 named = options.namespaceName](const SampleScope& scope) {
        auto info = sampleRequestInfo(scope);
        if (!info) return core::Status::forbidden("example not shown: " + info.status().message());
        auto decision = authorizer->authorize(user, *info);
        core::Status outcome;
        if (!decision) {
          outcome = core::Status::internal("example not shown: authorization failed: " +
                                           decision.status().message());
        } else if (!decision->allowed) {
          outcome = apiserver::forbiddenStatus(user, *info, decision->reason);
          if (named.empty()) {
            // The namespace was picked from Prometheus' data: not even its name is the caller's.
            outcome = core::Status::forbidden(fmt::format(
                "example not shown: you may not read {} in the namespace that has data; name one "
                "you may read with namespace=",
                scope.metric));
          }
        }
        if (!outcome.ok() && !named.empty()) {
          std::lock_guard lock(*refusedMu);
          if (!*refused) *refused = outcome;
        }
        return outcome;
      };
    }
    ExplainSource source = shared->source();
    Explanation explanation = explain(*source.rules, discoveryClientsOf(std::move(source.backends)),
                                      options, shared->status.get());
    if (*refused) return apiserver::statusResponse(**refused, false);
    if (output == "text") return apiserver::plainTextResponse(200, explanationText(explanation));
    return apiserver::jsonTextResponse(200, explanationJson(explanation));
  };
}

}  // namespace gpuscale::adapter
