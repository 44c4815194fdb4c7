#!/usr/bin/env bash
# test_users.sh -- issue 12 end to end: a Hugging Face config in (import-hf, or given as
# --model), plan, export (the launch script run with a stand-in torchrun), report (its
# HTML's SVGs rendered by rsvg-convert; at 768 GPUs under 500 KB and shown in a headless
# chromium, skipped without it), explained infeasibility, the memory margin and compare's
# ranking. Ends with "users: N passed, N failed" (and "users: N skipped" when some are).
set -u
cd "$(dirname "$0")/../.." || exit 2
H=${HETPLAN:-build/hetplan}
H=$(cd "$(dirname "$H")" && pwd)/$(basename "$H")
T=examples/tiny
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; skipped=0
ok()   { passed=$((passed + 1)); echo "ok $((passed + failed + skipped)) $1"; }
bad()  { failed=$((failed + 1)); echo "not ok $((passed + failed + skipped)) $1"; shift; printf '  %s\n' "$@"; }
skip() { skipped=$((skipped + 1)); echo "ok $((passed + failed + skipped)) $1 # skip $2"; }
expect() {   # expect NAME CODE TEXT -- cmd...
  local name=$1 code=$2 text=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -ne "$code" ]; then bad "$name" "exit $rc, expected $code" "$(echo "$out" | tail -3)"; return; fi
  if [ -n "$text" ] && ! grep -qF -- "$text" <<<"$out"; then
    bad "$name" "output lacks: $text" "$(echo "$out" | tail -3)"; return
  fi
  ok "$name"
}
tiny=(--model $T/model.json --cluster $T/cluster.json)

