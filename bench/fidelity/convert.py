#!/usr/bin/env python3
"""Converters: the measured runs of /work/shared/data/measured (or --data) into hetplan inputs.

Every row becomes a plan file whose "inputs" name its model, cluster, profile, gbs and
job fields, so `hetplan evaluate PLAN --json` scores it alone. What each data set needs
and what is approximated is in README.md beside this file; the constants below carry the
same reasons in short.

    python3 bench/fidelity/convert.py [--data DIR] [--out DIR] [--hetplan BIN]

writes OUT/<set>/*.json (default build/fidelity/inputs) and prints one line per set.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = os.path.join(HERE, "data")
DEFAULT_MEASURED = "/work/shared/data/measured"

# ---------------------------------------------------------------- hardware figures
# A100-SXM4-80GB as the project's bundled A100 clusters give it (models/pipette-*.json):
# bf16 dense peak, efficiency, HBM2e bandwidth and the shape model's constants, read from
# that file so the bench scores what hetplan ships. No reserved_gib: the job names its
# framework (Megatron-DeepSpeed: "deepspeed"), whose default reserve applies (CUDA context,
# NCCL buffers, DeepSpeed's reduce bucket; docs/memory-margin.md).
_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def _bundled_type(cluster_file, name):
    t = dict(json.load(open(os.path.join(_ROOT, "models", cluster_file)))["device_types"][name])
    t.pop("reserved_gib", None)
    t["source"] = f"models/{cluster_file}'s {name} (reserve: the job's framework default): " + t.get("source", "")
    return t


A100 = _bundled_type("pipette-high-16x8-a100.json", "A100")
# Jean Zay gpu_p5 (the data set's hardware line): NVLink with 4 links per GPU pair,
# NVLink3 25 GB/s a link and direction = 100 GB/s = 800 Gbit/s; 4 x 100 Gbit/s Omni-Path a node.
JEAN_ZAY = {"intra_gbps": 800, "intra_lat_us": 3, "inter_gbps": 400, "inter_lat_us": 5}
BLOOM_VOCAB = 250880
# How BLOOM's blocks are cut into stages: "even" (the rows give no split), or "weighted"
# (about Megatron-DeepSpeed's partition, bloom_blocks_per_stage; score.py --bloom-split).
BLOOM_SPLIT = "even"
# GH200 (Clariden): the runs are fp32 with TF32 matmuls (NGC containers enable TF32; Sailor's
# profiled output layer runs at 151 TFLOPS, more than fp32's 67): TF32 dense peak 494 TFLOPS,
# HBM3 4000 GB/s, 96 GB (97,871 MiB on nvidia-smi = 95.6 GiB). The efficiency is measured:
# see profile_efficiency().
GH200 = {"mem_gib": 95.6, "reserved_gib": 0.6, "tflops": 494, "hbm_gbs": 4000,
         "shape": dict(json.load(open(os.path.join(_ROOT, "models", "h100-1gpu.cluster.json")))
                       ["device_types"]["H100"]["shape"]),
         "source": "GH200 96 GB: TF32 dense peak 494 TFLOPS, HBM3 4000 GB/s; reserved: the CUDA context "
                   "only; shape: the bundled H100's constants (the GH200's GPU is an H100, 132 SMs)"}
# The MIT servers (Sailor's constants.py gives 24, 11, 24 GB: the "RTX-2080" is a 2080 Ti).
# fp32 peaks (Turing has no TF32; the 3090's TF32 dense equals its fp32 rate), memory bandwidth.
MIT_TYPES = {
    "RTX-3090": {"mem_gib": 24, "reserved_gib": 0.5, "tflops": 35.6, "hbm_gbs": 936,
                 "source": "RTX 3090: 24 GB, fp32 35.6 TFLOPS, 936 GB/s"},
    "RTX-2080": {"mem_gib": 11, "reserved_gib": 0.5, "tflops": 13.45, "hbm_gbs": 616,
                 "source": "RTX 2080 Ti (Sailor: 11 GB): fp32 13.45 TFLOPS, 616 GB/s"},
    "Titan-RTX": {"mem_gib": 24, "reserved_gib": 0.5, "tflops": 16.3, "hbm_gbs": 672,
                  "source": "Titan RTX: 24 GB, fp32 16.3 TFLOPS, 672 GB/s"},
}
NET_LAT_US = {"intra": 3, "inter": 5}     # Sailor's fits fold latency into the curve

# Megatron-DeepSpeed's Adam under DeepSpeed's ZeRO-1 (before 02-28): bf16 (fp16) weights and
# gradients, fp32 master and moments (16 bytes). From 02-28 BLOOM ran DeepSpeed's BF16_Optimizer
# (ZeRO stage 0, its own ZeRO-1), which keeps three gradients a parameter: the bf16 gradient
# backward writes (2 bytes; the pipeline engine clears it only at the start of the next
# backward: update_hp_grads(clear_lp_grads=False), deepspeed/runtime/pipe/engine.py), and the
# fp32 accumulation buffer, whole on every rank (4 bytes: fp32_groups_gradients_flat =
# zeros_like(the flat bf16 weights), deepspeed/runtime/bf16_optimizer.py, both at
# microsoft/DeepSpeed 56c522386, "bf16+pipeline parallelism (#1801)", the branch BLOOM ran).
# The chronicle says as much: "The additional memory usage is 4bytes x params and it's not
# sharded across gpus" (bigscience chronicles-prequel.md, "Rebalancing layers"). So 6-byte
# gradients, 20 bytes. The reduction sends the fp32 buffer (an all-reduce of 4 bytes, which
# the zero1 mode's reduce-scatter of 6 approaches from below). fp32 training: 4 + 4 + 8.
BYTES_BF16 = {"param_bytes": 2, "grad_bytes": 2, "state_bytes": 16}
BYTES_BF16_OPTIMIZER = {"param_bytes": 2, "grad_bytes": 6, "state_bytes": 20}
BYTES_FP32 = {"param_bytes": 4, "grad_bytes": 4, "state_bytes": 16}
# Sailor and Aceso run Megatron with the GPT-2 vocabulary, padded to 50304 (Sailor's
# llm_info.json: the embedding holds (50304 + 2048) x h parameters, for both models).
GPT2_VOCAB = 50304


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def megatron_devices(pp, dp, tp, s, base=0):
    """Megatron's rank order: tp fastest, then dp, then pp."""
    return [[base + (s * dp + r) * tp + j for j in range(tp)] for r in range(dp)]


