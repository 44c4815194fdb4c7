#!/bin/bash
# bench_mip.sh [HETPLAN] -- the certificate of the MIP solvers against the targets of
# docs/formulation.md (printed, not asserted; make bench-mip): wall time, status, the
# plan's iteration time, the proven lower bound over the whole space, the gap, and the
# row's target (last column).
#   AMP's heterogeneous 16 GPUs (GPT-2, its measured profile, gbs 32): glpk and cbc,
#     target proven optimal in under 10 s;
#   GPT 2.6B (gbs 512) on 64 mixed A100/V100 GPUs: gap under 0.5 % within 60 s;
#   256 mixed GPUs: gap under 2 % within 300 s;
#   768 mixed GPUs, GPT 2.6B (gbs 512), Llama-2 70B and the 160-layer Llama-2 140B
#     (gbs 1536): gap under 2 % within 300 s;
#   sa on Llama-2 140B over 256 mixed GPUs: ends within its default 60 s.
# Certificate v3 (issue 21), clusters of bench/clusters_v3.sh, cbc:
#   three kinds, 64 GPUs (3 x 8 A100 40 GB, 3 x 8 V100 32 GB, 2 x 8 T4 16 GB, 100 Gbit/s
#     between nodes), GPT 2.6B gbs 512: gap under 0.5 % within 60 s;
#   three kinds, 256 GPUs (12 x 8 A100, 12 x 8 V100, 8 x 8 T4), Llama-2 70B gbs 1536: gap
#     under 1 % within 300 s;
#   five kinds, 104 GPUs in 8- and 4-GPU nodes (4 x 8 H100 80 GB, 4 x 8 A100, 4 x 4 V100,
#     4 x 4 L4 24 GB, 2 x 4 T4), GPT 2.6B gbs 512: a bound within 60 s (its own row at
#     60 s) and a gap under 2 % within 300 s; the same without L4, 112 GPUs (5 x 8 H100,
#     5 x 8 A100, 4 x 4 V100, 4 x 4 T4), the same targets;
#   two racks of 4 x 8 (A100, V100), 200 Gbit/s inside a rack, 25 Gbit/s across, GPT
#     2.6B gbs 512: gap under 0.5 % within 120 s;
#   Pipette's measured 16 x 8 A100 matrix (models/pipette-real-16x8-a100.json), GPT 8.3B
#     gbs 128 (the pair's batch in docs/simulator.md): gap under 1 % within 300 s;
#   rows "v3x": eight clusters like those, not those (other kinds, node counts, models,
#     links), 60 s each, against their family's target at 60 s.
# About 65 minutes (37 for v3's rows); BENCH_QUICK=1 runs the AMP and 64-GPU rows only (about 30 s).
# BENCH_ONLY=TEXT runs the rows whose label holds TEXT (e.g. BENCH_ONLY='v3: 2 racks'; several: 'AMP|v3: 3');
# BENCH_LIMIT=S gives every limited row S seconds (a smoke run).
set -u
H=${1:-build/hetplan}
cd "$(dirname "$0")/.."
. bench/mixed_cluster.sh
. bench/clusters_v3.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

row() {   # row LABEL SOLVER LIMIT TARGET ARGS...
  local label=$1 solver=$2 limit=$3 target=$4 lim=() job=()
  shift 4
  # BENCH_ONLY=TEXT: only rows whose label holds TEXT; BENCH_LIMIT=S: every limited row at
  # S seconds instead (a smoke run: its gaps are not the targets')
  # (several texts: separated by |)
  if [ -n "${BENCH_ONLY:-}" ]; then
    local want=0 text
    IFS='|' read -ra texts <<< "$BENCH_ONLY"
    for text in "${texts[@]}"; do [[ "$label" == *"$text"* ]] && want=1; done
    [ $want = 1 ] || return
  fi
  [ -n "${BENCH_LIMIT:-}" ] && [ "$limit" != default ] && limit=$BENCH_LIMIT
  [ "$limit" != default ] && lim=(--time-limit "$limit")
  local t0=$(date +%s.%N)
  # the certificate's space (cost model 1.2: it claims a bound only over sharding dp, zdp)
  [ "$solver" = sa ] && job=() || job=(--sharding dp,zdp)
  "$H" plan "$@" --solver "$solver" "${job[@]}" "${lim[@]}" -o "$tmp/p.json" 2>"$tmp/err" >/dev/null
  local rc=$? t1=$(date +%s.%N)
  if [ $rc -ne 0 ]; then printf '%-34s %-5s %7s  failed: %s  [target %s]\n' "$label" "$solver" "$limit" "$(tail -1 "$tmp/err")" "$target"; return; fi
  python3 - "$tmp/p.json" "$label" "$solver" "$limit" "$t0" "$t1" "$target" <<'PY'
import json, sys
p = json.load(open(sys.argv[1])); s = p["solver"]
lb, gap = s.get("lower_bound"), s.get("gap")
print("%-34s %-5s %7s %8.1f  %-9s %11.6f %11s %8s  %s" % (sys.argv[2], sys.argv[3], sys.argv[4],
      float(sys.argv[6]) - float(sys.argv[5]), s["status"], p["iteration_time"],
      "%.6f" % lb if lb is not None else "-", "%.2f%%" % (100 * gap) if gap is not None else "-",
      sys.argv[7]))
PY
}

