#include "gpuscale/reconciler/read_cache.h"

namespace gpuscale::reconciler {

kube::Object objectIdentity(const kube::Object& object) {
  kube::Object meta = kube::Object::object();
  const auto it = object.find("metadata");
  if (it != object.end() && it->is_object()) {
    for (const char* key : {"name", "namespace", "uid", "resourceVersion"}) {
      if (auto field = it->find(key); field != it->end()) meta[key] = *field;
    }
  }
  return {{"metadata", std::move(meta)}};
}

}  // namespace gpuscale::reconciler