def stages_from_blocks(blocks_per_stage, n_blocks, recompute):
    """hetplan layers: embed 0, blocks 1..N, final_norm N+1, head N+2; the first stage
    takes the embedding, the last the final norm and the head."""
    assert sum(blocks_per_stage) == n_blocks, (blocks_per_stage, n_blocks)
    stages, first = [], 0
    for s, nb in enumerate(blocks_per_stage):
        last = first + nb + (1 if s == 0 else 0) - 1
        if s == len(blocks_per_stage) - 1:
            last = n_blocks + 2
        stages.append({"layers": [first, last], "recompute": recompute})
        first = last + 1
    return stages


def weighted_split(weights, pp):
    """Contiguous parts of about equal weight: part k ends where the running weight is
    nearest to (k + 1) / pp of the total (every part keeps at least one layer)."""
    total, acc, cuts, i = sum(weights), 0.0, [], 0
    prefix = [0.0]
    for w in weights:
        prefix.append(prefix[-1] + w)
    for k in range(1, pp):
        goal = total * k / pp
        lo = (cuts[-1] if cuts else 0) + 1
        hi = len(weights) - (pp - k)
        cuts.append(min(range(lo, hi + 1), key=lambda j: abs(prefix[j] - goal)))
    bounds = [0] + cuts + [len(weights)]
    return [bounds[k + 1] - bounds[k] for k in range(pp)]


def bloom_blocks_per_stage(n_blocks, pp, hidden, date):
    """The blocks of each stage about as Megatron-DeepSpeed cut BLOOM's pipeline (the
    weights balanced, not its exact greedy partition, which the rows do not record): before 02-28
    --pp-partition-method 'parameters' (the embedding and the tied head weigh V h
    parameters each, about 1.4 blocks), from 02-28 'type:transformer|embedding' (each
    counts as one block; the data's notes: "new pp-partition-method from 02-28")."""
    w_embed = 1.0 if date >= "02-28" else BLOOM_VOCAB * hidden / (12 * hidden * hidden + 13 * hidden)
    parts = weighted_split([w_embed] + [1.0] * n_blocks + [w_embed], pp)
    blocks = list(parts)
    blocks[0] -= 1
    blocks[-1] -= 1
    if min(blocks) < 0 or (pp > 1 and min(blocks) < 1) or sum(blocks) != n_blocks:
        return even_split(n_blocks, pp)
    return blocks


