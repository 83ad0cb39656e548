#include "gpuscale/partition/object_record.h"

#include <utility>

namespace gpuscale::partition {
namespace {

template <class T>
ObjectRecord recordOf(std::string_view kind, const nlohmann::json& object, core::Result<T> read) {
  ObjectRecord record;
  if (read) {
    record.value = std::move(*read);
  } else {
    record.skipped = skippedObject(kind, object, read.status());
  }
  return record;
}

bool isWorkload(std::string_view kind) {
  return kind == "Deployment" || kind == "StatefulSet" || kind == "ReplicaSet";
}

}  // namespace

bool readsAsRecord(std::string_view kind) {
  return kind == "Node" || kind == "HorizontalPodAutoscaler" || isWorkload(kind);
}

ObjectRecord readObjectRecord(std::string_view kind, const nlohmann::json& object) {
  if (kind == "Node") return recordOf(kind, object, readNode(object));
  if (kind == "HorizontalPodAutoscaler") return recordOf(kind, object, readHpa(object));
  return recordOf(kind, object, readWorkload(object, kind));
}

}  // namespace gpuscale::partition
