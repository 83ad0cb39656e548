#include "gpuscale/rules/resource_converter.h"

#include <gtest/gtest.h>

#include "gpuscale/k8s/resource_mapper.h"

namespace gpuscale::rules {
namespace resource_converter_test {

using Overrides = std::vector<std::pair<std::string, GroupResource>>;

ResourceConverter make(std::string_view tmpl, const Overrides& overrides = {}) {
  auto created = ResourceConverter::create(tmpl, overrides, k8s::BuiltinResourceTable::instance());
  if (auto* problem = std::get_if<ResourceConverter::Problem>(&created)) {
    ADD_FAILURE() << problem->message;
    return {};
  }
  return std::get<ResourceConverter>(std::move(created));
}

struct LabelRow {
  const char* what;
  const char* tmpl;
  const char* label;
  std::optional<GroupResource> resource;
};

// label → resource through templates and overrides.
const LabelRow kLabelRows[] = {
    {"<<.Resource>>: pod", "<<.Resource>>", "pod", GroupResource{"", "pods"}},
    {"<<.Resource>>: namespace", "<<.Resource>>", "namespace", GroupResource{"", "namespaces"}},
    {"<<.Resource>>: service", "<<.Resource>>", "service", GroupResource{"", "services"}},
    {"<<.Resource>>: node", "<<.Resource>>", "node", GroupResource{"", "nodes"}},
    {"<<.Resource>>: endpoint is no resource name (Endpoints is its own singular)", "<<.Resource>>",
     "endpoint", std::nullopt},
    {"<<.Resource>>: endpoints", "<<.Resource>>", "endpoints", GroupResource{"", "endpoints"}},
    {"<<.Resource>>: the job label becomes jobs.batch", "<<.Resource>>", "job",
     GroupResource{"batch", "jobs"}},
    {"<<.Resource>>: deployment", "<<.Resource>>", "deployment",
     GroupResource{"apps", "deployments"}},
    {"<<.Resource>>: ingress", "<<.Resource>>", "ingress",
     GroupResource{"networking.k8s.io", "ingresses"}},
    {"<<.Resource>>: plural label", "<<.Resource>>", "pods", GroupResource{"", "pods"}},
    {"<<.Resource>>: not a resource", "<<.Resource>>", "instance", std::nullopt},
    {"kube_<<.Resource>>: kube_pod", "kube_<<.Resource>>", "kube_pod", GroupResource{"", "pods"}},
    {"kube_<<.Resource>>: plain pod does not match", "kube_<<.Resource>>", "pod", std::nullopt},
    {"template text is a regex: kube.<<.Resource>> matches kubeXpod", "kube.<<.Resource>>",
     "kubeXpod", GroupResource{"", "pods"}},
    {"group is not un-sanitised: networking_k8s_io_ingress is dropped", "<<.Group>>_<<.Resource>>",
     "networking_k8s_io_ingress", std::nullopt},
    {"group template with a real group", "<<.Group>>_<<.Resource>>", "apps_deployment",
     GroupResource{"apps", "deployments"}},
};

TEST(ResourceConverterLabels, Table) {
  for (const LabelRow& row : kLabelRows) {
    SCOPED_TRACE(row.what);
    ResourceConverter converter = make(row.tmpl);
    EXPECT_EQ(converter.resourceForLabel(row.label), row.resource);
  }
}

struct ResourceRow {
  const char* what;
  const char* tmpl;
  Overrides overrides;
  GroupResource resource;
  const char* label;  // nullptr: error
  const char* error;
};

// resource → label.
const ResourceRow kResourceRows[] = {
    {"template uses the singular", "<<.Resource>>", {}, {"", "pods"}, "pod", ""},
    {"prefix template", "kube_<<.Resource>>", {}, {"", "namespaces"}, "kube_namespace", ""},
    {"group is sanitised",
     "<<.Group>>_<<.Resource>>",
     {},
     {"networking.k8s.io", "ingresses"},
     "networking_k8s_io_ingress",
     ""},
    {"override wins over the template",
     "<<.Resource>>",
     {{"exported_pod", {"", "pod"}}},
     {"", "pods"},
     "exported_pod",
     ""},
    {"override only",
     "",
     {{"namespace", {"", "namespace"}}, {"pod", {"", "pod"}}},
     {"", "pods"},
     "pod",
     ""},
    {"override only: no namespace label",
     "",
     {{"pod", {"", "pod"}}},
     {"", "namespaces"},
     nullptr,
     "no generic resource label form specified for this metric"},
    {"deployment override normalises to deployments.apps",
     "",
     {{"deployment", {"apps", "deployment"}}},
     {"apps", "deployments"},
     "deployment",
     ""},
    {"empty template output", "<<.Group>>", {}, {"", "pods"}, nullptr, ""},
};

TEST(ResourceConverterResources, Table) {
  for (const ResourceRow& row : kResourceRows) {
    SCOPED_TRACE(row.what);
    auto created =
        ResourceConverter::create(row.tmpl, row.overrides, k8s::BuiltinResourceTable::instance());
    if (row.label == nullptr && std::holds_alternative<ResourceConverter::Problem>(created)) {
      continue;  // rejected when created (a template without <<.Resource>>)
    }
    ASSERT_TRUE(std::holds_alternative<ResourceConverter>(created));
    core::Result<std::string> label =
        std::get<ResourceConverter>(created).labelForResource(row.resource);
    if (row.label == nullptr) {
      ASSERT_FALSE(label.ok());
      EXPECT_NE(label.status().message().find(row.error), std::string::npos)
          << label.status().message();
    } else {
      ASSERT_TRUE(label.ok()) << label.status().message();
      EXPECT_EQ(*label, row.label);
    }
  }
}

struct ProblemRow {
  const char* what;
  const char* tmpl;
  Overrides overrides;
  const char* message;
};

const ProblemRow kProblemRows[] = {
    {"template without <<.Resource>>", "<<.Group>>_x", {}, "must include at least '<<.Resource>>'"},
    {"template that does not parse", "<<.Resource", {}, "unclosed action"},
    {"template with an unknown field", "<<.Kind>>", {}, "can't evaluate field Kind"},
    {"template that is not a regex", "(<<.Resource>>", {}, "unable to convert label template"},
    {"override with an unknown resource",
     "",
     {{"brand", {"cheese.io", "brand"}}},
     "unable to normalize group-resource {cheese.io brand}"},
};

TEST(ResourceConverterCreate, ProblemsTable) {
  for (const ProblemRow& row : kProblemRows) {
    SCOPED_TRACE(row.what);
    auto created =
        ResourceConverter::create(row.tmpl, row.overrides, k8s::BuiltinResourceTable::instance());
    auto* problem = std::get_if<ResourceConverter::Problem>(&created);
    ASSERT_NE(problem, nullptr);
    EXPECT_NE(problem->message.find(row.message), std::string::npos) << problem->message;
  }
}

TEST(ResourceConverterLabels, OverridesComeFirst) {
  ResourceConverter converter = make("<<.Resource>>", {{"service", {"", "pod"}}});
  EXPECT_EQ(converter.resourceForLabel("service"), (GroupResource{"", "pods"}));
  EXPECT_EQ(converter.resourceForLabel("pod"), (GroupResource{"", "pods"}));
}

}  // namespace resource_converter_test
}  // namespace gpuscale::rules
