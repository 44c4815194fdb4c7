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
expect version 0 "cost model 1.2" -- $H version

# --- evaluate: the breakdown of the tiny plan, figures worked out by hand under cost model 1.2 in
# tests/unit/test_bottleneck.c (the hand-off now enters the steady-state period)
expect evaluate_text 0 "iteration time  1.854950 s = pipeline 1.852530 s (replica 1) + sync 0.002420 s (stage 1) + step 0.000000 s + all-gather 0.000000 s" \
  -- $H evaluate "${tiny[@]}" --plan $T/plan.json
expect evaluate_bottleneck 0 "bottleneck      stage 1 of replica 1: 400.000 ms of compute per micro-batch" \
  -- $H evaluate "${tiny[@]}" --plan $T/plan.json
expect evaluate_json 0 '"iteration_time":	1.85495,' -- $H evaluate "${tiny[@]}" --plan $T/plan.json --json
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
expect plan_file_reevaluates 0 "iteration time  0.771374 s" -- $H evaluate "${tiny[@]}" --plan $tmp/p.json
if $H evaluate "${tiny[@]}" --plan $tmp/p.json 2>&1 | grep -q warning; then bad plan_file_reads_back_without_warnings "$($H evaluate "${tiny[@]}" --plan $tmp/p.json 2>&1 | grep warning)"; else ok plan_file_reads_back_without_warnings; fi
expect eval_json_reads_back_as_plan 0 "iteration time  1.854950 s" -- $H evaluate "${tiny[@]}" --plan $tmp/e.json
if grep -q '"status":	"optimal"' $tmp/p.json && grep -q '"lower_bound":	0.771374' $tmp/p.json; then ok plan_file_has_solver_block
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
expect compare_tiny_enum_proves 0 "enum            optimal          0.771374" -- $H compare "${tiny[@]}"
# The tiny optimum by hand: stage 0 = layers 0-2 on the fast GPUs 0,1 at tp 2, stage 1 =
# the head on the slow GPUs 2,3 at tp 2, mbs 1, gas 8. Stage 0: 9e12 FLOP / (2 x 100e12
# x 0.5) = 0.09 s plus two blocks' TP all-reduces (2e6 B / 1e11 B/s + 2 x 2 us) = 4.8e-5 s;
# stage 1: 2e12 / (2 x 40e12 x 0.5) = 0.05 s; hand-off 2 x 1e6 B / 2 over the lanes 0->2
# and 1->3, which share the link between the nodes (cost model 1.2: H = 2, 1e10 / 2 B/s),
# + 2 x 10 us = 2.2e-4 s; every micro-batch pays half of it on both stages (the period
# c = t + e / 2): T = 7 x (0.090048 + 1.1e-4) + 0.090048 + 0.05 + 2.2e-4 = 0.771374 s.
# Memory of GPU 0: states 16 x 9e6 / 2 = 7.2e7 B, 2 micro-batches in flight of
# 18e6 / 2 B, the 0.25 GiB reserve: the headroom is (2^30 - M) / 2^30.
tiny_T=$(awk 'BEGIN { t0 = 9e12 / (2 * 100e12 * 0.5) + 2 * (2e6 / 1e11 + 4e-6); t1 = 2e12 / (2 * 40e12 * 0.5)
                      e = 2 * 1e6 / 2 / (1e10 / 2) + 20e-6
                      printf "%.6f", 7 * (t0 + e / 2) + t0 + t1 + e }')
tiny_row=$(awk -v T=$tiny_T 'BEGIN { m = 16 * 9e6 / 2 + 2 * 18e6 / 2 + 0.25 * 2^30
                                     printf "%12.6f %10.4f %8.1f%%", T, 8 / T, 100 * (2^30 - m) / 2^30 }')
expect compare_tiny_gap 0 "dp              feasible     $tiny_row" -- $H compare "${tiny[@]}"
expect compare_json 0 '"best_bound": 0.771374000000000' -- $H compare "${tiny[@]}" --json
expect compare_unknown_solver 2 "unknown solver 'nope'" -- $H compare "${tiny[@]}" --solvers dp,nope
expect osdp_refuses_uneven_gbs 0 "osdp            refused: osdp: data parallelism only needs gbs (6) to be a multiple of the 4 devices" -- $H compare "${tiny[@]}" --gbs 6 --solvers osdp
expect sa_seeded 0 "solver sa: feasible" -- $H plan "${AMP[@]}" --solver sa --seed 3 --max-work 200 -o $tmp/sa1.json
$H plan "${AMP[@]}" --solver sa --seed 3 --max-work 200 -o $tmp/sa2.json 2>/dev/null
if diff <(grep -v '"seconds"' $tmp/sa1.json) <(grep -v '"seconds"' $tmp/sa2.json) >/dev/null; then ok sa_same_seed_same_plan_file; else bad sa_same_seed_same_plan_file "the two plan files differ beyond solve time"; fi

