#!/usr/bin/env bash
# test_launch.sh -- every exported launch run, node by node, with stand-ins for the
# training program and the launchers (tests/cli/standin/: python, torchrun, deepspeed,
# srun, sbatch, scontrol, hostname). Each rank's process records its RANK, LOCAL_RANK,
# WORLD_SIZE, CUDA_VISIBLE_DEVICES and host; the test maps RANK through the framework's
# rank order to the plan's slot (from `hetplan evaluate`) and checks that the process
# runs on the slot's node and GPU. Placements: homogeneous, mixed (Llama-3-8B on AMP's
# V100 + T4 cluster, realisable by a node order and not: the headline case), and hand-made
# ones on the tiny cluster. Then the injection test: names crafted to break out of
# quotes, comments, heredocs and command substitution, in every format, run: nothing
# may run, and the names must reach the stand-in intact. Ends with "launch: N passed,
# N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
root=$PWD
H=${HETPLAN:-build/hetplan}
H=$(cd "$(dirname "$H")" && pwd)/$(basename "$H")
T=examples/tiny
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
STANDIN=$root/tests/cli/standin
passed=0; failed=0
ok()  { passed=$((passed + 1)); echo "ok $((passed + failed)) $1"; }
bad() { failed=$((failed + 1)); echo "not ok $((passed + failed)) $1"; shift; printf '  %s\n' "$@"; }
FORMATS=(megatron deepspeed torchrun slurm)
NEEDED=(--mock-data --tokenizer-type NullTokenizer --vocab-size 128256 --lr 3e-4 --train-iters 10)

# expected PLAN ORDER [FLAGS...]: "rank host gpu" for every rank of PLAN under ORDER
# (tp-dp-pp or tp-pp-dp), from evaluate's stage table (stage, replica, devices in TP
# order) and device table (device, node; a node's GPU g is its g-th device).
expected() {
  local plan=$1 order=$2; shift 2
  "$H" evaluate --plan "$plan" "$@" 2>/dev/null | awk -v order="$order" '
    /^plan / { for (i = 1; i <= NF; i++) { v = $(i + 1); sub(",", "", v)
                 if ($i == "pp") pp = v; if ($i == "tp") tp = v; if ($i == "dp") dp = v } }
    /^stage  layers/ { st = 1; next }
    st && NF == 0 { st = 0 }
    st && $2 ~ /^[0-9]+-[0-9]+$/ { s = $1; r = $4; devs = $5; put() ; next }
    st && NF >= 2 { r = $1; devs = $2; put(); next }
    /^device  node/ { dt = 1; next }
    dt && NF >= 3 && $1 ~ /^[0-9]+$/ { node[$1] = $2; if (!($2 in lo) || $1 < lo[$2]) lo[$2] = $1 }
    function put(  n, d, j, k) {
      n = split(devs, d, ",")
      for (j = 0; j < n; j++) {
        k = order == "tp-pp-dp" ? j + tp * (s + pp * r) : j + tp * (r + dp * s)
        dev[k] = d[j + 1]; if (k + 1 > nr) nr = k + 1
      }
    }
    END { for (k = 0; k < nr; k++) print k, node[dev[k]], dev[k] - lo[node[dev[k]]] }'
}

# recorded DIR: "rank host gpu" for every process the stand-in recorded (the GPU is the
# LOCAL_RANK-th of CUDA_VISIBLE_DEVICES, as cuda:LOCAL_RANK picks it).
recorded() {
  local f
  for f in "$1"/rank.*; do
    [ -e "$f" ] || continue
    awk -F= '{ v[$1] = substr($0, length($1) + 2) }
             END { n = split(v["visible"], g, ","); print v["rank"], v["host"], g[v["local_rank"] + 1] }' "$f"
  done | sort -n
}

