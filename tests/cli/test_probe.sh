#!/usr/bin/env bash
# test_probe.sh -- bench/probe_bounds (make probe-bounds) on the tiny example against
# `hetplan plan --solver enum`: every configuration's bound at or below the plan its
# sequence decodes to, the least at or below the brute-force optimum, the cutoff marking
# exactly the configurations it prunes, one configuration's sequence and descent, and its
# usage errors. Ends with "probe: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
H=${HETPLAN:-build/hetplan}
P=${PROBE:-build/probe_bounds}
T=examples/tiny
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0

ok()  { passed=$((passed + 1)); echo "ok $((passed + failed)) $1"; }
bad() { failed=$((failed + 1)); echo "not ok $((passed + failed)) $1"; shift; printf '  %s\n' "$@"; }
# check NAME WHAT PROGRAM: the awk program over $tmp/out exits 0 (it reads opt, pp, tp,
# dp and mbs from the environment); else WHAT is the failure
check() {
  local vars='BEGIN { opt = ENVIRON["OPT"] + 0; pp = ENVIRON["PP"] + 0; tp = ENVIRON["TP"] + 0; dp = ENVIRON["DP"] + 0; mbs = ENVIRON["MBS"] + 0 } '
  if awk "$vars$3" "$tmp/out"; then ok "$1"; else bad "$1" "$2" "$(head -5 "$tmp/out")"; fi
}

tiny=(--model $T/model.json --cluster $T/cluster.json --gbs 8)

if ! $H plan "${tiny[@]}" --solver enum -o $tmp/opt.json >/dev/null 2>&1; then
  bad enum_optimum "hetplan plan --solver enum failed"
  echo "probe: $passed passed, $failed failed"; exit 1
fi
read -r OPT cfg < <(python3 -c "import json, sys; d = json.load(open(sys.argv[1]));
print(repr(d['iteration_time']), '%d,%d,%d,%d' % (d['pp'], d['tp'], d['dp'], d['mbs']))" $tmp/opt.json)
IFS=, read -r PP TP DP MBS <<<"$cfg"
export OPT PP TP DP MBS

# every configuration: a bound no larger than its decoded plan; the least no larger than
# the optimum (the tiny cluster has two classes: counted exactly, tight at the optimum).
# The tool prints 6 decimals: comparisons with the optimum allow half the last digit.
$P "${tiny[@]}" >$tmp/out 2>&1
check probe_every_line_bounded "a configuration line without a bound" \
  '/^pp / { n++; if ($9 != "bound") bad = 1 } END { exit !(n >= 8 && !bad) }'
check probe_bound_at_most_decoded "a bound above the plan its sequence decodes to" \
  '/^pp / { for (i = 1; i <= NF; i++) if ($i == "decoded") d = $(i + 1); if ($10 > d * (1 + 1e-9)) bad = 1 }
   END { exit bad }'
check probe_least_bound_is_the_optimum "the least bound is not the enum optimum $OPT" \
  '/^pp / { if (min == "" || $10 < min) min = $10 } END { exit !(min <= opt + 5e-7 && min >= opt - 1e-6) }'

# the optimum as cutoff: "(pruned)" exactly where the bound reaches it, and the optimal
# configuration's bound never above it
$P "${tiny[@]}" --cutoff "$OPT" >$tmp/out 2>&1
check probe_cutoff_marks_pruned "(pruned) not exactly where bound >= cutoff" \
  '/^pp / { p = ($11 == "(pruned)"); if (p && $10 < opt - 5e-7) bad = 1; if (!p && $10 > opt + 5e-7) bad = 1; n++ }
   END { exit !(n >= 8 && !bad) }'
check probe_optimal_config_not_above "the optimal configuration's bound is above the optimum" \
  '/^pp / && $2 == pp && $4 == tp && $6 == dp && $8 == mbs { seen = 1; if ($10 > opt + 5e-7) bad = 1 }
   END { exit !(seen && !bad) }'

# one configuration: its classes, its best sequence (pp stages), the decoded plan and the
# placement descent's plan, never below the bound
$P "${tiny[@]}" --config "$cfg" --descend 2 >$tmp/out 2>&1
check probe_config_one_line "not one configuration line" '/^pp / { n++ } END { exit n != 1 }'
check probe_config_sequence "no best sequence of $PP stages" \
  '/best sequence/ { b = 1 } /^    stage / { n++ } END { exit !(b && n == pp) }'
check probe_config_terms_add_up "the DP value is not M + S + Q + U" \
  '/best sequence: DP value/ { t = 1; if ($6 != "=" || $7 != "M" || $10 != "S" || $13 != "Q" || $16 != "U") bad = 1
     d = $5 - ($8 + $11 + $14 + $17); if (d > 4e-6 || d < -4e-6 || $8 <= 0) bad = 1 } END { exit !(t && !bad) }'
check probe_config_classes "the classes line does not name both types" \
  '/classes:/ && /fast#/ && /slow#/ { c = 1 } END { exit !c }'
check probe_descent_not_below_bound "the descent's plan is below the configuration's bound" \
  '/^pp / { b = $10 } /placement descent:/ { d = $3 } END { exit !(d != "" && d >= b * (1 - 1e-9)) }'

# usage
out=$($P 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q "usage: probe_bounds" <<<"$out"; then ok probe_usage; else bad probe_usage "exit $rc" "$out"; fi
out=$($P "${tiny[@]}" --config 99,1,1,1 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q "99,1,1,1 is not a configuration" <<<"$out"; then ok probe_unknown_config
else bad probe_unknown_config "exit $rc" "$out"; fi
out=$($P "${tiny[@]}" --count most 2>&1); rc=$?
if [ $rc -eq 2 ]; then ok probe_bad_count; else bad probe_bad_count "exit $rc" "$out"; fi

echo "probe: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
