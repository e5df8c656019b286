#!/usr/bin/env bash
# Measure crowdsafe issue 20's DP peer baselines in their own pinned virtual environments
# (never crowdsafe dependencies) and write their JSON to bench/results/.
#   bash bench/peers/run.sh            # both peers, default grids
#   bash bench/peers/run.sh dplr       # only the DP logistic regression (~20 s)
#   bash bench/peers/run.sh synth      # only the synthetic data (about an hour, see README)
# Extra arguments after the peer name go to its script, e.g. `run.sh synth --methods mst`.
# PYTHON picks the interpreter for the venvs (dpmm needs 3.10 or 3.11; default python3).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
results="$here/../results"
python="${PYTHON:-python3}"
mkdir -p "$results"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMEXPR_NUM_THREADS=1

venv() {  # venv NAME: create bench/peers/.venv-NAME from requirements-NAME.txt (once)
    local dir="$here/.venv-$1"
    if [ ! -x "$dir/bin/python" ]; then
        "$python" -m venv "$dir"
        "$dir/bin/pip" install --quiet --requirement "$here/requirements-$1.txt"
    fi
    "$dir/bin/pip" check >&2
}

run() {  # run NAME SCRIPT OUT [ARGS...]: the script's JSON goes to a temporary file first,
    local name="$1" script="$2" out="$3"  # so a failed run never overwrites a result
    shift 3
    venv "$name"
    local tmp="$out.tmp"
    nice -n 10 "$here/.venv-$name/bin/python" "$here/$script" "$@" > "$tmp"
    mv "$tmp" "$out"
    echo "wrote $out" >&2
}

which="${1:-all}"
[ $# -gt 0 ] && shift
case "$which" in
    dplr) run dplr dp_logistic.py "$results/peers-dplr.json" "$@" ;;
    synth) run synth synthetic.py "$results/peers-synth.json" "$@" ;;
    all)
        run dplr dp_logistic.py "$results/peers-dplr.json"
        run synth synthetic.py "$results/peers-synth.json"
        ;;
    *) echo "usage: run.sh [all|dplr|synth] [script arguments]" >&2; exit 2 ;;
esac
