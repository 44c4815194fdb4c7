#!/usr/bin/env bash
# test_cli.sh -- the hetplan command end to end: outputs, exit codes, every malformed
# input of tests/bad/manifest.txt, and every bundled model and cluster file.
# Ends with "cli: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
H=${HETPLAN:-build/hetplan}
T=examples/tiny
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; skipped=0

ok()   { passed=$((passed + 1)); echo "ok $((passed + failed)) $1"; }
skip() { skipped=$((skipped + 1)); echo "skip $1: $2"; }
# built NAME: whether this build has the solver (GLPK=0 or CBC=0 leave the MIP out)
built() { $H solvers | grep -q "^$1 "; }
bad()  { failed=$((failed + 1)); echo "not ok $((passed + failed)) $1"; shift; printf '  %s\n' "$@"; }

# expect NAME CODE TEXT -- cmd...: runs cmd, checks the exit code and that stdout+stderr
# contain TEXT (empty: no check).
expect() {
  local name=$1 code=$2 text=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne "$code" ]; then bad "$name" "exit $rc, expected $code" "$(echo "$out" | tail -3)"; return; fi
  if [ -n "$text" ] && ! grep -qF -- "$text" <<<"$out"; then
    bad "$name" "output lacks: $text" "$(echo "$out" | tail -3)"; return
  fi
  ok "$name"
}

tiny=(--model $T/model.json --cluster $T/cluster.json --gbs 8)

# --- help, usage errors
expect help 0 "usage: hetplan <command>" -- $H --help
expect no_command 2 "usage: hetplan" -- $H
expect unknown_command 2 "unknown command 'frobnicate'" -- $H frobnicate
expect evaluate_help 0 "exit codes: 0 the plan fits" -- $H evaluate --help
expect plan_help 0 "usage: hetplan plan" -- $H plan --help
expect unknown_flag 2 "unknown flag '--colour'" -- $H evaluate "${tiny[@]}" --plan $T/plan.json --colour red
expect missing_gbs 2 "missing --gbs N" -- $H evaluate --model $T/model.json --cluster $T/cluster.json --plan $T/plan.json
expect missing_plan 2 "missing --plan FILE" -- $H evaluate "${tiny[@]}"
expect bad_gbs 2 "--gbs: expected an integer in 1..1099511627776 (2^40), got '-3'" -- $H evaluate "${tiny[@]}" --gbs -3 --plan $T/plan.json
expect bad_schedule_flag 2 "--schedule: expected 1f1b or gpipe" -- $H evaluate "${tiny[@]}" --schedule zb --plan $T/plan.json
expect missing_file 3 "cannot open 'nope.json'" -- $H evaluate --model nope.json --cluster $T/cluster.json --gbs 8 --plan $T/plan.json
expect unknown_solver 2 "unknown solver 'magic'" -- $H plan "${tiny[@]}" --solver magic
expect version 0 "cost model 1.1" -- $H version

# --- evaluate: the breakdown of the tiny plan, figures worked out in tests/unit/test_evaluate.c
expect evaluate_text 0 "iteration time  1.854068 s = pipeline 1.851648 s (replica 1) + sync 0.002420 s (stage 1)" \
  -- $H evaluate "${tiny[@]}" --plan $T/plan.json
expect evaluate_bottleneck 0 "bottleneck      stage 1 of replica 1: 400.000 ms per micro-batch" \
  -- $H evaluate "${tiny[@]}" --plan $T/plan.json
