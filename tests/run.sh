#!/usr/bin/env bash
# run.sh BUILD -- runs the unit tests and the command-line tests of a build folder and
# ends with the line "N passed, N failed" (the sum of both).
set -u
build=${1:-build/test}
cd "$(dirname "$0")/.." || exit 2
[ -x "$build/unit_tests" ] && [ -x "$build/hetplan" ] || { echo "run.sh: build $build first (make test)"; exit 2; }

unit_out=$("$build/unit_tests" 2>&1); unit_rc=$?
echo "$unit_out"
cli_out=$(HETPLAN="$build/hetplan" ./tests/cli/test_cli.sh 2>&1); cli_rc=$?
echo "$cli_out"

count() { echo "$1" | sed -n "s/^$2: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p" | tail -1; }
read -r up uf <<<"$(count "$unit_out" unit)"
read -r cp cf <<<"$(count "$cli_out" cli)"
if [ -z "${up:-}" ] || [ -z "${cp:-}" ]; then
  echo "run.sh: a test program did not report its counts (unit rc $unit_rc, cli rc $cli_rc)"
  echo "0 passed, 1 failed"
  exit 1
fi
passed=$((up + cp)); failed=$((uf + cf))
[ "$unit_rc" -ne 0 ] && [ "$uf" -eq 0 ] && failed=$((failed + 1))
[ "$cli_rc" -ne 0 ] && [ "$cf" -eq 0 ] && failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
