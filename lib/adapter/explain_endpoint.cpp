#include "gpuscale/adapter/explain_endpoint.h"

#include "gpuscale/adapter/explain.h"
#include "gpuscale/apiserver/health.h"

namespace gpuscale::adapter {

apiserver::ExtraRoute explainRoute(ExplainEndpointConfig config) {
  auto shared = std::make_shared<const ExplainEndpointConfig>(std::move(config));
  return [shared](const apiserver::HttpRequest&, const apiserver::QueryParams& query) {
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
    ExplainSource source = shared->source();
    Explanation explanation = explain(*source.rules, discoveryClientsOf(std::move(source.backends)),
                                      options, shared->status.get());
    if (output == "text") return apiserver::plainTextResponse(200, explanationText(explanation));
    return apiserver::jsonTextResponse(200, explanationJson(explanation));
  };
}

}  // namespace gpuscale::adapter
