#!/bin/bash
# bench_mip.sh [HETPLAN] -- the certificate of the MIP solvers against the targets of
# docs/formulation.md (printed, not asserted; make bench-mip): wall time, status, the
# plan's iteration time, the proven lower bound over the whole space, the gap.
#   AMP's heterogeneous 16 GPUs (GPT-2, its measured profile, gbs 32): glpk and cbc,
#     target proven optimal in under 10 s;
#   GPT 2.6B (gbs 512) on 64 mixed A100/V100 GPUs: gap under 0.5 % within 60 s;
#   256 mixed GPUs: gap under 2 % within 300 s;
#   768 mixed GPUs, GPT 2.6B (gbs 512), Llama-2 70B and the 160-layer Llama-2 140B
#     (gbs 1536): gap under 2 % within 300 s;
#   sa on Llama-2 140B over 256 mixed GPUs: ends within its default 60 s.
# About 25 minutes; BENCH_QUICK=1 runs the AMP and 64-GPU rows only (about 30 s).
set -u
H=${1:-build/hetplan}
cd "$(dirname "$0")/.."
. bench/mixed_cluster.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

row() {   # row LABEL SOLVER LIMIT ARGS...
  local label=$1 solver=$2 limit=$3 lim=() job=()
  shift 3
  [ "$limit" != default ] && lim=(--time-limit "$limit")
  local t0=$(date +%s.%N)
  # the certificate's space (cost model 1.2: it claims a bound only over sharding dp, zdp)
  [ "$solver" = sa ] && job=() || job=(--sharding dp,zdp)
  "$H" plan "$@" --solver "$solver" "${job[@]}" "${lim[@]}" -o "$tmp/p.json" 2>"$tmp/err" >/dev/null
  local rc=$? t1=$(date +%s.%N)
  if [ $rc -ne 0 ]; then printf '%-34s %-5s %7s  failed: %s\n' "$label" "$solver" "$limit" "$(tail -1 "$tmp/err")"; return; fi
  python3 - "$tmp/p.json" "$label" "$solver" "$limit" "$t0" "$t1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); s = p["solver"]
lb, gap = s.get("lower_bound"), s.get("gap")
print("%-34s %-5s %7s %8.1f  %-9s %11.6f %11s %8s" % (sys.argv[2], sys.argv[3], sys.argv[4],
      float(sys.argv[6]) - float(sys.argv[5]), s["status"], p["iteration_time"],
      "%.6f" % lb if lb is not None else "-", "%.2f%%" % (100 * gap) if gap is not None else "-"))
PY
}

printf '%-34s %-5s %7s %8s  %-9s %11s %11s %8s\n' set-up solver limit wall status "time s" "bound s" gap
AMP=(--model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json --gbs 32)
for s in glpk cbc; do row "AMP hetero 16 GPUs" $s default "${AMP[@]}"; done
mixed_cluster 8 "$tmp/c8.json"
row "GPT 2.6B, 64 mixed GPUs" cbc 60 --model models/gpt-2.6b.json --cluster "$tmp/c8.json" --gbs 512
[ "${BENCH_QUICK:-0}" = 1 ] && exit 0
row "GPT 2.6B, 64 mixed GPUs" glpk 60 --model models/gpt-2.6b.json --cluster "$tmp/c8.json" --gbs 512
mixed_cluster 32 "$tmp/c32.json"
row "GPT 2.6B, 256 mixed GPUs" cbc 300 --model models/gpt-2.6b.json --cluster "$tmp/c32.json" --gbs 512
mixed_cluster 96 "$tmp/c96.json"
row "GPT 2.6B, 768 mixed GPUs" cbc 300 --model models/gpt-2.6b.json --cluster "$tmp/c96.json" --gbs 512
row "Llama-2 70B, 768 mixed GPUs" cbc 300 --model models/llama2-70b.json --cluster "$tmp/c96.json" --gbs 1536
row "Llama-2 140B (160 l), 768 mixed" cbc 300 --model models/llama2-140b.json --cluster "$tmp/c96.json" --gbs 1536
row "sa, Llama-2 140B, 256 mixed GPUs" sa default --model models/llama2-140b.json --cluster "$tmp/c32.json" --gbs 512
