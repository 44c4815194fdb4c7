#!/usr/bin/env bash
# test_probe.sh -- bench/probe_bounds (make probe-bounds) on the tiny example against
# `hetplan plan --solver enum`: every configuration's bound at or below the plan its
# sequence decodes to, the least at the brute-force optimum, the cutoff marking exactly
# the configurations whose bound reaches it, one configuration's sequence, its terms and
# its descent, the plans it writes, and the usage errors. Ends with "probe: N passed, N
# failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
H=${HETPLAN:-build/hetplan}
P=${PROBE:-build/probe_bounds}
T=examples/tiny
passed=0; failed=0

ok()  { passed=$((passed + 1)); echo "ok $((passed + failed)) $1"; }
bad() { failed=$((failed + 1)); echo "not ok $((passed + failed)) $1"; shift; printf '  %s\n' "$@"; }
give_up() { bad "$1" "$2"; echo "probe: $passed passed, $failed failed"; exit 1; }

[ -x "$P" ] || give_up probe_built "$P is not built (make probe-bounds, or make test)"
tmp=$(mktemp -d) || give_up temp_folder "mktemp -d failed"
trap 'rm -rf "$tmp"' EXIT

# check NAME WHAT PROGRAM FILE...: the awk program over the files exits 0 (it reads opt,
# pp, tp, dp and mbs from the environment); else WHAT is the failure
check() {
  local name=$1 what=$2 prog=$3; shift 3
  local vars='BEGIN { opt = ENVIRON["OPT"] + 0; pp = ENVIRON["PP"] + 0; tp = ENVIRON["TP"] + 0;
                      dp = ENVIRON["DP"] + 0; mbs = ENVIRON["MBS"] + 0 } '
  if awk "$vars$prog" "$@"; then ok "$name"; else bad "$name" "$what" "$(head -5 "$1")"; fi
}

tiny=(--model "$T/model.json" --cluster "$T/cluster.json" --gbs 8)

"$H" plan "${tiny[@]}" --solver enum -o "$tmp/opt.json" >/dev/null 2>&1 ||
  give_up enum_optimum "hetplan plan --solver enum failed"
read -r OPT cfg < <(python3 -c "import json, sys; d = json.load(open(sys.argv[1]));
print(repr(d['iteration_time']), '%d,%d,%d,%d' % (d['pp'], d['tp'], d['dp'], d['mbs']))" "$tmp/opt.json")
[ -n "${OPT:-}" ] && [ -n "${cfg:-}" ] || give_up enum_optimum "no optimum read from $tmp/opt.json"
IFS=, read -r PP TP DP MBS <<<"$cfg"
export OPT PP TP DP MBS

# Every configuration, no cutoff: a bound no larger than its decoded plan (a number); the
# least is the optimum (the tiny cluster has two classes: counted exactly, tight there),
# and the optimal configuration's bound is not above it. The tool prints 6 decimals: the
# comparisons with the optimum allow half the last digit.
"$P" "${tiny[@]}" >"$tmp/uncut" 2>&1
check probe_every_line_bounded "a configuration line without a bound" \
  '/^pp / { n++; if ($9 != "bound" || $10 !~ /^[0-9]+\.[0-9]+$/) bad = 1 } END { exit !(n >= 8 && !bad) }' "$tmp/uncut"
check probe_bound_at_most_decoded "a bound above the plan its sequence decodes to, or no plan" \
  '/^pp / { d = ""; for (i = 1; i < NF; i++) if ($i == "decoded") d = $(i + 1)
            if (d !~ /^[0-9]+\.[0-9]+$/ || $10 > d * (1 + 1e-9)) bad = 1; n++ }
   END { exit !(n >= 8 && !bad) }' "$tmp/uncut"
check probe_least_bound_is_the_optimum "the least bound is not the enum optimum $OPT" \
  '/^pp / { if (min == "" || $10 + 0 < min) min = $10 + 0 } END { exit !(min != "" && min <= opt + 5e-7 && min >= opt - 1e-6) }' "$tmp/uncut"
check probe_optimal_config_not_above "the optimal configuration's bound is above the optimum" \
  '/^pp / && $2 == pp && $4 == tp && $6 == dp && $8 == mbs { seen = 1; if ($10 > opt + 5e-7) bad = 1 }
   END { exit !(seen && !bad) }' "$tmp/uncut"

# The optimum as cutoff: "(pruned)" on exactly the configurations whose bound without a
# cutoff reaches it, and the bound of the others as without one
"$P" "${tiny[@]}" --cutoff "$OPT" >"$tmp/cut" 2>&1
check probe_cutoff_prunes_the_right_configurations "(pruned) where the uncut bound is below the cutoff, or not where it reaches it" \
  'FNR == NR && /^pp / { uncut[$2 " " $4 " " $6 " " $8] = $10; next }
   /^pp / { k = $2 " " $4 " " $6 " " $8; if (!(k in uncut)) bad = 1; n++
            p = ($11 == "(pruned)")
            if (p && uncut[k] < opt - 5e-7) bad = 1
            if (!p && (uncut[k] > opt + 5e-7 || $10 != uncut[k])) bad = 1 }
   END { exit !(n >= 8 && !bad) }' "$tmp/uncut" "$tmp/cut"

