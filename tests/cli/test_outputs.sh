#!/usr/bin/env bash
# test_outputs.sh -- outputs that cannot destroy inputs (issue 23, item 5): -o (and --svg)
# naming a file the command reads (the model, cluster, profile, job, plan, a plan file's
# "inputs", an HF config, an --args-file, a hard or symbolic link to one) is refused
# before anything runs (exit 2), every input left as it was; an existing directory as -o
# is refused before any search (exit 8, at once whatever --time-limit); a Ctrl-C during a
# CBC or GLPK solve ends the run within a second. docs/cli.md (Output files, Interrupts).
# Ends with "outputs: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
H=${HETPLAN:-build/hetplan}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; skipped=0
ok()   { passed=$((passed + 1)); echo "ok $((passed + failed)) $1"; }
skip() { skipped=$((skipped + 1)); echo "skip $1: $2"; }
bad()  { failed=$((failed + 1)); echo "not ok $((passed + failed)) $1"; shift; printf '  %s\n' "$@"; }
built() { $H solvers | grep -q "^$1 "; }

# The inputs, in a folder of their own, and a copy of it to compare with.
w=$tmp/w
mkdir -p $w
cp examples/tiny/model.json examples/tiny/cluster.json examples/tiny/profile.json examples/tiny/job.json $w/
cp examples/hf/gemma-2b/config.json $w/config.json
printf -- '--data-path /data/x\n' > $w/args.txt
$H plan --model $w/model.json --cluster $w/cluster.json --profile $w/profile.json --job $w/job.json \
  -o $w/plan.json 2>/dev/null || bad setup "plan failed"
ln $w/model.json $w/model-hard.json
ln -s plan.json $w/plan-link.json
ln -s cluster.json $w/cluster-link.json
cp -a $w $tmp/orig

# refused NAME -- cmd...: exit 2 naming both files, nothing run, every input intact
refused() {
  local name=$1 out rc; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne 2 ]; then bad "$name" "exit $rc, expected 2" "$(echo "$out" | tail -3)"
  elif ! grep -q "is the same file as" <<<"$out"; then bad "$name" "message: $(echo "$out" | head -2)"
  elif ! diff -r $tmp/orig $w >/dev/null 2>&1 || [ -n "$(ls $w | grep '\.tmp\.')" ]; then
    bad "$name" "an input changed: $(diff -rq $tmp/orig $w 2>&1 | head -3)"
  else ok "$name"; fi
}

P=(--model $w/model.json --cluster $w/cluster.json --profile $w/profile.json --job $w/job.json)
refused plan_o_model -- $H plan "${P[@]}" -o $w/model.json
refused plan_o_cluster -- $H plan "${P[@]}" -o $w/cluster.json
refused plan_o_profile -- $H plan "${P[@]}" -o $w/profile.json
refused plan_o_job -- $H plan "${P[@]}" -o $w/job.json
refused plan_o_hard_link_to_model -- $H plan "${P[@]}" -o $w/model-hard.json
refused plan_o_symlink_to_cluster -- $H plan "${P[@]}" -o $w/cluster-link.json
refused plan_o_model_other_spelling -- $H plan "${P[@]}" -o $w/../w/./model.json
refused evaluate_o_plan -- $H evaluate $w/plan.json -o $w/plan.json
refused evaluate_o_cluster_of_plan_inputs -- $H evaluate $w/plan.json --json -o $w/cluster.json
refused evaluate_o_profile_of_plan_inputs -- $H evaluate $w/plan.json -o $w/profile.json
refused evaluate_o_symlink_to_plan -- $H evaluate $w/plan.json -o $w/plan-link.json
refused simulate_o_plan -- $H simulate $w/plan.json -o $w/plan.json
refused simulate_svg_model -- $H simulate $w/plan.json --svg $w/model-hard.json
refused simulate_o_and_svg_same_file -- $H simulate $w/plan.json -o $tmp/sim.txt --svg $tmp/sim.txt
refused draw_svg_plan -- $H draw $w/plan.json --svg $w/plan.json
refused export_o_plan -- $H export --format megatron $w/plan.json -o $w/plan.json
refused export_o_symlink_to_plan -- $H export --format deepspeed $w/plan.json -o $w/plan-link.json
refused export_o_args_file -- $H export --format torchrun $w/plan.json --args-file $w/args.txt -o $w/args.txt
refused export_o_job -- $H export --format slurm --plan $w/plan.json --job $w/job.json -o $w/job.json
refused report_o_plan -- $H report $w/plan.json --solvers none -o $w/plan.json
refused report_o_hard_link_to_model -- $H report $w/plan.json --html -o $w/model-hard.json
refused import_hf_o_config -- $H import-hf $w/config.json -o $w/config.json
refused expand_o_model -- $H expand --model $w/model.json -o $w/model-hard.json
refused export_lp_o_profile -- $H export-lp --plan $w/plan.json -o $w/profile.json
# a Hugging Face config given as --model is an input as any model file
refused plan_model_and_o_same -- $H plan --model $w/config.json --cluster $w/cluster.json --gbs 8 -o $w/config.json