# run_launch NAME FORMAT PLAN [FLAGS...]: export with the needed arguments, run every node
# (sbatch for slurm; once for DeepSpeed's own launcher), check every rank's node and GPU.
run_launch() {
  local name=$1 fmt=$2 plan=$3; shift 3
  local dir=$tmp/$name.$fmt out rc order n i host D want got
  mkdir -p "$dir/out"
  if ! "$H" export --format "$fmt" --plan "$plan" "$@" -o "$dir/launch.sh" -- "${NEEDED[@]}" 2>"$dir/err"; then
    bad "${name}_${fmt}_exports" "$(tail -3 "$dir/err")"; return
  fi
  if ! bash -n "$dir/launch.sh"; then bad "${name}_${fmt}_parses" "bash -n failed"; return; fi
  order=tp-dp-pp
  grep -q -- '^  --use-tp-pp-dp-mapping$' "$dir/launch.sh" && order=tp-pp-dp
  out=$(
    cd "$dir" && export PATH="$STANDIN:$PATH" STANDIN_OUT="$dir/out"
    if [ "$fmt" = slurm ]; then
      # the allocation in Slurm's order (sorted), not the plan's: the script maps by name
      STANDIN_NODELIST=$(sed -n 's/^#SBATCH --nodelist=//p' launch.sh | tr ',' '\n' | sort | paste -sd, -) \
        sbatch launch.sh 2>&1
    elif grep -q '^deepspeed --hostfile' launch.sh; then
      bash launch.sh 2>&1
    else
      n=$(sed -n 's/.*NODE_RANK (0\.\.\([0-9]*\)).*/\1/p' launch.sh | head -1)
      for ((i = 0; i <= n; i++)); do
        host=$(sed -n "s/^ *$i) host='\([^']*\)'.*/\1/p" launch.sh)
        STANDIN_HOST=$host bash launch.sh "$i" 2>&1 || echo "node rank $i: exit $?"
      done
    fi); rc=$?
  want=$(expected "$plan" "$order" "$@")
  got=$(recorded "$dir/out")
  D=$(wc -l <<<"$want")
  if [ "$rc" -ne 0 ] || grep -q "exit [1-9]\|note: node rank" <<<"$out"; then
    bad "${name}_${fmt}_runs" "rc $rc" "$(tail -5 <<<"$out")"
  elif [ -z "$want" ] || [ "$want" != "$got" ]; then
    bad "${name}_${fmt}_places_every_rank ($order)" "want: $(tr '\n' ';' <<<"$want")" "got:  $(tr '\n' ';' <<<"$got")"
  elif grep -L "^world_size=$D$" "$dir"/out/rank.* | xargs -r grep -L '^via=torchrun$' | grep -q .; then
    bad "${name}_${fmt}_world_size" "a process without WORLD_SIZE=$D"
  elif ! tr '\0' '\n' < "$dir/out/args.0" | grep -qx -- --train-iters; then
    bad "${name}_${fmt}_user_arguments" "$(tr '\0' ' ' < "$dir/out/args.0")"
  else
    ok "${name}_${fmt}_places_every_rank ($D ranks, $order$(grep -q '^pids=()' "$dir/launch.sh" && echo ', ranks given'))"
  fi
}

# --- homogeneous: 2 nodes of 4 equal GPUs, a small Llama
cat > $tmp/homo.json <<'JSON'
{ "version": 1, "name": "homo-2x4",
  "device_types": { "A100": { "mem_gib": 40, "tflops": 312, "efficiency": 0.4 } },
  "nodes": [ { "name": "n0", "type": "A100", "gpus": 4, "intra_gbps": 2400 },
             { "name": "n1", "type": "A100", "gpus": 4, "intra_gbps": 2400 } ],
  "inter_gbps": 100 }
JSON
cat > $tmp/small.json <<'JSON'
{ "model_type": "llama", "hidden_act": "silu", "hidden_size": 1024, "intermediate_size": 2816,
  "num_attention_heads": 8, "num_key_value_heads": 2, "num_hidden_layers": 8,
  "max_position_embeddings": 512, "vocab_size": 32000, "tie_word_embeddings": false }
JSON
"$H" plan --model $tmp/small.json --cluster $tmp/homo.json --gbs 64 -o $tmp/homo.plan.json >/dev/null 2>&1 ||
  bad plan_homogeneous "plan failed"
for f in "${FORMATS[@]}"; do run_launch homogeneous $f $tmp/homo.plan.json; done

