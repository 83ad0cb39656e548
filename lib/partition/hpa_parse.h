// Reading an autoscaling/v2 HorizontalPodAutoscaler object into the snapshot's HpaState (its
// spec, status, conditions and the metrics with their targets and current values). Private to
// lib/partition: snapshot.cpp calls it for every HPA of a dump or a watch.
//
// Errors: a field of the wrong type throws json_fields' JsonShapeError, which the snapshot builder
// turns into a Status naming the object. Thread safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>

#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition::detail {

HpaState parseHpa(const nlohmann::json& item);

}  // namespace gpuscale::partition::detail
