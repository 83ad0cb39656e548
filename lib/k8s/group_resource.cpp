#include "gpuscale/k8s/group_resource.h"

namespace gpuscale::k8s {

std::string GroupResource::toString() const {
  return group.empty() ? resource : resource + "." + group;
}

GroupResource GroupResource::parse(std::string_view text) {
  size_t dot = text.find('.');
  if (dot == std::string_view::npos) return {"", std::string(text)};
  return {std::string(text.substr(dot + 1)), std::string(text.substr(0, dot))};
}

}  // namespace gpuscale::k8s
