// RequestInfo: what a request asks for, in the terms Kubernetes authorization uses.
//
// Same algorithm as k8s.io/apiserver's RequestInfoFactory (API prefixes "api" and "apis", "api"
// groupless):
// `/apis/<group>/<version>/[namespaces/<ns>/]<resource>[/<name>[/<subresource>]]` is a resource
// request; everything else (`/apis`, `/apis/<group>`, `/apis/<group>/<version>`, `/healthz`,
// `/metrics`, ...) is a non-resource request (path + lower-case method as verb). Examples for the
// metrics APIs:
//   /apis/custom.metrics.k8s.io/v1beta1/namespaces/default/pods/*/m
//       -> get, group custom.metrics.k8s.io, ns default, resource pods, name "*", subresource m
//   /apis/custom.metrics.k8s.io/v1beta1/namespaces/ns1/metrics/foo -> resource "metrics", name
//   "foo" /apis/external.metrics.k8s.io/v1beta1/namespaces/ns/queue_depth -> list, resource
//   queue_depth
// A SubjectAccessReview is built from these fields as they are.
//
// Thread safety: pure function; immutable value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/apiserver/url.h"

namespace gpuscale::apiserver {

struct RequestInfo {
  bool isResourceRequest = false;
  std::string path;       // the decoded request path
  std::string verb;       // get, list, watch, create, update, patch, delete, deletecollection; or
                          // lower-case method
  std::string apiPrefix;  // "apis" or "api"
  std::string apiGroup;   // "" for the core group
  std::string apiVersion;
  std::string namespaceName;
  std::string resource;
  std::string subresource;
  std::string name;
  std::vector<std::string> parts;  // path parts from the resource on (after namespace handling)
};

// `path` is the decoded path; `query` supplies `watch` and `fieldSelector` (a `metadata.name=`
// selector names the object of a list, as in Kubernetes).
RequestInfo parseRequestInfo(std::string_view method, std::string_view path,
                             const QueryParams& query);

// Splits "/a/b/c/" into {"a","b","c"} (leading and trailing slashes trimmed, inner empty parts
// kept).
std::vector<std::string> splitPath(std::string_view path);

}  // namespace gpuscale::apiserver
