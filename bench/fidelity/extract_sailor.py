#!/usr/bin/env python3
"""Turn the data of Sailor's public repository into hetplan profile and network files.

Run once by hand, from a clone of github.com/eth-easl/sailor (the output is committed
under bench/fidelity/data/, so `make bench-fidelity` never needs the clone):

    python3 bench/fidelity/extract_sailor.py --git-dir /path/to/sailor/.git

It reads, with `git show COMMIT:PATH` at the commit the measured data names:
  sailor/Planner/sailor_planner/profiles/OPT-350/<gpu>/profile.json
      {mbs: {tp: {layer id: [forward s, backward s, update s]}}}, layer 0 the embedding,
      1..24 the blocks, 25 the final LayerNorm with the output layer;
  sailor/providers/intra_node_bandwidths.json and network_coeffs_all_homo.json, and
  multizone_bandwidths_het.json: NCCL fits [[a, b, c], max bytes/s], the bandwidth in
      GB/s being a x^2 + b x + c with x = log2(message bytes / 1e6).
Only numbers are taken; the code here is hetplan's own.
"""
import argparse
import json
import math
import os
import subprocess
import sys

COMMIT = "cf2c8e3cc53ce178fe58a4003f46b4b6b848fc33"   # main; sosp25_ae (16eebd4) holds the same blobs
PROFILE_PATH = "sailor/Planner/sailor_planner/profiles/{model}/{gpu}/profile.json"
INTRA_PATH = "sailor/providers/intra_node_bandwidths.json"
HOMO_PATH = "sailor/providers/network_coeffs_all_homo.json"
HET_PATH = "sailor/providers/multizone_bandwidths_het.json"
HERE = os.path.dirname(os.path.abspath(__file__))
# The message size the fits are read at: hetplan keeps one bandwidth per link, Sailor a
# curve; 64 MB lies in the flat part of every fit used here (docs in README.md).
FIT_AT_BYTES = 64e6


