#!/usr/bin/env bash
# test_replan.sh -- `hetplan replan` end to end on AMP's heterogeneous cluster (GPT-2):
# after a node is taken away (--without, and the same cluster as a file with --cluster)
# and after one is added (--with): exit 0, the plan written validates with `hetplan
# evaluate` on the new cluster, the no-move candidate is listed, the JSON's bytes add up
# (moves = moved, moved + kept = needed, checkpoint moves = lost); and bad inputs.
# Ends with "replan: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
H=${HETPLAN:-build/hetplan}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0

ok()  { passed=$((passed + 1)); echo "ok $((passed + failed)) $1"; }
bad() { failed=$((failed + 1)); echo "not ok $((passed + failed)) $1"; shift; printf '  %s\n' "$@"; }

# expect NAME CODE TEXT -- cmd...: the exit code, and TEXT in stdout+stderr (empty: none).
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

# bytes_add_up NAME FILE: in replan's --json, the moves' bytes sum to moved_bytes, the
# checkpoint's to lost_bytes, and moved + kept = need (relative 1e-9).
bytes_add_up() {
  local name=$1 f=$2 res
  res=$(awk '
    /"layer":/ { match($0, /"bytes": [0-9.e+-]+/); b = substr($0, RSTART + 9, RLENGTH - 9) + 0
                 sum += b; n++; if ($0 ~ /"from": "checkpoint"/) lost += b }
    /"migration":/ { for (i = 1; i <= NF; i++) { k = $i; gsub(/[",:{]/, "", k); v = $(i + 1); gsub(/[,}]/, "", v)
                       if (k == "moved_bytes") mv = v + 0; if (k == "lost_bytes") ls = v + 0
                       if (k == "kept_bytes") kp = v + 0; if (k == "need_bytes") nd = v + 0 } }
    function off(a, b) { d = a - b; if (d < 0) d = -d; return d > 1e-9 * (nd > 0 ? nd : 1) }
    END { if (nd <= 0) { print "no need_bytes"; exit }
          if (off(sum, mv)) { print "moves " sum " != moved " mv; exit }
          if (off(lost, ls)) { print "checkpoint moves " lost " != lost " ls; exit }
          if (off(mv + kp, nd)) { print "moved " mv " + kept " kp " != need " nd; exit }
          print "ok " n }' "$f")
  case "$res" in ok*) ok "$name ($res moves)" ;; *) bad "$name" "$res" ;; esac
}

M=models/gpt2-amp.json
C=models/amp-hetero.json
# the old plan
if ! $H plan --model $M --cluster $C --gbs 32 -o "$tmp/old.json" 2>"$tmp/plan.err"; then
  bad old_plan "$(tail -3 "$tmp/plan.err")"
fi

# AMP's cluster without its T4 node, and with a fourth p3 node: as files, for evaluate
sed '/"name": "g4-0"/d' $C |
  awk '{ lines[NR] = $0 } END { for (i = 1; i <= NR; i++) { l = lines[i]
         if (i < NR && lines[i + 1] ~ /^ *\]/) sub(/},$/, "}", l); print l } }' > "$tmp/without-g4.json"
cat > "$tmp/add-p3.json" <<'EOF'
{ "name": "one-more-p3",
  "device_types": { "V100": { "mem_gib": 16, "reserved_gib": 1.0, "tflops": 125, "efficiency": 0.35, "hbm_gbs": 900 } },
  "nodes": [ { "name": "p3-3", "type": "V100", "gpus": 4, "intra_gbps": 170, "intra_lat_us": 5 } ],
  "inter_gbps": 10, "inter_lat_us": 30 }
EOF
sed 's/"name": "g4-0", "type": "T4",   "gpus": 4, "intra_gbps": 50,  "intra_lat_us": 10 }/&,\n    { "name": "p3-3", "type": "V100", "gpus": 4, "intra_gbps": 170, "intra_lat_us": 5 }/' \
  $C > "$tmp/with-p3.json"
grep -q '"p3-3"' "$tmp/with-p3.json" && ! grep -q '"g4-0"' "$tmp/without-g4.json" &&
  $H evaluate --model $M --cluster "$tmp/without-g4.json" --plan "$tmp/old.json" >/dev/null 2>&1
# (the old plan uses g4-0: evaluating it there must fail as an invalid plan, exit 4)
rc=$?
if [ "$rc" -eq 4 ]; then ok clusters_written_for_the_test
else bad clusters_written_for_the_test "the edited cluster files are not as expected (evaluate exit $rc)"; fi

# --- a node taken away
expect without_exit0 0 "nodes gone: 'g4-0' (4 x T4)" -- \
  $H replan "$tmp/old.json" --without g4-0 -o "$tmp/new-without.json"
expect without_lists_no_move 0 "no-move" -- $H replan "$tmp/old.json" --without g4-0
expect without_no_move_impossible 0 "not possible: 4 of the devices it uses are not in the new cluster" -- \
  $H replan "$tmp/old.json" --without g4-0
expect without_new_plan_evaluates 0 "iteration time" -- \
  $H evaluate --model $M --cluster "$tmp/without-g4.json" --plan "$tmp/new-without.json"
