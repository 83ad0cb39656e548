# Helpers of the reconciler e2e tests; source after tests/e2e/lib/common.sh.
#
#   reconciler_test_init NAME [PROGRAM...]  e2e_init NAME; sets `here` (this directory) and `rec`;
#                                           skips (77) without the cluster binaries, gpuscale-sim,
#                                           gpuscale-reconciler or a PROGRAM; shows rec.log and
#                                           sim.log on failure
#   reconciler_start_one POLICY [FLAGS...]  one gpuscale-reconciler without leader election, its log
#                                           in $work/rec.log; waits until /readyz answers. Sets
#                                           REC_PID and REC_STATUS_PORT (the HTTPS status port). It
#                                           runs as it does in a cluster: with the ServiceAccount
#                                           token, RBAC and admission policies of manifests/reconciler
#                                           (tests/e2e/lib/reconciler_identity.sh; the base's
#                                           read-only RBAC with --mode=observe, plus
#                                           components/act's grants otherwise), its state in
#                                           gpuscale; a write they refuse fails the test's story.
#   reconciler_fault_proxy                  fault_proxy.py in front of kube-apiserver (log:
#                                           $work/proxy.log), with no faults yet; writes
#                                           $work/proxied.kubeconfig (the admin's, through it) and
#                                           sets FAULT_RULES (its rules file); a bearer token (the
#                                           ServiceAccount's) goes through to kube-apiserver as is
#   proxied KUBECONFIG                      prints KUBECONFIG with the fault proxy as its server
#   set_rules JSON                          replaces the proxy's rules at once (see fault_proxy.py)

reconciler_test_init() { # name [program...]
  E2E_POLL=0.5
  e2e_init "$1"
  shift
  here=$src/tests/e2e/reconciler
  rec=$build/bin/gpuscale-reconciler
  e2e_require_cluster
  e2e_require "$sim" "$rec" "$@"
  e2e_show_on_failure "$work/rec.log" "$work/sim.log"
}

reconciler_start_one() { # policy [flags...]
  local policy=$1 probe_port
  shift
  probe_port=$(free_port)
  REC_STATUS_PORT=$(free_port)
  # shellcheck source=../lib/reconciler_identity.sh
  source "$src/tests/e2e/lib/reconciler_identity.sh"
  # The RBAC of the mode it runs in: read-only for --mode=observe, with act's grants otherwise.
  local mode=act
  case " $* " in *" --mode=observe "*) mode=observe ;; esac
  reconciler_identity "$work/reconciler.kubeconfig" "$mode"
  e2e_spawn "$work/rec.log" "$rec" run --kubeconfig "$work/reconciler.kubeconfig" \
    --state-namespace gpuscale \
    --policy "$policy" --leader-elect=false --resync-period 2s --mig-timeout 60s \
    --allocatable-timeout 60s --health-bind-address "127.0.0.1:$probe_port" \
    --secure-status-bind-address "127.0.0.1:$REC_STATUS_PORT" "$@"
  REC_PID=$SPAWNED_PID
  eventually 30 "reconciler ready" curl -sf "http://127.0.0.1:$probe_port/readyz" -o /dev/null
}

reconciler_fault_proxy() {
  FAULT_RULES=$work/rules.json
  set_rules '{}'
  e2e_spawn "$work/proxy.log" python3 "$src/tests/e2e/reconciler/fault_proxy.py" \
    --upstream "$GPUSCALE_APISERVER_URL" --ca "$GPUSCALE_CA_CERT" \
    --client-cert "$GPUSCALE_ADMIN_CERT" --client-key "$GPUSCALE_ADMIN_KEY" \
    --serve-cert "$GPUSCALE_PKI_DIR/apiserver.crt" --serve-key "$GPUSCALE_PKI_DIR/apiserver.key" \
    --rules "$FAULT_RULES" --port-file "$work/proxy.port"
  eventually 30 "fault proxy port file" test -s "$work/proxy.port"
  proxied "$KUBECONFIG" >"$work/proxied.kubeconfig"
}

proxied() { # kubeconfig: the same kubeconfig through the fault proxy (on stdout)
  sed "s#\(server: *\"\{0,1\}\)https://[^\",} ]*#\1https://127.0.0.1:$(cat "$work/proxy.port")#" "$1"
}

set_rules() { # json
  printf '%s\n' "$1" >"$FAULT_RULES.tmp" && mv "$FAULT_RULES.tmp" "$FAULT_RULES"
}
