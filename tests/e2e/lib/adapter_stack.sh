# Sourced by the e2e tests and bench/scenario/run.sh: gpuscale-adapter as it runs in a cluster, on
# loopback behind the real aggregator of a tests/cluster control plane.
#
#   adapter_stack_init WORK ADAPTER_BIN RULES  after `source CLUSTER/env`; kubectl is "$KUBECTL"
#   adapter_stack_identity        namespace, ServiceAccount and RBAC from manifests/adapter, a token
#                                 and a kubeconfig for it (WORK/adapter.kubeconfig)
#   adapter_stack_sa_kubeconfig NS SA FILE  a kubeconfig for FILE with a 6 h token of ServiceAccount
#                                 NS/SA (no adapter_stack_init needed)
#   adapter_stack_certificate     a CA and a serving certificate with the Service's DNS name
#   adapter_stack_start PROM_URL  starts the adapter in in-cluster mode (delegated authn/authz, pods
#                                 LISTed from the API) on ADAPTER_PORT (a free port at first, the same
#                                 one on restarts), with the flags in the array ADAPTER_EXTRA_ARGS
#                                 appended; sets ADAPTER_PID; returns when /healthz answers
#   adapter_stack_stop [SIGNAL]   SIGTERM (or SIGNAL, e.g. KILL for a crash) and wait
#   adapter_stack_register        ExternalName Service localhost + APIServices v1beta1/v1beta2 with the
#                                 CA bundle; returns when both are Available
#   adapter_stack_register_external  APIService v1beta1.external.metrics.k8s.io on the same Service
#                                 and CA bundle (after adapter_stack_register); returns when Available
#   adapter_e2e_begin NAME TOOL...  the common start of an e2e test of the adapter (after sourcing
#                                 common.sh): e2e_init NAME; sets here (tests/e2e/NAME with '-' as
#                                 '_'), adapter and prometheus_run; requires the cluster, the adapter,
#                                 prometheus and TOOL...; stops the adapter and Prometheus on exit
#   adapter_pod_exporter NS SELECTOR  Triton counters of the Running pods of SELECTOR in NS
#                                 (adapter_hpa/pod_exporter.py, queue time in WORK/queue_us, 20 µs at
#                                 first) and a real Prometheus scraping them every second; sets
#                                 prom_url (after adapter_e2e_begin)
#   adapter_stack_metrics_reader NS SA  the ServiceAccount NS/SA, allowed to get and list custom
#                                 metrics; prints a 6 h token of it
#   adapter_exporter_prometheus   serves WORK/exporter (static metric files) over HTTP on a free port
#                                 and starts a real Prometheus scraping it every second in
#                                 WORK/prometheus; sets prom_url (after e2e_init; needs prometheus_run)
# Functions return non-zero on failure (callers run under `set -e`). Logs: WORK/adapter.log.

# Sourcing again (reconciler_identity.sh sources this file too) keeps a running adapter's state, so
# the caller's cleanup still stops it.
ADAPTER_PORT=${ADAPTER_PORT:-}
ADAPTER_PID=${ADAPTER_PID:-}
[ -n "${ADAPTER_EXTRA_ARGS+set}" ] || ADAPTER_EXTRA_ARGS=()

adapter_stack_init() { # work adapter-binary rules-file
  _as_work=$1 _as_bin=$2 _as_rules=$3
  _as_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
  : "${KUBECTL:?}" "${GPUSCALE_PKI_DIR:?}" "${GPUSCALE_APISERVER_URL:?}"
}

adapter_e2e_begin() { # name tool...
  local name=$1
  shift
  e2e_init "$name"
  here=$src/tests/e2e/${name//-/_}
  adapter=${GPUSCALE_ADAPTER_BIN:-$build/bin/gpuscale-adapter}
  prometheus_run=$src/tests/support/prometheus_run.sh
  e2e_require_cluster
  e2e_require "$adapter" /usr/bin/prometheus "$@"
  e2e_on_exit 'adapter_stack_stop'
  e2e_on_exit '"$prometheus_run" stop "$work/prometheus"'
}

adapter_pod_exporter() { # namespace selector
  echo 20 >"$work/queue_us"
  e2e_spawn "$work/exporter.log" python3 "$src/tests/e2e/adapter_hpa/pod_exporter.py" \
    --kubectl "$bin/kubectl" --namespace "$1" --selector "$2" \
    --queue-file "$work/queue_us" --port-file "$work/exporter.port"
  eventually 60 "exporter port file" test -s "$work/exporter.port"
  prom_url=$("$prometheus_run" start "$work/prometheus" \
    --scrape "127.0.0.1:$(cat "$work/exporter.port")" --interval 1s)
}

adapter_stack_metrics_reader() { # namespace service-account
  "$KUBECTL" apply -f - >/dev/null <<CALLER
apiVersion: v1
kind: ServiceAccount
metadata: {name: $2, namespace: $1}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "$1:custom-metrics-reader"}
rules:
- apiGroups: [custom.metrics.k8s.io]
  resources: ["*"]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "$1:custom-metrics-reader"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "$1:custom-metrics-reader"}
subjects: [{kind: ServiceAccount, name: $2, namespace: $1}]
CALLER
  "$KUBECTL" -n "$1" create token "$2" --duration=6h
}