# every solver on every bundled set-up (the papers' set-ups, --time-limit 2 each): what
# each must achieve there.
#  - enum refuses (far too many plans), naming the reason;
#  - dp, sa, megatron, megatron-params, hethub, dhondt, random and pipette return a plan
#    that fits (these are the set-ups their authors ran); amp returns a plan, fitting or
#    not (it has no memory model); osdp gets the status the set-up's osdp= column says;
#  - no plan that fits is faster than the best lower bound proved over the whole space
#    (glpk, cbc), and a MIP solver's own bound is at most its plan's time;
#  - dp, which seeds from hethub, dhondt, megatron, megatron-params and pipette, is no
#    slower than any of them, and sa, which starts from dp, no slower than dp (unless
#    the time limit stopped dp or sa: then their "stopped" says so and this is skipped).
n_solvers=$($H solvers | wc -l)
while read -r model cluster gbs osdp_want extra; do
  out=$($H compare --model models/$model --cluster models/$cluster --gbs $gbs $extra --time-limit 2 --json 2>&1); rc=$?
  rows=$(echo "$out" | sed -n 's/^  { "name": "\([a-z-]*\)", "status": "\([a-z-]*\)", \(.*\)$/\1 \2 \3/p' |
         awk '{ name = $1; st = $2; t = "-"; fits = "-"; lb = "-"; stop = "-"
                if (match($0, /"iteration_time": [0-9.e+-]+/)) t = substr($0, RSTART + 18, RLENGTH - 18)
                if (match($0, /"fits": [a-z]+/)) fits = substr($0, RSTART + 8, RLENGTH - 8)
                if (match($0, /"lower_bound": [0-9.e+-]+/)) lb = substr($0, RSTART + 15, RLENGTH - 15)
                if (match($0, /"stopped": "[a-z-]+"/)) stop = substr($0, RSTART + 12, RLENGTH - 13)
                print name, st, t, fits, lb, stop }')
  best=$(echo "$out" | sed -n 's/^{ "gbs": [0-9]*, "best_bound": \([0-9.e+-]*\),.*/\1/p')
  verdict=$(awk -v n="$n_solvers" -v best="${best:-none}" -v osdp_want="${osdp_want#osdp=}" -v reason="$(echo "$out" | grep -c '"name": "enum", "status": "refused", "reason": "enum: the space holds .* exhaustive enumeration is for tiny instances')" '
    { st[$1] = $2; t[$1] = $3; fits[$1] = $4; lb[$1] = $5; stop[$1] = $6; rows++ }
    END {
      if (rows != n) { print rows " rows of " n; exit }
      if (st["enum"] != "refused" || reason != 1) { print "enum: " st["enum"] ", expected a refusal naming the size"; exit }
      split("dp sa megatron megatron-params hethub dhondt random pipette", must)
      for (i in must) { s = must[i]; if ((st[s] != "feasible" && st[s] != "optimal") || fits[s] != "true") { print s ": " st[s] ", fits " fits[s] ", expected a plan that fits"; exit } }
      if (st["amp"] != "feasible" && st["amp"] != "does-not-fit") { print "amp: " st["amp"] ", expected a plan"; exit }
      if (st["osdp"] != osdp_want) { print "osdp: " st["osdp"] ", expected " osdp_want; exit }
      for (s in st) {
        if (fits[s] == "true" && best != "none" && t[s] < best * (1 - 1e-9)) { print s ": " t[s] " beats the proved bound " best; exit }
        if ((s == "glpk" || s == "cbc") && (st[s] != "optimal" && st[s] != "feasible")) { print s ": " st[s]; exit }
        if ((s == "glpk" || s == "cbc") && lb[s] != "-" && lb[s] > t[s] * (1 + 1e-9)) { print s ": bound " lb[s] " above its time " t[s]; exit }
      }
      if (stop["dp"] == "-") {
        split("hethub dhondt megatron megatron-params pipette", seeds)
        for (i in seeds) { s = seeds[i]; if (t["dp"] > t[s] * (1 + 1e-9)) { print "dp " t["dp"] " slower than " s " " t[s]; exit } }
        if (stop["sa"] == "-" && t["sa"] > t["dp"] * (1 + 1e-9)) { print "sa " t["sa"] " slower than dp " t["dp"]; exit }
      }
      print "ok" }' <<<"$rows")
  if [ $rc -eq 0 ] && [ "$verdict" = ok ]; then ok "every_solver_on_${cluster%.json}"
  else bad "every_solver_on_${cluster%.json}" "exit $rc: $verdict" "$(echo "$out" | tail -4)"; fi
done <<'SETUPS'
gpt2-amp.json amp-hetero.json 32 osdp=feasible --profile=models/gpt2-amp.profile.json
gpt2-amp.json amp-homo-4xg4dn.json 32 osdp=feasible --profile=models/gpt2-amp.profile.json
transgan-amp.json amp-4xp3.json 64 osdp=feasible --profile=models/transgan-amp.profile.json
gpt-1.1b.json pipette-mid-16x8-v100.json 128 osdp=feasible
gpt-11.1b.json pipette-high-16x8-a100.json 256 osdp=feasible
gpt-8.3b.json pipette-real-16x8-a100.json 128 osdp=feasible
llama2-7b.json hethub-mix-2amd+10acc.json 192 osdp=no-plan
SETUPS

# --- simulate, draw, validate; the SVGs rendered by a real renderer (librsvg2-bin)
SIMP=(--model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json --gbs 32 --plan examples/amp-gpt2-hetero-4stage.plan.json)
expect simulate_text 0 "iteration time  simulated 1.085386 s, formula 1.135347 s (-4.40 %)" -- $H simulate "${SIMP[@]}"
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
    # the certificate covers every sharding mode and slice count (cost model 1.2): it proves
    # under the default list of four modes and under dp,zdp; with idle devices too (every
    # pp x tp x dp <= D is bounded)
    expect ${s}_tiny 0 "$(printf '%-15s optimal          0.771374' $s)" -- $H compare "${tiny[@]}" --solvers $s,enum --sharding dp,zdp
    expect ${s}_tiny_default_job 0 "$(printf '%-15s optimal          0.771374' $s)" -- $H compare "${tiny[@]}" --solvers $s,enum
    row=$($H compare "${tiny[@]}" --solvers $s,enum --idle-devices 2>&1 | grep "^$s ")
    if grep -Eq "^$s +optimal +0\.771374 +10\.3711 +66\.6% +[0-9.]+ +0\.771374 " <<<"$row"; then ok ${s}_proves_with_idle_devices
    else bad ${s}_proves_with_idle_devices "$row"; fi
    expect ${s}_proves_infeasible 6 "no plan of the search space fits in memory (proved)" -- $H plan --model tests/cases/too-big.json --cluster $T/cluster.json --gbs 8 --solver $s --sharding dp,zdp
  else
    skip ${s}_tiny "this build lacks $s"
    expect ${s}_not_built 2 "this build lacks" -- $H plan "${tiny[@]}" --solver $s
  fi
done
# The whole-space certificate against brute force: on variants of the tiny instance
# (schedule, slow links between nodes, binding memory), glpk and cbc prove optimal the
# time enum finds by enumerating every plan, and their bound never exceeds it (the job's
# sharding dp and zdp: the space the certificate covers).
mips=$(for s in glpk cbc; do built $s && printf '%s,' $s; done)
for v in "8 1f1b 80 1" "16 gpipe 80 1" "8 1f1b 5 1" "8 1f1b 80 0.6" "16 1f1b 5 0.6"; do
  [ -n "$mips" ] || { skip mip_certificate_equals_enum "this build has no MIP backend"; break; }
  set -- $v
  sed "s/\"inter_gbps\": 80/\"inter_gbps\": $3/; s/\"mem_gib\": 1,/\"mem_gib\": $4,/g" $T/cluster.json > $tmp/cv.json
  rows=$($H compare --model $T/model.json --cluster $tmp/cv.json --gbs $1 --schedule $2 --sharding dp,zdp --solvers ${mips}enum --json 2>&1 |
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
CFG=(--config pp=2,tp=1,dp=2,mbs=1 --fixed)
# The exact MIP's size for L layers, pp stages, dp replicas (tp 1), docs/formulation.md:
# columns u L(pp-1), x L pp, R pp, z L, v and w L pp each, t pp dp, tau dp, P, Q, the
# memory maxima 3 pp, the stages' scatter flags y pp and hand-offs e (pp-1) dp (1.2);
# integer u, R, z; rows def_x L pp, order (L-1)(pp-1), nonempty pp, 3 per product (v, w),
# time pp dp, strag pp dp, pipe dp, sync pp, 3 L pp maxima, mem pp, y >= w L pp, e (pp-1) dp.
read -r ncol nint nrow <<<"$(awk -v L=4 -v pp=2 -v dp=2 'BEGIN {
  print L*(pp-1) + L*pp + pp + L + 2*L*pp + pp*dp + dp + 2 + 3*pp + pp + (pp-1)*dp, L*(pp-1) + pp + L,
        L*pp + (L-1)*(pp-1) + pp + 6*L*pp + 2*pp*dp + dp + pp + 3*L*pp + pp + L*pp + (pp-1)*dp }')"
expect export_lp 0 "wrote $tmp/t.lp (exact MIP, placement fixed): $ncol columns ($nint integer), $nrow rows" -- $H export-lp "${tiny[@]}" "${CFG[@]}" -o $tmp/t.lp
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
  expect decode_cbc 0 "iteration 0.821234 s by the evaluator (MIP objective at the file's values 0.821234)" -- $H decode "${tiny[@]}" "${CFG[@]}" --solution $tmp/c1.sol -o $tmp/d1.json
  expect decode_glpsol 0 "iteration 0.821234 s by the evaluator" -- $H decode "${tiny[@]}" "${CFG[@]}" --solution $tmp/g1.txt -o $tmp/d2.json
  if [ "$obj1" = "821.234" ]; then ok external_optimum_is_the_decoded_plans_time_in_ms; else bad external_optimum_is_the_decoded_plans_time_in_ms "glpsol: $obj1 (the objective is in milliseconds)"; fi
  expect decode_wrong_file 3 "names none of the MIP's columns" -- $H decode "${tiny[@]}" "${CFG[@]}" --solution $T/plan.json
  # The pattern program of the same configuration, through both tools: they agree, and
  # the plan it decodes to is a plan, evaluated no faster than the program's optimum,
  # a bound (the unit tests check it against brute force).
  PCFG=(--config pp=2,tp=1,dp=2,mbs=1)
  expect export_pattern_lp 0 "(pattern program, placement free)" -- $H export-lp "${tiny[@]}" "${PCFG[@]}" -o $tmp/pat.lp
  glpsol --lp $tmp/pat.lp -o $tmp/pg.txt >/dev/null 2>&1
  cbc $tmp/pat.lp -solve -solu $tmp/pc.sol -quit >/dev/null 2>&1
  pg=$(sed -n 's/^Objective: *obj = \([0-9.e+-]*\).*/\1/p' $tmp/pg.txt)
  pc=$(sed -n 's/^Optimal - objective value \([0-9.e+-]*\).*/\1/p' $tmp/pc.sol)
  $H decode "${tiny[@]}" "${PCFG[@]}" --solution $tmp/pc.sol -o $tmp/pd.json > $tmp/pd.txt 2>&1; rc=$?
  pt=$(sed -n 's/.*iteration \([0-9.]*\) s by the evaluator.*/\1/p' $tmp/pd.txt)
  if [ $rc -eq 0 ] && [ -n "$pg" ] && [ -n "$pc" ] && [ -n "$pt" ] &&
     awk -v g="$pg" -v c="$pc" -v t="$pt" 'BEGIN { exit !(g - c < 1e-3 && c - g < 1e-3 && t * 1000 >= c - 1e-3) }'; then
    ok "pattern_program_round_trip (glpsol $pg, cbc $pc ms; decoded plan $pt s)"
  else bad pattern_program_round_trip "glpsol '$pg' cbc '$pc' decoded '$pt' rc $rc" "$(tail -2 $tmp/pd.txt)"; fi
  # A plan's own placement: the exact MIP of it, solved, decodes to its optimum split.
  expect export_plan_lp 0 "(exact MIP, placement fixed)" -- $H export-lp "${tiny[@]}" --plan $T/plan.json -o $tmp/pl.lp
  cbc $tmp/pl.lp -solve -solu $tmp/pl.sol -quit >/dev/null 2>&1
  plo=$(sed -n 's/^Optimal - objective value \([0-9.e+-]*\).*/\1/p' $tmp/pl.sol)
  $H decode "${tiny[@]}" --plan $T/plan.json --solution $tmp/pl.sol -o $tmp/pld.json > $tmp/pld.txt 2>&1
  plt=$(sed -n 's/.*iteration \([0-9.]*\) s by the evaluator.*/\1/p' $tmp/pld.txt)
  if [ -n "$plo" ] && [ -n "$plt" ] && awk -v o="$plo" -v t="$plt" 'BEGIN { exit !(t * 1000 - o < 1e-3 && o - t * 1000 < 1e-3) }'; then
    ok "plan_placement_round_trip ($plo ms = $plt s)"
  else bad plan_placement_round_trip "cbc '$plo' decoded '$plt'" "$(tail -2 $tmp/pld.txt)"; fi
  expect export_plan_and_config 2 "--plan gives the configuration and placement" -- $H export-lp "${tiny[@]}" --plan $T/plan.json "${PCFG[@]}"
else
  bad export_round_trip_glpsol_cbc_lp_mps_agree "glpsol or cbc is missing: run ./scripts/install-deps.sh"
fi

# --- expand and describe
expect expand_repeat 0 '"name":	"block.1"' -- $H expand --model $T/model.json
expect expand_transformer 0 '"name":	"final_norm"' -- $H expand --model models/llama2-7b.json
expect describe 0 "4 devices" -- $H describe --cluster $T/cluster.json --model $T/model.json

# --- module trees (formats.md "modules") and dhondt's memory weight: A, B, C held in one
# module "all" on two single-GPU nodes at gbs 1 (one configuration: pp 2, dp 1). Memory
# shares 0.5 0.25 0.25, compute 0.25 0.25 0.5 (tests/unit/test_modules.c): the default
# weight 0.8 costs them 0.45 0.25 0.3, split [A] [B C]; 0.2 costs 0.3 0.25 0.45, [A B] [C].
cat > $tmp/tree.json <<'EOF'
{ "name": "tree", "modules": [ { "name": "all", "children": [
  { "name": "A", "params": 2e6, "act_bytes": 0, "out_bytes": 1e3, "flops": 1e12 },
  { "name": "B", "params": 1e6, "act_bytes": 0, "out_bytes": 1e3, "flops": 1e12 },
  { "name": "C", "params": 1e6, "act_bytes": 0, "out_bytes": 1e3, "flops": 2e12 } ] } ] }
EOF
cat > $tmp/two.json <<'EOF'
{ "device_types": { "g": { "mem_gib": 80, "tflops": 100 } },
  "nodes": [ { "name": "a", "type": "g", "gpus": 1 }, { "name": "b", "type": "g", "gpus": 1 } ],
  "inter_gbps": 100 }
EOF
TREE=(--cluster $tmp/two.json --gbs 1 --solver dhondt)
# the plan file's stages as "first-last first-last"
stage_layers() { tr -d ' \t\n' < "$1" | grep -o '"layers":\[[0-9]*,[0-9]*\]' | tr -dc '0-9,\n' | tr ',\n' '- ' | sed 's/ $//'; }
# tree_plan NAME WANT NOTE [flags]: the plan's stages are WANT and its space note says NOTE
tree_plan() {
  local name=$1 want=$2 note=$3 got; shift 3
  expect "$name" 0 "" -- $H plan --model $tmp/tree.json "${TREE[@]}" "$@" -o $tmp/tree-plan.json
  got=$(stage_layers $tmp/tree-plan.json)
  if [ "$got" = "$want" ] && grep -qF "$note" $tmp/tree-plan.json; then ok "${name}_split"
  else bad "${name}_split" "stages '$got', expected $want; space note: $(grep space_note $tmp/tree-plan.json)"; fi
}
tree_plan dhondt_tree_default "0-0 1-2" "SageMaker on the module tree, memory weight 0.8"
tree_plan dhondt_tree_memory_weight "0-1 2-2" "SageMaker on the module tree, memory weight 0.2" --memory-weight 0.2
expect dhondt_memory_weight_range 2 "--memory-weight: expected a fraction in [0, 1], got '1.5'" -- $H plan --model $tmp/tree.json "${TREE[@]}" --memory-weight 1.5
expect expand_tree 0 "" -- $H expand --model $tmp/tree.json -o $tmp/tree-x.json
if $H expand --model $tmp/tree-x.json | cmp -s - $tmp/tree-x.json && grep -q '"children"' $tmp/tree-x.json; then
  ok expand_tree_reads_back_the_same
else bad expand_tree_reads_back_the_same "expand of expand's output differs, or has no tree"; fi
sed 's/"name": "all", //' $tmp/tree.json > $tmp/tree-bad.json
expect modules_bad_file_names_the_key 3 "tree-bad.json: modules[0].name: missing" -- $H plan --model $tmp/tree-bad.json "${TREE[@]}"

# --- a profile of other shapes (issue 23): refused with the difference named, taken knowingly
# with the flag (then no plan fits one H100 for 70B: exit 6, not 3)
MISM=(--model models/llama2-70b.json --cluster models/h100-1gpu.cluster.json --profile models/llama2-7b.h100.profile.json --gbs 8 --solver megatron)
expect profile_mismatch_refused 3 "hidden 4096 vs 8192, heads 32 vs 64" -- $H plan "${MISM[@]}"
expect profile_mismatch_names_the_flag 3 "(--accept-profile-mismatch; job key" -- $H plan "${MISM[@]}"
expect profile_mismatch_accepted_knowingly 6 "though its shapes differ (accept_profile_mismatch)" -- $H plan "${MISM[@]}" --accept-profile-mismatch

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

# --- robustness (issue 14): limits, interrupts, output files, input hygiene, degenerate inputs
# gbs at the top of its range: the divisors of gbs / dp come from factoring, so 2^40 plans
# at once; 2^31 gives a valid plan (no int overflow of mbs); one past 2^40 is refused
expect gbs_2_40_plans_at_once 0 "solver dp: feasible" -- timeout 60 $H plan "${tiny[@]}" --gbs 1099511627776 -o $tmp/g40.json
expect gbs_2_40_plan_reevaluates 0 "gbs 1099511627776" -- $H evaluate "${tiny[@]}" --gbs 1099511627776 --plan $tmp/g40.json
expect gbs_2_31_plan_is_valid 0 "iteration time" -- sh -c "$H plan ${tiny[*]} --gbs 2147483648 --solver sa -o $tmp/g31.json 2>/dev/null && $H evaluate ${tiny[*]} --gbs 2147483648 --plan $tmp/g31.json"
expect gbs_prime_near_2_40 0 "solver enum: optimal" -- timeout 60 $H plan "${tiny[@]}" --gbs 1099511627689 --solver enum -o /dev/null
expect gbs_prime_small 0 "solver dp: feasible" -- $H plan "${tiny[@]}" --gbs 7 -o /dev/null
expect gbs_one 0 "solver dp: feasible" -- $H plan "${tiny[@]}" --gbs 1 -o /dev/null
expect gbs_above_2_40 2 "--gbs: expected an integer in 1..1099511627776 (2^40), got '1099511627777'" -- $H plan "${tiny[@]}" --gbs 1099511627777
expect gbs_beyond_long 2 "--gbs: expected an integer in 1..1099511627776" -- $H plan "${tiny[@]}" --gbs 99999999999999999999999
expect max_work_beyond_long 2 "--max-work: expected an integer in 1..9223372036854775807" -- $H plan "${tiny[@]}" --max-work 99999999999999999999
expect time_limit_nan 2 "--time-limit: expected a number of seconds" -- $H plan "${tiny[@]}" --time-limit nan
expect export_config_huge 4 "pp * tp * dp" -- $H export-lp "${tiny[@]}" --config pp=1000000,tp=1000000,dp=1000000,mbs=1
# input files: endless, binary, oversized, a directory
expect model_dev_zero 3 "/dev/zero: contains a NUL byte" -- timeout 10 $H expand --model /dev/zero
expect model_directory 3 "it is a directory" -- $H expand --model $T
head -c 68157440 /dev/zero | tr '\0' ' ' > $tmp/huge.json
expect model_over_64_mib 3 "larger than 64 MiB" -- timeout 20 $H expand --model $tmp/huge.json
rm -f $tmp/huge.json
# unknown flags get the nearest allowed one
expect unknown_flag_suggests 2 "unknown flag '--modle' (did you mean '--model'?)" -- $H plan --modle x
expect unknown_flag_far_no_suggestion 2 "unknown flag '--frobnicate'" -- $H plan --frobnicate x
# a GPipe plan carries its schedule: no --schedule needed; a contradicting flag still wins
sed 's/"1f1b"/"gpipe"/' $T/plan.json > $tmp/gpipe.json
expect gpipe_plan_evaluates_alone 0 "gas 4, gpipe" -- $H evaluate "${tiny[@]}" --plan $tmp/gpipe.json
expect gpipe_plan_simulates_alone 0 "gpipe, gbs 8" -- $H simulate "${tiny[@]}" --plan $tmp/gpipe.json
expect gpipe_plan_against_flag 4 "schedule 'gpipe' but the job's is '1f1b'" -- $H evaluate "${tiny[@]}" --schedule 1f1b --plan $tmp/gpipe.json
# --- the job's 1.2 fields as flags (docs/cli.md): each value taken (evaluate's job line
# says it), a bad one refused naming the flag and what it takes (exit 2), a plan the job
# forbids refused naming the rule (exit 4)
ev=($H evaluate "${tiny[@]}" --plan $T/plan.json)
expect flag_sequence_parallel 0 "sequence parallel on" -- "${ev[@]}" --sequence-parallel
expect flag_grad_sync_overlap 0 "job      grad sync overlap" -- "${ev[@]}" --grad-sync overlap
expect flag_grad_sync_overlap_exposed 0 "+ exposed sync " -- "${ev[@]}" --grad-sync overlap
expect flag_grad_sync_end 0 "job      grad sync end" -- "${ev[@]}" --grad-sync=end
expect flag_sharding_list 0 "modes dp,zdp," -- "${ev[@]}" --sharding zdp,dp
expect flag_sharding_zero3 0 "modes dp,zdp," -- "${ev[@]}" --sharding dp,zero3
expect flag_uniform_sharding 4 "the job asks for uniform_sharding" -- "${ev[@]}" --uniform-sharding
expect flag_idle_devices 0 "devices used 4 of 4 (idle devices allowed)" -- "${ev[@]}" --idle-devices
expect flag_max_slices 0 "max slices 4" -- "${ev[@]}" --max-slices 4
expect flag_sharding_forbids_the_plan 4 "sharding[1] is 'zdp', which the job's sharding list (dp, zero1) does not allow" -- "${ev[@]}" --sharding dp,zero1
expect flag_grad_sync_bad 2 "--grad-sync: expected end or overlap, got 'sometimes'" -- "${ev[@]}" --grad-sync sometimes
expect flag_sharding_bad 2 "--sharding: expected a comma-separated list of dp, zero1, zero2, zdp (zero3), e.g. dp,zero1, got 'dp,zero4'" -- "${ev[@]}" --sharding dp,zero4
expect flag_sharding_empty_word 2 "--sharding: expected a comma-separated list" -- "${ev[@]}" --sharding dp,
expect flag_max_slices_not_power 2 "--max-slices: expected a power of two in 1..1048576 (1, 2, 4, ...), got '3'" -- "${ev[@]}" --max-slices 3
expect flag_max_slices_zero 2 "--max-slices: expected a power of two" -- "${ev[@]}" --max-slices 0
expect flag_sequence_parallel_no_value 2 "--sequence-parallel takes no value" -- "${ev[@]}" --sequence-parallel=1
# a plan with an idle device needs --idle-devices; with it, the device is listed idle
cat > $tmp/idle.json <<'JSON'
{ "version": 1, "pp": 1, "tp": 1, "dp": 2, "mbs": 1, "stages": [ { "layers": [0, 3], "devices": [[0], [2]] } ] }
JSON
expect idle_plan_needs_the_flag 4 "--idle-devices" -- $H evaluate "${tiny[@]}" --plan $tmp/idle.json
expect idle_plan_with_the_flag 0 "devices used 2 of 4" -- $H evaluate "${tiny[@]}" --plan $tmp/idle.json --idle-devices
if $H evaluate "${tiny[@]}" --plan $tmp/idle.json --idle-devices 2>/dev/null | grep -Eq '^ +3  b +slow +- +- +1.000  idle$'; then
  ok idle_device_listed_idle
else bad idle_device_listed_idle "$($H evaluate "${tiny[@]}" --plan $tmp/idle.json --idle-devices 2>&1 | grep idle)"; fi
# the job file's 1.2 keys, and a flag over them
printf '{ "gbs": 8, "grad_sync": "overlap", "sharding": ["dp", "zdp"] }\n' > $tmp/job12.json
expect job_file_grad_sync 0 "grad sync overlap, sequence parallel off, modes dp,zdp," -- $H evaluate --model $T/model.json --cluster $T/cluster.json --plan $T/plan.json --job $tmp/job12.json
expect job_file_flag_wins 0 "grad sync end" -- $H evaluate --model $T/model.json --cluster $T/cluster.json --plan $T/plan.json --job $tmp/job12.json --grad-sync end

# a plan file carries the job's fields ("inputs") back into evaluate: same job, same time
$H plan "${tiny[@]}" --grad-sync overlap --sequence-parallel --sharding dp,zero1 --max-slices 2 -o $tmp/p12.json 2>/dev/null
if grep -q '"grad_sync":	"overlap"' $tmp/p12.json && grep -q '"sequence_parallel":	true' $tmp/p12.json &&
   grep -q '"max_slices":	2' $tmp/p12.json; then ok plan_file_records_the_job_fields
else bad plan_file_records_the_job_fields "$(grep -A10 '"inputs"' $tmp/p12.json)"; fi
want=$(sed -n 's/.*"iteration_time":[[:space:]]*\([0-9.e+-]*\),.*/\1/p' $tmp/p12.json | head -1)
out=$($H evaluate $tmp/p12.json 2>&1)
if grep -q "^job      grad sync overlap, sequence parallel on, modes dp,zero1, max slices 2," <<<"$out" &&
   grep -q "^iteration time  $want s" <<<"$out"; then ok plan_job_fields_round_trip_through_evaluate
else bad plan_job_fields_round_trip_through_evaluate "want $want" "$(grep -E '^(job|iteration)' <<<"$out")"; fi
json=$($H evaluate $tmp/p12.json --json 2>/dev/null)
if grep -q '"grad_sync":	"overlap"' <<<"$json" && grep -q '"cost_model":	"1.2"' <<<"$json" &&
   grep -q '"steady_state_handoffs"' <<<"$json" && grep -q '"allgather_time"' <<<"$json"; then ok evaluate_json_has_the_job_and_1_2_terms
else bad evaluate_json_has_the_job_and_1_2_terms "$(head -c 600 <<<"$json")"; fi
expect plan_job_fields_flag_wins 0 "job      grad sync end, sequence parallel on" -- $H evaluate $tmp/p12.json --grad-sync end
expect plan_job_fields_job_file_wins 0 "job      grad sync end, sequence parallel off, modes dp,zero1,zero2,zdp, max slices 1" -- $H evaluate $tmp/p12.json --job $T/job.json

# output files: -o is honoured, an unwritable path is refused with the OS's reason before
# any search (exit 8), and a written plan leaves no temporary file behind
expect simulate_json_to_file 0 "" -- $H simulate "${tiny[@]}" --plan $T/plan.json --json -o $tmp/sim.json
if [ -z "$($H simulate "${tiny[@]}" --plan $T/plan.json --json -o $tmp/sim2.json 2>/dev/null)" ] &&
   grep -q '"kind": "all-reduce"' $tmp/sim.json && tail -c 4 $tmp/sim.json | grep -q '}'; then ok simulate_json_o_writes_the_file_not_stdout
else bad simulate_json_o_writes_the_file_not_stdout "stdout not empty or $tmp/sim.json incomplete"; fi
# 1.854950 s: the tiny plan by hand under cost model 1.2 (tests/unit/test_bottleneck.c)
expect evaluate_text_to_file 0 "" -- $H evaluate "${tiny[@]}" --plan $T/plan.json -o $tmp/ev.txt
if grep -q "^iteration time  1.854950 s" $tmp/ev.txt; then ok evaluate_o_writes_the_text; else bad evaluate_o_writes_the_text "$(head -3 $tmp/ev.txt)"; fi
expect plan_o_unwritable 8 "cannot write '$tmp/no/such/dir/p.json'" -- $H plan "${tiny[@]}" -o $tmp/no/such/dir/p.json
expect plan_o_names_the_reason 8 "No such file or directory" -- $H plan --model models/gpt2-amp.json --cluster models/amp-hetero.json --gbs 32 --solver sa --max-work 100000000 -o $tmp/no/such/dir/p.json
expect plan_o_directory 8 "Is a directory" -- $H plan "${tiny[@]}" -o $tmp
mkdir -p $tmp/out && $H plan "${tiny[@]}" -o $tmp/out/p.json 2>/dev/null && $H plan "${tiny[@]}" -o $tmp/out/p.json 2>/dev/null
if [ "$(ls $tmp/out)" = p.json ]; then ok plan_o_leaves_no_temporary_file; else bad plan_o_leaves_no_temporary_file "$(ls $tmp/out)"; fi
# amp has no memory model: where nothing fits its plan is written, marked, and exits 5
expect amp_plan_does_not_fit 5 "the plan of solver amp does not fit in memory" -- $H plan --model tests/cases/too-big.json --cluster $T/cluster.json --gbs 4 --solver amp -o $tmp/amp.json
if grep -q '"status":	"does-not-fit"' $tmp/amp.json && grep -q '"feasible":	false' $tmp/amp.json; then ok amp_plan_file_says_does_not_fit
else bad amp_plan_file_says_does_not_fit "$(grep -E 'status|feasible' $tmp/amp.json)"; fi
expect amp_compare_row_does_not_fit 0 "amp             does-not-fit" -- $H compare --model tests/cases/too-big.json --cluster $T/cluster.json --gbs 4 --solvers amp,dp
# interrupts: SIGINT or SIGTERM during a long search writes the best plan so far, marked
# "interrupted", that evaluate accepts, and exits 7; a second signal quits at once
interrupt() {   # interrupt NAME SIGNAL(S) SOLVER: runs a long search, signals it after 3 s
  local name=$1 sigs=$2 solver=$3 pid rc
  rm -f $tmp/int.json
  $H plan --model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json \
     --gbs 32 --solver $solver --max-work 1000000000 -o $tmp/int.json >$tmp/int.out 2>&1 & pid=$!
  sleep 3
  for s in $sigs; do kill -$s $pid 2>/dev/null; done
  wait $pid; rc=$?
  echo $rc
}
rc=$(interrupt sigint INT sa)
if [ "$rc" -eq 7 ] && grep -q '"stopped":	"interrupted"' $tmp/int.json && grep -q "best plan found so far" $tmp/int.out &&
   $H evaluate --model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json --gbs 32 --plan $tmp/int.json >/dev/null 2>&1
then ok sigint_writes_the_best_plan_so_far_exit_7
else bad sigint_writes_the_best_plan_so_far_exit_7 "exit $rc" "$(tail -3 $tmp/int.out)"; fi
rc=$(interrupt sigterm TERM random)
if [ "$rc" -eq 7 ] && grep -q '"stopped":	"interrupted"' $tmp/int.json && grep -q "SIGTERM" $tmp/int.out &&
   $H evaluate --model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json --gbs 32 --plan $tmp/int.json >/dev/null 2>&1
then ok sigterm_writes_the_best_plan_so_far_exit_7
else bad sigterm_writes_the_best_plan_so_far_exit_7 "exit $rc" "$(tail -3 $tmp/int.out)"; fi
# (two different signals back to back: two of one kind could merge while pending; where
# both are pending at once, on a loaded machine, the lower number, SIGINT, is delivered
# first and SIGTERM is the second: killed by SIGINT (130) or by SIGTERM (143))
rc=$(interrupt twice "TERM INT" random)
if { [ "$rc" -eq 130 ] || [ "$rc" -eq 143 ]; } && [ ! -e $tmp/int.json ]; then ok second_signal_quits_at_once_writing_nothing
else bad second_signal_quits_at_once_writing_nothing "exit $rc, expected 130 or 143 (killed by the second signal)"; fi
# degenerate inputs: a sensible plan or a clear error, never a crash (exit >= 128)
printf '{ "layers": [ { "name": "only", "params": 1e6, "act_bytes": 1e6, "out_bytes": 1e3, "flops": 1e12 } ] }' > $tmp/one-layer.json
printf '{ "device_types": { "g": { "mem_gib": 16, "tflops": 100 } }, "nodes": [ { "name": "n", "type": "g", "gpus": 1 } ] }' > $tmp/one-gpu.json
expect one_device_one_layer 0 "pp 1 tp 1 dp 1 mbs 1: iteration 0.010000 s" -- $H plan --model $tmp/one-layer.json --cluster $tmp/one-gpu.json --gbs 1 -o /dev/null
sed 's/"params": [0-9e.]*/"params": 0/g' $T/model.json > $tmp/zero-params.json
expect zero_parameter_layers 0 "solver dp: feasible" -- $H plan --model $tmp/zero-params.json --cluster $T/cluster.json --gbs 8 -o $tmp/zp.json
expect zero_parameter_layers_no_sync 0 "+ sync 0.000000 s" -- $H evaluate --model $tmp/zero-params.json --cluster $T/cluster.json --gbs 8 --plan $tmp/zp.json
# 10,000 layers, and 16,384 devices (2,048 nodes of 8): megatron plans them and the plan
# evaluates; dp under a time limit stops in time with a plan or says none was found
printf '{ "name": "deep-10000", "layers": [ { "name": "embed", "params": 1e6, "act_bytes": 2e7, "out_bytes": 1e5, "flops": 1e9 }, { "name": "block", "repeat": 9998, "params": 2e5, "act_bytes": 1e6, "out_bytes": 1e5, "flops": 2e9, "tp_comm_bytes": 2e5 }, { "name": "head", "params": 1e6, "act_bytes": 4e6, "out_bytes": 4, "flops": 2e9 } ] }' > $tmp/deep.json
awk 'BEGIN { printf "{ \"name\": \"wide-16384\", \"device_types\": { \"A100\": { \"mem_gib\": 80, \"tflops\": 312, \"efficiency\": 0.5 }, \"V100\": { \"mem_gib\": 32, \"tflops\": 125, \"efficiency\": 0.5 } }, \"nodes\": ["
             for (i = 0; i < 2048; i++) printf "%s{ \"name\": \"n%d\", \"type\": \"%s\", \"gpus\": 8, \"intra_gbps\": 2400 }", i ? ", " : "", i, i < 1024 ? "A100" : "V100"
             printf "], \"inter_gbps\": 200, \"inter_lat_us\": 5 }\n" }' > $tmp/wide.json