# --- the headline: Llama-3-8B on AMP's mixed cluster (12 V100 + 4 T4). At gbs 8 the plan
# is realisable by a node order; at gbs 64 it is made unrealisable below.
"$H" import-hf examples/hf/Meta-Llama-3-8B/config.json -o $tmp/llama3.json >/dev/null 2>&1
for g in 8 64; do
  "$H" plan --model $tmp/llama3.json --cluster models/amp-hetero.json --gbs $g -o $tmp/l3-$g.plan.json >/dev/null 2>&1 ||
    bad "plan_llama3_gbs$g" "plan failed"
done
# The planner's gbs-64 plan changes with the cost model; the unrealisable case is written
# here, whatever it plans: pp 8, tp 2 over Llama-3-8B's 35 layers with stage 0 on the T4
# node's first pair (12, 13), stage 1 on GPUs 2, 3 and stage 6 on GPUs 0, 1, so node p3-0
# holds ranks 2-3 and 12-13 under either Megatron order.
cat > $tmp/l3-64.plan.json <<'JSON'
{ "pp": 8, "tp": 2, "dp": 1, "mbs": 1, "stages": [
  { "layers": [0, 4], "devices": [[12, 13]] }, { "layers": [5, 8], "devices": [[2, 3]] },
  { "layers": [9, 12], "devices": [[4, 5]] }, { "layers": [13, 16], "devices": [[6, 7]] },
  { "layers": [17, 20], "devices": [[8, 9]] }, { "layers": [21, 24], "devices": [[10, 11]] },
  { "layers": [25, 29], "devices": [[0, 1]] }, { "layers": [30, 34], "devices": [[14, 15]] } ],
  "inputs": { "gbs": 64 } }
JSON
sed -i "s|\"inputs\": { \"gbs\": 64 }|\"inputs\": { \"model\": \"$tmp/llama3.json\", \"cluster\": \"$PWD/models/amp-hetero.json\", \"gbs\": 64 }|" $tmp/l3-64.plan.json
if grep -qF "node 'p3-0' holds ranks 2 and 12" <("$H" export --format megatron $tmp/l3-64.plan.json 2>&1); then
  ok llama3_gbs64_is_not_realisable_by_a_node_order
else bad llama3_gbs64_is_not_realisable_by_a_node_order "the plan changed: pick another unrealisable case"; fi
for f in "${FORMATS[@]}"; do run_launch llama3_mixed $f $tmp/l3-8.plan.json; done
for f in "${FORMATS[@]}"; do run_launch llama3_unrealisable $f $tmp/l3-64.plan.json; done

# --- hand-made placements on the tiny cluster (nodes a, b of 2 GPUs)
tiny_plan() {   # tiny_plan FILE STAGE0 STAGE1 [TP]
  local tp=${4:-1} dp=2
  [ "$tp" = 2 ] && dp=1
  printf '{ "version": 1, "pp": 2, "tp": %d, "dp": %d, "mbs": 1, "schedule": "1f1b", "stages": [\n  { "layers": [0, 1], "devices": %s },\n  { "layers": [2, 3], "devices": %s } ] }\n' \
    "$tp" "$dp" "$2" "$3" > "$1"
}
tiny_plan $tmp/mirror.json "[[2], [3]]" "[[0], [1]]"
tiny_plan $tmp/across.json "[[0], [2]]" "[[1], [3]]"       # Megatron: tp-pp-dp; DeepSpeed: none
tiny_plan $tmp/none.json "[[0], [3]]" "[[2], [1]]"         # no order realises it
tiny_plan $tmp/tpswap.json "[[1, 0]]" "[[2, 3]]" 2         # TP ranks against GPU order
tiny=(--model $T/model.json --cluster $T/cluster.json --gbs 8)
for p in mirror across none tpswap; do
  for f in "${FORMATS[@]}"; do run_launch tiny_$p $f $tmp/$p.json "${tiny[@]}"; done
done

