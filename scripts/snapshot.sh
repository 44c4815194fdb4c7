#!/bin/bash
# snapshot.sh HETPLAN OUT -- the outputs a refactor must leave unchanged: for every bundled
# example and benchmark set-up and every solver that completes on it, the plan file
# (`plan -o`), its `evaluate --json` and `simulate --json`, the MIP solvers also under
# `mpirun -np 2`; each JSON written with its timing fields removed ("seconds", "work",
# "elapsed") so that two snapshots compare with `diff -r`. Not a test: a tool for
# changes that promise "behaviour unchanged" (issue 19). Run from the repository root:
#   scripts/snapshot.sh build/hetplan /tmp/before   # on the old commit
#   scripts/snapshot.sh build/hetplan /tmp/after    # on the new one
#   diff -r /tmp/before /tmp/after && echo identical
# It prints the number of plans written. Searches run to completion (the set-ups are
# small enough; a limit that bound would make the comparison depend on the machine).
set -u
H=$(realpath "$1"); OUT=$2
mkdir -p "$OUT"
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../bench/mixed_cluster.sh
. bench/mixed_cluster.sh
# at a fixed path: plan files name their inputs
MIXED=/tmp/hetplan-snapshot-mixed8.json
mixed_cluster 8 "$MIXED"
count=0

strip() {   # strip FILE: JSON without its timing fields, keys in order
  python3 - "$1" <<'EOF'
import json, sys
def clean(v):
    if isinstance(v, dict):
        return {k: clean(x) for k, x in v.items() if k not in ("seconds", "work", "elapsed", "wall")}
    if isinstance(v, list):
        return [clean(x) for x in v]
    return v
p = sys.argv[1]
try:
    d = json.load(open(p))
except Exception as e:
    sys.exit(0)        # not JSON (an error message): compared as text
json.dump(clean(d), open(p, "w"), indent=1, sort_keys=False)
EOF
}

# one NAME PREFIX-ARGS... : plan with the given arguments, then evaluate and simulate it
one() {
  local name=$1; shift
  local mpi=""
  if [ "$1" = "MPI2" ]; then mpi="mpirun --allow-run-as-root --oversubscribe -np 2"; shift; fi
  ( cd "$tmp" && $mpi "$H" plan "$@" -o "$OUT/$name.plan.json" >"$OUT/$name.plan.stdout" 2>"$OUT/$name.plan.stderr" )
  echo "rc=$?" >> "$OUT/$name.plan.stdout"
  # the summary lines, without the search's duration and the progress lines (timed)
  sed -i -E 's/ in [0-9.]+ s\b/ in <t> s/g; s/\([0-9]+ plans or states\)/(<n> plans or states)/; /^[A-Za-z-]+: +[0-9.]+ s  /d' \
    "$OUT/$name.plan.stderr" "$OUT/$name.plan.stdout"
  if [ -s "$OUT/$name.plan.json" ]; then
    count=$((count + 1))
    ( cd "$tmp" && "$H" evaluate --plan "$OUT/$name.plan.json" --json ) >"$OUT/$name.eval.json" 2>&1
    ( cd "$tmp" && "$H" simulate --plan "$OUT/$name.plan.json" --json ) >"$OUT/$name.sim.json" 2>&1
    strip "$OUT/$name.plan.json"; strip "$OUT/$name.eval.json"; strip "$OUT/$name.sim.json"
  fi
}

R=$PWD
TINY="--model $R/examples/tiny/model.json --cluster $R/examples/tiny/cluster.json --gbs 8"
AMP="--model $R/models/gpt2-amp.json --cluster $R/models/amp-hetero.json --profile $R/models/gpt2-amp.profile.json --gbs 32"
AMPH="--model $R/models/gpt2-amp.json --cluster $R/models/amp-homo-4xg4dn.json --profile $R/models/gpt2-amp.profile.json --gbs 32"
AMP4="--model $R/models/gpt2-amp.json --cluster $R/models/amp-4xp3.json --profile $R/models/gpt2-amp.profile.json --gbs 32"
TGAN="--model $R/models/transgan-amp.json --cluster $R/models/amp-hetero.json --profile $R/models/transgan-amp.profile.json --gbs 32"
PIPH="--model $R/models/gpt-8.3b.json --cluster $R/models/pipette-high-16x8-a100.json --gbs 512"
PIPM="--model $R/models/gpt-1.1b.json --cluster $R/models/pipette-mid-16x8-v100.json --gbs 256"
PIPR="--model $R/models/gpt-2.6b.json --cluster $R/models/pipette-real-16x8-a100.json --gbs 512"
HETH="--model $R/models/llama2-7b.json --cluster $R/models/hethub-mix-2amd+10acc.json --gbs 64"
OSDP1="--model $R/models/osdp-narrow-deep-48.json --cluster $R/models/amp-4xp3.json --gbs 32"
OSDP2="--model $R/models/osdp-wide-shallow-4.json --cluster $R/models/amp-4xp3.json --gbs 32"
MIX8="--model $R/models/gpt-2.6b.json --cluster $MIXED --gbs 512"
L70="--model $R/models/llama2-70b.json --cluster $R/models/pipette-high-16x8-a100.json --gbs 256"

heur="megatron megatron-params amp hethub dhondt osdp pipette"
for s in $heur dp enum cbc glpk; do one "tiny-$s" $TINY --solver $s; done
one tiny-sa $TINY --solver sa --seed 3 --time-limit 600
one tiny-random $TINY --solver random --seed 5 --max-work 300
one tiny-gpipe-dp $TINY --solver dp --schedule gpipe
one tiny-cbc-mpi2 MPI2 $TINY --solver cbc
for set in AMP AMPH AMP4 TGAN PIPH PIPM PIPR HETH OSDP1 OSDP2 MIX8 L70; do
  args=${!set}
  for s in $heur dp; do one "$set-$s" $args --solver $s --time-limit 600; done
  one "$set-top3" $args --solver dp --top 3 --time-limit 600
  one "$set-random" $args --solver random --seed 7 --max-work 200
done
for set in AMP AMPH AMP4 TGAN MIX8; do
  args=${!set}
  one "$set-cbc" $args --solver cbc --time-limit 600
  one "$set-glpk" $args --solver glpk --time-limit 600
  one "$set-cbc-mpi2" MPI2 $args --solver cbc --time-limit 600
done
one AMP-margin $AMP --solver dp --mem-margin 0.2 --time-limit 600
one AMP-gpipe $AMP --solver dp --schedule gpipe --time-limit 600
echo "snapshot: $count plans in $OUT"