def even_split(n_blocks, pp):
    """Megatron-DeepSpeed's uniform partition of the blocks; the extra ones go first."""
    base, extra = divmod(n_blocks, pp)
    return [base + (1 if s < extra else 0) for s in range(pp)]


class Expander:
    """Block FLOPs of a model, from `hetplan expand` (the generator's own count)."""

    def __init__(self, hetplan):
        self.hetplan = hetplan

    def layer(self, model_path, name):
        out = subprocess.run([self.hetplan, "expand", "--model", model_path], check=True,
                             capture_output=True, text=True).stdout
        doc = json.loads(out)
        layers = doc.get("layers") or []
        if not layers:
            def walk(nodes):
                for n in nodes:
                    if "children" in n:
                        yield from walk(n["children"])
                    else:
                        yield n
            layers = list(walk(doc["modules"]))
        for l in layers:
            if l["name"] == name:
                return l
        sys.exit(f"{model_path}: no layer {name}")


def profile_efficiency(profile, gpu, block_flops, peak_tflops):
    """hetplan-profile's convention: the block's rate at tp 1 and its largest measured
    mbs, over the peak."""
    pts = [e for e in profile["layer_times"] if e["kind"] == "block" and e["type"] == gpu and e["tp"] == 1]
    e = max(pts, key=lambda e: e["mbs"])
    return round(block_flops * e["mbs"] / e["seconds"] / (peak_tflops * 1e12), 4)


# ---------------------------------------------------------------- BLOOM-176B
def bloom_layers_from_label(row):
    """The 02-20 tables give the size label, not the layer count: the multiple of pp
    nearest to (size - V h) / (12 h^2 + 13 h)."""
    h, pp = row["hidden_size"], row["pp"]
    size = float(row["size_label"].rstrip("B")) * 1e9
    est = (size - BLOOM_VOCAB * h) / (12 * h * h + 13 * h)
    return max(pp, int(round(est / pp)) * pp), est