# --- idle devices (cost model 1.2, job idle_devices): the world is pp * dp * tp; a node
# with no device in use is not launched, a partly used one runs only its used GPUs (and
# sees no other); the header names the idle ones. Node b idle as a whole; then GPU 0 of
# node a and GPU 1 of node b idle.
tiny_plan $tmp/idle_node.json "[[0]]" "[[1]]"
tiny_plan $tmp/idle_part.json "[[1]]" "[[2]]"
sed -i 's/"dp": 2/"dp": 1/' $tmp/idle_node.json $tmp/idle_part.json
idle_tiny=("${tiny[@]}" --idle-devices)
# idle_check NAME FORMAT WANT-IDLE-LINE: every process sees only GPUs of the plan's ranks
# on its host, and the header names the idle GPUs
idle_check() {
  local dir=$tmp/$1.$2 f want
  want=$(expected "$tmp/$1.json" tp-dp-pp "${idle_tiny[@]}" | awk '{ print $2 ":" $3 }' | sort -u)
  for f in "$dir"/out/rank.*; do
    [ -e "$f" ] || { bad "${1}_${2}_idle_gpus_unseen" "no process ran"; return; }
    for g in $(sed -n 's/^visible=//p' "$f" | tr ',' ' '); do
      grep -qx "$(sed -n 's/^host=//p' "$f"):$g" <<<"$want" ||
        { bad "${1}_${2}_idle_gpus_unseen" "$(basename "$f") sees GPU $g of $(sed -n 's/^host=//p' "$f")"; return; }
    done
  done
  if grep -qF -- "$3" "$dir/launch.sh"; then ok "${1}_${2}_idle_gpus_unseen_and_named"
  else bad "${1}_${2}_idle_named" "$(grep '^# idle' "$dir/launch.sh")"; fi
}
for f in "${FORMATS[@]}"; do
  run_launch idle_node $f $tmp/idle_node.json "${idle_tiny[@]}"
  idle_check idle_node $f "# idle: 2 of the 4 GPUs (the plan leaves them unused; no process is started on them): node 'b' GPUs 0-1 (2 x 'slow', the whole node: not launched)"
  run_launch idle_part $f $tmp/idle_part.json "${idle_tiny[@]}"
  idle_check idle_part $f "node 'a' GPU 0 (1 x 'fast'); node 'b' GPU 1 (1 x 'slow')"
done
if grep -qx '#SBATCH --nodes=1' $tmp/idle_node.slurm/launch.sh && grep -qx '#SBATCH --ntasks=2' $tmp/idle_node.slurm/launch.sh &&
   grep -qx '#SBATCH --nodelist=a' $tmp/idle_node.slurm/launch.sh && grep -qF "printf '%s slots=%d\n' 'a' 2" $tmp/idle_node.deepspeed/launch.sh &&
   ! grep -qF "'b' 2" $tmp/idle_node.deepspeed/launch.sh && grep -qF -- "--include 'a:0,1' " $tmp/idle_node.deepspeed/launch.sh &&
   grep -qF -- "--nnodes 1 " $tmp/idle_node.torchrun/launch.sh; then ok idle_node_is_not_allocated_nor_in_the_hostfile
else bad idle_node_is_not_allocated_nor_in_the_hostfile "$(grep -h '^#SBATCH\|slots=\|--include\|--nnodes' $tmp/idle_node.*/launch.sh)"; fi
if grep -qF -- "--include 'a:1@b:0' " $tmp/idle_part.deepspeed/launch.sh && grep -qx '#SBATCH --ntasks=2' $tmp/idle_part.slurm/launch.sh; then
  ok idle_part_includes_only_the_used_gpus
else bad idle_part_includes_only_the_used_gpus "$(grep -h '^#SBATCH --ntasks\|--include' $tmp/idle_part.*/launch.sh)"; fi