printf '%-34s %-5s %7s %8s  %-9s %11s %11s %8s  %s\n' set-up solver limit wall status "time s" "bound s" gap target
AMP=(--model models/gpt2-amp.json --cluster models/amp-hetero.json --profile models/gpt2-amp.profile.json --gbs 32)
for s in glpk cbc; do row "AMP hetero 16 GPUs" $s default "optimal in 10 s" "${AMP[@]}"; done
mixed_cluster 8 "$tmp/c8.json"
row "GPT 2.6B, 64 mixed GPUs" cbc 60 "gap < 0.5 % in 60 s" --model models/gpt-2.6b.json --cluster "$tmp/c8.json" --gbs 512
[ "${BENCH_QUICK:-0}" = 1 ] && exit 0
row "GPT 2.6B, 64 mixed GPUs" glpk 60 "gap < 0.5 % in 60 s" --model models/gpt-2.6b.json --cluster "$tmp/c8.json" --gbs 512
mixed_cluster 32 "$tmp/c32.json"
row "GPT 2.6B, 256 mixed GPUs" cbc 300 "gap < 2 % in 300 s" --model models/gpt-2.6b.json --cluster "$tmp/c32.json" --gbs 512
mixed_cluster 96 "$tmp/c96.json"
row "GPT 2.6B, 768 mixed GPUs" cbc 300 "gap < 2 % in 300 s" --model models/gpt-2.6b.json --cluster "$tmp/c96.json" --gbs 512
row "Llama-2 70B, 768 mixed GPUs" cbc 300 "gap < 2 % in 300 s" --model models/llama2-70b.json --cluster "$tmp/c96.json" --gbs 1536
row "Llama-2 140B (160 l), 768 mixed" cbc 300 "gap < 2 % in 300 s" --model models/llama2-140b.json --cluster "$tmp/c96.json" --gbs 1536
row "sa, Llama-2 140B, 256 mixed GPUs" sa default "ends in its 60 s" --model models/llama2-140b.json --cluster "$tmp/c32.json" --gbs 512
# Certificate v3 (issue 21): more than two kinds, mixed node sizes, racks, a measured matrix
G26=(--model models/gpt-2.6b.json --gbs 512)
kinds_cluster "$tmp/k3-64.json" "3kinds-64" 100 - A100:3:8 V100:3:8 T4:2:8
row "v3: 3 kinds, 64 GPUs, GPT 2.6B" cbc 60 "gap < 0.5 % in 60 s" "${G26[@]}" --cluster "$tmp/k3-64.json"
kinds_cluster "$tmp/k3-256.json" "3kinds-256" 100 - A100:12:8 V100:12:8 T4:8:8
row "v3: 3 kinds, 256 GPUs, Llama-2 70B" cbc 300 "gap < 1 % in 300 s" --model models/llama2-70b.json --gbs 1536 --cluster "$tmp/k3-256.json"
kinds_cluster "$tmp/k5-104.json" "5kinds-104" 100 - H100:4:8 A100:4:8 V100:4:4 L4:4:4 T4:2:4
row "v3: 5 kinds, 104 GPUs, GPT 2.6B" cbc 60 "a bound in 60 s" "${G26[@]}" --cluster "$tmp/k5-104.json"
row "v3: 5 kinds, 104 GPUs, GPT 2.6B" cbc 300 "gap < 2 % in 300 s" "${G26[@]}" --cluster "$tmp/k5-104.json"
kinds_cluster "$tmp/k4-112.json" "4kinds-112" 100 - H100:5:8 A100:5:8 V100:4:4 T4:4:4
row "v3: 4 kinds, 112 GPUs, GPT 2.6B" cbc 60 "a bound in 60 s" "${G26[@]}" --cluster "$tmp/k4-112.json"
row "v3: 4 kinds, 112 GPUs, GPT 2.6B" cbc 300 "gap < 2 % in 300 s" "${G26[@]}" --cluster "$tmp/k4-112.json"
kinds_cluster "$tmp/racks-64.json" "racks-2x4x8" 25 200 A100:4:8:rackA V100:4:8:rackB
row "v3: 2 racks, 64 GPUs, GPT 2.6B" cbc 120 "gap < 0.5 % in 120 s" "${G26[@]}" --cluster "$tmp/racks-64.json"
row "v3: Pipette real 128, GPT 8.3B" cbc 300 "gap < 1 % in 300 s" --model models/gpt-8.3b.json --gbs 128 --cluster models/pipette-real-16x8-a100.json
# Clusters like the v3 rows, not these (issue 21's targets are measured on such): other
# kinds, node counts, models and links, 60 s each, against the target of their family at
# 60 s (three kinds: gap < 0.5 %; four and five: a bound)
kinds_cluster "$tmp/x3-56.json" "x-3kinds-56" 100 - H100:2:8 A100:3:8 L4:4:4
row "v3x: 3 kinds, 56 GPUs, GPT 1.1B" cbc 60 "gap < 0.5 % in 60 s" --model models/gpt-1.1b.json --gbs 256 --cluster "$tmp/x3-56.json"
# three kinds in 8-GPU nodes, where tp dp is a node's GPUs (2026-11-27: gaps of 1.9 to 2.3 %
# at 60 s before the couples, docs/formulation.md)
kinds_cluster "$tmp/x3b-64.json" "x-3kinds-64" 100 - A100:3:8 V100:3:8 T4:2:8
row "v3x: 3 kinds, 64, GPT 1.1B" cbc 60 "gap < 0.5 % in 60 s" --model models/gpt-1.1b.json --gbs 256 --cluster "$tmp/x3b-64.json"
row "v3x: 3 kinds, 64, Llama-2 7B" cbc 60 "gap < 0.5 % in 60 s" --model models/llama2-7b.json --gbs 512 --cluster "$tmp/x3b-64.json"
kinds_cluster "$tmp/x3c-48.json" "x-3kinds-48" 100 - H100:2:8 A100:2:8 V100:2:8
row "v3x: 3 kinds, 48, GPT 2.6B" cbc 60 "gap < 0.5 % in 60 s" "${G26[@]}" --cluster "$tmp/x3c-48.json"
# three kinds, 8- and 4-GPU nodes (2026-11-27, the fourteenth session: 15.18 % at 60 s,
# the bound's side far below every plan found; bench/README.md)
kinds_cluster "$tmp/x3e-48.json" "x-3kinds-48b" 100 - H100:3:8 A100:2:8 L4:2:4
row "v3x: 3 kinds, 48b, GPT 1.1B" cbc 60 "gap < 0.5 % in 60 s" --model models/gpt-1.1b.json --gbs 256 --cluster "$tmp/x3e-48.json"
kinds_cluster "$tmp/x3d-96.json" "x-3kinds-96" 100 - A100:4:8 V100:4:8 T4:4:8
row "v3x: 3 kinds, 96, GPT 8.3B" cbc 60 "gap < 0.5 % in 60 s" --model models/gpt-8.3b.json --gbs 512 --cluster "$tmp/x3d-96.json"
kinds_cluster "$tmp/x4-112.json" "x-4kinds-112" 100 - H100:4:8 A100:6:8 V100:4:4 L4:4:4
row "v3x: 4 kinds, 112 GPUs, GPT 2.6B" cbc 60 "a bound in 60 s" "${G26[@]}" --cluster "$tmp/x4-112.json"
kinds_cluster "$tmp/x4b-112.json" "x-4kinds-112-200g" 200 - A100:6:8 V100:4:8 L4:4:4 T4:4:4
row "v3x: 4 kinds, 112, GPT 8.3B, 200G" cbc 60 "a bound in 60 s" --model models/gpt-8.3b.json --gbs 512 --cluster "$tmp/x4b-112.json"
kinds_cluster "$tmp/x5-104.json" "x-5kinds-104" 100 - H100:3:8 A100:5:8 V100:4:4 L4:2:4 T4:4:4
row "v3x: 5 kinds, 104, Llama-2 7B" cbc 60 "a bound in 60 s" --model models/llama2-7b.json --gbs 1024 --cluster "$tmp/x5-104.json"
