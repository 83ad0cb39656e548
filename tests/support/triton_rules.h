// The rule file of the design's user story: Triton's queue time per request as `avg_time_queue_us`,
// the one rule of rules/triton.yaml. Tests and benchmarks that need the story's rule use this text,
// and append further items to its `rules:` list (the text ends with the rule) when they need more.
#pragma once

namespace gpuscale::testing {

inline constexpr char kTritonRules[] = R"(rules:
- seriesQuery: 'nv_inference_queue_duration_us{namespace="default",pod!=""}'
  resources:
    overrides:
      namespace: {resource: "namespace"}
      pod: {resource: "pod"}
  name:
    matches: "nv_inference_queue_duration_us"
    as: "avg_time_queue_us"
  metricsQuery: 'avg(delta(nv_inference_queue_duration_us{<<.LabelMatchers>>}[30s])/(1+delta(nv_inference_request_success{<<.LabelMatchers>>}[30s]))) by (<<.GroupBy>>)'
)";

}  // namespace gpuscale::testing