# --- the Megatron script stops, naming what is missing, until the needed arguments are given
d=$tmp/needs; mkdir -p $d/out
"$H" export --format megatron $tmp/l3-64.plan.json -o $d/launch.sh 2>/dev/null
out=$(cd $d && PATH="$STANDIN:$PATH" STANDIN_OUT=$d/out STANDIN_HOST=g4-0 bash launch.sh 0 --lr 1e-4 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -qF "Megatron-LM needs arguments that were not given" <<<"$out" &&
   grep -qF "data: one of --data-path --mock-data" <<<"$out" && grep -qF "iterations: one of --train-iters --train-samples" <<<"$out" &&
   ! grep -qF "learning-rate" <<<"$out" && [ -z "$(ls $d/out)" ]; then ok megatron_script_names_missing_arguments
else bad megatron_script_names_missing_arguments "rc $rc: $out"; fi
for w in "#   data           --data-path PREFIX" "#   tokenizer      --tokenizer-type TYPE" "#   learning-rate  --lr LR" "#   iterations     --train-iters N"; do
  grep -qF -- "$w" $d/launch.sh || bad "megatron_header_names_needs ($w)" "missing"
done
ok megatron_header_names_needed_arguments
# given at run time after the node rank, and from an arguments file
printf '# data and tokenizer\n--mock-data --tokenizer-type NullTokenizer\n--vocab-size 128256 "--lr" 1e-4\n' > $d/args.txt
"$H" export --format megatron $tmp/l3-64.plan.json --args-file $d/args.txt -o $d/launch2.sh 2>/dev/null
out=$(cd $d && PATH="$STANDIN:$PATH" STANDIN_OUT=$d/out STANDIN_HOST=g4-0 bash launch2.sh 0 --train-iters 5 2>&1); rc=$?
if [ $rc -eq 0 ] && tr '\0' '\n' < $d/out/args.0 | tail -9 | paste -sd' ' - | grep -qxF -- "--mock-data --tokenizer-type NullTokenizer --vocab-size 128256 --lr 1e-4 --train-iters 5"; then
  ok megatron_arguments_from_file_and_run
else bad megatron_arguments_from_file_and_run "rc $rc: $out" "$(tr '\0' ' ' < $d/out/args.0 2>/dev/null)"; fi
printf -- "--data-path 'unclosed\n" > $d/bad.txt
out=$("$H" export --format megatron $tmp/l3-64.plan.json --args-file $d/bad.txt 2>&1); rc=$?
if [ $rc -eq 3 ] && grep -qF "a single quote is not closed" <<<"$out"; then ok args_file_unclosed_quote_refused
else bad args_file_unclosed_quote_refused "rc $rc: $out"; fi

# --- Gemma's architecture: what Megatron-LM cannot express, on stderr and in the header
"$H" import-hf examples/hf/gemma-2-2b/config.json -o $tmp/gemma2.json >/dev/null 2>&1
"$H" plan --model $tmp/gemma2.json --cluster $tmp/homo.json --gbs 16 -o $tmp/gemma2.plan.json >/dev/null 2>&1
out=$("$H" export --format megatron $tmp/gemma2.plan.json -o $tmp/gemma2.sh 2>&1)
if grep -qF "hetplan: warning: Megatron-LM cannot express the model as planned: GeGLU" <<<"$out" &&
   grep -qF "soft-capping of the attention scores" <<<"$out" && grep -qF "  --quick-geglu" $tmp/gemma2.sh &&
   ! grep -qF "  --swiglu" $tmp/gemma2.sh && grep -qF "#  - RMSNorms after the attention and after the MLP" $tmp/gemma2.sh &&
   grep -qF "  --kv-channels 256" $tmp/gemma2.sh; then ok export_gemma2_says_what_megatron_cannot_express
else bad export_gemma2_says_what_megatron_cannot_express "$out"; fi
"$H" import-hf examples/hf/Qwen3-8B/config.json -o $tmp/qwen3.json >/dev/null 2>&1
"$H" plan --model $tmp/qwen3.json --cluster models/amp-hetero.json --gbs 16 -o $tmp/qwen3.plan.json >/dev/null 2>&1
out=$("$H" export --format megatron $tmp/qwen3.plan.json -o $tmp/qwen3.sh 2>&1)
if grep -qF "  --qk-layernorm" $tmp/qwen3.sh && ! grep -qF "  --kv-channels" $tmp/qwen3.sh && ! grep -q warning <<<"$out"; then
  ok export_qwen3_qk_layernorm
else bad export_qwen3_qk_layernorm "$out"; fi

# --- injection: names that would run `touch pwned-N` if any reached a script raw
inject=$tmp/inject; mkdir -p $inject
P=("x'; touch pwned-1; '" '$(touch pwned-2)' '`touch pwned-3`' 'a"; touch pwned-4; "b' \
   'EOF' "'EOF'" '# ; touch pwned-5' "\\'; touch pwned-6 #" 'a b;touch pwned-7' '$HOME ${PATH} \n \\ "')
js() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }   # a JSON string
cat > $inject/cluster.json <<JSON
{ "version": 1, "name": $(js "${P[0]}"),
  "device_types": { $(js "${P[1]}"): { "mem_gib": 40, "tflops": 312, "efficiency": 0.4 } },
  "nodes": [ { "name": $(js "${P[2]}"), "type": $(js "${P[1]}"), "gpus": 2, "intra_gbps": 2400 },
             { "name": $(js "${P[3]}"), "type": $(js "${P[1]}"), "gpus": 2, "intra_gbps": 2400 },
             { "name": $(js "${P[4]}"), "type": $(js "${P[1]}"), "gpus": 2, "intra_gbps": 2400 },
             { "name": $(js "${P[6]}"), "type": $(js "${P[1]}"), "gpus": 2, "intra_gbps": 2400 } ],
  "inter_gbps": 100 }
