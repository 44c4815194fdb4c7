#!/usr/bin/env bash
# valgrind_cli.sh "VALGRIND COMMAND" HETPLAN -- a few hetplan commands under valgrind:
# loaders, evaluator, simulator, the layer DP, a MIP backend, and an error path. Any
# memory error or definite leak makes valgrind exit 99, and the check fails.
set -u
vg=$1; H=$2
cd "$(dirname "$0")/.." || exit 2
T=examples/tiny
tiny=(--model $T/model.json --cluster $T/cluster.json --gbs 8)
AMP=(--model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json --gbs 32)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0; n=0
run() {   # run EXPECTED_CODE args...
  local want=$1 rc; shift; n=$((n + 1))
  $vg "$H" "$@" >"$tmp/out" 2>&1; rc=$?
  if [ "$rc" -ne "$want" ]; then fails=$((fails + 1)); echo "valgrind: FAIL (exit $rc, expected $want): hetplan $*"; tail -20 "$tmp/out"
  else echo "valgrind: ok: hetplan $*"; fi
}
run 0 evaluate "${tiny[@]}" --plan $T/plan.json --json
run 0 simulate "${tiny[@]}" --plan $T/plan.json --json
run 0 plan "${tiny[@]}" --solver enum -o $tmp/p.json
run 0 plan "${AMP[@]}" --solver dp -o $tmp/amp.json
run 0 evaluate "${AMP[@]}" --plan $tmp/amp.json
for s in glpk cbc; do
  if "$H" solvers | grep -q "^$s "; then run 0 plan "${tiny[@]}" --solver $s --time-limit 60 -o $tmp/$s.json; fi
done
run 3 evaluate --model tests/bad/model_syntax.json --cluster $T/cluster.json --gbs 8 --plan $T/plan.json
run 4 evaluate "${tiny[@]}" --plan tests/bad/plan_not_bijection.json
echo "valgrind: $((n - fails)) of $n commands clean"
[ "$fails" -eq 0 ]
