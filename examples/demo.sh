#!/bin/sh
# demo.sh HETPLAN -- the bundled examples end to end: describe AMP's heterogeneous
# cluster, score a four-stage GPT-2 plan with AMP's measured layer times, and plan a
# tiny two-kind cluster with the exhaustive solver (writing build/demo-plan.json).
set -eu
H=${1:-build/hetplan}
cd "$(dirname "$0")/.."
echo "== hetplan describe: AMP's heterogeneous cluster and GPT-2"
$H describe --cluster models/amp-hetero.json --model models/gpt2-amp.json
echo
echo "== hetplan evaluate: four pipeline stages, one per node, gbs 32"
$H evaluate --model models/gpt2-amp.json --cluster models/amp-hetero.json \
  --profile models/gpt2-amp.profile.json --plan examples/amp-gpt2-hetero-4stage.plan.json --gbs 32
echo
echo "== hetplan plan: the best plan of a tiny 2 x 2 cluster, proved by enumeration"
$H plan --model examples/tiny/model.json --cluster examples/tiny/cluster.json --gbs 8 \
  --solver enum -o build/demo-plan.json
$H evaluate --model examples/tiny/model.json --cluster examples/tiny/cluster.json --gbs 8 \
  --plan build/demo-plan.json | tail -6
echo
echo "demo: the plan is in build/demo-plan.json"