adapter_exporter_prometheus() {
  local port
  port=$(free_port)
  e2e_spawn "$work/exporter.log" python3 -m http.server --bind 127.0.0.1 --directory "$work/exporter" \
    "$port"
  prom_url=$("$prometheus_run" start "$work/prometheus" --scrape "127.0.0.1:$port" --interval 1s)
}

_as_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

adapter_stack_identity() {
  local f
  # The NetworkPolicy too, so kube-apiserver validates it (the test cluster enforces none).
  for f in namespace service-account rbac network-policy; do
    "$KUBECTL" apply -f "$_as_src/manifests/adapter/$f.yaml" >/dev/null
  done
  adapter_stack_sa_kubeconfig gpuscale gpuscale-adapter "$_as_work/adapter.kubeconfig"
}

adapter_stack_sa_kubeconfig() { # namespace service-account file
  local token
  token=$("$KUBECTL" -n "$1" create token "$2" --duration=6h)
  cat >"$3" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "$GPUSCALE_APISERVER_URL", certificate-authority: "$GPUSCALE_PKI_DIR/ca.crt"}
users:
- name: $2
  user: {token: "$token"}
contexts:
- name: test
  context: {cluster: test, user: $2}
current-context: test
YAML
}

adapter_stack_certificate() {
  local tls=$_as_work/tls
  mkdir -p "$tls"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=gpuscale-test-ca \
    -keyout "$tls/ca.key" -out "$tls/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj /CN=gpuscale-adapter -keyout "$tls/serving.key" \
    -out "$tls/serving.csr" 2>/dev/null
  printf 'subjectAltName=DNS:gpuscale-adapter.gpuscale.svc,DNS:localhost,IP:127.0.0.1\n' \
    >"$tls/ext"
  openssl x509 -req -in "$tls/serving.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" \
    -CAcreateserial -days 1 -extfile "$tls/ext" -out "$tls/serving.crt" 2>/dev/null
}

adapter_stack_start() { # prometheus-url
  local attempt deadline tls=$_as_work/tls
  for attempt in 1 2 3 4 5; do
    # A restart keeps the port the APIService points at; a taken port is replaced.
    if [ -z "$ADAPTER_PORT" ] || [ "$attempt" -gt 1 ]; then ADAPTER_PORT=$(_as_free_port); fi
    "$_as_bin" serve --config "$_as_rules" --prometheus-url "$1" \
      --bind-address 127.0.0.1 --secure-port "$ADAPTER_PORT" \
      --tls-cert-file "$tls/serving.crt" --tls-private-key-file "$tls/serving.key" \
      --lister-kubeconfig "$_as_work/adapter.kubeconfig" \
      --authentication-kubeconfig "$_as_work/adapter.kubeconfig" \
      --authorization-kubeconfig "$_as_work/adapter.kubeconfig" \
      --requestheader-client-ca-file "$GPUSCALE_PKI_DIR/front-proxy-ca.crt" \
      --client-ca-file "$GPUSCALE_PKI_DIR/ca.crt" \
      --metrics-relist-interval 5s "${ADAPTER_EXTRA_ARGS[@]}" >>"$_as_work/adapter.log" 2>&1 &
    ADAPTER_PID=$!
    deadline=$((SECONDS + 60))
    while kill -0 "$ADAPTER_PID" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
      curl -sk --max-time 5 -o /dev/null "https://127.0.0.1:$ADAPTER_PORT/healthz" && return 0
      sleep 1
    done
    adapter_stack_stop
  done
  echo "the adapter did not start (log: $_as_work/adapter.log)" >&2
  return 1
}

adapter_stack_stop() { # [signal]
  [ -n "$ADAPTER_PID" ] || return 0
  kill "-${1:-TERM}" "$ADAPTER_PID" 2>/dev/null || true
  wait "$ADAPTER_PID" 2>/dev/null || true
  ADAPTER_PID=
}

_as_apiservice() { # version priority [group]
  local group=${3:-custom.metrics.k8s.io}
  cat <<YAML
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: $1.$group}
spec:
  group: $group
  version: $1
  service: {name: gpuscale-adapter, namespace: gpuscale, port: $ADAPTER_PORT}
  caBundle: $(base64 -w0 <"$_as_work/tls/ca.crt")
  groupPriorityMinimum: 100
  versionPriority: $2
YAML
}

_as_available() { # apiservice
  [ "$("$KUBECTL" get apiservice "$1" \
    -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')" = True ]
}

_as_wait_available() { # apiservice...
  local name deadline=$((SECONDS + 180))
  for name in "$@"; do
    until _as_available "$name"; do
      if [ $SECONDS -ge $deadline ]; then
        echo "APIService $name is not Available" >&2
        return 1
      fi
      sleep 1
    done
  done
}

adapter_stack_register() {
  {
    cat <<YAML
apiVersion: v1
kind: Service
metadata: {name: gpuscale-adapter, namespace: gpuscale}
spec: {type: ExternalName, externalName: localhost}
YAML
    _as_apiservice v1beta1 100
    _as_apiservice v1beta2 200
  } | "$KUBECTL" apply -f - >/dev/null
  _as_wait_available v1beta1.custom.metrics.k8s.io v1beta2.custom.metrics.k8s.io
}

adapter_stack_register_external() {
  _as_apiservice v1beta1 100 external.metrics.k8s.io | "$KUBECTL" apply -f - >/dev/null
  _as_wait_available v1beta1.external.metrics.k8s.io
}