# what is no input is written as before
if $H plan "${P[@]}" -o $w/new.json 2>/dev/null && $H plan "${P[@]}" -o $w/new.json 2>/dev/null &&
   $H evaluate $w/new.json -o /dev/null 2>/dev/null && $H export --format megatron $w/plan.json -o $tmp/launch.sh 2>/dev/null
then ok other_outputs_written; else bad other_outputs_written "plan, evaluate or export failed"; fi
rm -f $w/new.json

# an existing directory as -o: refused before anything runs, whatever the search's length
big=(--model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json --gbs 32)
mkdir -p $tmp/dir
directory() {   # directory NAME -- cmd...: exit 8, "Is a directory", within a second
  local name=$1 t0 out rc took; shift 2
  t0=$(date +%s%N)
  out=$(timeout 20 "$@" 2>&1); rc=$?
  took=$((($(date +%s%N) - t0) / 1000000))
  if [ "$rc" -eq 8 ] && grep -q "Is a directory" <<<"$out" && [ "$took" -lt 1000 ]; then ok "$name"
  else bad "$name" "exit $rc after $took ms, expected 8 at once" "$(echo "$out" | tail -2)"; fi
}
directory plan_o_directory_before_the_search -- $H plan "${big[@]}" --solver sa --time-limit 100 -o $tmp/dir
directory report_o_directory_before_the_baselines -- $H report $w/plan.json --time-limit 100 -o $tmp/dir
directory simulate_svg_directory -- $H simulate $w/plan.json --svg $tmp/dir
directory import_hf_o_directory -- $H import-hf $w/config.json -o $tmp/dir/

# a Ctrl-C while a MIP backend solves (a child process of hetplan: solvers/mip_child.c)
# ends the run within a second; a search of 30 s, signalled once its first solve runs
mip_interrupt() {   # mip_interrupt SOLVER
  local s=$1 pid kid="" t0 rc took
  rm -f $tmp/int.json
  bash bench/mixed_cluster.sh 8 $tmp/c8.json
  $H plan --model models/gpt-2.6b.json --cluster $tmp/c8.json --gbs 512 --solver $s --time-limit 30 \
    -o $tmp/int.json >$tmp/int.out 2>&1 & pid=$!
  for _ in $(seq 150); do   # up to 15 s for the first solve to start
    kid=$(pgrep -P $pid | head -1)
    [ -n "$kid" ] && break
    sleep 0.1
  done
  if [ -z "$kid" ]; then
    kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
    bad ${s}_interrupt_within_a_second "no solve of $s started within 15 s"; return
  fi
  sleep 0.3
  t0=$(date +%s%N)
  kill -INT $pid
  wait $pid; rc=$?
  took=$((($(date +%s%N) - t0) / 1000000))
  if { [ "$rc" -eq 7 ] || [ "$rc" -eq 0 ]; } && [ "$took" -lt 1500 ] && [ -s $tmp/int.json ] &&
     ! kill -0 $kid 2>/dev/null; then ok "${s}_interrupt_within_a_second"
  else bad "${s}_interrupt_within_a_second" "exit $rc after $took ms (expected 7, or 0 if the solve was the last, within 1.5 s, the plan written and the solve's process gone)" "$(tail -2 $tmp/int.out)"; fi
}
for s in cbc glpk; do
  if built $s; then mip_interrupt $s; else skip ${s}_interrupt_within_a_second "this build lacks $s"; fi
done

[ "$skipped" -gt 0 ] && echo "outputs: $skipped skipped"
echo "outputs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
