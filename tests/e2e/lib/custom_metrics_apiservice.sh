#!/usr/bin/env bash
# Prints, for `kubectl apply -f -`, the ExternalName Service SERVICE in NAMESPACE (externalName:
# localhost, so kube-apiserver dials https://localhost:PORT) and the APIService
# v1beta1.GROUP backed by it (GROUP: custom.metrics.k8s.io unless given, e.g.
# external.metrics.k8s.io). With CA_FILE the aggregator verifies the backend against that CA
# (caBundle); without it (or with ''), it skips verification.
# Usage: custom_metrics_apiservice.sh SERVICE NAMESPACE PORT [CA_FILE [GROUP]]
set -euo pipefail
[ $# -ge 3 ] || {
  echo "usage: $0 SERVICE NAMESPACE PORT [CA_FILE [GROUP]]" >&2
  exit 2
}
service=$1 namespace=$2 port=$3 ca_file=${4:-} group=${5:-custom.metrics.k8s.io}
if [ -n "$ca_file" ]; then
  trust="caBundle: $(base64 -w0 <"$ca_file")"
else
  trust="insecureSkipTLSVerify: true"
fi
cat <<YAML
apiVersion: v1
kind: Service
metadata: {name: $service, namespace: $namespace}
spec: {type: ExternalName, externalName: localhost}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.$group}
spec:
  group: $group
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  $trust
  service: {name: $service, namespace: $namespace, port: $port}
YAML
