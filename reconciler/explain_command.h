// `gpuscale-reconciler explain`: why an HPA was (not) raised, from a live cluster or a dump.
//
//   explain [NAMESPACE/NAME | --hpa NAMESPACE/NAME] [--from DUMP.json | --kubeconfig PATH]
//           [--config POLICY.yaml] [--operator-namespace NS] [--state-namespace NS]
//           [--state-config-map NAME] [--now RFC3339] [-o text|json]
//           [--gpu-mapping node|dcgm --prometheus-url URL, the --dcgm-* and --prometheus-* flags]
//
// Live, it lists once what the controller watches (read-only) plus the state ConfigMap; with
// --from it reads a `kubectl get nodes,pods,hpa,deployments,statefulsets,configmaps -A -o json`
// dump. It then plans as a pass would and prints each HPA's reasons (reconciler/hpa_explain.h).
// Without a name it explains every HPA a policy manages. Exit 0 when the explanation was printed,
// 1 when the cluster could not be read or the HPA does not exist, 2 for bad usage or input.
#pragma once

#include "gpuscale/core/subcommands.h"

namespace gpuscale::reconciler {

// The command's handler (core::flagCommand).
core::CommandHandler explainCommand();

}  // namespace gpuscale::reconciler
