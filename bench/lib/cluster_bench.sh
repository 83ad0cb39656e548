# shellcheck shell=bash
# The opening of the benchmarks that run on the real test control plane (tests/cluster), as an
# end-to-end test opens: the build folder (the script's first argument, else $GPUSCALE_BINARY_DIR,
# else build) made absolute and exported, tests/e2e/lib's common.sh and adapter_stack.sh sourced,
# and e2e_init NAME (the work folder and the exit trap). A benchmark sources it with its name and
# its own arguments:
#   source "$(dirname "$0")/../lib/cluster_bench.sh" bench-soak "$@"
export GPUSCALE_BINARY_DIR=${2:-${GPUSCALE_BINARY_DIR:-build}}
GPUSCALE_BINARY_DIR=$(cd "$GPUSCALE_BINARY_DIR" && pwd)
_cluster_bench_e2e_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../tests/e2e/lib" && pwd)
# shellcheck source=../../tests/e2e/lib/common.sh
source "$_cluster_bench_e2e_lib/common.sh"
# shellcheck source=../../tests/e2e/lib/adapter_stack.sh
source "$_cluster_bench_e2e_lib/adapter_stack.sh"
e2e_init "$1"