def convert_bloom(measured, out, hetplan):
    doc = json.load(open(os.path.join(measured, "bigscience_bloom176b_topology.json")))
    d = os.path.join(out, "bloom")
    os.makedirs(d, exist_ok=True)
    rows, seen, notes = [], {}, []
    for r in doc["rows"]:
        line = r["source_line"]
        rid = f"bloom-L{line}"
        fixes = []
        if r["measured_sec_per_iter"] is None and not r["oom"]:
            notes.append(f"{rid}: neither timed nor out of memory: skipped")
            continue
        dp, gbs = r["dp"], r["global_batch_size"]
        if r["dp"] * r["tp"] * r["pp"] != r["num_gpus"]:
            dp = r["num_gpus"] // (r["tp"] * r["pp"])
            fixes.append(f"dp {r['dp']} -> {dp} (fits {r['num_gpus']} GPUs)")
        if r["size_label"] == "18B" and gbs == 2048:
            gbs = 512
            fixes.append("gbs 2048 -> 512 (the text and the TFLOP/s fit 512)")
        layers = r["num_layers"]
        if layers is None:
            layers, est = bloom_layers_from_label(r)
            fixes.append(f"layers {layers} from size {r['size_label']} ({est:.1f} by 12 L h^2 + V h)")
        heads = r["num_heads"]
        if heads is None:
            heads = 64
            fixes.append("heads 64 (the text: all NHEADS=64)")
        key = (r["date"], r["hidden_size"], layers, heads, dp, r["tp"], r["pp"], r["micro_batch_size"],
               gbs, r["zero_stage"], r["measured_sec_per_iter"], r["measured_max_mem_GB"], r["oom"])
        if key in seen:
            notes.append(f"{rid}: the same run as {seen[key]} (quoted twice in the text): dropped")
            continue
        seen[key] = rid
        fp32_grads = r["date"] >= "02-28"
        mname = f"bloom-h{r['hidden_size']}-L{layers}-a{heads}{'-bf16opt' if fp32_grads else ''}"
        mpath = os.path.join(d, mname + ".json")
        if not os.path.exists(mpath):
            model = {"version": 1, "name": mname,
                     "source": "BLOOM-176B topology sweep shape (bigscience chronicles-prequel): gpt family "
                               "with ALiBi (no learned positions), tied embedding, eager attention (2022)",
                     "transformer": {"family": "gpt", "layers": layers, "hidden": r["hidden_size"],
                                     "heads": heads, "seq": 2048, "vocab": BLOOM_VOCAB, "positions": 0,
                                     "tied": True, "dtype": "bf16", "attention": "eager"}}
            model.update(BYTES_BF16_OPTIMIZER if fp32_grads else BYTES_BF16)
            write_json(mpath, model)
        nodes = r["num_gpus"] // 8
        cname = f"jeanzay-{nodes}x8.cluster.json"
        cpath = os.path.join(d, cname)
        if not os.path.exists(cpath):
            write_json(cpath, {"version": 1, "name": f"jeanzay-{nodes}x8",
                               "source": "Jean Zay gpu_p5 as the data set describes it: 8 A100-SXM4-80GB a node, "
                                         "NVLink (4 links a pair), 4 x 100 Gbit/s Omni-Path a node",
                               "device_types": {"A100": A100},
                               "nodes": [{"name": f"n{i}", "type": "A100", "gpus": 8,
                                          "intra_gbps": JEAN_ZAY["intra_gbps"], "intra_lat_us": JEAN_ZAY["intra_lat_us"]}
                                         for i in range(nodes)],
                               "inter_gbps": JEAN_ZAY["inter_gbps"], "inter_lat_us": JEAN_ZAY["inter_lat_us"]})
        pp, tp, mbs = r["pp"], r["tp"], r["micro_batch_size"]
        mode = "zero1" if r["zero_stage"] == 1 else "dp"
        # From 02-28 the runs cut the pipeline with --pp-partition-method
        # 'type:transformer|embedding' (the chronicle, "Rebalancing layers": each embedding
        # takes a block's slot, layers + 2 divide by pp); before, Megatron-DeepSpeed's default
        # 'type:transformer' spread the blocks alone (gpt_model.py at bigscience-workshop/
        # Megatron-DeepSpeed 00f5f889, the commit that made it configurable).
        blocks = bloom_blocks_per_stage(layers, pp, r["hidden_size"], r["date"]) \
            if BLOOM_SPLIT == "weighted" or r["date"] >= "02-28" else even_split(layers, pp)
        stages = stages_from_blocks(blocks, layers, True)
        for s, st in enumerate(stages):
            st["devices"] = megatron_devices(pp, dp, tp, s)
        gas_ok = gbs % (dp * mbs) == 0
        if not gas_ok:
            notes.append(f"{rid}: gbs {gbs} is no multiple of dp x mbs = {dp * mbs}: skipped")
            continue
        plan = {"version": 1, "pp": pp, "tp": tp, "dp": dp, "mbs": mbs, "schedule": "1f1b",
                "stages": stages, "sharding": [mode] * (layers + 3),
                "inputs": {"model": mname + ".json", "cluster": cname, "gbs": gbs, "schedule": "1f1b",
                           "sharding": [mode], "sequence_parallel": False, "framework": "deepspeed"}}
        ppath = os.path.join(d, rid + ".plan.json")
        write_json(ppath, plan)
        label = f"{r['date']} {r['size_label']} h{r['hidden_size']} L{layers} a{heads}"
        rows.append({"set": "bloom", "id": rid, "plan": ppath, "group": label,
                     "measured_s": r["measured_sec_per_iter"], "oom": bool(r["oom"]),
                     "measured_mem_bytes": None if r["measured_max_mem_GB"] is None
                     else r["measured_max_mem_GB"] * 2 ** 30,
                     "config": f"dp{dp} tp{tp} pp{pp} mbs{mbs} gbs{gbs}{'' if mode == 'zero1' else ' zero0'}"
                               + (f" split {blocks[0]},{blocks[1]}..{blocks[-1]}" if pp > 2 else ""),
                     "fixes": fixes, "flags": r.get("flags") or []})
    return rows, notes


