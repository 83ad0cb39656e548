// The OpenAPI documents of the metrics API groups this server serves, for kube-apiserver's OpenAPI
// aggregation (it downloads /openapi/v2 and, for v3, /openapi/v3 then each group-version's
// document) and for clients of the aggregated spec (`kubectl explain`, client generators).
//
//   /openapi/v2                      Swagger 2.0: paths of every served group-version and the
//                                    definitions they use
//   /openapi/v3                      {"paths": {"apis/<group>/<version>": {"serverRelativeURL":
//                                    "/openapi/v3/apis/<group>/<version>?hash=<HASH>"}}}
//   /openapi/v3/apis/<group>/<version>  OpenAPI 3.0 document of that group-version alone
//
// Definitions use the names Kubernetes gives them (io.k8s.metrics.pkg.apis.custom_metrics.v1beta1.
// MetricValueList, io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics,
// io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta, ...), with the x-kubernetes-group-version-kind of
// the kinds answered; ObjectMeta carries only the fields metrics.k8s.io objects have. The documents
// are built once (they depend only on the served group-versions) and answered as JSON: with an ETag
// (the quoted upper-case hex SHA-512 of the body, which is also the v3 `hash`), 304 for a matching
// If-None-Match, 406 when the Accept header admits no plain JSON (the protobuf forms are not
// served), 404 for group-versions not served. A v3 request whose `hash` matches is marked
// immutable, as kube-apiserver does.
//
// Thread safety: immutable after construction; answer() is thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuscale/apiserver/http_message.h"

namespace gpuscale::apiserver {

struct GroupVersion {
  std::string group;
  std::string version;
};

class OpenApiDocuments {
 public:
  // Group-versions this server serves; ones without known schemas get paths-less documents.
  explicit OpenApiDocuments(const std::vector<GroupVersion>& served);

  // The answer for `request` when its path is one of the above, nullopt otherwise.
  std::optional<HttpResponse> answer(const HttpRequest& request) const;

  // The documents' bodies, by path ("/openapi/v2", "/openapi/v3", "/openapi/v3/apis/g/v").
  const std::string* body(const std::string& path) const;

 private:
  struct Document {
    std::string body;
    std::string hash;  // upper-case hex SHA-512 of body
  };
  std::map<std::string, Document> documents_;
};

// What the documents are made of (openapi_schemas.cpp): the Swagger 2.0 document of `served`, and
// the OpenAPI 3.0 document of one group-version. Exposed for tests.
std::string openApiV2Json(const std::vector<GroupVersion>& served);
std::string openApiV3Json(const GroupVersion& groupVersion);

}  // namespace gpuscale::apiserver