# One configuration: its classes, its best sequence (pp stages), the terms of its value,
# and the placement descent's plan, a number never below the configuration's bound
"$P" "${tiny[@]}" --config "$cfg" --descend 2 >"$tmp/one" 2>&1
check probe_config_one_line "not one configuration line" '/^pp / { n++ } END { exit n != 1 }' "$tmp/one"
check probe_config_sequence "no best sequence of $PP stages" \
  '/best sequence/ { b = 1 } /^    stage / { n++ } END { exit !(b && n == pp) }' "$tmp/one"
check probe_config_terms_add_up "the DP value is not M + S + Q + U" \
  '/best sequence: DP value/ { t = 1; if ($6 != "=" || $7 != "M" || $10 != "S" || $13 != "Q" || $16 != "U") bad = 1
     d = $5 - ($8 + $11 + $14 + $17); if (d > 4e-6 || d < -4e-6 || $8 <= 0) bad = 1 } END { exit !(t && !bad) }' "$tmp/one"
check probe_config_classes "the classes line does not name both types" \
  '/classes:/ && /fast#/ && /slow#/ { c = 1 } END { exit !c }' "$tmp/one"
check probe_descent_not_below_bound "no descent plan, or one below the configuration's bound" \
  '/^pp / { b = $10 + 0 } /placement descent: [0-9]/ { d = $3 + 0; seen = 1 } END { exit !(seen && d >= b * (1 - 1e-9)) }' "$tmp/one"

# The plans it writes: the decoded plan (--plan-out) as `hetplan evaluate` scores it is the
# "decoded plan" line's time; the descent started from it (--start) writes a plan no
# slower (--descent-out)
"$P" "${tiny[@]}" --config "$cfg" --plan-out "$tmp/dec.json" >"$tmp/dec.out" 2>&1
dec=$(awk '/decoded plan:/ { print $3 }' "$tmp/dec.out")
ev=$("$H" evaluate --plan "$tmp/dec.json" "${tiny[@]}" --json 2>/dev/null |
     python3 -c "import json, sys; print(repr(json.load(sys.stdin)['iteration_time']))" 2>/dev/null)
if [ -n "$dec" ] && [ -n "$ev" ] && awk -v a="$dec" -v b="$ev" 'BEGIN { d = a - b; exit !(d < 5e-7 && d > -5e-7) }'; then
  ok probe_plan_out_is_the_decoded_plan
else bad probe_plan_out_is_the_decoded_plan "decoded '$dec', the file evaluates to '$ev'" "$(head -3 "$tmp/dec.out")"; fi
"$P" "${tiny[@]}" --config "$cfg" --descend 2 --start "$tmp/dec.json" --descent-out "$tmp/desc.json" >"$tmp/desc.out" 2>&1
desc=$("$H" evaluate --plan "$tmp/desc.json" "${tiny[@]}" --json 2>/dev/null |
       python3 -c "import json, sys; print(repr(json.load(sys.stdin)['iteration_time']))" 2>/dev/null)
if [ -n "$desc" ] && [ -n "$ev" ] && awk -v a="$desc" -v b="$ev" 'BEGIN { exit !(a <= b * (1 + 1e-9)) }'; then
  ok probe_descent_from_a_plan_no_slower
else bad probe_descent_from_a_plan_no_slower "descent '$desc', its start '$ev'" "$(head -3 "$tmp/desc.out")"; fi

# usage
out=$("$P" 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q "usage: probe_bounds" <<<"$out"; then ok probe_usage; else bad probe_usage "exit $rc" "$out"; fi
out=$("$P" "${tiny[@]}" --config 99,1,1,1 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "99,1,1,1 is not a configuration" <<<"$out"; then ok probe_unknown_config
else bad probe_unknown_config "exit $rc" "$out"; fi
out=$("$P" "${tiny[@]}" --count most 2>&1); rc=$?
if [ $rc -eq 2 ]; then ok probe_bad_count; else bad probe_bad_count "exit $rc" "$out"; fi
out=$("$P" "${tiny[@]}" --cutoff 0.5x 2>&1); rc=$?
if [ $rc -eq 2 ]; then ok probe_bad_number; else bad probe_bad_number "exit $rc" "$out"; fi
out=$("$P" "${tiny[@]}" --descend 2 2>&1); rc=$?
if [ $rc -eq 2 ]; then ok probe_descend_needs_config; else bad probe_descend_needs_config "exit $rc" "$out"; fi
out=$("$P" "${tiny[@]}" --config "$cfg" --cutoff 1e-6 --plan-out "$tmp/none.json" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "none.json not written" <<<"$out" && [ ! -e "$tmp/none.json" ]; then
  ok probe_plan_out_without_a_plan_fails
else bad probe_plan_out_without_a_plan_fails "exit $rc" "$out"; fi
out=$("$P" "${tiny[@]}" --config "$cfg" --start "$tmp/dec.json" 2>&1); rc=$?
if [ $rc -eq 2 ]; then ok probe_start_needs_descend; else bad probe_start_needs_descend "exit $rc" "$out"; fi
out=$("$P" "${tiny[@]}" --config "$cfg" --descend 1 --start "$tmp/nothing.json" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "nothing.json" <<<"$out"; then ok probe_start_unreadable
else bad probe_start_unreadable "exit $rc" "$out"; fi

echo "probe: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
