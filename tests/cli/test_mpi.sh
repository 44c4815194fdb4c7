#!/usr/bin/env bash
# test_mpi.sh -- issue 13: `mpirun -np N hetplan plan` with the MIP solvers. Rank 0 must
# write the same plan file as a plain run (no mpirun), with 1, 2 and 4 processes under
# --oversubscribe: identical apart from the effort fields ("seconds" and "work": how many
# states each process explored depends on what the others had found). Also: an
# interrupted team still writes rank 0's best plan; a solver that does not share its
# search runs on rank 0 alone; another command runs on rank 0 alone. Skips (counted
# apart, never as passes) where mpirun is missing or the build has no MPI.
# Ends with "mpi: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
H=${HETPLAN:-build/hetplan}
H=$(cd "$(dirname "$H")" && pwd)/$(basename "$H")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; skipped=0
ok()   { passed=$((passed + 1)); echo "ok $((passed + failed + skipped)) $1"; }
bad()  { failed=$((failed + 1)); echo "not ok $((passed + failed + skipped)) $1"; shift; printf '  %s\n' "$@"; }
skip() { skipped=$((skipped + 1)); echo "ok $((passed + failed + skipped)) $1 # skip $2"; }
finish() { [ $skipped -gt 0 ] && echo "mpi: $skipped skipped"; echo "mpi: $passed passed, $failed failed"; exit $([ $failed -eq 0 ] && echo 0 || echo 1); }

# Open MPI refuses root unless told; the test machines run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
if ! command -v mpirun >/dev/null 2>&1; then
  skip mpi_team "mpirun not found (Debian: openmpi-bin)"; finish
fi
if ! ldd "$H" 2>/dev/null | grep -q libmpi; then
  skip mpi_team "this hetplan is built without MPI (make MPI=0, or no mpicc)"; finish
fi
MPIRUN="mpirun --oversubscribe"
# Under make check-asan: Open MPI, PMIx and their plugins keep allocations to the end by
# design; the plugins stay loaded (so LeakSanitizer can name them), stacks are unwound in
# full, and what they hold is suppressed (lsan-mpi.supp); a leak of hetplan's own still fails.
export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
export LSAN_OPTIONS="suppressions=$PWD/tests/cli/lsan-mpi.supp:print_suppressions=0"
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
# strip what may differ between runs: the effort fields
same() { diff <(grep -v '"seconds"\|"work"' "$1") <(grep -v '"seconds"\|"work"' "$2"); }

. bench/mixed_cluster.sh
mixed_cluster 8 $tmp/c8.json
while read -r name solver args; do
  if ! $H solvers | grep -q "^$solver "; then
    for np in 1 2 4; do skip "mpi_${name}_np${np}_same_plan_bound_gap" "this build lacks $solver"; done
    continue
  fi
  $H plan $args --solver $solver --time-limit 120 -o $tmp/$name-plain.json 2>$tmp/err || { bad "mpi_${name}_plain" "$(tail -2 $tmp/err)"; continue; }
  for np in 1 2 4; do
    out=$(timeout 600 $MPIRUN -np $np $H plan $args --solver $solver --time-limit 120 -o $tmp/$name-$np.json 2>&1 </dev/null); rc=$?
    if [ $rc -ne 0 ]; then bad "mpi_${name}_np${np}_same_plan_bound_gap" "exit $rc" "$(echo "$out" | tail -3)"; continue; fi
    # the claim holds for searches that end within their limit (docs/distributed.md): one
    # that a slow build (ASan: ten times slower) stops at its limit ends where its speed
    # left it, which is no result to compare
    if grep -q '"stopped"' $tmp/$name-plain.json $tmp/$name-$np.json; then
      skip "mpi_${name}_np${np}_same_plan_bound_gap" "a run stopped at its time limit in this build: $(grep -l '"stopped"' $tmp/$name-plain.json $tmp/$name-$np.json | xargs -n1 basename | tr '\n' ' ')"
      continue
    fi
    if d=$(same $tmp/$name-plain.json $tmp/$name-$np.json); then ok "mpi_${name}_np${np}_same_plan_bound_gap"
    else bad "mpi_${name}_np${np}_same_plan_bound_gap" "$(echo "$d" | head -8)"; fi
  done
  # every figure of the file, not only the plan: the bound and status must be there to compare
  grep -q '"lower_bound"' $tmp/$name-plain.json || bad "mpi_${name}_has_a_bound" "no lower_bound in the plan file"
done <<EOF2
tiny cbc --model examples/tiny/model.json --cluster examples/tiny/cluster.json --gbs 8
amp glpk --model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json --gbs 32
gpt64 cbc --model models/gpt-2.6b.json --cluster $tmp/c8.json --gbs 512
EOF2

# the rest uses CBC
if ! $H solvers | grep -q "^cbc "; then skip mpi_cbc_team "this build lacks CBC"; finish; fi