expect evaluate_json 0 '"iteration_time":	1.854068' -- $H evaluate "${tiny[@]}" --plan $T/plan.json --json
expect evaluate_json_file 0 "" -- $H evaluate "${tiny[@]}" --plan $T/plan.json --json -o $tmp/e.json
if grep -q '"peak_memory"' $tmp/e.json && grep -q '"stage_breakdown"' $tmp/e.json; then ok evaluate_json_has_memory_and_breakdown
else bad evaluate_json_has_memory_and_breakdown "missing keys in $tmp/e.json"; fi
expect job_file 0 "gbs 8" -- $H evaluate --model $T/model.json --cluster $T/cluster.json --job $T/job.json --plan $T/plan.json
expect job_flag_wins 4 "gbs 5 is not a multiple of dp * mbs = 2 * 1" -- $H evaluate --model $T/model.json --cluster $T/cluster.json --job $T/job.json --gbs 5 --plan $T/plan.json
expect evaluate_oom 5 "out of memory: device 0 (stage 0, node 'a', fast) needs 1.070 GiB of 1.000 GiB: over by 0.070 GiB" -- $H evaluate "${tiny[@]}" --gbs 128 --plan $T/plan-oom.json
expect evaluate_oom_json 5 '"out_of_memory":' -- $H evaluate "${tiny[@]}" --gbs 128 --plan $T/plan-oom.json --json
expect unknown_key_warns 0 "stages[0].colour: unknown key, ignored" -- \
  $H evaluate "${tiny[@]}" --plan <(sed 's/"layers": \[0, 1\]/"colour": 1, "layers": [0, 1]/' $T/plan.json)

# --- plan: the exhaustive solver, and its plan file re-evaluated
expect plan_enum 0 "solver enum: optimal" -- $H plan "${tiny[@]}" --solver enum -o $tmp/p.json
expect plan_file_reevaluates 0 "iteration time  0.770504 s" -- $H evaluate "${tiny[@]}" --plan $tmp/p.json
if $H evaluate "${tiny[@]}" --plan $tmp/p.json 2>&1 | grep -q warning; then bad plan_file_reads_back_without_warnings "$($H evaluate "${tiny[@]}" --plan $tmp/p.json 2>&1 | grep warning)"; else ok plan_file_reads_back_without_warnings; fi
expect eval_json_reads_back_as_plan 0 "iteration time  1.854068 s" -- $H evaluate "${tiny[@]}" --plan $tmp/e.json
if grep -q '"status":	"optimal"' $tmp/p.json && grep -q '"lower_bound":	0.770504' $tmp/p.json; then ok plan_file_has_solver_block
else bad plan_file_has_solver_block "$(grep -A6 solver $tmp/p.json)"; fi
expect plan_infeasible 6 "no plan of the search space fits in memory" -- $H plan --model tests/cases/too-big.json --cluster $T/cluster.json --gbs 4 --solver enum
expect plan_too_large 6 "exhaustive enumeration is for tiny instances" -- $H plan --model models/gpt2-amp.json --cluster models/amp-hetero.json --gbs 32 --solver enum

# --- search: default solver, rankings, compare
AMP=(--model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json --gbs 32)
expect plan_default_is_dp 0 "solver dp: feasible" -- $H plan "${AMP[@]}" -o $tmp/amp.json
expect plan_default_reevaluates 0 "iteration time" -- $H evaluate "${AMP[@]}" --plan $tmp/amp.json
expect plan_top 0 "    3   " -- $H plan "${AMP[@]}" --top 3 -o /dev/null
expect plan_show_rejected 0 "fastest plans that do not fit (never recommended)" -- $H plan "${AMP[@]}" --top 2 --show-rejected -o /dev/null
expect plan_bad_top 2 "--top: expected an integer in 1..1000" -- $H plan "${AMP[@]}" --top 0
expect compare_tiny_enum_proves 0 "enum            optimal        0.770504" -- $H compare "${tiny[@]}"
expect compare_tiny_gap 0 "dp              feasible       0.770504    10.3828     66.6%" -- $H compare "${tiny[@]}"
expect compare_json 0 '"best_bound": 0.770504000000000' -- $H compare "${tiny[@]}" --json
expect compare_unknown_solver 2 "unknown solver 'nope'" -- $H compare "${tiny[@]}" --solvers dp,nope
expect osdp_refuses_uneven_gbs 0 "osdp            refused: osdp: data parallelism only needs gbs (6) to be a multiple of the 4 devices" -- $H compare "${tiny[@]}" --gbs 6 --solvers osdp
expect sa_seeded 0 "solver sa: feasible" -- $H plan "${AMP[@]}" --solver sa --seed 3 --max-work 200 -o $tmp/sa1.json
$H plan "${AMP[@]}" --solver sa --seed 3 --max-work 200 -o $tmp/sa2.json 2>/dev/null
if diff <(grep -v '"seconds"' $tmp/sa1.json) <(grep -v '"seconds"' $tmp/sa2.json) >/dev/null; then ok sa_same_seed_same_plan_file; else bad sa_same_seed_same_plan_file "the two plan files differ beyond solve time"; fi