# ---------------------------------------------------------------- GH200 and MIT (Sailor, Aceso)
def gh200_cluster(d, nodes, net, efficiency):
    cname = f"clariden-{nodes}x4.cluster.json"
    path = os.path.join(d, cname)
    if not os.path.exists(path):
        gh = dict(GH200, efficiency=efficiency)
        gh["source"] += f"; efficiency {efficiency}: Sailor's OPT-350M block at tp 1 (profile_efficiency)"
        write_json(path, {"version": 1, "name": f"clariden-{nodes}x4",
                          "source": "Alps Clariden, 4 GH200 a node; bandwidths: Sailor's NCCL fits at 64 MB "
                                    "(data/sailor_network.json: intra GH-96 4 GPUs, inter GH-96 4 GPUs a node)",
                          "device_types": {"GH-96": gh},
                          "nodes": [{"name": f"n{i}", "type": "GH-96", "gpus": 4,
                                     "intra_gbps": round(net["intra"]["GH-96"]["4"] * 8, 1),
                                     "intra_lat_us": NET_LAT_US["intra"]} for i in range(nodes)],
                          "inter_gbps": round(net["inter"]["GH-96"]["4"] * 8, 1),
                          "inter_lat_us": NET_LAT_US["inter"]})
    return cname


def opt_model(d, name, layers, hidden, heads):
    path = os.path.join(d, name + ".json")
    if not os.path.exists(path):
        model = {"version": 1, "name": name,
                 "source": "Megatron-DeepSpeed GPT as Sailor and Aceso run it: GPT-2 vocabulary padded to "
                           "50304, 2048 learned positions, fp32 with TF32 matmuls, eager attention",
                 "transformer": {"family": "gpt", "layers": layers, "hidden": hidden, "heads": heads,
                                 "seq": 2048, "vocab": GPT2_VOCAB, "tied": True, "dtype": "fp32",
                                 "attention": "eager"}}
        model.update(BYTES_FP32)
        write_json(path, model)
    return path


def sailor_stage_blocks(layers_per_stage, n_blocks):
    """Sailor counts the embedding and the head as layers (ids 0 and N+1)."""
    blocks = list(layers_per_stage)
    blocks[0] -= 1
    blocks[-1] -= 1
    assert sum(blocks) == n_blocks, (layers_per_stage, n_blocks)
    return blocks


def mit_cluster(d, rid, row, net, efficiencies):
    """One node per (stage, replica) slot, of tp GPUs of the recorded type; links between
    node pairs from Sailor's fits for the two types at tp GPUs a node."""
    tp = row["tp"]
    nodes, types = [], {}
    for s, reps in enumerate(row["replicas_per_stage"]):
        for r, rep in enumerate(reps):
            g = rep["gpu_type"]
            if rep["gpus"] != tp or rep["tp"] != tp:
                sys.exit(f"{rid}: stage {s} replica {r}: {rep} is not tp {tp}")
            types[g] = dict(MIT_TYPES[g], efficiency=efficiencies[g])
            intra = net["intra"][g].get(str(tp))
            nodes.append({"name": f"s{s}r{r}-{g}", "type": g, "gpus": tp,
                          "intra_gbps": round(intra * 8, 2), "intra_lat_us": NET_LAT_US["intra"]})

    def pair(a, b):
        fits = [net["pair"][x][y] for x, y in ((a, b), (b, a)) if str(tp) in net["pair"][x][y]]
        return min(f[str(tp)] for f in fits)

    links = [{"a": nodes[i]["name"], "b": nodes[j]["name"],
              "gbps": round(pair(nodes[i]["type"], nodes[j]["type"]) * 8, 3), "lat_us": NET_LAT_US["inter"]}
             for i in range(len(nodes)) for j in range(i + 1, len(nodes))]
    cname = f"{rid}.cluster.json"
    write_json(os.path.join(d, cname), {
        "version": 1, "name": f"mit-{rid}",
        "source": "Sailor's MIT servers as the row uses them: one node a (stage, replica) of its tp GPUs; "
                  "bandwidths: Sailor's NCCL fits at 64 MB (data/sailor_network.json), the smaller direction",
        "device_types": types, "nodes": nodes, "links": links})
    return cname


