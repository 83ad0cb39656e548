# Helpers of the reconciler e2e tests; source after tests/e2e/lib/common.sh.
#
#   reconciler_test_init NAME [PROGRAM...]  e2e_init NAME; sets `here` (this directory) and `rec`;
#                                           skips (77) without the cluster binaries, gpuscale-sim,
#                                           gpuscale-reconciler or a PROGRAM; shows rec.log and
#                                           sim.log on failure
#   reconciler_start_one POLICY [FLAGS...]  one gpuscale-reconciler without leader election, its log
#                                           in $work/rec.log; waits until /readyz answers. Sets
#                                           REC_PID and REC_STATUS_PORT (the HTTPS status port).

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
  e2e_spawn "$work/rec.log" "$rec" run --kubeconfig "$KUBECONFIG" \
    --policy "$policy" --leader-elect=false --resync-period 2s --mig-timeout 60s \
    --allocatable-timeout 60s --health-bind-address "127.0.0.1:$probe_port" \
    --secure-status-bind-address "127.0.0.1:$REC_STATUS_PORT" "$@"
  REC_PID=$SPAWNED_PID
  eventually 30 "reconciler ready" curl -sf "http://127.0.0.1:$probe_port/readyz" -o /dev/null
}