A16=(--cluster $tmp/a100x16.json)
printf '{ "device_types": { "A100": { "mem_gib": 80, "tflops": 312, "efficiency": 0.5 } }, "nodes": [ { "name": "n0", "type": "A100", "gpus": 8, "intra_gbps": 2400 }, { "name": "n1", "type": "A100", "gpus": 8, "intra_gbps": 2400 } ], "inter_gbps": 200, "inter_lat_us": 5 }' > $tmp/a100x16.json
expect deep_10000_layers_megatron 0 "solver megatron: feasible" -- $H plan --model $tmp/deep.json "${A16[@]}" --gbs 64 --solver megatron -o $tmp/deep-plan.json
expect deep_10000_layers_evaluates 0 "model    deep-10000: 10000 layers" -- $H evaluate --model $tmp/deep.json "${A16[@]}" --gbs 64 --plan $tmp/deep-plan.json
expect wide_16384_devices_megatron 0 "solver megatron: feasible" -- $H plan --model models/gpt-1.1b.json --cluster $tmp/wide.json --gbs 16384 --solver megatron -o $tmp/wide-plan.json
expect wide_16384_devices_evaluates 0 "16384 devices on 2048 nodes" -- $H evaluate --model models/gpt-1.1b.json --cluster $tmp/wide.json --gbs 16384 --plan $tmp/wide-plan.json
for big in "deep $tmp/deep.json $tmp/a100x16.json 64" "wide models/gpt-1.1b.json $tmp/wide.json 16384"; do
  set -- $big
  for s in dp sa; do
    start=$(date +%s)
    out=$(timeout 120 $H plan --model $2 --cluster $3 --gbs $4 --solver $s --time-limit 5 -o /dev/null 2>&1); rc=$?
    took=$(( $(date +%s) - start ))
    if { [ $rc -eq 0 ] || { [ $rc -eq 6 ] && grep -q "found none within its limits" <<<"$out"; }; } && [ $took -le 90 ]; then ok "${1}_${s}_time_limited_plan_or_clear_no_plan"
    else bad "${1}_${s}_time_limited_plan_or_clear_no_plan" "exit $rc after $took s" "$(echo "$out" | tail -2)"; fi
  done