def convert_sailor(measured, out, hetplan):
    doc = json.load(open(os.path.join(measured, "sailor.json")))
    net = json.load(open(os.path.join(DATA_DIR, "sailor_network.json")))
    gh_prof = json.load(open(os.path.join(DATA_DIR, "opt350.gh200.profile.json")))
    mit_prof = json.load(open(os.path.join(DATA_DIR, "opt350.mit.profile.json")))
    exp = Expander(hetplan)
    rows, notes = [], []
    for sub in ("sailor-gh200", "sailor-mit"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    dg, dm = os.path.join(out, "sailor-gh200"), os.path.join(out, "sailor-mit")
    opt_g = opt_model(dg, "opt-350m", 24, 1024, 16)
    neo_g = opt_model(dg, "gpt-neo-2.7b", 32, 2560, 32)
    opt_m = opt_model(dm, "opt-350m", 24, 1024, 16)
    block_f = exp.layer(opt_g, "block.0")["flops"]
    eff_gh = profile_efficiency(gh_prof, "GH-96", block_f, GH200["tflops"])
    eff_mit = {g: profile_efficiency(mit_prof, g, block_f, t["tflops"]) for g, t in MIT_TYPES.items()}
    for name, prof in (("opt350.gh200.profile.json", gh_prof), ("opt350.mit.profile.json", mit_prof)):
        for dd in (dg, dm):
            write_json(os.path.join(dd, name), prof)
    for row in doc["rows"]:
        m = re.search(r"(clariden/(OPT-350|GPT-NEO)|mit)/N\d+/plan_config_(N\d+_D\d+(?:_M\d+_G\d+)?)\.json", row["path"])
        run = "paper" if row["run_set"].startswith("main") else "AE re-run"
        where = "mit" if m.group(1) == "mit" else ("opt" if m.group(2) == "OPT-350" else "neo")
        rid = f"sailor-{where}-{m.group(3)}-{'paper' if run == 'paper' else 'ae'}"
        excluded = any("exclude" in f for f in row["flags"])
        n_blocks = row["num_layers"]
        if excluded and sum(row["layers_per_stage"]) != n_blocks + 2:
            notes.append(f"{rid}: flagged for exclusion and its split {row['layers_per_stage']} "
                         f"does not cover {n_blocks} blocks: skipped")
            continue
        pp, tp, dp, mbs, gbs = row["pp"], row["tp"], row["dp"], row["micro_batch_size"], row["global_batch_size"]
        blocks = sailor_stage_blocks(row["layers_per_stage"], n_blocks)
        stages = stages_from_blocks(blocks, n_blocks, bool(row["recompute"]))
        if set(row["dp_per_stage"]) != {dp}:
            sys.exit(f"{rid}: dp per stage {row['dp_per_stage']} differs from dp {dp}")
        for s, st in enumerate(stages):
            st["devices"] = megatron_devices(pp, dp, tp, s)
        inputs = {"gbs": gbs, "schedule": "1f1b", "sharding": ["dp"], "sequence_parallel": False}
        if where == "mit":
            d = dm
            inputs.update(model="opt-350m.json", cluster=mit_cluster(dm, rid, row, net, eff_mit),
                          profile="opt350.mit.profile.json")
        else:
            d = dg
            nodes = row["total_gpus"] // 4
            inputs.update(model="opt-350m.json" if where == "opt" else "gpt-neo-2.7b.json",
                          cluster=gh200_cluster(dg, nodes, net, eff_gh))
            if where == "opt":
                inputs["profile"] = "opt350.gh200.profile.json"
        plan = {"version": 1, "pp": pp, "tp": tp, "dp": dp, "mbs": mbs, "schedule": "1f1b",
                "stages": stages, "sharding": ["dp"] * (n_blocks + 3), "inputs": inputs}
        ppath = os.path.join(d, rid + ".plan.json")
        write_json(ppath, plan)
        group = {"opt": f"OPT-350M {run}", "neo": f"GPT-Neo-2.7B {run}", "mit": f"MIT OPT-350M {run}"}[where]
        mem_ok = where != "mit"
        rows.append({"set": {"opt": "sailor-opt", "neo": "sailor-neo", "mit": "sailor-het"}[where],
                     "id": rid, "plan": ppath, "group": group, "measured_s": row["measured_iteration_time_s"],
                     "oom": False, "excluded": excluded,
                     "measured_mem_bytes": row["measured_peak_mem_bytes"] if mem_ok else None,
                     "config": f"dp{dp} tp{tp} pp{pp} mbs{mbs} gbs{gbs} split {row['layers_per_stage']}",
                     "fixes": [], "flags": row["flags"]})
    notes.append(f"GH-96 efficiency {eff_gh} (TF32 peak), MIT {eff_mit}: the OPT-350M block at tp 1, "
                 "largest mbs, from Sailor's profiles")
    return rows, notes


ACESO_OPS_PER_BLOCK = 13    # Aceso's GPT: 13 ops a block, plus embedding, final norm, head


def aceso_stage_blocks(ops, n_blocks):
    """Aceso cuts stages between ops, sometimes inside a block: each cut goes to the
    nearest block boundary (op 0 is the embedding)."""
    cuts, acc = [], 0
    for n in ops[:-1]:
        acc += n
        cuts.append(int(round((acc - 1) / ACESO_OPS_PER_BLOCK)))
    bounds = [0] + cuts + [n_blocks]
    return [bounds[i + 1] - bounds[i] for i in range(len(ops))]


def convert_aceso(measured, out, hetplan):
    doc = json.load(open(os.path.join(measured, "aceso_on_clariden_sailor.json")))
    net = json.load(open(os.path.join(DATA_DIR, "sailor_network.json")))
    gh_prof = json.load(open(os.path.join(DATA_DIR, "opt350.gh200.profile.json")))
    d = os.path.join(out, "aceso")
    os.makedirs(d, exist_ok=True)
    opt = opt_model(d, "opt-350m", 24, 1024, 16)
    write_json(os.path.join(d, "opt350.gh200.profile.json"), gh_prof)
    eff = profile_efficiency(gh_prof, "GH-96", Expander(hetplan).layer(opt, "block.0")["flops"], GH200["tflops"])
    rows, notes = [], []
    for row in doc["rows"]:
        n_blocks, pp, dp = row["num_layers"], row["pp"], row["dp"]
        tp = row["tp"][0]
        if set(row["tp"]) != {tp} or set(row["dp_per_op"]) != {dp}:
            notes.append(f"{row['id']}: tp or dp varies between ops: skipped")
            continue
        if sum(row["ops_per_stage"]) != n_blocks * ACESO_OPS_PER_BLOCK + 3:
            sys.exit(f"{row['id']}: {sum(row['ops_per_stage'])} ops, expected {n_blocks * 13 + 3}")
        blocks = aceso_stage_blocks(row["ops_per_stage"], n_blocks)
        rec = any(row["checkpoint_activations"]) or row["recompute_any_op"]
        stages = stages_from_blocks(blocks, n_blocks, rec)
        for s, st in enumerate(stages):
            st["devices"] = megatron_devices(pp, dp, tp, s)
        mbs, gbs = row["micro_batch_size_per_gpu"], row["global_batch_size"]
        plan = {"version": 1, "pp": pp, "tp": tp, "dp": dp, "mbs": mbs, "schedule": "1f1b",
                "stages": stages, "sharding": ["dp"] * (n_blocks + 3),
                "inputs": {"model": "opt-350m.json", "cluster": gh200_cluster(d, row["total_gpus"] // 4, net, eff),
                           "profile": "opt350.gh200.profile.json", "gbs": gbs, "schedule": "1f1b",
                           "sharding": ["dp"], "sequence_parallel": False}}
        rid = "aceso-" + row["id"].replace("OPT-350_", "")
        ppath = os.path.join(d, rid + ".plan.json")
        write_json(ppath, plan)
        ms = row["measured"]
        rows.append({"set": "aceso", "id": rid, "plan": ppath, "group": "OPT-350M Aceso",
                     "measured_s": ms["iteration_time_ms_rank_max"] / 1000, "oom": False,
                     "measured_mem_bytes": ms["peak_max_allocated_MB"] * 2 ** 20,
                     "config": f"dp{dp} tp{tp} pp{pp} mbs{mbs} gbs{gbs} blocks {blocks}",
                     "fixes": [] if blocks == even_split(n_blocks, pp) else [f"ops {row['ops_per_stage']} -> blocks {blocks}"],
                     "flags": row["flags"]})
    return rows, notes


def convert_all(measured, out, hetplan):
    rows, notes = [], []
    for conv in (convert_bloom, convert_sailor, convert_aceso):
        r, n = conv(measured, out, hetplan)
        rows += r
        notes += n
    write_json(os.path.join(out, "rows.json"), {"rows": rows, "notes": notes})
    return rows, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=DEFAULT_MEASURED)
    ap.add_argument("--out", default="build/fidelity/inputs")
    ap.add_argument("--hetplan", default="build/hetplan")
    a = ap.parse_args()
    rows, notes = convert_all(a.data, a.out, a.hetplan)
    sets = {}
    for r in rows:
        sets[r["set"]] = sets.get(r["set"], 0) + 1
    print("converted:", ", ".join(f"{k} {v}" for k, v in sets.items()))
    for n in notes:
        print("  " + n)


if __name__ == "__main__":
    main()