def git_json(git_dir, path):
    out = subprocess.run(["git", "--git-dir", git_dir, "show", f"{COMMIT}:{path}"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def fit_gbs(fit, nbytes=FIT_AT_BYTES):
    """GB/s of a Sailor fit at a message of nbytes."""
    coeffs = fit[0]
    x = math.log2(nbytes / 1e6)
    return sum(c * x ** (len(coeffs) - i - 1) for i, c in enumerate(coeffs))


def monotone_in_mbs(table):
    """Each layer's forward and backward times, capped so that none exceeds the same
    layer's time at a larger micro-batch on the same tp (a running minimum from the
    largest mbs down). A larger micro-batch does strictly more work, so a time above a
    larger mbs's is a measurement artefact, not a property of the layer; the cap is the
    tightest bound the profile itself proves. Applied to every profile alike. Returns the
    capped table and the points changed, as (mbs, tp, layer, field, old s, new s)."""
    out = {m: {t: {k: list(v) for k, v in layers.items()} for t, layers in tps.items()}
           for m, tps in table.items()}
    changed = []
    tps = {t for m in table for t in table[m]}
    for tp in tps:
        sizes = sorted((m for m in table if tp in table[m]), key=int, reverse=True)
        for field, name in ((0, "forward"), (1, "backward")):
            for layer in table[sizes[0]][tp]:
                bound = None
                for m in sizes:
                    v = out[m][tp][layer][field]
                    if bound is not None and v > bound:
                        changed.append((int(m), int(tp), int(layer), name, v, bound))
                        out[m][tp][layer][field] = bound
                    else:
                        bound = v
    return out, changed


def profile_entries(table, gpu, n_blocks):
    """hetplan layer_times from one Sailor profile: forward + backward per micro-batch."""
    entries = []
    table, changed = monotone_in_mbs(table)
    for m, tp, layer, name, old, new in sorted(changed):
        print(f"  {gpu} mbs {m} tp {tp} layer {layer}: {name} {old * 1e3:.3f} ms capped at "
              f"{new * 1e3:.3f} ms (a larger mbs's time)")
    for mbs in sorted(table, key=int):
        for tp in sorted(table[mbs], key=int):
            layers = table[mbs][tp]
            fb = {int(k): v[0] + v[1] for k, v in layers.items()}
            if len(fb) != n_blocks + 2:
                sys.exit(f"{gpu} mbs {mbs} tp {tp}: {len(fb)} layers, expected {n_blocks + 2}")
            block = sum(fb[i] for i in range(1, n_blocks + 1)) / n_blocks
            for kind, sec in (("embed", fb[0]), ("block", block), ("head", fb[n_blocks + 1])):
                entries.append({"kind": kind, "type": gpu, "tp": int(tp), "mbs": int(mbs),
                                "seconds": round(sec, 7)})
    return entries


def write(name, doc):
    path = os.path.join(HERE, "data", name)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote", os.path.relpath(path))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git-dir", required=True, help="the .git folder of a Sailor clone")
    args = ap.parse_args()
    src = f"github.com/eth-easl/sailor at {COMMIT}"
    kinds = {k: {"hidden": 1024, "heads": 16, "seq": 2048, "dtype": "fp32"}
             for k in ("embed", "block", "head")}
    note = ("forward + backward of one micro-batch (Sailor's [fwd, bwd, update] per layer; the "
            "update is left out: hetplan charges the optimizer step from hbm_gbs). block: the "
            "mean of Sailor's layers 1..24; head: its layer 25 (final LayerNorm and output "
            "layer, so hetplan's final_norm gets no entry and costs 0 s: it has no FLOPs).")
    for name, gpus in (("opt350.gh200.profile.json", ["GH-96"]),
                       ("opt350.mit.profile.json", ["RTX-3090", "RTX-2080", "Titan-RTX"])):
        entries = []
        for gpu in gpus:
            entries += profile_entries(git_json(args.git_dir, PROFILE_PATH.format(model="OPT-350", gpu=gpu)), gpu, 24)
        write(name, {"version": 1, "model": "opt-350m",
                     "source": f"{src}: " + ", ".join(PROFILE_PATH.format(model="OPT-350", gpu=g) for g in gpus),
                     "notes": note, "device_types": gpus, "kinds": kinds, "layer_times": entries})

    intra = git_json(args.git_dir, INTRA_PATH)
    homo = git_json(args.git_dir, HOMO_PATH)["inter"]
    het = git_json(args.git_dir, HET_PATH)["us-central1-a"]
    net = {"version": 1,
           "source": f"{src}: {INTRA_PATH}, {HOMO_PATH} (inter), {HET_PATH} (us-central1-a, pairs of types)",
           "notes": (f"each fit read at a {FIT_AT_BYTES / 1e6:g} MB message, GB/s; intra[type][n]: "
                     "an n-GPU collective inside one node (Sailor's TP all-reduce term); "
                     "inter[type][n]: node to node when n GPUs of the node send; "
                     "pair[a][b][n]: between nodes of types a and b, n GPUs each"),
           "fit_at_bytes": FIT_AT_BYTES, "intra": {}, "inter": {}, "pair": {}}
    for gpu in ("GH-96", "RTX-3090", "RTX-2080", "Titan-RTX"):
        net["intra"][gpu] = {n: round(fit_gbs(f), 3) for n, f in intra[gpu].items()}
        net["inter"][gpu] = {n: round(fit_gbs(f), 3) for n, f in homo[gpu].items()}
    for a in ("RTX-3090", "RTX-2080", "Titan-RTX"):
        net["pair"][a] = {}
        for b in ("RTX-3090", "RTX-2080", "Titan-RTX"):
            fits = het[a]
            net["pair"][a][b] = {n: round(fit_gbs(fits[n]["us-central1-a"][b][n]), 3)
                                 for n in fits if b in fits[n]["us-central1-a"]
                                 and n in fits[n]["us-central1-a"][b]}
    write("sailor_network.json", net)


if __name__ == "__main__":
    main()