done
# 1e308 (finite) in any number of the model or the cluster: a plan, a plan that does not
# fit, or no plan; never a crash. 1e309 overflows to inf and is refused (exit 3).
for f in model cluster; do
  src=$T/$f.json
  for key in $(grep -o '"[a-z_]*": [0-9][0-9.e]*' $src | cut -d'"' -f2 | sort -u); do
    for v in 1e308 1e309; do
      sed "s/\"$key\": [0-9][0-9.e]*/\"$key\": $v/g" $src > $tmp/x-$f.json
      if [ $f = model ]; then set -- --model $tmp/x-$f.json --cluster $T/cluster.json; else set -- --model $T/model.json --cluster $tmp/x-$f.json; fi
      out=$(timeout 60 $H plan "$@" --gbs 8 -o /dev/null 2>&1); rc=$?
      case "$v:$rc" in
        1e308:0|1e308:3|1e308:5|1e308:6|1e309:3) ;;
        *) bad "extreme_${f}_${key}_$v" "exit $rc" "$(echo "$out" | tail -2)"; continue ;;
      esac
      [ $rc -eq 3 ] && ! grep -q "$key" <<<"$out" && { bad "extreme_${f}_${key}_$v" "exit 3 without naming $key" "$out"; continue; }
      ok "extreme_${f}_${key}_$v"
    done
  done
