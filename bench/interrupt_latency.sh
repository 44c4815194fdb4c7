#!/bin/bash
# interrupt_latency.sh [SOLVER...] -- how soon `hetplan plan` stops after a SIGINT. Each
# solver runs on set-ups where it searches for many seconds:
#   mixed  the 160-layer Llama-2 140B (gbs 1536) on 768 mixed GPUs (mixed_cluster.sh 96)
#   deep   a 10,000-layer model (gbs 64) on 2 nodes x 8 A100 (docs/limits.md): seconds
#          per layer DP
#   enum   (enum alone) examples/tiny's model (gbs 16) on 2 nodes x 4 GPUs, A100 and V100,
#          --max-work 10^18 (a space of 10^14 plans)
# and receives SIGINT after each of DELAYS seconds (default "1 4 12"); it prints the time
# from the signal to the exit and the exit code (7: interrupted, the best plan so far
# written; 6: no plan, or none yet; 0 or 5: it had finished). docs/cli.md (Interrupts)
# gives the figures. HETPLAN (default build/hetplan), DELAYS, SETUPS (default
# "mixed deep enum") and LIMIT (--time-limit, default 120) may be set. Never part of
# `make test`: it runs for minutes.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/mixed_cluster.sh"
HETPLAN=${HETPLAN:-build/hetplan}
DELAYS=${DELAYS:-1 4 12}
SETUPS=${SETUPS:-mixed deep enum}
LIMIT=${LIMIT:-120}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mixed_cluster 96 "$tmp/mixed.json"
printf '{ "name": "deep-10000", "layers": [ { "name": "embed", "params": 1e6, "act_bytes": 2e7, "out_bytes": 1e5, "flops": 1e9 }, { "name": "block", "repeat": 9998, "params": 2e5, "act_bytes": 1e6, "out_bytes": 1e5, "flops": 2e9, "tp_comm_bytes": 2e5 }, { "name": "head", "params": 1e6, "act_bytes": 4e6, "out_bytes": 4, "flops": 2e9 } ] }' > "$tmp/deep.json"
printf '{ "device_types": { "A100": { "mem_gib": 80, "tflops": 312, "efficiency": 0.5 } }, "nodes": [ { "name": "n0", "type": "A100", "gpus": 8, "intra_gbps": 2400 }, { "name": "n1", "type": "A100", "gpus": 8, "intra_gbps": 2400 } ], "inter_gbps": 200, "inter_lat_us": 5 }' > "$tmp/a100x16.json"
printf '{ "device_types": { "A100": { "mem_gib": 40, "tflops": 312, "efficiency": 0.5 }, "V100": { "mem_gib": 32, "tflops": 125, "efficiency": 0.5 } }, "nodes": [ { "name": "n0", "type": "A100", "gpus": 4, "intra_gbps": 2400 }, { "name": "n1", "type": "V100", "gpus": 4, "intra_gbps": 1200 } ], "inter_gbps": 100, "inter_lat_us": 5 }' > "$tmp/2x4.json"
all="dp sa cbc glpk megatron amp hethub dhondt osdp pipette random"
[ $# -gt 0 ] && all="$*"
printf '%-6s %-9s %5s %8s %5s  %s\n' set-up solver after "stop s" exit "what it wrote"
for setup in $SETUPS; do
  case $setup in
  mixed) args=(--model models/llama2-140b.json --cluster "$tmp/mixed.json" --gbs 1536); solvers=$all ;;
  deep) args=(--model "$tmp/deep.json" --cluster "$tmp/a100x16.json" --gbs 64); solvers=$all ;;
  enum) args=(--model examples/tiny/model.json --cluster "$tmp/2x4.json" --gbs 16
              --max-work 1000000000000000000)
        solvers=enum ;;
  *) echo "unknown set-up '$setup'" >&2; exit 2 ;;
  esac
  for s in $solvers; do
    [ "$setup" != enum ] && [ "$s" = enum ] && continue
    for delay in $DELAYS; do
      rm -f "$tmp/out.json"
      "$HETPLAN" plan "${args[@]}" --solver "$s" --time-limit "$LIMIT" -o "$tmp/out.json" \
        2>"$tmp/err" &
      pid=$!
      sleep "$delay"
      t0=$(date +%s.%N)
      kill -INT "$pid" 2>/dev/null
      wait "$pid"
      rc=$?
      t1=$(date +%s.%N)
      wrote=nothing
      [ -s "$tmp/out.json" ] &&
        wrote=$(grep -o '"stopped":[[:space:]]*"[a-z-]*"' "$tmp/out.json" | tr -d '\t' || echo "a plan")
      [ -s "$tmp/out.json" ] && [ -z "$wrote" ] && wrote="a plan"
      printf '%-6s %-9s %5s %8.2f %5d  %s\n' "$setup" "$s" "$delay" "$(echo "$t1 - $t0" | bc)" "$rc" "$wrote"
    done
  done
done
