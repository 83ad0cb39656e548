#!/usr/bin/env bash
# The demo: the adapter serving avg_time_queue_us from a real Prometheus. Lands with the serving issue.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "demo: not yet available (the adapter's serving path is still being built); run scripts/test.sh"