# every solver on every bundled set-up: a status, or a refusal that says why
n_solvers=$($H solvers | wc -l)
names=$($H solvers | awk '{print $1}' | paste -sd'|')
while read -r model cluster gbs extra; do
  out=$($H compare --model models/$model --cluster models/$cluster --gbs $gbs $extra --time-limit 2 2>&1); rc=$?
  rows=$(echo "$out" | grep -Ec "^($names) +(feasible|optimal|no-plan|infeasible|refused: .+)")
  if [ $rc -eq 0 ] && [ "$rows" -eq "$n_solvers" ]; then ok "every_solver_on_${cluster%.json}"
  else bad "every_solver_on_${cluster%.json}" "exit $rc, $rows of $n_solvers rows" "$(echo "$out" | tail -4)"; fi
done <<'SETUPS'
gpt2-amp.json amp-hetero.json 32 --profile=models/gpt2-amp.profile.json
gpt2-amp.json amp-homo-4xg4dn.json 32 --profile=models/gpt2-amp.profile.json
transgan-amp.json amp-4xp3.json 64 --profile=models/transgan-amp.profile.json
gpt-1.1b.json pipette-mid-16x8-v100.json 128
gpt-11.1b.json pipette-high-16x8-a100.json 256
gpt-8.3b.json pipette-real-16x8-a100.json 128
llama2-7b.json hethub-mix-2amd+10acc.json 192
SETUPS

# --- simulate, draw, validate; the SVGs rendered by a real renderer (librsvg2-bin)
SIMP=(--model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json --gbs 32 --plan examples/amp-gpt2-hetero-4stage.plan.json)
expect simulate_text 0 "iteration time  simulated 0.967473 s, formula 1.001686 s (-3.42 %)" -- $H simulate "${SIMP[@]}"
expect simulate_inflight 0 "    0               4             4" -- $H simulate "${SIMP[@]}"
expect simulate_json 0 '"kind": "all-reduce", "stage": 3' -- $H simulate "${SIMP[@]}" --json
expect simulate_tiny_gpipe 0 "simulated" -- $H simulate --model $T/model.json --cluster $T/cluster.json --gbs 8 --schedule gpipe --plan <(sed 's/"1f1b"/"gpipe"/' $T/plan.json)
expect simulate_svg 0 "wrote $tmp/gantt.svg" -- $H simulate "${SIMP[@]}" --svg $tmp/gantt.svg
expect draw_svg 0 "wrote $tmp/place.svg" -- $H draw "${SIMP[@]}" --svg $tmp/place.svg
expect draw_needs_svg 2 "missing --svg FILE" -- $H draw "${SIMP[@]}"
expect draw_positional_plan 0 "wrote $tmp/place2.svg" -- $H draw examples/amp-gpt2-hetero-4stage.plan.json --model models/gpt2-amp.json --cluster models/amp-hetero.json --gbs 32 --svg $tmp/place2.svg
expect stray_argument 2 "unexpected argument 'extra'" -- $H plan "${tiny[@]}" extra
for f in gantt place; do
  if ! command -v rsvg-convert >/dev/null; then bad "render_$f" "rsvg-convert is missing: run ./scripts/install-deps.sh"; continue; fi
  if rsvg-convert "$tmp/$f.svg" -o "$tmp/$f.png" 2>"$tmp/$f.err" && [ -s "$tmp/$f.png" ] &&
     [ "$(head -c 8 "$tmp/$f.png" | od -An -tx1 | tr -d ' ')" = "89504e470d0a1a0a" ]; then ok "render_$f"
  else bad "render_$f" "$(cat "$tmp/$f.err")"; fi
