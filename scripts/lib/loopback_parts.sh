# shellcheck shell=bash
# For scripts that run programs on loopback for a while (the standalone demo, the load benchmark): a temporary
# folder, background processes stopped at exit, free ports. Source it from the repository root, then:
#   parts_begin NAME   makes $work (NAME.XXXXXX under TMPDIR) and arranges that at exit every pid added to
#                      $pids is stopped and waited for, the Prometheus that tests/support/prometheus_run.sh
#                      started in $work/prometheus (if any) is stopped, and $work is removed;
#   free_port          prints a free TCP port on 127.0.0.1.

parts_begin() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  pids=()
  trap parts_cleanup EXIT
}

parts_cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  tests/support/prometheus_run.sh stop "$work/prometheus" || true
  rm -rf "$work"
}

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