done

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

# Progress on long runs (issue 14 item 3): past 2 s each solver's search prints lines on
# stderr: "NAME:  T s  PHASE k/n  incumbent X", with the bound only for the solvers that
# prove one (the MIP solvers, within their space: sharding dp and zdp), never for dp and sa,
# which claim none.
. bench/mixed_cluster.sh
mixed_cluster 96 $tmp/c96.json
for s in dp sa cbc; do
  if ! $H solvers | grep -q "^$s "; then skip "progress_lines_$s" "this build lacks $s"; continue; fi
  job=(); [ $s = cbc ] && job=(--sharding dp,zdp)
  out=$($H plan --model models/llama2-140b.json --cluster $tmp/c96.json --gbs 1536 --solver $s \
        "${job[@]}" --time-limit 5 -o /dev/null 2>&1); rc=$?
  name=$(echo $s | tr a-z A-Z)
  lines=$(grep -E "^$name: +[0-9]+\.[0-9] s  .+ [0-9]+/[0-9]+  incumbent ([0-9.]+|none)" <<<"$out")
  n=$(echo -n "$lines" | grep -c .)
  case $s in cbc) bound_ok=$(grep -c "  bound " <<<"$lines") ;; *) bound_ok=$(( $(grep -c "bound" <<<"$lines") == 0 )) ;; esac
  if [ $rc -eq 0 ] && [ "$n" -ge 2 ] && [ "$bound_ok" -ge 1 ]; then ok "progress_lines_$s"
  else bad "progress_lines_$s" "exit $rc, $n progress lines" "$(echo "$out" | tail -4)"; fi
done

[ "$skipped" -gt 0 ] && echo "cli: $skipped skipped"
echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
