#!/bin/bash
# bench_mip.sh [HETPLAN] -- the MIP solvers' certificate: time, incumbent, bound and gap
# (printed, not asserted; make bench-mip). (1) AMP's heterogeneous 16-GPU set-up (GPT-2,
# its measured layer times, gbs 32) with glpk and cbc, 300 s limit; (2) GPT 2.6B on
# mixed A100/V100 clusters of 64, 256 and 768 GPUs (8 per node, alternating kinds,
# 100 Gbit/s between nodes), gbs 512, cbc with 60 s and 300 s limits. Takes about 35
# minutes; BENCH_QUICK=1 runs (1) and the 64-GPU case at 60 s only; BENCH_NODES and
# BENCH_LIMITS choose the cluster sizes (nodes of 8) and limits of (2).
set -u
H=${1:-build/hetplan}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cluster() {   # cluster NODES FILE
  {
    echo '{ "version": 1, "name": "mixed-'"$1"'x8", "device_types": {'
    echo '  "A100": { "mem_gib": 40, "reserved_gib": 1, "tflops": 312, "efficiency": 0.35 },'
    echo '  "V100": { "mem_gib": 32, "reserved_gib": 1, "tflops": 125, "efficiency": 0.35 } },'
    echo '  "nodes": ['
    for ((i = 0; i < $1; i++)); do
      t=A100; bw=4800; [ $((i % 2)) -eq 1 ] && { t=V100; bw=2400; }
      sep=,; [ $i -eq $(($1 - 1)) ] && sep=
      echo "    { \"name\": \"n$i\", \"type\": \"$t\", \"gpus\": 8, \"intra_gbps\": $bw, \"intra_lat_us\": 5 }$sep"
    done
    echo '  ], "inter_gbps": 100, "inter_lat_us": 5 }'
  } > "$2"
}

row() {   # row LABEL SOLVER LIMIT ARGS...
  local label=$1 solver=$2 limit=$3
  shift 3
  local t0=$(date +%s.%N)
  "$H" plan "$@" --solver "$solver" --time-limit "$limit" -o "$tmp/p.json" 2>"$tmp/err" >/dev/null
  local rc=$? t1=$(date +%s.%N)
  if [ $rc -ne 0 ]; then printf '%-28s %-5s %6s  failed: %s\n' "$label" "$solver" "$limit" "$(tail -1 "$tmp/err")"; return; fi
  python3 - "$tmp/p.json" "$label" "$solver" "$limit" "$t0" "$t1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); s = p["solver"]
lb, gap = s.get("lower_bound"), s.get("gap")
print("%-28s %-5s %6s %8.1f  %-9s %10.6f %10s %8s" % (sys.argv[2], sys.argv[3], sys.argv[4],
      float(sys.argv[6]) - float(sys.argv[5]), s["status"], p["iteration_time"],
      "%.6f" % lb if lb is not None else "-", "%.2f%%" % (100 * gap) if gap is not None else "-"))
PY
}

printf '%-28s %-5s %6s %8s  %-9s %10s %10s %8s\n' set-up solver limit wall status "time s" "bound s" gap
AMP=(--model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json --gbs 32)
for s in glpk cbc; do row "AMP hetero 16 GPUs" $s 300 "${AMP[@]}"; done
sizes=${BENCH_NODES:-8 32 96}; limits=${BENCH_LIMITS:-60 300}
[ "${BENCH_QUICK:-0}" = 1 ] && { sizes=8; limits=60; }
for n in $sizes; do
  cluster $n "$tmp/c$n.json"
  for l in $limits; do row "GPT 2.6B, $((n * 8)) mixed GPUs" cbc $l --model models/gpt-2.6b.json --cluster "$tmp/c$n.json" --gbs 512; done
done
