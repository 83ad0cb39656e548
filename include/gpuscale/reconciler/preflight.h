// Preflight: `gpuscale-reconciler preflight` tells an operator, before switching the reconciler
// from observe to act, whether the cluster is ready for it. Read-only: it sends no write but
// SelfSubjectAccessReviews (which change nothing).
//
// The checks, in order (one line each; a check that cannot run says why):
//   api                  kube-apiserver answers (/version). When it does not, nothing else runs.
//   permissions          the identity of the client (the ServiceAccount's token in the pod, or a
//                        kubeconfig) may do everything act mode does: one SelfSubjectAccessReview
//                        per verb and resource (actPermissions()); fail lists each one missing.
//   api GROUP/VERSION    per group version of the kinds the controller watches where served
//                        (resource.k8s.io/v1: the DRA kinds; gpuscale.io/v1alpha1: the
//                        GPUCapacityRequest CRD): not served is a warning (they are planned
//                        without); served, list and watch on each kind (fail if missing).
//   operator-namespace   the GPU Operator's namespace exists (a Namespace this identity may not
//                        read is a warning, not a failure).
//   stock-mig-config     the operator's stock mig-parted ConfigMap, whose configs the reconciler
//                        carries over into its own.
//   mig-config           the reconciler's mig-parted ConfigMap: present, or (warn) created on the
//                        first MIG change.
//   device-plugin-config the device plugin's ConfigMap: present, or (warn) created on the first
//                        time-slicing change.
//   cluster-policy       each ClusterPolicy (nvidia.com/v1) names the reconciler's ConfigMaps in
//                        spec.migManager.config.name and spec.devicePlugin.config.name (fail, with
//                        the patch that fixes it, when not); no ClusterPolicy CRD or no right to
//                        read it is a warning. Each ClusterPolicy's MIG strategy
//                        (spec.mig.strategy).
//   gpu-operator         the GPU Operator's Deployment in its namespace and its release (the image
//                        tag); not found or not readable is a warning.
//   mig-manager          the mig-manager and device-plugin DaemonSets of the operator's namespace
//   device-plugin        and how many of their pods are ready (absent, not all ready, or not
//                        readable: a warning).
//   gpu-nodes            Nodes with GPU feature discovery's labels (nvidia.com/gpu.product or
//                        nvidia.com/gpu.present=true); none is a failure.
//   node NAME            per GPU node: its product and nvidia.com/mig.config and
//                        nvidia.com/mig.config.state (failed: fail; pending or rebooting: warn).
//   policy NAME          with the policy file: how many GPU nodes each policy may change
//                        (Policy::selectsNode: nodeSelector, excludeNodes); none is a warning.
//   scale-target KIND    per kind HPAs scale beside Deployments and StatefulSets (a
//                        LeaderWorkerSet, a custom resource): served with a /scale subresource
//                        (warn when not: those HPAs are skipped) and readable by this identity
//                        (list, watch, get <resource>/scale; fail when not).
//
// Thread safety: a function; the client must be thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuscale/kube/client.h"
#include "gpuscale/partition/policy.h"
#include "gpuscale/reconciler/operator_config_maps.h"

namespace gpuscale::reconciler {

struct PreflightOptions : OperatorConfigMaps {
  std::string ns = "gpuscale";  // the reconciler's namespace: its state ConfigMap and Lease
  std::string stateConfigMap = "gpuscale-reconciler-state";
  std::string leaseName = "gpuscale-reconciler";
  const partition::PolicySet* policies = nullptr;  // null: no per-policy node scope
};

enum class CheckOutcome { kOk, kWarn, kFail };
std::string_view checkOutcomeName(CheckOutcome outcome);  // "ok" | "warn" | "fail"

struct PreflightCheck {
  std::string name;  // "api", "permissions", ..., "node gpu-0"
  CheckOutcome outcome = CheckOutcome::kOk;
  std::string detail;  // what was found
  std::string hint;    // what to change (empty when nothing)
};

struct PreflightReport {
  std::vector<PreflightCheck> checks;
  bool passed() const;  // no check failed
};

// One permission act mode needs, as a SelfSubjectAccessReview asks it.
struct Permission {
  std::string verb;
  std::string group;
  std::string resource;
  std::string subresource;
  std::string ns;    // "" = cluster-wide
  std::string name;  // "" = any
  // "patch nodes", "update configmaps gpu-operator/device-plugin-config", "get deployments/scale".
  std::string text() const;
};
std::vector<Permission> actPermissions(const PreflightOptions& options);

PreflightReport preflight(kube::KubeClient& client, const PreflightOptions& options);

// One line per check: "ok   api: kube-apiserver v1.31.0", the hint indented below when set.
std::string preflightText(const PreflightReport& report);
// {"passed": bool, "checks": [{"name", "result", "detail", "hint"}]}
std::string preflightJson(const PreflightReport& report);

}  // namespace gpuscale::reconciler