# the progress and the summary come from rank 0 alone: one summary line
n=$($MPIRUN -np 2 $H plan --model examples/tiny/model.json --cluster examples/tiny/cluster.json --gbs 8 --solver cbc -o $tmp/t.json 2>&1 | grep -c "^hetplan: solver cbc:")
[ "$n" = 1 ] && ok mpi_rank0_alone_prints || bad mpi_rank0_alone_prints "$n summary lines"

# a solver that does not share its search: rank 0 runs it, says so, writes the same plan
out=$($MPIRUN -np 2 $H plan --model examples/tiny/model.json --cluster examples/tiny/cluster.json --gbs 8 --solver dp -o $tmp/dp2.json 2>&1); rc=$?
$H plan --model examples/tiny/model.json --cluster examples/tiny/cluster.json --gbs 8 --solver dp -o $tmp/dp1.json 2>/dev/null
if [ $rc -eq 0 ] && grep -q "solver dp does not share its search: rank 0 runs it alone" <<<"$out" && same $tmp/dp1.json $tmp/dp2.json >/dev/null
then ok mpi_unshared_solver_runs_on_rank0; else bad mpi_unshared_solver_runs_on_rank0 "exit $rc" "$(echo "$out" | tail -3)"; fi

# another command: rank 0 alone (one output, not two)
n=$($MPIRUN -np 2 $H evaluate --model examples/tiny/model.json --cluster examples/tiny/cluster.json --plan examples/tiny/plan.json --gbs 8 2>&1 | grep -c "^iteration time")
[ "$n" = 1 ] && ok mpi_other_commands_on_rank0 || bad mpi_other_commands_on_rank0 "$n outputs"

# Round 1 of the pattern bounds runs each configuration's DP shared by the ranks
# (pattern_dp.c: each makes its share of every stage's points; at the stage's end they
# exchange them and agree, one reduction of 4 figures per stage). Four kinds on 112 GPUs
# within 30 s: round 0 cuts the price searches over the count of ranks short (a run of
# pp 7 takes seconds there), round 1 resumes them shared. (Three kinds on 64 GPUs no
# longer do: round 0 bounds all 158 configurations to the end.) Under a time limit the
# figures depend on timing, so this checks that it ran on both ranks as often (each
# stage's agreement), ended, and that its bound holds against its plan.
. bench/clusters_v3.sh
kinds_cluster $tmp/k4.json 4kinds-112 100 - H100:5:8 A100:5:8 V100:4:4 T4:4:4 >/dev/null
mkdir -p $tmp/trace
out=$(HETPLAN_TEAM_TRACE=$tmp/trace timeout 300 $MPIRUN -np 2 -x HETPLAN_TEAM_TRACE $H plan --model models/gpt-2.6b.json \
  --cluster $tmp/k4.json --gbs 512 --solver cbc --sharding dp,zdp --time-limit 30 -o $tmp/k4p.json 2>&1 </dev/null); rc=$?
s0=$(grep -c ' reduce-enter 4 ' $tmp/trace/rank-0.txt 2>/dev/null); s1=$(grep -c ' reduce-enter 4 ' $tmp/trace/rank-1.txt 2>/dev/null)
if [ $rc -eq 0 ] && grep -q "had a bound (no bound)" <<<"$out"; then
  # a slow build (ASan) ends round 0 with configurations unbounded: round 1 never ran
  skip mpi_shared_pattern_dp_runs_on_every_rank_and_its_bound_holds "the first round of pattern bounds did not end within 30 s in this build"
elif [ $rc -eq 0 ] && [ "${s0:-0}" -gt 10 ] && [ "$s0" = "$s1" ] && python3 - $tmp/k4p.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); lb = p["solver"].get("lower_bound")
sys.exit(0 if lb is not None and 0 < lb <= p["iteration_time"] * (1 + 1e-9) else 1)
PY
then ok mpi_shared_pattern_dp_runs_on_every_rank_and_its_bound_holds
else bad mpi_shared_pattern_dp_runs_on_every_rank_and_its_bound_holds "exit $rc, stage agreements $s0 / $s1" "$(echo "$out" | tail -3)"; fi

# Ctrl-C on the launcher: mpirun passes SIGTERM to the ranks; rank 0 writes its best plan
# so far, marked interrupted (a 160-layer model on 768 GPUs: minutes of search)
mixed_cluster 96 $tmp/c96.json
$MPIRUN -np 2 $H plan --model models/llama2-140b.json --cluster $tmp/c96.json --gbs 1536 --solver cbc \
  --time-limit 300 -o $tmp/int.json >$tmp/int.log 2>&1 &
pid=$!
for i in $(seq 1 60); do grep -q "incumbent [0-9]" $tmp/int.log && break; sleep 1; done
kill -INT $pid; wait $pid
if grep -q '"stopped":	"interrupted"' $tmp/int.json 2>/dev/null && grep -q '"feasible":	true' $tmp/int.json &&
   $H evaluate --model models/llama2-140b.json --cluster $tmp/c96.json --plan $tmp/int.json --gbs 1536 >/dev/null 2>&1
then ok mpi_interrupt_writes_rank0_best; else bad mpi_interrupt_writes_rank0_best "$(tail -3 $tmp/int.log)"; fi
finish