done
# a 64-device Gantt chart stays valid
$H plan --model models/gpt2-amp.json --cluster <(sed 's/"gpus": 4/"gpus": 16/g' models/amp-homo-4xg4dn.json) --gbs 64 -o $tmp/p64.json 2>/dev/null
expect simulate_svg_64 0 "wrote $tmp/g64.svg" -- $H simulate --model models/gpt2-amp.json --cluster <(sed 's/"gpus": 4/"gpus": 16/g' models/amp-homo-4xg4dn.json) --gbs 64 --plan $tmp/p64.json --svg $tmp/g64.svg
if rsvg-convert "$tmp/g64.svg" -o "$tmp/g64.png" 2>/dev/null && [ -s "$tmp/g64.png" ]; then ok render_gantt_64_devices; else bad render_gantt_64_devices "rsvg-convert failed"; fi
expect validate_amp 0 "Spearman rank correlation" -- $H validate --model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json --gbs 32 --samples 50
expect validate_json 0 '"spearman":' -- $H validate "${tiny[@]}" --samples 20 --json

# --- the MIP: glpk and cbc on the tiny instance, export-lp through glpsol and cbc, decode
for s in glpk cbc; do
  if built $s; then
    expect ${s}_tiny 0 "$(printf '%-15s optimal        0.770504' $s)" -- $H compare "${tiny[@]}" --solvers $s,enum
    expect ${s}_proves_infeasible 6 "no plan of the search space fits in memory (proved)" -- $H plan --model tests/cases/too-big.json --cluster $T/cluster.json --gbs 8 --solver $s
  else
    skip ${s}_tiny "this build lacks $s"
    expect ${s}_not_built 2 "this build lacks" -- $H plan "${tiny[@]}" --solver $s
  fi
