// The schemas behind openapi.h: the metrics API types and the Kubernetes types they reference,
// written with the field names, types and required lists of their Go definitions.
#include <nlohmann/json.hpp>

#include <set>

#include "gpuscale/apiserver/metric_request.h"
#include "gpuscale/apiserver/openapi.h"
#include "gpuscale/apiserver/resource_metrics.h"

namespace gpuscale::apiserver {
namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr char kMeta[] = "io.k8s.apimachinery.pkg.apis.meta.v1.";
constexpr char kQuantity[] = "io.k8s.apimachinery.pkg.api.resource.Quantity";
constexpr char kObjectReference[] = "io.k8s.api.core.v1.ObjectReference";
constexpr char kCustomV1beta1[] = "io.k8s.metrics.pkg.apis.custom_metrics.v1beta1.";
constexpr char kCustomV1beta2[] = "io.k8s.metrics.pkg.apis.custom_metrics.v1beta2.";
constexpr char kExternalV1beta1[] = "io.k8s.metrics.pkg.apis.external_metrics.v1beta1.";
constexpr char kResourceV1beta1[] = "io.k8s.metrics.pkg.apis.metrics.v1beta1.";

// Schemas refer to each other as "#/definitions/NAME"; v3 documents rewrite the prefix.
constexpr std::string_view kV2Ref = "#/definitions/";
constexpr std::string_view kV3Ref = "#/components/schemas/";

std::string meta(std::string_view name) { return kMeta + std::string(name); }
OrderedJson schemaRef(std::string_view name) {
  return {{"$ref", std::string(kV2Ref) + std::string(name)}};
}
OrderedJson text(std::string_view description) {
  return {{"description", description}, {"type", "string"}};
}
OrderedJson int64(std::string_view description) {
  return {{"description", description}, {"type", "integer"}, {"format", "int64"}};
}
OrderedJson stringMap(std::string_view description) {
  return {{"description", description},
          {"type", "object"},
          {"additionalProperties", {{"type", "string"}, {"default", ""}}}};
}
OrderedJson withDescription(OrderedJson schema, std::string_view description) {
  schema["description"] = description;
  return schema;
}
OrderedJson object(std::string_view description, OrderedJson properties,
                   std::vector<std::string> required) {
  OrderedJson out = {{"description", description}, {"type", "object"}};
  if (!required.empty()) out["required"] = required;
  out["properties"] = std::move(properties);
  return out;
}

const OrderedJson kApiVersion =
    text("APIVersion defines the versioned schema of this representation.");
const OrderedJson kKind =
    text("Kind is a string value representing the REST resource of this object.");

OrderedJson listKind(std::string_view description, std::string_view itemName,
                     std::string_view group, std::string_view version, std::string_view kind) {
  OrderedJson out =
      object(description,
             {{"apiVersion", kApiVersion},
              {"items",
               {{"description", "the value of the metric across the described objects"},
                {"type", "array"},
                {"items", schemaRef(itemName)}}},
              {"kind", kKind},
              {"metadata", withDescription(schemaRef(meta("ListMeta")), "standard list metadata")}},
             {"items"});
  out["x-kubernetes-group-version-kind"] =
      OrderedJson::array({{{"group", group}, {"kind", kind}, {"version", version}}});
  return out;
}

// Every schema a served group-version may need, by definition name.
const OrderedJson& allDefinitions() {
  static const OrderedJson definitions = [] {
    OrderedJson d = OrderedJson::object();
    d[kQuantity] = text(
        "Quantity is a fixed-point representation of a number, serialized as a string such as "
        "\"500m\", \"12\" or \"1.5Gi\".");
    d[meta("Time")] = {{"description", "Time is an RFC 3339 date and time in UTC."},
                       {"type", "string"},
                       {"format", "date-time"}};
    d[meta("ListMeta")] =
        object("ListMeta describes metadata that synthetic resources must have, including lists.",
               {{"continue", text("continue token of a chunked list")},
                {"remainingItemCount", int64("items left in a chunked list")},
                {"resourceVersion", text("the version of the list")},
                {"selfLink", text("deprecated, unset")}},
               {});
    d[kObjectReference] = object(
        "ObjectReference contains enough information to let you inspect or modify the referred "
        "object.",
        {{"apiVersion", text("API version of the referent")},
         {"fieldPath", text("a piece of an object instead of the whole")},
         {"kind", text("kind of the referent")},
         {"name", text("name of the referent")},
         {"namespace", text("namespace of the referent")},
         {"resourceVersion", text("specific resourceVersion to which this reference is made")},
         {"uid", text("UID of the referent")}},
        {});
    d[kObjectReference]["x-kubernetes-map-type"] = "atomic";
    d[meta("LabelSelectorRequirement")] =
        object("A label selector requirement: a key, an operator and values.",
               {{"key", text("the label key that the selector applies to")},
                {"operator", text("In, NotIn, Exists or DoesNotExist")},
                {"values",
                 {{"description", "values for In and NotIn"},
                  {"type", "array"},
                  {"items", {{"type", "string"}, {"default", ""}}},
                  {"x-kubernetes-list-type", "atomic"}}}},
               {"key", "operator"});
    d[meta("LabelSelector")] = object(
        "A label selector: the requirements are ANDed; empty matches all objects, null none.",
        {{"matchExpressions",
          {{"description", "a list of label selector requirements"},
           {"type", "array"},
           {"items", schemaRef(meta("LabelSelectorRequirement"))},
           {"x-kubernetes-list-type", "atomic"}}},
         {"matchLabels", stringMap("{key,value} pairs, each one an In requirement")}},
        {});
    d[meta("LabelSelector")]["x-kubernetes-map-type"] = "atomic";

    const OrderedJson described =
        withDescription(schemaRef(kObjectReference), "a reference to the described object");
    const OrderedJson timestamp =
        withDescription(schemaRef(meta("Time")), "the time at which the metrics were produced");
    const OrderedJson value =
        withDescription(schemaRef(kQuantity), "the value of the metric for this object");
    const OrderedJson selector = withDescription(
        schemaRef(meta("LabelSelector")),
        "the metric labels used to select the series, when a metric label selector was given");

    const std::string v1beta1 = kCustomV1beta1;
    d[v1beta1 + "MetricValue"] =
        object("MetricValue is the metric value for some object",
               {{"apiVersion", kApiVersion},
                {"describedObject", described},
                {"kind", kKind},
                {"metricName", text("the name of the metric")},
                {"selector", selector},
                {"timestamp", timestamp},
                {"value", value},
                {"window", int64("the window in seconds over which the metric was calculated")}},
               {"describedObject", "metricName", "timestamp", "value"});
    d[v1beta1 + "MetricValueList"] =
        listKind("MetricValueList is a list of values for a given metric for some set of objects",
                 v1beta1 + "MetricValue", kCustomMetricsGroup, "v1beta1", "MetricValueList");

    const std::string v1beta2 = kCustomV1beta2;
    d[v1beta2 + "MetricIdentifier"] =
        object("MetricIdentifier identifies a metric by name and, optionally, selector",
               {{"name", text("the name of the given metric")}, {"selector", selector}}, {"name"});
    d[v1beta2 + "MetricValue"] = object(
        "MetricValue is the metric value for some object",
        {{"apiVersion", kApiVersion},
         {"describedObject", described},
         {"kind", kKind},
         {"metric", schemaRef(v1beta2 + "MetricIdentifier")},
         {"timestamp", timestamp},
         {"value", value},
         {"windowSeconds", int64("the window in seconds over which the metric was calculated")}},
        {"describedObject", "metric", "timestamp", "value"});
    d[v1beta2 + "MetricValueList"] =
        listKind("MetricValueList is a list of values for a given metric for some set of objects",
                 v1beta2 + "MetricValue", kCustomMetricsGroup, "v1beta2", "MetricValueList");

    const std::string external = kExternalV1beta1;
    d[external + "ExternalMetricValue"] =
        object("ExternalMetricValue is a metric value for an external metric: one series of it",
               {{"apiVersion", kApiVersion},
                {"kind", kKind},
                {"metricLabels", stringMap("the labels of the series")},
                {"metricName", text("the name of the metric")},
                {"timestamp", timestamp},
                {"value", withDescription(schemaRef(kQuantity), "the value of the series")},
                {"window", int64("the window in seconds over which the metric was calculated")}},
               {"metricName", "metricLabels", "timestamp", "value"});
    d[external + "ExternalMetricValueList"] = listKind(
        "ExternalMetricValueList is a list of values for a given metric for some set of labels",
        external + "ExternalMetricValue", kExternalMetricsGroup, "v1beta1",
        "ExternalMetricValueList");

    // metrics.k8s.io: ObjectMeta with the fields PodMetrics and NodeMetrics carry.
    d[meta("Duration")] = text("Duration is a length of time, serialized as \"30s\" or \"1m0s\".");
    d[meta("ObjectMeta")] =
        object("ObjectMeta is metadata that all persisted resources must have.",
               {{"creationTimestamp",
                 withDescription(schemaRef(meta("Time")), "when the metrics object was created")},
                {"labels", stringMap("the labels of the pod or node the metrics describe")},
                {"name", text("the name of the pod or node")},
                {"namespace", text("the namespace of the pod; empty for nodes")}},
               {});
    const OrderedJson usage = {{"description", "resource usage: cpu (cores) and memory (bytes)"},
                               {"type", "object"},
                               {"additionalProperties", schemaRef(kQuantity)}};
    const OrderedJson metadata =
        withDescription(schemaRef(meta("ObjectMeta")), "the described object's metadata");
    const OrderedJson window = withDescription(schemaRef(meta("Duration")),
                                               "the window over which the usage was calculated");
    const std::string resource = kResourceV1beta1;
    d[resource + "ContainerMetrics"] =
        object("ContainerMetrics sets resource usage metrics of a container.",
               {{"name", text("the container's name")}, {"usage", usage}}, {"name", "usage"});
    d[resource + "PodMetrics"] = object("PodMetrics sets resource usage metrics of a pod.",
                                        {{"apiVersion", kApiVersion},
                                         {"containers",
                                          {{"description", "the usage of each container"},
                                           {"type", "array"},
                                           {"items", schemaRef(resource + "ContainerMetrics")}}},
                                         {"kind", kKind},
                                         {"metadata", metadata},
                                         {"timestamp", timestamp},
                                         {"window", window}},
                                        {"timestamp", "window", "containers"});
    d[resource + "NodeMetrics"] = object("NodeMetrics sets resource usage metrics of a node.",
                                         {{"apiVersion", kApiVersion},
                                          {"kind", kKind},
                                          {"metadata", metadata},
                                          {"timestamp", timestamp},
                                          {"usage", usage},
                                          {"window", window}},
                                         {"timestamp", "window", "usage"});
    for (const char* kind : {"PodMetrics", "NodeMetrics"}) {
      d[resource + kind]["x-kubernetes-group-version-kind"] = OrderedJson::array(
          {{{"group", kResourceMetricsGroup}, {"kind", kind}, {"version", "v1beta1"}}});
      d[resource + kind + "List"] =
          listKind(std::string(kind) + "List is a list of " + kind + ".", resource + kind,
                   kResourceMetricsGroup, "v1beta1", std::string(kind) + "List");
    }
    return d;
  }();
  return definitions;
}

// The list kind a group-version answers with, or empty when its schemas are not known here.
std::string listDefinition(const GroupVersion& gv) {
  if (gv.group == kCustomMetricsGroup && gv.version == "v1beta1") {
    return std::string(kCustomV1beta1) + "MetricValueList";
  }
  if (gv.group == kCustomMetricsGroup && gv.version == "v1beta2") {
    return std::string(kCustomV1beta2) + "MetricValueList";
  }
  if (gv.group == kExternalMetricsGroup && gv.version == "v1beta1") {
    return std::string(kExternalV1beta1) + "ExternalMetricValueList";
  }
  return "";
}

bool isResourceMetrics(const GroupVersion& gv) {
  return gv.group == kResourceMetricsGroup && gv.version == "v1beta1";
}

void collectRefs(const OrderedJson& schema, std::set<std::string>& out) {
  if (schema.is_object()) {
    if (auto it = schema.find("$ref"); it != schema.end() && it->is_string()) {
      std::string name = it->get<std::string>().substr(kV2Ref.size());
      if (out.insert(name).second) collectRefs(allDefinitions().at(name), out);
    }
    for (const auto& [key, child] : schema.items()) collectRefs(child, out);
  } else if (schema.is_array()) {
    for (const auto& child : schema) collectRefs(child, out);
  }
}

OrderedJson pathParameter(std::string_view name, std::string_view description) {
  return {{"name", name},     {"in", "path"},     {"description", description},
          {"required", true}, {"type", "string"}, {"uniqueItems", true}};
}

OrderedJson queryParameter(std::string_view name, std::string_view description) {
  return {{"name", name},
          {"in", "query"},
          {"description", description},
          {"type", "string"},
          {"uniqueItems", true}};
}

std::string capitalized(std::string_view text) {
  std::string out(text);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

// One GET operation of a group-version answering with the definition `schema`, Swagger 2.0 style
// ("parameters" with "type").
OrderedJson getOperation(const GroupVersion& gv, const std::string& schema, std::string_view id,
                         std::string_view description, std::string_view action,
                         OrderedJson parameters) {
  const std::string kind = schema.substr(schema.rfind('.') + 1);
  const std::string shortGroup = gv.group.substr(0, gv.group.find('.'));
  const std::string groupWord = shortGroup == "metrics" ? "" : capitalized(shortGroup);
  return OrderedJson{{"get",
                      {{"description", description},
                       {"consumes", {"*/*"}},
                       {"produces", {"application/json"}},
                       {"schemes", {"https"}},
                       {"tags", {shortGroup + (groupWord.empty() ? "_" : "Metrics_") + gv.version}},
                       {"operationId", std::string(action == "list" ? "list" : "read") + groupWord +
                                           "Metrics" + capitalized(gv.version) + std::string(id)},
                       {"responses",
                        {{"200", {{"description", "OK"}, {"schema", schemaRef(schema)}}},
                         {"401", {{"description", "Unauthorized"}}}}},
                       {"x-kubernetes-action", action},
                       {"x-kubernetes-group-version-kind",
                        {{"group", gv.group}, {"kind", kind}, {"version", gv.version}}}}},
                     {"parameters", std::move(parameters)}};
}

// metrics.k8s.io/v1beta1: lists and single objects of pods (namespaced) and nodes.
OrderedJson resourceMetricsPaths(const GroupVersion& gv) {
  const std::string prefix = "/apis/" + gv.group + "/" + gv.version;
  const std::string type = kResourceV1beta1;
  const OrderedJson ns = pathParameter("namespace", "object name and auth scope");
  const OrderedJson selectors = OrderedJson::array(
      {queryParameter("labelSelector", "selects the objects by label"),
       queryParameter("fieldSelector", "selects the objects by field (metadata.name)")});
  OrderedJson paths = OrderedJson::object();
  paths[prefix + "/nodes"] = getOperation(gv, type + "NodeMetricsList", "NodeMetrics",
                                          "usage of every node", "list", selectors);
  paths[prefix + "/nodes/{name}"] =
      getOperation(gv, type + "NodeMetrics", "NodeMetrics", "usage of one node", "get",
                   OrderedJson::array({pathParameter("name", "name of the node")}));
  paths[prefix + "/pods"] = getOperation(gv, type + "PodMetricsList", "PodMetricsForAllNamespaces",
                                         "usage of the pods of every namespace", "list", selectors);
  OrderedJson namespaced = selectors;
  namespaced.insert(namespaced.begin(), ns);
  paths[prefix + "/namespaces/{namespace}/pods"] =
      getOperation(gv, type + "PodMetricsList", "NamespacedPodMetrics",
                   "usage of the pods of a namespace", "list", std::move(namespaced));
  paths[prefix + "/namespaces/{namespace}/pods/{name}"] =
      getOperation(gv, type + "PodMetrics", "NamespacedPodMetrics", "usage of one pod", "get",
                   OrderedJson::array({ns, pathParameter("name", "name of the pod")}));
  return paths;
}

// GET operations of one group-version.
OrderedJson pathsOf(const GroupVersion& gv) {
  if (isResourceMetrics(gv)) return resourceMetricsPaths(gv);
  const std::string list = listDefinition(gv);
  OrderedJson paths = OrderedJson::object();
  if (list.empty()) return paths;
  const OrderedJson selectors = OrderedJson::array(
      {queryParameter("labelSelector", "selects the described objects (or series) by label"),
       queryParameter("metricLabelSelector", "selects the metric's series by label")});
  auto operation = [&](std::string id, std::string description, OrderedJson parameters) {
    for (const auto& p : selectors) parameters.push_back(p);
    return getOperation(gv, list, id, description, "get", std::move(parameters));
  };
  const std::string prefix = "/apis/" + gv.group + "/" + gv.version;
  const OrderedJson ns = pathParameter("namespace", "object name and auth scope");
  const OrderedJson metric = pathParameter("metric", "the name of the metric");
  if (gv.group == kExternalMetricsGroup) {
    paths[prefix + "/namespaces/{namespace}/{metric}"] =
        operation("Namespaced", "the values of an external metric in a namespace",
                  OrderedJson::array({ns, metric}));
    return paths;
  }
  const OrderedJson resource = pathParameter("resource", "the resource of the described objects");
  const OrderedJson name = pathParameter("name", "the described object's name, or * for all");
  paths[prefix + "/namespaces/{namespace}/{resource}/{name}/{metric}"] =
      operation("Namespaced", "a metric of namespaced objects",
                OrderedJson::array({ns, resource, name, metric}));
  paths[prefix + "/namespaces/{namespace}/metrics/{metric}"] =
      operation("Namespace", "a metric of the namespace itself", OrderedJson::array({ns, metric}));
  paths[prefix + "/{resource}/{name}/{metric}"] =
      operation("Cluster", "a metric of cluster-scoped objects",
                OrderedJson::array({resource, name, metric}));
  return paths;
}

OrderedJson definitionsFor(const OrderedJson& paths) {
  std::set<std::string> names;
  collectRefs(paths, names);
  OrderedJson out = OrderedJson::object();
  for (const std::string& name : names) out[name] = allDefinitions().at(name);
  return out;
}

const OrderedJson kInfo = {{"title", "gpuscale-adapter"}, {"version", "v1"}};

// Rewrites v2 constructs to their v3 form: refs, and path parameters' "type" into "schema".
OrderedJson toV3(OrderedJson node) {
  if (node.is_object()) {
    if (auto it = node.find("$ref"); it != node.end() && it->is_string()) {
      *it = std::string(kV3Ref) + it->get<std::string>().substr(kV2Ref.size());
    }
    for (auto& [key, child] : node.items()) child = toV3(std::move(child));
  } else if (node.is_array()) {
    for (auto& child : node) child = toV3(std::move(child));
  }
  return node;
}

OrderedJson v3Operation(const OrderedJson& v2Path) {
  OrderedJson out = OrderedJson::object();
  OrderedJson parameters = OrderedJson::array();
  for (const OrderedJson& p : v2Path["parameters"]) {
    parameters.push_back({{"name", p["name"]},
                          {"in", p["in"]},
                          {"description", p["description"]},
                          {"required", p.value("required", false)},
                          {"schema", {{"type", "string"}, {"uniqueItems", true}}}});
  }
  OrderedJson get = v2Path["get"];
  OrderedJson schema = get["responses"]["200"]["schema"];
  get.erase("consumes");
  get.erase("produces");
  get.erase("schemes");
  get["responses"] = {
      {"200", {{"description", "OK"}, {"content", {{"application/json", {{"schema", schema}}}}}}},
      {"401", {{"description", "Unauthorized"}}}};
  out["get"] = std::move(get);
  out["parameters"] = std::move(parameters);
  return toV3(std::move(out));
}

}  // namespace

std::string openApiV2Json(const std::vector<GroupVersion>& served) {
  OrderedJson paths = OrderedJson::object();
  for (const GroupVersion& gv : served) paths.update(pathsOf(gv));
  OrderedJson doc = {{"swagger", "2.0"}, {"info", kInfo}, {"paths", paths}};
  doc["definitions"] = definitionsFor(paths);
  doc["securityDefinitions"] = {{"BearerToken",
                                 {{"description", "Bearer Token authentication"},
                                  {"type", "apiKey"},
                                  {"name", "authorization"},
                                  {"in", "header"}}}};
  doc["security"] = OrderedJson::array({{{"BearerToken", OrderedJson::array()}}});
  return doc.dump();
}

std::string openApiV3Json(const GroupVersion& groupVersion) {
  const OrderedJson v2Paths = pathsOf(groupVersion);
  OrderedJson paths = OrderedJson::object();
  for (const auto& [path, item] : v2Paths.items()) paths[path] = v3Operation(item);
  OrderedJson schemas = OrderedJson::object();
  const OrderedJson definitions = definitionsFor(v2Paths);
  for (const auto& [name, schema] : definitions.items()) schemas[name] = toV3(schema);
  OrderedJson doc = {{"openapi", "3.0.0"}, {"info", kInfo}, {"paths", paths}};
  doc["components"] = {{"schemas", schemas},
                       {"securitySchemes",
                        {{"BearerToken",
                          {{"type", "apiKey"},
                           {"description", "Bearer Token authentication"},
                           {"name", "authorization"},
                           {"in", "header"}}}}}};
  return doc.dump();
}

}  // namespace gpuscale::apiserver
