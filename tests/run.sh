#!/usr/bin/env bash
# run.sh BUILD -- runs every test program of a build folder (unit tests, the layering
# check, the command-line tests) and ends with the line "N passed, N failed" (their sum).
# Each program ends with its own line "NAME: N passed, N failed"; one that does not, or
# that fails without counting a failure, counts as a failure.
set -u
build=${1:-build/test}
cd "$(dirname "$0")/.." || exit 2
[ -x "$build/unit_tests" ] && [ -x "$build/hetplan" ] || { echo "run.sh: build $build first (make test)"; exit 2; }

passed=0; failed=0; skipped=0
run() {   # run NAME cmd...
  local name=$1 out rc p f; shift
  out=$("$@" 2>&1); rc=$?
  echo "$out"
  read -r p f <<<"$(echo "$out" | sed -n "s/^$name: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p" | tail -1)"
  if [ -z "${p:-}" ]; then
    echo "run.sh: $name did not report its counts (rc $rc)"
    failed=$((failed + 1)); return
  fi
  passed=$((passed + p)); failed=$((failed + f))
  s=$(echo "$out" | sed -n "s/^$name: \([0-9]*\) skipped$/\1/p" | tail -1)
  skipped=$((skipped + ${s:-0}))
  [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && failed=$((failed + 1))
}
run unit "$build/unit_tests"
run layers ./tests/layers/check_layers.sh "$build"
run cli env HETPLAN="$build/hetplan" ./tests/cli/test_cli.sh
run flags env HETPLAN="$build/hetplan" ./tests/cli/test_flags.sh
run outputs env HETPLAN="$build/hetplan" ./tests/cli/test_outputs.sh
run users env HETPLAN="$build/hetplan" ./tests/cli/test_users.sh
run launch env HETPLAN="$build/hetplan" ./tests/cli/test_launch.sh
run replan env HETPLAN="$build/hetplan" ./tests/cli/test_replan.sh
run calibrate env HETPLAN="$build/hetplan" ./tests/cli/test_calibrate.sh
run probe env HETPLAN="$build/hetplan" PROBE="$build/probe_bounds" ./tests/cli/test_probe.sh
run readme env HETPLAN="$build/hetplan" ./tests/cli/test_readme.sh
run mpi env HETPLAN="$build/hetplan" ./tests/cli/test_mpi.sh
# the evaluator against an independent implementation of cost-model.md 1.2 (python3) on
# 300 random instances with every field, 1e-9 relative
run ref env HETPLAN="$build/hetplan" ./scripts/ref_check12.sh 300
run profiler ./tests/profiler/test_profiler.sh "$build"
[ "$skipped" -gt 0 ] && echo "$skipped skipped (not counted as passed)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