JSON
# the model's name (from _name_or_path's last part) with line breaks, if the loader takes them
name='"evil\ntouch pwned-10\n# EOF"'
cat > $inject/config.json <<JSON
{ "_name_or_path": $name, "model_type": "llama", "hidden_act": "silu", "hidden_size": 512,
  "intermediate_size": 1408, "num_attention_heads": 8, "num_hidden_layers": 6,
  "max_position_embeddings": 256, "vocab_size": 1000, "tie_word_embeddings": false }
JSON
if ! "$H" import-hf $inject/config.json >/dev/null 2>&1; then    # refused: a plain hostile name
  sed -i "s|\"_name_or_path\": .*, \"model_type\"|\"_name_or_path\": $(js "${P[7]}" | sed 's/[|&\\]/\\&/g'), \"model_type\"|" $inject/config.json
fi
planfile="$inject/plan '\$(touch pwned-8)\`touch pwned-9\`.json"
if ! "$H" plan --model $inject/config.json --cluster $inject/cluster.json --gbs 16 -o "$planfile" >$inject/plan.out 2>&1; then
  bad injection_inputs_plan "$(tail -3 $inject/plan.out)"
fi
# the same model placed so that no node order realises it (under either Megatron order):
# node 0 holds stage 0 of replica 0 and stage 1 of replica 1
cat > $inject/interleaved.json <<'JSON'
{ "version": 1, "pp": 2, "tp": 1, "dp": 4, "mbs": 1, "schedule": "1f1b", "stages": [
  { "layers": [0, 4], "devices": [[0], [2], [4], [6]] },
  { "layers": [5, 8], "devices": [[3], [1], [7], [5]] } ] }
JSON
uargs=("${NEEDED[@]}" "${P[@]}")
printf '%s\n' "'${P[8]}'" "\"a\\\"b\"" > $inject/args.txt      # from an arguments file: two words
for plan in "$planfile" $inject/interleaved.json; do
  for f in "${FORMATS[@]}"; do
    d=$inject/$f.$(basename "$plan" | tr -cd 'a-z'); mkdir -p "$d/out"
    if ! (cd "$d" && "$H" export --format $f "$plan" --model $inject/config.json --cluster $inject/cluster.json \
            --gbs 16 --args-file $inject/args.txt -o launch.sh -- "${uargs[@]}" >err 2>&1); then
      bad "injection_${f}_exports" "$(tail -3 "$d/err")"; continue
    fi
    bash -n "$d/launch.sh" || { bad "injection_${f}_parses" "bash -n"; continue; }
    grep -q '^pids=()' "$d/launch.sh" && form="ranks given" || form="node order"
    [ $f = slurm ] && form="task map"
    grep -q '^deepspeed --hostfile' "$d/launch.sh" && form="deepspeed launcher"
    out=$(
      cd "$d" && export PATH="$STANDIN:$PATH" STANDIN_OUT="$d/out" STANDIN_HOST=somewhere
      if [ $f = slurm ]; then STANDIN_NODELIST=h0,h1,h2,h3 sbatch launch.sh 2>&1
      elif [ "$form" = "deepspeed launcher" ]; then bash launch.sh 2>&1
      else
        for ((i = 0; i < 4; i++)); do bash launch.sh $i 2>&1 || echo "node rank $i: exit $?"; done
      fi)
    pw=$(find $tmp / -maxdepth 1 -name 'pwned*' 2>/dev/null; find "$inject" "$root" -name 'pwned*' 2>/dev/null)
    nrec=$(ls "$d/out" | grep -c '^rank\.')
    intact=1
    for a in "${uargs[@]}" "${P[8]}" 'a"b'; do
      tr '\0' '\n' < "$d/out/args.0" 2>/dev/null | grep -qxF -- "$a" || { intact=0; echo "  lost: $a"; }
    done
    if [ -n "$pw" ]; then bad "injection_${f}_runs_nothing" "created: $pw"
    elif [ "$nrec" -ne 8 ] || grep -q "exit [1-9]" <<<"$out"; then bad "injection_${f}_launches" "$nrec ranks" "$(tail -4 <<<"$out")"
    elif [ $intact = 0 ]; then bad "injection_${f}_arguments_intact" "$(tr '\0' '|' < "$d/out/args.0")"
    else ok "injection_${f}_runs_nothing_and_names_arrive_intact ($form)"; fi
  done
