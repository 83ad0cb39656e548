// The keys of one policy, declared once (core::YamlFields): the parser (policy.cpp) and the
// generated reference (policy_reference.cpp) both run this declaration, so the reference lists
// exactly the keys the parser accepts, with the defaults of a default Policy.
#pragma once

#include "gpuscale/core/yaml_fields.h"
#include "gpuscale/partition/policy.h"

namespace gpuscale::partition {

// Declares every key of a policy mapping on `fields`, bound to `p`; `*hasSelector` is set when
// hpaSelector is given (the parser checks it against hpaNamespaces).
void declarePolicyFields(core::YamlFields& fields, Policy& p, bool* hasSelector);

}  // namespace gpuscale::partition
