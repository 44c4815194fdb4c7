#!/usr/bin/env bash
# test_profiler.sh BUILD -- hetplan-profile: its plain-C parts (prof_units), then the
# program under mpirun -np 4 (--oversubscribe; --allow-run-as-root as root): the
# matrix's shape and sanity (4 x 4, positive finite figures, the ranks grouped by host,
# made-up hosts too), the cluster file read by `hetplan describe` and accepted by
# `hetplan plan`, and the GPU path: measured where a GPU is, else "skipped" with its
# reason (a skip, never counted as a pass of a GPU measurement).
# Ends with "profiler: N passed, N failed" (and "profiler: N skipped").
set -u
build=${1:-build/test}
cd "$(dirname "$0")/../.." || exit 2
P=$build/hetplan-profile
H=$build/hetplan
U=$build/prof_units
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; skipped=0

ok()   { passed=$((passed + 1)); echo "ok $((passed + failed + skipped)) $1"; }
bad()  { failed=$((failed + 1)); echo "not ok $((passed + failed + skipped)) $1"; shift; printf '  %s\n' "$@"; }
skip() { skipped=$((skipped + 1)); echo "ok $((passed + failed + skipped)) $1 # skip $2"; }
has()  { grep -qF -- "$2" "$1"; }

# --- the plain-C parts
if [ -x "$U" ]; then
  out=$("$U" 2>&1); rc=$?
  echo "$out" | grep -E '^(ok|not ok|  )'
  read -r p f <<<"$(echo "$out" | sed -n 's/^prof_units: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')"
  if [ -z "${p:-}" ]; then bad prof_units "no closing line (exit $rc)"
  else passed=$((passed + p)); failed=$((failed + f)); [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && bad prof_units "exit $rc"; fi
else
  bad prof_units "$U is missing: build it (make test)"
fi

# only prof_main.c prints: the other C objects refer to no stream and no exit (the
# nvcc-compiled kernels are left out: nvcc's own registration code refers to exit)
forbidden='^(stdout|stderr|printf|fprintf|vprintf|vfprintf|puts|fputs|fputc|putc|putchar|perror|exit|_exit|abort|__printf_chk|__fprintf_chk|__vfprintf_chk)$'
hits=""
for o in "$build"/profiler/*.o; do
  [ -e "$o" ] || continue
  case "$(basename "$o")" in prof_main.o|prof_kernels.o) continue ;; esac
  s=$(nm -u "$o" | awk '{ print $2 }' | grep -E "$forbidden" | tr '\n' ' ')
  [ -n "$s" ] && hits+="$(basename "$o"): $s; "
done
if ls "$build"/profiler/prof_ops.o >/dev/null 2>&1 && [ -z "$hits" ]; then ok only_prof_main_prints
else bad only_prof_main_prints "${hits:-no objects under $build/profiler}"; fi

# --- the program
if [ ! -x "$P" ] || ! command -v mpirun >/dev/null; then
  bad hetplan_profile_built "$P or mpirun is missing: Open MPI comes from ./scripts/install-deps.sh (openmpi-bin, libopenmpi-dev)"
  echo "profiler: $passed passed, $failed failed"
  exit 1
fi
ok hetplan_profile_built
root=(); [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
# Under LeakSanitizer (make check-asan), Open MPI's plugins leak at MPI_Finalize from
# modules already unloaded (frames without names, which no suppression can match): the
# reports are kept but do not set the exit code, and own_leaks fails a run whose leak
# reports reach the profiler's or hetplan's code.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}exitcode=0"
own_leaks() {   # file: prints the leak stacks that pass through our functions
  awk '/^(Direct|Indirect) leak/ { inleak = 1; stack = $0; next }
       inleak && /^ *#[0-9]+ / { stack = stack "\n" $0; if ($0 ~ / in (prof_|hp_|cli_|main |ju_)/) own = 1; next }
       inleak { if (own) print stack; inleak = 0; own = 0 }
       END { if (inleak && own) print stack }' "$1"
}
MPI=(mpirun "${root[@]}" --oversubscribe -np 4)
QUICK=(--matrix-bytes 1M --matrix-iters 3 --lat-iters 5)

# usage, as a plain process (MPI singleton)
out=$("$P" --help 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q "^usage: mpirun" <<<"$out"; then ok help; else bad help "exit $rc"; fi
if grep -q -- "--sequence-parallel" <<<"$out"; then ok help_has_sequence_parallel; else bad help_has_sequence_parallel "$out"; fi
out=$("$P" --colour red 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q "unknown flag '--colour'" <<<"$out"; then ok unknown_flag; else bad unknown_flag "exit $rc: $out"; fi
out=$("$P" --matrix-bytes 3Q 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q "matrix-bytes: expected a size" <<<"$out"; then ok bad_size; else bad bad_size "exit $rc: $out"; fi
out=$("$P" --model nope.json 2>&1); rc=$?
if [ $rc -eq 3 ] && grep -q "cannot open 'nope.json'" <<<"$out"; then ok missing_model; else bad missing_model "exit $rc: $out"; fi

# Checks a cluster file: a D x D matrix of positive finite figures off the diagonal and
# zeros on it, in both gbps and lat_us; prints what is wrong, nothing if all is well.
check_matrix() {   # file D
  local f=$1 d=$2 key rows
  for key in gbps lat_us; do
    rows=$(sed -n "s/^[[:space:]]*\"$key\":[[:space:]]*\[\[\(.*\)\]\],*$/\1/p" "$f")
    [ -n "$rows" ] || { echo "no $key matrix on one line"; return; }
    echo "$rows" | awk -v d="$d" -v key="$key" '
      { n = split($0, r, /\], *\[/)
        if (n != d) { print key ": " n " rows, expected " d; exit }
        for (i = 1; i <= n; i++) {
          m = split(r[i], v, /, */)
          if (m != d) { print key " row " i ": " m " entries"; exit }
          for (j = 1; j <= m; j++) {
            x = v[j] + 0
            if (i == j && x != 0) { print key "[" i "][" j "] = " v[j] " on the diagonal"; exit }
            if (i != j && !(x > 0 && x < 1e12 && v[j] ~ /^[0-9.e+-]+$/)) { print key "[" i "][" j "] = " v[j]; exit }
          } } }'
  done
}

