#!/usr/bin/env bash
# run.sh BUILD SECONDS TARGET... -- runs each libFuzzer target of BUILD (built by `make
# fuzz`) for SECONDS, one at a time (one job: -jobs is not used), on a corpus kept in
# BUILD/corpus/TARGET and seeded from the repository's files of that kind (models/,
# tests/bad/, tests/cases/, examples/) and from the regression inputs of tests/fuzz/TARGET.
# Crashes, leaks and hangs land in BUILD/artifacts/TARGET/; copy each into
# tests/fuzz/TARGET/ (the replay test of `make test` runs them through the loader).
# Prints one line per target: executions, crashes, time; and appends it to
# BUILD/summary.txt.
set -u
build=$1; secs=$2; shift 2
cd "$(dirname "$0")/.." || exit 2
[ $# -gt 0 ] || set -- model cluster profile plan job hf

seeds() {   # seeds KIND: the repository's files of that kind
  case $1 in
    model)   for f in models/*.json tests/cases/*.json examples/tiny/model.json; do
               case $f in *.profile.json) ;; *) grep -q '"device_types"' "$f" || echo "$f" ;; esac; done
             ls tests/bad/model_*.json ;;
    cluster) for f in models/*.json examples/tiny/cluster.json; do
               case $f in *.profile.json) ;; *) grep -q '"device_types"' "$f" && echo "$f" ;; esac; done
             ls tests/bad/cluster_*.json ;;
    profile) ls models/*.profile.json examples/tiny/profile.json tests/bad/profile_*.json ;;
    plan)    ls examples/tiny/plan*.json examples/*.plan.json tests/bad/plan_*.json ;;
    job)     ls examples/tiny/job.json tests/bad/job_*.json ;;
    hf)      ls tests/fuzz/hf/* ;;
  esac
}

status=0
for t in "$@"; do
  bin=$build/fuzz-$t
  [ -x "$bin" ] || { echo "run.sh: $bin is not built (make fuzz)"; exit 2; }
  corpus=$build/corpus/$t; art=$build/artifacts/$t
  mkdir -p "$corpus" "$art"
  for f in $(seeds $t) tests/fuzz/$t/*; do [ -f "$f" ] && cp "$f" "$corpus/seed-$(basename "$f")"; done
  log=$build/fuzz-$t.log
  before=$(ls "$art" | wc -l)
  start=$(date +%s)
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=3072 -max_len=32768 \
           -dict=fuzz/hetplan.dict -print_final_stats=1 -artifact_prefix="$art/" \
           "$corpus" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  found=$(( $(ls "$art" | wc -l) - before ))
  line="$(date -u +%FT%TZ) $t: ${execs:-0} executions, $found new crash/leak/timeout inputs, $(( $(date +%s) - start )) s, exit $rc"
  echo "$line" | tee -a "$build/summary.txt"
  [ "$found" -gt 0 ] || [ "$rc" -ne 0 ] && { status=1; ls "$art"; tail -30 "$log"; }
done
exit $status
