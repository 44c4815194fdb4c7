#!/bin/bash
# bench_quality.sh [HETPLAN] -- the default solver's plan against every baseline on mixed
# A100/V100 clusters of 64 to 4096 GPUs (printed, not asserted; make bench-quality): per
# cluster, each solver's iteration time and its distance above the best ("-": no plan,
# a plan that does not fit, or a refusal). GPT 2.6B and Llama-2 7B, gbs 512 up to 256
# GPUs and 2048 beyond; every solver gets 120 s.
set -u
H=${1:-build/hetplan}
cd "$(dirname "$0")/.."
. bench/mixed_cluster.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SOLVERS=dp,megatron,megatron-params,amp,hethub,dhondt,osdp,pipette
printf '%-10s %-6s %5s' model GPUs gbs
for s in ${SOLVERS//,/ }; do printf ' %16s' "$s"; done
printf '\n'
for model in gpt-2.6b llama2-7b; do
  for nodes in 8 32 128 512; do
    gbs=512; [ $nodes -gt 32 ] && gbs=2048
    mixed_cluster $nodes "$tmp/c.json"
    "$H" compare --model models/$model.json --cluster "$tmp/c.json" --gbs $gbs --solvers $SOLVERS \
      --time-limit 120 --json > "$tmp/r.json" 2>/dev/null
    python3 - "$tmp/r.json" "$model" $((nodes * 8)) $gbs "$SOLVERS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); names = sys.argv[5].split(",")
rows = {x["name"]: x for x in r["solvers"]}
times = {n: rows[n]["iteration_time"] for n in names
         if n in rows and rows[n].get("iteration_time") is not None and rows[n].get("fits")}
best = min(times.values()) if times else None
out = "%-10s %-6s %5s" % (sys.argv[2], sys.argv[3], sys.argv[4])
for n in names:
    t = times.get(n)
    out += " %16s" % ("-" if t is None else "%.4f (+%.1f%%)" % (t, 100 * (t - best) / best))
print(out)
PY
  done
done
