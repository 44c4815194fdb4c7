#!/bin/bash
# clusters_v3.sh FILE NAME INTER_GBPS RACK_GBPS GROUP... -- writes a benchmark cluster of
# several GPU kinds (issue 21's certificate rows; make bench-mip). GROUP is
# TYPE:NODES:GPUS[:RACK]: NODES nodes of GPUS GPUs of TYPE (H100, A100, V100, L4, T4),
# named rack-type-NN or type-NN. INTER_GBPS is the default between nodes; RACK_GBPS, unless
# "-", is a link between every two nodes of one rack (the cluster's `links`). Each type's
# figures are written once, below, from the data sheets. Sourced by bench_mip.sh, or run
# on its own, e.g.
#   bench/clusters_v3.sh c.json racks 25 200 A100:4:8:rackA V100:4:8:rackB

# kinds_type TYPE -- sets the globals kt_json (the device type's object), kt_intra (Gbit/s
# inside a node) and kt_cite (the data sheet's figures, for the cluster's source).
# Intra-node figures are both directions summed, as the data sheets quote them and as
# mixed_cluster.sh's A100 4800 and V100 2400 already are: comparable rows.
kinds_type() {
  local mem tflops hbm sheet
  case "$1" in
    H100) mem=80; tflops=989; hbm=3350; kt_intra=7200
          sheet='H100 SXM5 80 GB: 989 TFLOPS bf16 dense, HBM3 3350 GB/s, NVLink 4 900 GB/s (NVIDIA H100 datasheet)' ;;
    A100) mem=40; tflops=312; hbm=1555; kt_intra=4800
          sheet='A100 SXM4 40 GB: 312 TFLOPS bf16 dense, HBM2 1555 GB/s (2039 GB/s is the 80 GB card), NVLink 3 600 GB/s (NVIDIA A100 datasheet)' ;;
    V100) mem=32; tflops=125; hbm=900; kt_intra=2400
          sheet='V100 SXM2 32 GB: 125 TFLOPS fp16 tensor, HBM2 900 GB/s, NVLink 2 300 GB/s (NVIDIA Tesla V100 datasheet)' ;;
    L4)   mem=24; tflops=121; hbm=300; kt_intra=512
          sheet='L4 24 GB: 121 TFLOPS bf16 dense (242 with sparsity), GDDR6 300 GB/s, no NVLink: PCIe Gen4 x16 64 GB/s (NVIDIA L4 datasheet)' ;;
    T4)   mem=16; tflops=65; hbm=320; kt_intra=256
          sheet='T4 16 GB: 65 TFLOPS fp16 tensor, GDDR6 320 GB/s, no NVLink: PCIe Gen3 x16 32 GB/s (NVIDIA T4 datasheet)' ;;
    *) echo "clusters_v3.sh: unknown GPU type '$1' (H100, A100, V100, L4 or T4)" >&2; return 2 ;;
  esac
  kt_cite=$sheet
  kt_json=$(printf '{ "mem_gib": %s, "reserved_gib": 1, "tflops": %s, "efficiency": 0.35, "hbm_gbs": %s, "source": "%s" }' \
    "$mem" "$tflops" "$hbm" "$sheet")
}

kinds_cluster() {
  if [ $# -lt 5 ]; then
    echo "usage: clusters_v3.sh FILE NAME INTER_GBPS RACK_GBPS TYPE:NODES:GPUS[:RACK]..." >&2; return 2
  fi
  local file=$1 name=$2 inter=$3 rack_gbps=$4
  shift 4
  local group type count gpus rack i node types=() cites=() nodes=() node_rack=() seen
  for group in "$@"; do
    IFS=: read -r type count gpus rack <<<"$group"
    case "$count$gpus" in ''|*[!0-9]*)
      echo "clusters_v3.sh: group '$group': NODES and GPUS must be whole numbers (TYPE:NODES:GPUS[:RACK])" >&2; return 2 ;;
    esac
    kinds_type "$type" || return 2
    seen=0
    for i in "${types[@]}"; do [ "$i" = "$type" ] && seen=1; done
    if [ $seen -eq 0 ]; then types+=("$type"); cites+=("$kt_cite"); fi
    local lower=${type,,}
    for ((i = 0; i < count; i++)); do
      node=$(printf '%s-%02d' "$lower" "$i")
      [ -n "$rack" ] && node="$rack-$node"
      nodes+=("$(printf '{ "name": "%s", "type": "%s", "gpus": %s, "intra_gbps": %s, "intra_lat_us": 5 }' \
        "$node" "$type" "$gpus" "$kt_intra")")
      node_rack+=("$node:$rack")
    done
  done
  local source="Benchmark cluster of bench/clusters_v3.sh ($*), $inter Gbit/s between nodes"
  [ "$rack_gbps" != - ] && source="$source, $rack_gbps Gbit/s between nodes of one rack"
  source="$source. Data-sheet peaks: $(IFS=';'; echo "${cites[*]}" | sed 's/;/; /g'). Intra-node figures sum both directions; efficiency 0.35 and 1 GiB reserved are hetplan's assumptions, as in mixed_cluster.sh."
  {
    printf '{ "version": 1, "name": "%s",\n  "source": "%s",\n  "device_types": {\n' "$name" "$source"
    for ((i = 0; i < ${#types[@]}; i++)); do
      kinds_type "${types[i]}"
      printf '    "%s": %s%s\n' "${types[i]}" "$kt_json" "$([ $i -lt $((${#types[@]} - 1)) ] && echo ,)"
    done
    printf '  },\n  "nodes": [\n'
    for ((i = 0; i < ${#nodes[@]}; i++)); do
      printf '    %s%s\n' "${nodes[i]}" "$([ $i -lt $((${#nodes[@]} - 1)) ] && echo ,)"
    done
    printf '  ],\n'
    if [ "$rack_gbps" != - ]; then
      # every pair of nodes in one rack; pairs across racks keep inter_gbps
      local links=() j a b
      for ((i = 0; i < ${#node_rack[@]}; i++)); do
        for ((j = i + 1; j < ${#node_rack[@]}; j++)); do
          a=${node_rack[i]}; b=${node_rack[j]}
          [ -n "${a#*:}" ] && [ "${a#*:}" = "${b#*:}" ] &&
            links+=("$(printf '{ "a": "%s", "b": "%s", "gbps": %s, "lat_us": 5 }' "${a%%:*}" "${b%%:*}" "$rack_gbps")")
        done
      done
      printf '  "links": [\n'
      for ((i = 0; i < ${#links[@]}; i++)); do
        printf '    %s%s\n' "${links[i]}" "$([ $i -lt $((${#links[@]} - 1)) ] && echo ,)"
      done
      printf '  ],\n'
    fi
    printf '  "inter_gbps": %s, "inter_lat_us": 5 }\n' "$inter"
  } > "$file"
}
# run on its own; sourced, the script ends with status 0
if [ "${BASH_SOURCE[0]}" = "$0" ]; then kinds_cluster "$@"; fi
