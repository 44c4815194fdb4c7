#!/bin/bash
# mixed_cluster.sh NODES FILE -- writes the benchmarks' mixed cluster: NODES nodes of 8
# GPUs alternating A100 (40 GiB, 4800 Gbit/s NVLink) and V100 (32 GiB, 2400 Gbit/s), 100
# Gbit/s between nodes. Sourced by the bench scripts, or run on its own.
mixed_cluster() {
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
[ "${BASH_SOURCE[0]}" = "$0" ] && mixed_cluster "$@"
