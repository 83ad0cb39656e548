// PodCache: the reconciler's Pods, each read once per change into a typed record
// (partition/pod_record.h), so a pass builds its snapshot from typed values instead of reading
// tens of thousands of Pods' JSON again every pass, and the Pods' JSON is not kept at all: the
// informer's store keeps only each Pod's identity (StoreKeeps::kIdentity), or with
// --trim-cached-objects=false the whole object besides (the baseline the fleet benchmark measures
// against). The snapshot shares the records' PodStates instead of copying them
// (partition/pod_list.h).
//
// How it sits on the Pod informer, and its thread safety: read_cache.h.
#pragma once

#include "gpuscale/partition/pod_record.h"
#include "gpuscale/reconciler/read_cache.h"

namespace gpuscale::reconciler {

class PodCache : public ReadCache<partition::PodRecord> {
 public:
  using Record = Ptr;
  PodCache() : ReadCache(partition::readPodRecord) {}
};

}  // namespace gpuscale::reconciler