# 1. --mpi-only: the matrix alone
"${MPI[@]}" "$P" --mpi-only "${QUICK[@]}" --cluster-out "$tmp/c.json" --profile-out "$tmp/p.json" >"$tmp/out1" 2>&1; rc=$?
if [ $rc -eq 0 ]; then ok mpi_only_runs; else bad mpi_only_runs "exit $rc" "$(tail -5 "$tmp/out1")"; fi
leaks=$(own_leaks "$tmp/out1")
if [ -z "$leaks" ]; then ok mpi_only_leaks_nothing_of_its_own; else bad mpi_only_leaks_nothing_of_its_own "$leaks"; fi
for line in "hetplan-profile" "4 ranks on 1 host" "gpu: skipped: --mpi-only" "collectives: skipped: --mpi-only" \
            "layer timing: skipped: --mpi-only" "profile: not written: nothing was measured on a GPU"; do
  if has "$tmp/out1" "$line"; then ok "mpi_only_says: $line"; else bad "mpi_only_says: $line" "$(cat "$tmp/out1")"; fi
done
[ ! -e "$tmp/p.json" ] && ok mpi_only_writes_no_profile || bad mpi_only_writes_no_profile "$tmp/p.json exists"
why=$(check_matrix "$tmp/c.json" 4)
if [ -z "$why" ]; then ok matrix_4x4_positive_finite; else bad matrix_4x4_positive_finite "$why"; fi
out=$("$H" describe --cluster "$tmp/c.json" 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q "4 devices on 1 nodes" <<<"$out" && grep -q "device bandwidth matrix 4 x 4" <<<"$out" &&
   grep -qE "^  node .* 4 GPUs \(devices 0-3\)" <<<"$out" && ! grep -q warning <<<"$out"; then ok cluster_describes_one_host_of_4
else bad cluster_describes_one_host_of_4 "exit $rc" "$out"; fi
out=$("$H" plan --model examples/tiny/model.json --cluster "$tmp/c.json" --gbs 8 -o "$tmp/plan.json" 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q "solver dp: feasible" <<<"$out"; then ok hetplan_plan_accepts_the_cluster_file
else bad hetplan_plan_accepts_the_cluster_file "exit $rc" "$out"; fi
out=$("$H" evaluate --model examples/tiny/model.json --cluster "$tmp/c.json" --gbs 8 --plan "$tmp/plan.json" 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q "iteration time" <<<"$out"; then ok hetplan_evaluate_on_the_cluster_file
else bad hetplan_evaluate_on_the_cluster_file "exit $rc" "$out"; fi

# 2. made-up hosts: ranks 0, 2 on sim-host-0 (devices 0, 1), ranks 1, 3 on sim-host-1
"${MPI[@]}" "$P" --mpi-only "${QUICK[@]}" --simulate-hosts 2 --cluster-out "$tmp/c2.json" >"$tmp/out2" 2>&1; rc=$?
out=$("$H" describe --cluster "$tmp/c2.json" 2>&1)
if [ $rc -eq 0 ] && grep -q "4 devices on 2 nodes" <<<"$out" && grep -q "sim-host-0 .* 2 GPUs (devices 0-1)" <<<"$out" &&
   grep -q "sim-host-1 .* 2 GPUs (devices 2-3)" <<<"$out"; then ok simulated_hosts_group_ranks_by_host
else bad simulated_hosts_group_ranks_by_host "exit $rc" "$out" "$(tail -3 "$tmp/out2")"; fi
# the tournament: 5 slots, since pairs crossing the same two hosts take turns
if has "$tmp/out2" "5 slots of pairs" && has "$tmp/out2" "inter-host pairs (8)" && has "$tmp/out2" "intra-host pairs (4)"; then
  ok simulated_hosts_share_no_link; else bad simulated_hosts_share_no_link "$(grep -E 'slot|pairs' "$tmp/out2")"; fi
why=$(check_matrix "$tmp/c2.json" 4)
if [ -z "$why" ]; then ok simulated_matrix_4x4_positive_finite; else bad simulated_matrix_4x4_positive_finite "$why"; fi

# 3. the GPU path with a model: measured where a GPU is, else skipped with its reason
"${MPI[@]}" "$P" --model models/gpt-1.1b.json "${QUICK[@]}" --tp 1,2 --max-mbs 2 --reps 3 --warmup 1 \
  --nccl-max-bytes 1M --cluster-out "$tmp/c3.json" --profile-out "$tmp/p3.json" >"$tmp/out3" 2>&1; rc=$?
if [ $rc -eq 0 ]; then ok gpu_path_runs; else bad gpu_path_runs "exit $rc" "$(tail -5 "$tmp/out3")"; fi
leaks=$(own_leaks "$tmp/out3")
if [ -z "$leaks" ]; then ok gpu_path_leaks_nothing_of_its_own; else bad gpu_path_leaks_nothing_of_its_own "$leaks"; fi
if grep -q "^gpu: skipped: " "$tmp/out3"; then
  reason=$(sed -n 's/^gpu: skipped: //p' "$tmp/out3")
  if grep -qE "no CUDA device|built without the CUDA toolkit|unusable" <<<"$reason"; then ok "gpu_path_says_skipped_with_its_reason ($reason)"
  else bad gpu_path_says_skipped_with_its_reason "reason: $reason"; fi
  if has "$tmp/out3" "layer timing: skipped: no GPU" && has "$tmp/out3" "collectives: skipped: no GPU"; then
    ok gpu_parts_skipped_and_say_so; else bad gpu_parts_skipped_and_say_so "$(grep skipped "$tmp/out3")"; fi
  [ -z "$(check_matrix "$tmp/c3.json" 4)" ] && ok matrix_still_runs_without_a_gpu || bad matrix_still_runs_without_a_gpu "$(check_matrix "$tmp/c3.json" 4)"
  skip gpu_layer_times_and_collectives_measured "no GPU here: $reason"
else
  # a GPU: the profile loads, covers the model's kinds, and the planner takes both files
  if [ -s "$tmp/p3.json" ] && "$H" describe --profile "$tmp/p3.json" >/dev/null 2>&1; then ok gpu_profile_written_and_loads
  else bad gpu_profile_written_and_loads "$(tail -5 "$tmp/out3")"; fi
  out=$("$H" describe --model models/gpt-1.1b.json --cluster "$tmp/c3.json" --profile "$tmp/p3.json" --gbs 8 2>&1); rc=$?
  if [ $rc -eq 0 ] && grep -q "profile coverage of the search space" <<<"$out"; then ok gpu_profile_covers_the_model
  else bad gpu_profile_covers_the_model "exit $rc" "$out"; fi
  out=$("$H" plan --model models/gpt-1.1b.json --cluster "$tmp/c3.json" --profile "$tmp/p3.json" --gbs 8 -o /dev/null 2>&1); rc=$?
  if [ $rc -eq 0 ] || [ $rc -eq 6 ]; then ok gpu_files_accepted_by_plan; else bad gpu_files_accepted_by_plan "exit $rc" "$out"; fi
  # measured memory (1.2): every entry of a transformer's kinds carries act_bytes and
  # work_bytes, positive for the blocks, and the file says it was measured without
  # sequence parallelism; with --sequence-parallel it says so
  n_t=$(grep -c '"seconds":' "$tmp/p3.json"); n_a=$(grep -c '"act_bytes":' "$tmp/p3.json"); n_w=$(grep -c '"work_bytes":' "$tmp/p3.json")
  if has "$tmp/p3.json" '"sequence_parallel":	false' && [ "$n_a" -eq "$n_t" ] && [ "$n_w" -eq "$n_t" ] &&
     ! grep -qE '"act_bytes":[[:space:]]*0,' "$tmp/p3.json"; then ok gpu_memory_measured_for_every_entry
  else bad gpu_memory_measured_for_every_entry "$n_t times, $n_a act_bytes, $n_w work_bytes"; fi
  "${MPI[@]}" "$P" --model models/gpt-1.1b.json "${QUICK[@]}" --tp 1,2 --mbs 1 --reps 2 --warmup 1 --no-nccl \
    --tp-gbps 100 --sequence-parallel --cluster-out "$tmp/c4.json" --profile-out "$tmp/p4.json" >"$tmp/out4" 2>&1; rc=$?
  if [ $rc -eq 0 ] && has "$tmp/p4.json" '"sequence_parallel":	true'; then ok gpu_sequence_parallel_recorded
  else bad gpu_sequence_parallel_recorded "exit $rc" "$(tail -5 "$tmp/out4")"; fi
fi

[ "$skipped" -gt 0 ] && echo "profiler: $skipped skipped"
echo "profiler: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