if $H replan "$tmp/old.json" --without g4-0 --json > "$tmp/without.json" 2>"$tmp/err"; then
  bytes_add_up without_json_bytes_add_up "$tmp/without.json"
  if grep -q '"from": "checkpoint"' "$tmp/without.json" && grep -q '"name": "no-move"' "$tmp/without.json"; then
    ok without_json_reads_lost_state_from_the_checkpoint
  else bad without_json_reads_lost_state_from_the_checkpoint "$(head -c 600 "$tmp/without.json")"; fi
else bad without_json "$(tail -3 "$tmp/err")"; fi
# the same change as a cluster file
expect cluster_file_same_change 0 "nodes gone: 'g4-0'" -- \
  $H replan "$tmp/old.json" --cluster "$tmp/without-g4.json" -o "$tmp/new-file.json"
if cmp -s <(grep -v '"cluster"' "$tmp/new-file.json") <(grep -v '"cluster"' "$tmp/new-without.json"); then
  ok cluster_file_plans_as_without
else bad cluster_file_plans_as_without "the plans of --cluster FILE and --without differ"; fi

# --- a node added
expect with_exit0 0 "nodes added: 'p3-3' (4 x V100)" -- $H replan "$tmp/old.json" --with "$tmp/add-p3.json"
expect with_says_the_link 0 "link to the others at 10 Gbit/s, 30 us" -- $H replan "$tmp/old.json" --with "$tmp/add-p3.json"
expect with_no_move_needs_idle_devices 0 "not allowed: it would leave 4 devices of the new cluster idle" -- \
  $H replan "$tmp/old.json" --with "$tmp/add-p3.json"
expect with_idle_weighted_keeps_the_old_plan 0 "chosen: no-move" -- \
  $H replan "$tmp/old.json" --with "$tmp/add-p3.json" --idle-devices --move-weight 1 -o "$tmp/new-with.json"
expect with_new_plan_evaluates 0 "devices used 16 of 20" -- \
  $H evaluate --model $M --cluster "$tmp/with-p3.json" --idle-devices --plan "$tmp/new-with.json"
if $H replan "$tmp/old.json" --with "$tmp/add-p3.json" --json -o "$tmp/new-with2.json" > "$tmp/with.json" 2>"$tmp/err"; then
  bytes_add_up with_json_bytes_add_up "$tmp/with.json"
  if grep -q '"lost_bytes": 0,' "$tmp/with.json"; then ok with_loses_nothing
  else bad with_loses_nothing "$(grep '"migration"' "$tmp/with.json")"; fi
else bad with_json "$(tail -3 "$tmp/err")"; fi
expect with_new_plan_uses_all_devices 0 "devices used 20 of 20" -- \
  $H evaluate --model $M --cluster "$tmp/with-p3.json" --plan "$tmp/new-with2.json"
# both edits at once: a node gone, one added
expect without_and_with 0 "nodes added: 'p3-3'" -- \
  $H replan "$tmp/old.json" --without g4-0 --with "$tmp/add-p3.json"

# --- a cap on bytes moved, bad inputs
expect cap_leaves_nothing 6 "no candidate fits and moves at most --max-move-bytes" -- \
  $H replan "$tmp/old.json" --without g4-0 --max-move-bytes 1MiB
expect bad_byte_count 2 "--max-move-bytes: expected a number of bytes" -- \
  $H replan "$tmp/old.json" --without g4-0 --max-move-bytes 12XB
expect unknown_node 3 "--without: no node 'nosuch' in cluster" -- \
  $H replan "$tmp/old.json" --without g4-0,nosuch
expect missing_plan 3 "cannot open '$tmp/nosuch.json'" -- $H replan "$tmp/nosuch.json" --without g4-0
expect no_change_given 2 "say how the cluster changed" -- $H replan "$tmp/old.json"
expect cluster_and_without 2 "--cluster names the whole new cluster" -- \
  $H replan "$tmp/old.json" --cluster "$tmp/with-p3.json" --without g4-0
sed 's/"p3-3"/"p3-0"/' "$tmp/add-p3.json" > "$tmp/clash.json"
expect with_name_clash 3 "node 'p3-0' is already in cluster" -- $H replan "$tmp/old.json" --with "$tmp/clash.json"
expect with_error_names_the_file 3 "adding the nodes of '$tmp/clash.json': node 'p3-0'" -- \
  $H replan "$tmp/old.json" --with "$tmp/clash.json"
sed 's/"mem_gib": 16/"mem_gib": 32/' "$tmp/add-p3.json" > "$tmp/odd-type.json"
expect with_type_differs 3 "adding the nodes of '$tmp/odd-type.json': device type 'V100' differs" -- \
  $H replan "$tmp/old.json" --with "$tmp/odd-type.json"
head -3 "$tmp/add-p3.json" | sed 's/ ],$/ ] }/' > "$tmp/no-link.json"
expect with_without_link 3 "inter_gbps: missing" -- $H replan "$tmp/old.json" --with "$tmp/no-link.json"
expect dhondt_memory_weight 0 "SageMaker on the flat chain, memory weight 0.3:" -- \
  $H replan "$tmp/old.json" --without g4-0 --solver dhondt --memory-weight 0.3
expect unknown_solver 2 "unknown solver 'nope'" -- $H replan "$tmp/old.json" --without g4-0 --solver nope

echo "replan: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
