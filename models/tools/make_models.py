#!/usr/bin/env python3
"""make_models.py -- regenerates the model, profile and cluster files of models/ that are
derived from measured data (../shared/data) or assembled from the transformer generator.

Run from the repository root after `make`:  python3 models/tools/make_models.py [DATA]
DATA defaults to ../shared/data; HETPLAN names the binary (default build/hetplan). Layer sizes come from `hetplan expand` (the formulas of
docs/transformer.md), so this script holds no cost formula of its own; it only arranges
layers as AMP's DeepSpeed pipeline modules are arranged and converts units:
  * AMP measured the FORWARD time of one micro-batch (mbs 1) per module; AMP models
    forward+backward as 3 x forward, and so do these profiles.
  * AMP's and OSDP's runs (2022-2023, V100 and T4, DeepSpeed and minGPT) used eager
    attention: their models are expanded with "attention": "eager" (the generator's
    default is FlashAttention). The embedding and the head keep the generator's
    "checkpointable": false (full recompute re-runs the blocks only).
  * Pipette's mpiGraph matrices are MB/s (1e6 bytes/s) per host pair; a link's Gbit/s is
    the smaller of both directions (cost-model.md 7.2), MB/s * 8 / 1000.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.environ.get("HETPLAN") or os.path.join(ROOT, "build", "hetplan")
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "data")
OUT = os.path.join(ROOT, "models")
TYPES = {"G4": "T4", "P3": "V100"}
REQUIRED = ("params", "act_bytes", "out_bytes", "flops")


def expand(tf):
    """Explicit layers of a transformer description, from the C generator."""
    src = json.dumps({"transformer": tf})
    path = os.path.join(OUT, ".tmp-expand.json")
    with open(path, "w") as f:
        f.write(src)
    try:
        out = subprocess.run([TOOL, "expand", "--model", path], check=True,
                             capture_output=True, text=True).stdout
    finally:
        os.remove(path)
    model = json.loads(out)
    if "modules" in model:   # the generator's module tree: its leaves are the chain
        model["layers"] = leaves(model.pop("modules"))
    return model


def leaves(nodes):
    """The layers of a "modules" tree in document order (formats.md)."""
    out = []
    for n in nodes:
        out += leaves(n["children"]) if "children" in n else [n]
    return out


def passthrough(name, out_bytes):
    """A module with no parameters or FLOPs that hands its input on (DeepSpeed's lambda
    and reshaping layers)."""
    return {"name": name, "params": 0, "act_bytes": 0, "out_bytes": out_bytes, "flops": 0}


def layer(src, name):
    keep = ("params", "act_bytes", "act_bytes_replicated", "out_bytes", "flops",
            "tp_comm_bytes", "work_bytes", "work_bytes_fixed", "splittable", "checkpointable")
    d = {"name": name}
    d.update({k: src[k] for k in keep if src.get(k) or k in REQUIRED})
    if not src.get("splittable", True):
        d["splittable"] = False
    if not src.get("checkpointable", True):
        d["checkpointable"] = False
    return d


def merge(name, parts):
    """One module made of consecutive layers (AMP's 'final' = LayerNorm + LM head)."""
    d = {"name": name, "splittable": True}
    for k in ("params", "act_bytes", "act_bytes_replicated", "flops", "tp_comm_bytes"):
        d[k] = sum(p.get(k, 0) for p in parts)
    for k in ("work_bytes", "work_bytes_fixed"):
        d[k] = max(p.get(k, 0) for p in parts)
    d["out_bytes"] = parts[-1]["out_bytes"]
    if any(p.get("checkpointable", True) is False for p in parts):
        d["checkpointable"] = False   # a module holding the head is not recomputed
    return d


def write(name, obj):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    print("wrote models/" + name)


def gpt2_amp():
    s, h = 1024, 1024
    full = expand({"family": "gpt", "layers": 24, "hidden": h, "heads": 16, "seq": s,
                   "vocab": 52256, "attention": "eager"})
    ex = full["layers"]
    hand = 2 * s * h
    layers = [layer(ex[0], "embed"), passthrough("noop.1", hand)]
    layers += [layer(ex[1 + i], "block.%d" % i) for i in range(24)]
    layers += [passthrough("noop.26", hand), passthrough("noop.27", hand),
               merge("final", [ex[25], ex[26]]), passthrough("noop.29", 4)]
    assert len(layers) == 30
    return {
        "version": 1, "name": "gpt2-amp",
        "source": "AMP (Li et al., NeurIPS 2022), GPT-2 as its DeepSpeed pipeline modules: embed, "
                  "noop, 24 x transformer, noop, noop, final (LayerNorm + LM head), noop; hidden "
                  "1024, seq 1024, vocab 52256, 16 heads, fp16. Sizes from hetplan's transformer "
                  "formulas (docs/transformer.md); each module is its own kind so that the "
                  "profile gpt2-amp.profile.json carries AMP's measured time of every module. "
                  "Regenerate with models/tools/make_models.py.",
        "input_bytes": 8 * s, "update_bytes": full["update_bytes"], "layers": layers}


def transgan_amp():
    """AMP's TransGAN generator, 56 modules, reconstructed from the timing pattern of
    AMP's profile: 3 input modules, 12 blocks at hidden 1024 over 8x8 = 64 tokens,
    26 small upsampling modules (pixel shuffles 8x8x1024 -> 64x64x16 keep 65536
    elements), 12 blocks at hidden 16 over 64x64 = 4096 tokens, 3 output modules."""
    big = expand({"family": "gpt", "layers": 1, "hidden": 1024, "heads": 4, "seq": 64,
                  "vocab": 1, "attention": "eager"})["layers"][1]
    small = expand({"family": "gpt", "layers": 1, "hidden": 16, "heads": 4, "seq": 4096,
                    "vocab": 1, "attention": "eager"})["layers"][1]
    tokens = 2 * 65536
    latent = 256
    layers = [
        {"name": "mlp_in", "params": latent * 65536 + 65536, "act_bytes": 2 * latent,
         "out_bytes": tokens, "flops": 3 * 2 * latent * 65536},
        {"name": "pos_embed", "params": 65536, "act_bytes": 0, "out_bytes": tokens, "flops": 0},
        passthrough("reshape", tokens)]
    layers += [layer(big, "block1024.%d" % i) for i in range(12)]
    layers += [passthrough("upsample.%d" % i, tokens) for i in range(26)]
    layers += [layer(small, "block16.%d" % i) for i in range(12)]
    layers += [{"name": "norm_out", "params": 32, "act_bytes": tokens, "out_bytes": tokens,
                "flops": 0, "splittable": False},
               {"name": "deconv_out", "params": 16 * 3 + 3, "act_bytes": tokens,
                "out_bytes": 2 * 3 * 4096, "flops": 3 * 2 * 16 * 3 * 4096, "splittable": False},
               passthrough("tanh_out", 2 * 3 * 4096)]
    assert len(layers) == 56
    return {
        "version": 1, "name": "transgan-amp",
        "source": "AMP's TransGAN generator (56 DeepSpeed modules: 12 transformer layers of "
                  "hidden 1024, then 12 of hidden 16). The module list is reconstructed from "
                  "the timing pattern of AMP's profile (its source is not in the shared data): "
                  "sizes are estimates from hetplan's GPT block formulas (64 tokens at hidden "
                  "1024, 4096 tokens at hidden 16, 4 heads); times in transgan-amp.profile.json "
                  "are AMP's measurements. Regenerate with models/tools/make_models.py.",
        "input_bytes": 2 * latent, "layers": layers}


def profile(model, m, file, data):
    """AMP's times for the layers of hetplan model `m` (each layer its own kind), with the
    shape each kind was measured for: the layer's parameters and FLOPs (formats.md)."""
    names = [l["name"] for l in m["layers"]]
    times = []
    for p in data["profiles"]:
        if p["model"] != model:
            continue
        assert len(p["forward_seconds"]) == len(names), (model, len(names))
        for name, fwd in zip(names, p["forward_seconds"]):
            times.append({"kind": name, "type": TYPES[p["device"]], "tp": p["tp"],
                          "mbs": p["mbs"], "seconds": 3 * fwd})
    return {
        "version": 1,
        "source": data["source"] + "; " + data["what"] + ". seconds = 3 x AMP's measured forward "
                  "time (AMP's own forward+backward model); G4 = T4, P3 = V100.",
        "notes": "kinds: the parameters and FLOPs per sample of the layers of models/" + file +
                 ", the modules AMP measured; hetplan refuses this profile for a model whose "
                 "layers of these kinds differ (formats.md).",
        "model": m["name"],
        "kinds": {l["name"]: {"params": l["params"], "flops": l["flops"]} for l in m["layers"]},
        "device_types": sorted({t["type"] for t in times}),
        "layer_times": times}


def pipette_real(data):
    m = [x for x in data["matrices"] if x["time"] == 0]
    recv = next(x for x in m if x["direction"] == "recv")
    send = next(x for x in m if x["direction"] == "send")
    hosts = recv["hosts"]
    links = []
    for a in range(len(hosts)):
        for b in range(a + 1, len(hosts)):
            mbps = min(recv["MBps"][a][b], recv["MBps"][b][a], send["MBps"][a][b],
                       send["MBps"][b][a])
            links.append({"a": hosts[a], "b": hosts[b], "gbps": round(mbps * 8 / 1000, 3)})
    return {
        "version": 1, "name": "pipette-real-16x8-a100",
        "source": "Pipette (Yim et al., DATE 2024): 16 hosts with their real inter-node "
                  "bandwidths: " + data["source"] + ", time 0; per host pair the smallest of the "
                  "recv and send figures in both directions, MB/s x 8 / 1000 = Gbit/s. The "
                  "figures (131-151 Gbit/s) exceed EDR's 100 Gbit/s and the hosts are named "
                  "agpu*, so these are the high-end cluster's HDR 200 Gbit/s hosts: 8 x A100 "
                  "80 GB each (Pipette's A100 memory threshold is 70,000 MB), NVSwitch 600 GB/s "
                  "= 4800 Gbit/s inside a host.",
        "device_types": {"A100": {"mem_gib": 80, "reserved_gib": 1.5, "tflops": 312,
                                  "efficiency": 0.45, "hbm_gbs": 2039,
                                  "source": "A100 80 GB SXM (NVSwitch hosts): HBM2e 2039 GB/s, "
                                            "NVIDIA A100 datasheet"}},
        "nodes": [{"name": h, "type": "A100", "gpus": 8, "intra_gbps": 4800, "intra_lat_us": 3}
                  for h in hosts],
        "inter_lat_us": 10,
        "links": links}


def osdp_inconsistent():
    """OSDP's 'inconsistent' minGPT: blocks of different widths in one model."""
    segs = [(1024, 16, 16), (4096, 8, 32), (2048, 24, 16)]
    layers = []
    full = expand({"family": "gpt", "layers": 1, "hidden": segs[0][0], "heads": segs[0][2],
                   "seq": 1024, "vocab": 50257, "attention": "eager"})
    first = full["layers"]
    layers.append(layer(first[0], "embed"))
    for h, n, a in segs:
        blk = expand({"family": "gpt", "layers": 1, "hidden": h, "heads": a, "seq": 1024,
                      "vocab": 1, "attention": "eager"})["layers"][1]
        layers.append(dict(layer(blk, "block%d" % h), repeat=n, kind="block%d" % h))
    last = expand({"family": "gpt", "layers": 1, "hidden": segs[-1][0], "heads": segs[-1][2],
                   "seq": 1024, "vocab": 50257, "attention": "eager"})["layers"]
    layers += [layer(last[2], "final_norm"), layer(last[3], "head")]
    return {
        "version": 1, "name": "osdp-inconsistent-48",
        "source": "OSDP (Jiang et al., IJCAI 2023) 'inconsistent' minGPT family: 48 blocks of "
                  "hidden 1024 (16), 4096 (8) and 2048 (24), seq 1024, vocab 50257; the width "
                  "changes carry no projection layer. Sizes from hetplan's GPT formulas. "
                  "Regenerate with models/tools/make_models.py.",
        "input_bytes": 8 * 1024, "update_bytes": full["update_bytes"], "layers": layers}


def main():
    amp = json.load(open(os.path.join(DATA, "amp", "layer_profiles.json")))
    bw = json.load(open(os.path.join(DATA, "pipette", "bandwidth_16x16.json")))
    g = gpt2_amp()
    t = transgan_amp()
    write("gpt2-amp.json", g)
    write("gpt2-amp.profile.json", profile("gpt2", g, "gpt2-amp.json", amp))
    write("transgan-amp.json", t)
    write("transgan-amp.profile.json", profile("transgan", t, "transgan-amp.json", amp))
    write("pipette-real-16x8-a100.json", pipette_real(bw))
    write("osdp-inconsistent-48.json", osdp_inconsistent())


if __name__ == "__main__":
    main()
