#!/usr/bin/env bash
# Starts and stops a real Prometheus for shell-driven tests and the demo (the C++ twin is prometheus_server.h).
#
#   prometheus_run.sh start DIR [--scrape HOST:PORT]... [--interval 1s] [--route-prefix /p]
#                               [--web-config FILE] [--storage PATH] [--port N] [--address IP]
#   prometheus_run.sh stop DIR
#
# start: runs prometheus (Debian's, or the one in $GPUSCALE_PROMETHEUS_DIR) on a free 127.0.0.1 port
# with its configuration, log and (unless --storage) storage in DIR, waits until /-/ready answers
# (at most 60 s), and writes DIR/url and DIR/pid. It prints the URL. --port N listens on that port
# instead (a restart where its clients expect it; retries keep it). --address IP listens on IP
# instead of 127.0.0.1 (a test bridge's address, for pods).
# stop: SIGTERM, then SIGKILL after 10 s, for the process recorded in DIR/pid.
# Exit codes: 0 ok, 1 failure (the log tail is printed), 2 usage, 77 prometheus not installed.
set -euo pipefail

usage() { sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
command=$1 dir=$2
address=127.0.0.1
prometheus=${GPUSCALE_PROMETHEUS_DIR:-/usr/bin}/prometheus
shift 2

stop() {
  [ -f "$dir/pid" ] || return 0
  local pid
  pid=$(cat "$dir/pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/pid"
}

free_port() {
  python3 -c 'import socket, sys; s=socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])' \
    "$address"
}

start() {
  if [ -n "${GPUSCALE_PROMETHEUS_DIR:-}" ]; then
    [ -x "$prometheus" ] || { echo "$prometheus is not built" >&2; exit 1; }
  fi
  [ -x "$prometheus" ] || { echo "prometheus is not installed" >&2; exit 77; }
  local targets=() interval=1s prefix="" web_config="" storage="$dir/data" fixed_port=""
  while [ $# -gt 0 ]; do
    case $1 in
      --scrape) targets+=("'$2'"); shift 2 ;;
      --interval) interval=$2; shift 2 ;;
      --route-prefix) prefix=$2; shift 2 ;;
      --web-config) web_config=$2; shift 2 ;;
      --storage) storage=$2; shift 2 ;;
      --port) fixed_port=$2; shift 2 ;;
      --address) address=$2; shift 2 ;;
      *) usage ;;
    esac
  done
  mkdir -p "$dir" "$storage"
  local joined
  joined=$(IFS=,; echo "${targets[*]:-}")
  cat > "$dir/prometheus.yml" <<YAML
global:
  scrape_interval: $interval
  evaluation_interval: $interval
scrape_configs:
  - job_name: exporter
    static_configs:
      - targets: [$joined]
YAML
  local args=(--config.file="$dir/prometheus.yml" --storage.tsdb.path="$storage" --log.level=warn)
  [ -n "$web_config" ] && args+=(--web.config.file="$web_config")
  local scheme=http
  [ -n "$web_config" ] && grep -q tls_server_config "$web_config" && scheme=https
  for _ in 1 2 3 4 5; do
    local port
    port=${fixed_port:-$(free_port)}
    local url="$scheme://$address:$port$prefix"
    local run=("${args[@]}" --web.listen-address="$address:$port")
    [ -n "$prefix" ] && run+=(--web.route-prefix="$prefix" --web.external-url="$url")
    "$prometheus" "${run[@]}" >>"$dir/prometheus.log" 2>&1 &
    echo $! > "$dir/pid"
    for _ in $(seq 600); do
      if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then break; fi
      if curl -ksf -o /dev/null "$url/-/ready"; then
        echo "$url" > "$dir/url"
        echo "$url"
        return 0
      fi
      sleep 0.1
    done
    stop
  done
  tail -n 20 "$dir/prometheus.log" >&2
  exit 1
}

case $command in
  start) start "$@" ;;
  stop) stop ;;
  *) usage ;;
esac