# --- import-hf: Llama-2-70B's config.json as its model card publishes it
mkdir -p $tmp/Llama-2-70b-hf
cat > $tmp/Llama-2-70b-hf/config.json <<'EOF'
{ "architectures": ["LlamaForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
  "hidden_act": "silu", "hidden_size": 8192, "initializer_range": 0.02,
  "intermediate_size": 28672, "max_position_embeddings": 4096, "model_type": "llama",
  "num_attention_heads": 64, "num_hidden_layers": 80, "num_key_value_heads": 8,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null,
  "tie_word_embeddings": false, "torch_dtype": "float16", "transformers_version": "4.31.0.dev0",
  "use_cache": true, "vocab_size": 32000 }
EOF
expect import_hf_llama70b 0 "Llama-2-70b-hf (llama style): 80 blocks, hidden 8192, 64 heads (8 key/value), seq 4096, bf16: 68976648192 parameters" \
  -- $H import-hf $tmp/Llama-2-70b-hf/config.json -o $tmp/l70.json
if $H import-hf $tmp/Llama-2-70b-hf/config.json 2>&1 >/dev/null | grep -q warning; then bad import_hf_no_warnings "unknown keys warned"; else ok import_hf_no_warnings; fi
expect import_hf_model_loads 0 "68.9766 B parameters" -- $H describe --model $tmp/l70.json
expect import_hf_help 0 "usage: hetplan import-hf config.json" -- $H import-hf --help
expect import_hf_missing 2 "missing the config file" -- $H import-hf
expect import_hf_bad_dtype 2 "--dtype: expected bf16, fp16 or fp32, got 'fp8'" -- $H import-hf $tmp/Llama-2-70b-hf/config.json --dtype fp8
expect import_hf_no_file 3 "cannot open 'nope/config.json'" -- $H import-hf nope/config.json
sed 's/"vocab_size": 32000/"vocab_size": 32000, "num_local_experts": 8/' $tmp/Llama-2-70b-hf/config.json > $tmp/moe.json
expect import_hf_refuses_moe 3 "num_local_experts: 8 experts: mixture-of-experts models are not supported" -- $H import-hf $tmp/moe.json

# a config given directly as --model
cat > $tmp/small.json <<'EOF'
{ "model_type": "llama", "hidden_act": "silu", "hidden_size": 256, "intermediate_size": 688,
  "num_attention_heads": 8, "num_key_value_heads": 2, "num_hidden_layers": 4,
  "max_position_embeddings": 128, "vocab_size": 1000, "tie_word_embeddings": false }
EOF
expect plan_hf_config_as_model 0 "solver dp: feasible" -- $H plan --model $tmp/small.json --cluster $T/cluster.json --gbs 8 -o $tmp/small.plan.json
expect evaluate_hf_config_as_model 0 "model    small: 7 layers" -- $H evaluate $tmp/small.plan.json

# --- plan, then export from the plan file alone. The expectations (tp 8, gas 128) are the
# FLOPs model's choice, pinned with --compute-model flops (the shape model, the default,
# picks pp 8 tp 4 dp 4 on this cluster); the plan file's inputs carry it to the export.
expect plan_llama70b 0 "pp 8 tp 8 dp 2 mbs 1" -- $H plan --model $tmp/l70.json --cluster models/pipette-high-16x8-a100.json --gbs 256 --compute-model flops -o $tmp/l70.plan.json
if grep -q '"compute_model":[[:space:]]*"flops"' $tmp/l70.plan.json; then ok plan_file_records_compute_model
else bad plan_file_records_compute_model "$(grep -c compute_model $tmp/l70.plan.json) compute_model keys"; fi
expect evaluate_takes_compute_model_from_plan 0 "iteration" -- $H evaluate $tmp/l70.plan.json
expect export_megatron 0 "wrote $tmp/launch.sh" -- $H export --format megatron $tmp/l70.plan.json -o $tmp/launch.sh
for a in "--num-query-groups 8" "--tensor-model-parallel-size 8" "--pipeline-model-parallel-size 8" "--micro-batch-size 1" \
         "--global-batch-size 256" "--num-layers 80" "--hidden-size 8192" "--ffn-hidden-size 28672" \
         "--group-query-attention" "--swiglu" "--normalization RMSNorm" "--untie-embeddings-and-output-weights" "--bf16"; do
  grep -qF -- "  $a" $tmp/launch.sh || { bad "export_megatron_has ($a)" "missing in $tmp/launch.sh"; continue; }
done
ok export_megatron_arguments
if bash -n $tmp/launch.sh; then ok export_megatron_script_parses; else bad export_megatron_script_parses "bash -n failed"; fi
# run node rank 3's line with a stand-in torchrun that prints what it was given
mkdir -p $tmp/bin
cat > $tmp/bin/torchrun <<'EOF'
#!/bin/sh
echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES CUDA_DEVICE_MAX_CONNECTIONS=$CUDA_DEVICE_MAX_CONNECTIONS torchrun $*"
EOF
chmod +x $tmp/bin/torchrun
out=$(PATH=$tmp/bin:$PATH bash $tmp/launch.sh 3 --mock-data --tokenizer-type NullTokenizer --vocab-size 32000 --lr 1e-4 --train-iters 2 2>&1)
if grep -qF "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nnodes 16 --node-rank 3 --nproc-per-node 8 --master-addr a100-00 --master-port 29500 pretrain_gpt.py --tensor-model-parallel-size 8" <<<"$out" &&
   grep -qF "note: node rank 3 is planned for host a100-03" <<<"$out"; then ok export_megatron_script_runs
else bad export_megatron_script_runs "$out"; fi
out=$(PATH=$tmp/bin:$PATH bash $tmp/launch.sh 16 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -qF "expected 0..15" <<<"$out"; then ok export_script_rejects_bad_node_rank; else bad export_script_rejects_bad_node_rank "rc $rc: $out"; fi
expect export_deepspeed 0 '"gradient_accumulation_steps": 128' -- $H export --format deepspeed $tmp/l70.plan.json
expect export_deepspeed_json 0 '"train_micro_batch_size_per_gpu": 1' -- $H export --format deepspeed --json $tmp/l70.plan.json
expect export_torchrun 0 "torchrun --nnodes 16" -- $H export --format torchrun $tmp/l70.plan.json
expect export_needs_format 2 "missing --format" -- $H export $tmp/l70.plan.json
expect export_bad_format 2 "--format: expected megatron, deepspeed, torchrun or slurm, got 'pbs'" -- $H export --format pbs $tmp/l70.plan.json
expect export_slurm 0 "srun --nodes=16 --ntasks=128 --distribution=arbitrary" -- $H export --format slurm $tmp/l70.plan.json
expect export_args_file_missing 3 "cannot open 'nope.args'" -- $H export --format megatron $tmp/l70.plan.json --args-file nope.args
expect export_json_only_deepspeed 2 "--json is for --format deepspeed" -- $H export --format megatron --json $tmp/l70.plan.json

# --- report: Markdown, and HTML whose pictures render
expect report_markdown 0 "## Bottleneck" -- $H report $tmp/l70.plan.json --solvers dp,megatron
out=$($H report $tmp/l70.plan.json --solvers megatron 2>&1)
for s in "## Configuration" "## Throughput" "| tokens per second |" "| tokens per GPU per second |" "| MFU |" \
         "## Stages" "## Memory" "## Profile coverage" "## Compared with the baselines" "## Bound" "| megatron |"; do
  grep -qF -- "$s" <<<"$out" || { bad "report_has ($s)" "$(echo "$out" | head -5)"; continue; }
done
ok report_sections
expect report_html 0 "wrote $tmp/r.html" -- $H report --html --solvers none $T/plan.json "${tiny[@]}" --gbs 8 -o $tmp/r.html
n=$(grep -c "<svg" $tmp/r.html)
awk -v d=$tmp '/<svg/{f=1; n++; out=d "/fig" n ".svg"} f{print > out} /<\/svg>/{f=0}' $tmp/r.html
rendered=0
for f in $tmp/fig*.svg; do
  if rsvg-convert "$f" -o "${f%.svg}.png" 2>$tmp/rsvg.err && [ "$(head -c 8 "${f%.svg}.png" | od -An -tx1 | tr -d ' ')" = "89504e470d0a1a0a" ]; then
    rendered=$((rendered + 1))
  else bad "report_svg_renders ($f)" "$(cat $tmp/rsvg.err)"; fi
done
if [ "$n" -eq 2 ] && [ "$rendered" -eq 2 ] && grep -q "</html>" $tmp/r.html; then ok report_html_svgs_render; else bad report_html_svgs_render "$n svgs, $rendered rendered"; fi
expect report_unknown_solver 2 "unknown solver 'nope'" -- $H report $T/plan.json "${tiny[@]}" --gbs 8 --solvers nope

# --- the report at scale (issue 23): the README's 128-GPU plan and two 768-GPU plans
# (megatron's, and pp 64 x tp 4 x dp 3 in device order), each page under 500 KB, the
# simulated iteration one row per stage, every picture 1000 px wide and rendered by
# rsvg-convert; then the 768-GPU pages in a headless browser (skipped without chromium).
under_500k() {   # under_500k NAME FILE
  local n; n=$(stat -c %s "$2")
  if [ "$n" -lt 500000 ]; then ok "$1"; else bad "$1" "$2 is $n bytes"; fi
}
svgs_render() {  # svgs_render NAME HTML PP: both SVGs render; the Gantt has a row per stage
  local name=$1 html=$2 pp=$3 f n=0 base=${2%.html}
  awk -v b="$base" '/<svg/{f=1; n++; out=b "_fig" n ".svg"} f{print > out} /<\/svg>/{f=0}' "$html"
  for f in "${base}"_fig*.svg; do
    grep -q '<svg [^>]*width="1000"' "$f" || { bad "$name" "$f is not 1000 px wide"; return; }
    rsvg-convert "$f" -o "${f%.svg}.png" 2>$tmp/rsvg.err && [ -s "${f%.svg}.png" ] || { bad "$name" "$f: $(cat $tmp/rsvg.err)"; return; }
    n=$((n + 1))
  done
  local rows; rows=$(grep -c '>stage [0-9]* ([0-9]* x [0-9]*)</text>' "${base}_fig2.svg")
  if [ "$n" -eq 2 ] && [ "$rows" -eq "$pp" ]; then ok "$name"; else bad "$name" "$n pictures, $rows Gantt rows for pp $pp"; fi
}
$H report --html --solvers none $tmp/l70.plan.json -o $tmp/r128.html 2>/dev/null
under_500k report_128_gpus_under_500kb $tmp/r128.html
svgs_render report_128_gpus_pictures $tmp/r128.html 8
bash bench/mixed_cluster.sh 96 $tmp/c96.json
M768=(--model models/llama2-70b.json --cluster $tmp/c96.json)
expect plan_768_megatron 0 "pp 3 tp 4 dp 64 mbs 1" -- $H plan "${M768[@]}" --gbs 1536 --solver megatron -o $tmp/p768.json
$H report --html --solvers none $tmp/p768.json -o $tmp/r768.html 2>/dev/null
under_500k report_768_gpus_under_500kb $tmp/r768.html
svgs_render report_768_gpus_pictures $tmp/r768.html 3
{                # 83 layers on 64 stages, the first 19 with two
  printf '{ "pp": 64, "tp": 4, "dp": 3, "mbs": 1, "stages": ['
  first=0
  for ((s = 0; s < 64; s++)); do
    n=1; [ $s -lt 19 ] && n=2
    printf '%s{ "layers": [%d, %d], "devices": [' "$([ $s -gt 0 ] && echo ,)" $first $((first + n - 1))
    for ((r = 0; r < 3; r++)); do
      d=$(((s * 3 + r) * 4))
      printf '%s[%d, %d, %d, %d]' "$([ $r -gt 0 ] && echo ,)" $d $((d + 1)) $((d + 2)) $((d + 3))
    done
    printf '] }'
    first=$((first + n))
  done
  printf '] }\n'
} > $tmp/p64.json
$H report --html --solvers none $tmp/p64.json "${M768[@]}" --gbs 768 -o $tmp/r64.html 2>/dev/null
under_500k report_768_gpus_pp64_under_500kb $tmp/r64.html
svgs_render report_768_gpus_pp64_pictures $tmp/r64.html 64

# in a browser: the page, and each picture alone (a blank 1200 x 3000 page is about 17 KB)
shot() {   # shot FILE.png W H URL
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d -p $tmp)" --screenshot="$1" --window-size="$2,$3" "$4" >/dev/null 2>&1
}
png_ok() { # png_ok FILE W H MIN_BYTES: a PNG of that size with more than MIN_BYTES
  [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' ')" = "89504e470d0a1a0a" ] &&
    [ "$(od -An -tu4 --endian=big -j16 -N8 "$1" | tr -s ' ' | sed 's/^ //')" = "$2 $3" ] &&
    [ "$(stat -c %s "$1")" -gt "$4" ]
}
if ! command -v chromium >/dev/null; then
  skip report_768_in_browser "chromium not found (Debian: chromium; ./scripts/install-deps.sh)"
else                # the pp 64 page: the longest
  shot $tmp/shot.png 1200 3000 "file://$tmp/r64.html"
  if png_ok $tmp/shot.png 1200 3000 100000; then
    good=1
    for f in 1 2; do
      h=$(sed -n '1s/.*height="\([0-9]*\)".*/\1/p' $tmp/r64_fig$f.svg)
      shot $tmp/shot_$f.png 1000 "$h" "file://$tmp/r64_fig$f.svg"
      png_ok $tmp/shot_$f.png 1000 "$h" 30000 || { good=0; bad report_768_in_browser "picture $f: $(ls -l $tmp/shot_$f.png 2>&1)"; }
    done
    [ $good -eq 1 ] && ok report_768_in_browser
  else bad report_768_in_browser "page: $(ls -l $tmp/shot.png 2>&1)"; fi
fi

# --- explained infeasibility
expect plan_dp_not_proved 6 "none found in the part of the space this solver searches" -- $H plan --model tests/cases/too-big.json --cluster $T/cluster.json --gbs 4
expect plan_nearest_miss 6 "device 0 (stage 0, node 'a', fast) needs 3.975 GiB of 1.000 GiB: short by 2.975 GiB" -- $H plan --model tests/cases/too-big.json --cluster $T/cluster.json --gbs 4
expect plan_remedy_larger 6 "fast GPUs with 4 GiB instead of 1" -- $H plan --model tests/cases/too-big.json --cluster $T/cluster.json --gbs 4
expect plan_enum_proved 6 "no plan of the search space fits in memory (proved)" -- $H plan --model tests/cases/too-big.json --cluster $T/cluster.json --gbs 4 --solver enum
expect plan_megatron_not_proved 6 "not proved that none fits" -- $H plan --model tests/cases/too-big.json --cluster $T/cluster.json --gbs 4 --solver megatron

# --- the memory margin: flag, cluster key, errors
expect margin_flag 0 "memory margin 68 %" -- $H plan "${tiny[@]}" --gbs 64 --solver enum --mem-margin 0.68 -o $tmp/m.json
expect margin_read_back 0 "(memory margin 68 %" -- $H evaluate $tmp/m.json
sed 's/"inter_gbps": 80/"inter_gbps": 80, "mem_margin": 0.68/' $T/cluster.json > $tmp/cm.json
expect margin_key 0 "iteration 7.091483 s" -- $H plan --model $T/model.json --cluster $tmp/cm.json --gbs 64 --solver enum
expect margin_bad_flag 2 "--mem-margin: expected the fraction of memory to keep free, in [0, 1)" -- $H plan "${tiny[@]}" --gbs 8 --mem-margin 1.5
sed 's/"inter_gbps": 80/"inter_gbps": 80, "mem_margin": 2/' $T/cluster.json > $tmp/cb.json
expect margin_bad_key 3 "mem_margin: 2: expected the fraction" -- $H plan --model $T/model.json --cluster $tmp/cb.json --gbs 8

# --- compare: a plan that does not fit is never ranked; configurations shown
# (amp's overflow on device 16 grew by the blocks' working set, 3 b s f / tp =
# 3 x 2 x 4096 x 28672 / 4 B = 0.164 GiB, the gated MLP's backward: 18.87 -> 19.04 GiB)
L70=(--model models/llama2-70b.json --cluster models/hethub-mix-2amd+10acc.json --gbs 192 --solvers amp,dp)
out=$($H compare "${L70[@]}" 2>&1)
if grep -Eq "^amp +does-not-fit .* - +OOM: dev 16 \+19\.04 GiB +pp 12, tp 4, dp 2" <<<"$out" && grep -Eq "^dp +feasible .* 1 +\+0\.00% +pp 12, tp 8" <<<"$out"; then ok compare_oom_not_ranked
else bad compare_oom_not_ranked "$out"; fi
out=$($H compare "${L70[@]}" --json 2>&1)
if grep -q '"name": "amp", "status": "does-not-fit", .*"rank": null' <<<"$out" && grep -q '"config": { "pp": 12, "tp": 8, "dp": 1, "mbs": 1' <<<"$out"; then ok compare_json_rank_and_config
else bad compare_json_rank_and_config "$out"; fi

# --- the issue's bottleneck case through the command line: gas 1, sync 0.003 s of 0.55 s
cat > $tmp/one.json <<'EOF'
{ "layers": [ { "name": "x", "params": 1.5e6, "act_bytes": 0, "out_bytes": 1, "flops": 0.547e12 } ] }
EOF
cat > $tmp/two.json <<'EOF'
{ "device_types": { "g": { "mem_gib": 1, "tflops": 1 } }, "nodes": [ { "name": "n", "type": "g", "gpus": 2, "intra_gbps": 8 } ] }
EOF
cat > $tmp/one.plan.json <<'EOF'
{ "pp": 1, "tp": 1, "dp": 2, "mbs": 1, "stages": [ { "layers": [0, 0], "devices": [[0], [1]] } ] }
EOF
expect bottleneck_gas1 0 "bottleneck      stage 0 of replica 0: 547.000 ms of compute per micro-batch x gas 1 = 0.547000 s, 99.5 % of the iteration" \
  -- $H evaluate --model $tmp/one.json --cluster $tmp/two.json --gbs 2 --plan $tmp/one.plan.json

# --- idle devices (issue 24): two T4-like GPUs 12.5 times slower than the two fast ones.
# describe hints --idle-devices; plan leaves them idle and says what using them would cost
# (the figures: enum's brute force, also in test_idle.c); the export launches the fast
# node's two GPUs alone.
cat > $tmp/two-slow.json <<'EOF'
{ "version": 1, "name": "two-slow",
  "device_types": {
    "fast": { "mem_gib": 1, "reserved_gib": 0.25, "tflops": 100, "efficiency": 0.5 },
    "T4": { "mem_gib": 1, "tflops": 8, "efficiency": 0.5 } },
  "nodes": [
    { "name": "a", "type": "fast", "gpus": 2, "intra_gbps": 800, "intra_lat_us": 2 },
    { "name": "t4-0", "type": "T4", "gpus": 2, "intra_gbps": 400, "intra_lat_us": 4 } ],
  "inter_gbps": 80, "inter_lat_us": 10 }
EOF
IDLE=(--model $T/model.json --cluster $tmp/two-slow.json --gbs 8)
expect describe_hints_idle_devices 0 "  hint   T4: 4.0 TFLOPS effective (peak x efficiency), 0.08 of fast's 50.0: plan with --idle-devices to let a plan leave its 2 GPUs idle" \
  -- $H describe --cluster $tmp/two-slow.json
out=$($H describe --cluster $T/cluster.json 2>&1)
if ! grep -q hint <<<"$out"; then ok describe_no_hint_at_0.4_of_the_fastest; else bad describe_no_hint_at_0.4_of_the_fastest "$out"; fi
expect plan_says_which_idle_and_why 0 "hetplan: leaving 2 x T4 (node t4-0 GPUs 0-1) idle: 0.880224 s per iteration; the best plan found using every device: 1.101038 s (+25.1 %)" \
  -- $H plan "${IDLE[@]}" --idle-devices -o $tmp/idle.plan.json
if grep -Eq '"all_used_time":\s+1\.101038' $tmp/idle.plan.json && grep -Eq '"idle":\s+\[2, 3\]' $tmp/idle.plan.json; then ok plan_file_has_all_used_time
else bad plan_file_has_all_used_time "$(grep -E 'all_used|idle' $tmp/idle.plan.json)"; fi
out=$($H plan "${IDLE[@]}" 2>&1 >/dev/null)
if grep -qF "iteration 1.101038 s" <<<"$out" && ! grep -q "idle" <<<"$out"; then ok plan_without_idle_devices_has_no_idle_line
else bad plan_without_idle_devices_has_no_idle_line "$out"; fi
expect plan_idle_allowed_all_used 0 "hetplan: idle devices allowed: the best plan found uses every device" \
  -- $H plan --model $T/model.json --cluster $T/cluster.json --gbs 8 --idle-devices
$H export --format torchrun $tmp/idle.plan.json -o $tmp/idle.sh 2>/dev/null
mkdir -p $tmp/idle-out
out=$(PATH="$PWD/tests/cli/standin:$PATH" STANDIN_OUT=$tmp/idle-out STANDIN_HOST=a bash $tmp/idle.sh 0 2>&1); rc=$?
out1=$(bash $tmp/idle.sh 1 2>&1); rc1=$?
if [ $rc -eq 0 ] && [ "$(ls $tmp/idle-out | grep -c '^rank\.')" = 2 ] && grep -qx 'visible=0,1' $tmp/idle-out/rank.0 &&
   grep -qx 'visible=0,1' $tmp/idle-out/rank.1 && [ "$(cat $tmp/idle-out/torchrun.0)" = 2 ] &&
   [ $rc1 -eq 2 ] && grep -qF "expected 0..0" <<<"$out1" &&
   grep -qF "# idle: 2 of the 4 GPUs" $tmp/idle.sh && grep -qF -- "--nnodes 1 " $tmp/idle.sh; then ok export_launches_only_the_used_gpus
else bad export_launches_only_the_used_gpus "rc $rc, $rc1: $out $out1" "$(cat $tmp/idle-out/rank.* 2>/dev/null)"; fi

[ $skipped -gt 0 ] && echo "users: $skipped skipped"
echo "users: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