done

# --- cost model 1.2 in the exports: the plan's modes and the job's fields (docs/export.md)
TINY=(--model $T/model.json --cluster $T/cluster.json --gbs 8)
x12=$tmp/x12; mkdir -p $x12
for m in dp zero1 zero2 zdp; do
  printf '{ "version": 1, "pp": 1, "tp": 1, "dp": 4, "mbs": 1, "stages": [ { "layers": [0, 3], "devices": [[0], [1], [2], [3]] } ], "sharding": ["%s", "%s", "%s", "%s"] }\n' $m $m $m $m > $x12/$m.json
done
out=$("$H" export --format megatron $x12/zero1.json "${TINY[@]}" 2>&1)
if grep -qx -- '  --use-distributed-optimizer' <<<"$out" && ! grep -q -- '--overlap-' <<<"$out"; then ok export_zero1_plan_is_the_distributed_optimizer
else bad export_zero1_plan_is_the_distributed_optimizer "$(grep -- '^  --' <<<"$out" | tr '\n' ' ')"; fi
out=$("$H" export --format megatron $x12/dp.json "${TINY[@]}" 2>&1)
if ! grep -qx -- '  --use-distributed-optimizer' <<<"$out"; then ok export_dp_plan_has_no_distributed_optimizer
else bad export_dp_plan_has_no_distributed_optimizer "$out"; fi
out=$("$H" export --format megatron $x12/zero1.json "${TINY[@]}" --sequence-parallel --grad-sync overlap 2>&1)
if grep -qx -- '  --sequence-parallel' <<<"$out" && grep -qx -- '  --overlap-grad-reduce' <<<"$out" &&
   grep -qx -- '  --overlap-param-gather' <<<"$out"; then ok export_job_sequence_parallel_and_overlap
else bad export_job_sequence_parallel_and_overlap "$(grep -- '^  --' <<<"$out" | tr '\n' ' ')"; fi
stage=0
for m in dp zero1 zero2 zdp; do
  out=$("$H" export --format deepspeed --json $x12/$m.json "${TINY[@]}" --grad-sync overlap 2>&1)
  if grep -qF "\"zero_optimization\": { \"stage\": $stage, \"overlap_comm\": true }" <<<"$out"; then ok "export_deepspeed_${m}_is_stage_$stage"
  else bad "export_deepspeed_${m}_is_stage_$stage" "$(grep zero_optimization <<<"$out")"; fi
  stage=$((stage + 1))
done
# the tiny plan mixes dp and zdp per layer: no framework launches it; its nearest
# launchable form (one mode for every layer, the best of the framework's) with its time
sed 's/"zdp"/"dp"/' $T/plan.json > $x12/all-dp.json
want=$("$H" evaluate $x12/all-dp.json "${TINY[@]}" 2>/dev/null | sed -n 's/^iteration time  \([0-9.]*\) s.*/\1/p')
for f in megatron deepspeed; do
  out=$("$H" export --format $f $T/plan.json "${TINY[@]}" 2>&1)
  if grep -qF "sharding modes mixed per layer (dp on 0, 2-3; zdp on 1): no framework launches this" <<<"$out" &&
     grep -qF "(evaluator: dp $want s" <<<"$out"; then ok "export_${f}_mixed_plan_names_its_nearest_launchable_form"
  else bad "export_${f}_mixed_plan_names_its_nearest_launchable_form" "want dp $want s" "$(grep -F 'mixed' <<<"$out")"; fi
done

echo "launch: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