done
# The whole-space certificate against brute force: on variants of the tiny instance
# (schedule, slow links between nodes, binding memory), glpk and cbc prove optimal the
# time enum finds by enumerating every plan, and their bound never exceeds it.
mips=$(for s in glpk cbc; do built $s && printf '%s,' $s; done)
for v in "8 1f1b 80 1" "16 gpipe 80 1" "8 1f1b 5 1" "8 1f1b 80 0.6" "16 1f1b 5 0.6"; do
  [ -n "$mips" ] || { skip mip_certificate_equals_enum "this build has no MIP backend"; break; }
  set -- $v
  sed "s/\"inter_gbps\": 80/\"inter_gbps\": $3/; s/\"mem_gib\": 1,/\"mem_gib\": $4,/g" $T/cluster.json > $tmp/cv.json
  rows=$($H compare --model $T/model.json --cluster $tmp/cv.json --gbs $1 --schedule $2 --solvers ${mips}enum --json 2>&1 |
         sed -n 's/.*"name": "\([a-z]*\)", "status": "\([a-z-]*\)", "iteration_time": \([0-9.e+-]*\),.*"lower_bound": \([0-9.e+-]*\).*/\1 \2 \3 \4/p')
  verdict=$(awk -v want=$(( $(echo "$mips" | tr -cd , | wc -c) + 1 )) '{ t[$1] = $3; b[$1] = $4; st[$1] = $2 }
    END { e = t["enum"]; if (st["enum"] != "optimal" || e == "") { print "enum did not prove an optimum"; exit }
          for (s in t) if (s != "enum") {
            if (st[s] != "optimal") { print s " is " st[s]; exit }
            if (b[s] > e * (1 + 1e-9) || t[s] > e * (1 + 1e-9) || t[s] < e * (1 - 1e-9)) { print s ": time " t[s] ", bound " b[s] ", enum " e; exit } }
          if (length(t) != want) { print "rows: " length(t); exit }
          print "ok" }' <<<"$rows")
  if [ "$verdict" = ok ]; then ok "mip_certificate_equals_enum (gbs $1 $2, inter $3 Gbit/s, $4 GiB)"
  else bad "mip_certificate_equals_enum (gbs $1 $2, inter $3 Gbit/s, $4 GiB)" "$verdict" "$rows"; fi
done
CFG=(--config pp=2,tp=1,dp=2,mbs=1)
expect export_lp 0 "wrote $tmp/t.lp: 48 columns (10 integer), 99 rows" -- $H export-lp "${tiny[@]}" "${CFG[@]}" -o $tmp/t.lp
expect export_mps 0 "wrote $tmp/t.mps" -- $H export-lp "${tiny[@]}" "${CFG[@]}" --mps -o $tmp/t.mps
expect export_bad_config 2 "--config: expected pp=P,tp=T,dp=D,mbs=B" -- $H export-lp "${tiny[@]}" --config pp=2,tp=1
expect export_wrong_config 4 "pp * tp * dp = 3 * 1 * 2 = 6 but cluster 'tiny-2x2' has 4 devices" -- $H export-lp "${tiny[@]}" --config pp=3,tp=1,dp=2,mbs=1
objs=""
if command -v glpsol >/dev/null && command -v cbc >/dev/null; then
  glpsol --lp $tmp/t.lp -o $tmp/g1.txt >/dev/null 2>&1
  glpsol --freemps $tmp/t.mps -o $tmp/g2.txt >/dev/null 2>&1
  cbc $tmp/t.lp -solve -solu $tmp/c1.sol -quit >/dev/null 2>&1
  cbc $tmp/t.mps -solve -solu $tmp/c2.sol -quit >/dev/null 2>&1
  for f in g1.txt g2.txt; do objs="$objs $(sed -n 's/^Objective: *obj = \([0-9.e+-]*\).*/\1/p' $tmp/$f)"; done
  for f in c1.sol c2.sol; do objs="$objs $(sed -n 's/^Optimal - objective value \([0-9.e+-]*\).*/\1/p' $tmp/$f)"; done
  if [ "$(echo $objs | wc -w)" -eq 4 ] && echo $objs | awk '{ for (i = 2; i <= 4; i++) if ($i - $1 > 1e-6 || $1 - $i > 1e-6) exit 1 }'; then
    ok "export_round_trip_glpsol_cbc_lp_mps_agree ($objs )"
  else bad export_round_trip_glpsol_cbc_lp_mps_agree "objectives: $objs"; fi
  obj1=$(echo $objs | awk '{print $1}')
  expect decode_cbc 0 "iteration 0.820404 s by the evaluator (MIP objective at the file's values 0.820404)" -- $H decode "${tiny[@]}" "${CFG[@]}" --solution $tmp/c1.sol -o $tmp/d1.json
  expect decode_glpsol 0 "iteration 0.820404 s by the evaluator" -- $H decode "${tiny[@]}" "${CFG[@]}" --solution $tmp/g1.txt -o $tmp/d2.json
  if [ "$obj1" = "820.404" ]; then ok external_optimum_is_the_decoded_plans_time_in_ms; else bad external_optimum_is_the_decoded_plans_time_in_ms "glpsol: $obj1 (the objective is in milliseconds)"; fi
  expect decode_wrong_file 3 "names none of the MIP's columns" -- $H decode "${tiny[@]}" "${CFG[@]}" --solution $T/plan.json
else
  bad export_round_trip_glpsol_cbc_lp_mps_agree "glpsol or cbc is missing: run ./scripts/install-deps.sh"
fi

# --- expand and describe
expect expand_repeat 0 '"name":	"block.1"' -- $H expand --model $T/model.json
expect expand_transformer 0 '"name":	"final_norm"' -- $H expand --model models/llama2-7b.json
expect describe 0 "4 devices" -- $H describe --cluster $T/cluster.json --model $T/model.json

# --- profile coverage (counts worked out in tests/unit/test_coverage.c)
TP=(--profile $T/profile.json)
expect coverage_describe_space 0 "profile coverage of the search space at gbs 8: 48 cells (layer kind x device type x tp x mbs): 4 measured, 8 derived, 36 estimated" \
  -- $H describe --model $T/model.json --cluster $T/cluster.json "${TP[@]}" --gbs 8
expect coverage_describe_groups 0 "profile coverage of the search space's tp degrees: 12 cells (layer kind x device type x tp): 3 measured, 0 derived, 9 estimated" \
  -- $H describe --model $T/model.json --cluster $T/cluster.json "${TP[@]}"
expect coverage_describe_row 0 "  kind block                    16         3        5          8" \
  -- $H describe --model $T/model.json --cluster $T/cluster.json "${TP[@]}" --gbs 8
expect coverage_describe_gbs_alone 2 "--gbs counts the coverage of a search space" -- $H describe --model $T/model.json --gbs 8
expect coverage_evaluate 0 "profile coverage of the plan: 6 cells (layer kind x device type x tp x mbs): 2 measured, 0 derived, 4 estimated" \
  -- $H evaluate "${tiny[@]}" "${TP[@]}" --plan $T/plan.json
expect coverage_evaluate_no_profile 0 "profile coverage of the plan: no profile: all 6 cells" -- $H evaluate "${tiny[@]}" --plan $T/plan.json
expect coverage_evaluate_json 0 '"estimated_cells":' -- $H evaluate "${tiny[@]}" "${TP[@]}" --plan $T/plan.json --json
expect coverage_evaluate_strict 3 "--strict-profile: 4 of the 6 cells of the plan are estimated, not measured (profile 'examples/tiny/profile.json'): embed on fast at tp 1, embed on slow at tp 1, head on fast at tp 1, head on slow at tp 1" \
  -- $H evaluate "${tiny[@]}" "${TP[@]}" --plan $T/plan.json --strict-profile
expect coverage_plan_stderr 0 "profile coverage of the search space at gbs 8: 48 cells" -- $H plan "${tiny[@]}" "${TP[@]}" -o $tmp/cov.json
if grep -q '"profile_coverage"' $tmp/cov.json && grep -q '"scope":	"plan"' $tmp/cov.json; then ok coverage_in_plan_file
else bad coverage_in_plan_file "no plan-scope profile_coverage in $tmp/cov.json"; fi
expect coverage_plan_strict_refuses 3 "--strict-profile: 36 of the 48 cells of the search space at gbs 8 are estimated" -- $H plan "${tiny[@]}" "${TP[@]}" --strict-profile
expect coverage_plan_strict_no_profile 3 "(no --profile given)" -- $H plan "${tiny[@]}" --strict-profile
expect coverage_plan_strict_amp_passes 0 "0 estimated" -- $H plan "${AMP[@]}" --strict-profile -o /dev/null
expect coverage_amp_evaluate_measured 0 "profile coverage of the plan: 30 cells (layer kind x device type x tp x mbs): 30 measured, 0 derived, 0 estimated" \
  -- $H evaluate "${SIMP[@]}"
expect profile_of_another_model_refused 3 "profile 'models/transgan-amp.profile.json' matches none of the layer kinds of model 'gpt2-amp'" \
  -- $H plan --model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/transgan-amp.profile.json --gbs 32
expect profile_of_other_devices_refused 3 "matches none of the device types of cluster 'pipette-high-16x8-a100'" \
  -- $H describe --model models/gpt2-amp.json --cluster models/pipette-high-16x8-a100.json --profile models/gpt2-amp.profile.json

# --- every malformed input: exit code and message
while IFS='|' read -r file kind code text; do
  file=$(echo $file); kind=$(echo $kind); code=$(echo $code); text=$(echo "$text" | sed 's/^ *//; s/ *$//')
  case "$file" in ''|'#'*) continue ;; esac
  f=tests/bad/$file
  case "$kind" in
    model)   expect "bad_$file" "$code" "$text" -- $H expand --model $f ;;
    cluster) expect "bad_$file" "$code" "$text" -- $H evaluate --model $T/model.json --cluster $f --gbs 8 --plan $T/plan.json ;;
    profile) expect "bad_$file" "$code" "$text" -- $H evaluate "${tiny[@]}" --profile $f --plan $T/plan.json ;;
    plan)    expect "bad_$file" "$code" "$text" -- $H evaluate "${tiny[@]}" --plan $f ;;
    job)     expect "bad_$file" "$code" "$text" -- $H evaluate --model $T/model.json --cluster $T/cluster.json --job $f --plan $T/plan.json ;;
    *)       bad "bad_$file" "unknown kind '$kind' in manifest" ;;
  esac
done < tests/bad/manifest.txt

# --- every bundled model, cluster and profile loads
for f in models/*.json; do
  case "$(basename $f)" in
    *.profile.json) expect "load_$(basename $f)" 0 "profile" -- $H describe --profile $f ;;
    *) if grep -q '"device_types"' $f; then expect "load_$(basename $f)" 0 "devices" -- $H describe --cluster $f
       else expect "load_$(basename $f)" 0 "layers" -- $H describe --model $f; fi ;;
  esac
done

[ "$skipped" -gt 0 ] && echo "cli: $skipped skipped"
echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
