#!/usr/bin/env python3
"""Random tiny instances for cost model 1.2 cross-checks (standard library only).

usage: ref_random12.py SEED OUTDIR
writes OUTDIR/{model,cluster,job,plan}.json and, for some seeds, profile.json:
2-4 nodes of 1-4 GPUs of 2-3 types, optional links / bandwidth matrix with
latencies, 2-6 layers using every optional layer field, a job using every 1.2
field, and a random valid plan (section 2 and 5 of cost-model.md).
"""
import json
import os
import random
import sys


def rnd(r, lo, hi):
    return r.uniform(lo, hi)


def gen(seed):
    r = random.Random(seed)
    # ---------------- cluster
    ntypes = r.randint(2, 3)
    tnames = ["G%d" % i for i in range(ntypes)]
    dtypes = {}
    for tn in tnames:
        t = {"mem_gib": round(rnd(r, 0.5, 24), 3), "tflops": round(rnd(r, 20, 400), 2)}
        if r.random() < 0.5:
            t["reserved_gib"] = round(rnd(r, 0, 0.5), 3)
        if r.random() < 0.6:
            t["efficiency"] = round(rnd(r, 0.2, 0.9), 3)
        if r.random() < 0.6:
            t["hbm_gbs"] = round(rnd(r, 300, 3000), 1)
        dtypes[tn] = t
    nnodes = r.randint(2, 4)
    nodes = []
    for i in range(nnodes):
        n = {"name": "n%d" % i, "type": r.choice(tnames), "gpus": r.choice([1, 2, 2, 4, 4, 3]),
             "intra_gbps": round(rnd(r, 100, 2000), 1)}
        if r.random() < 0.7:
            n["intra_lat_us"] = round(rnd(r, 0.5, 10), 2)
        nodes.append(n)
    D = sum(n["gpus"] for n in nodes)
    cluster = {"name": "rand%d" % seed, "device_types": dtypes, "nodes": nodes}
    links = []
    if r.random() < 0.5:
        pairs = [(a, b) for a in range(nnodes) for b in range(a + 1, nnodes)]
        for (a, b) in pairs:
            if r.random() < 0.6:
                lk = {"a": "n%d" % a, "b": "n%d" % b, "gbps": round(rnd(r, 1, 200), 2)}
                if r.random() < 0.7:
                    lk["lat_us"] = round(rnd(r, 1, 50), 2)
                if r.random() < 0.5:  # reversed direction name
                    lk["a"], lk["b"] = lk["b"], lk["a"]
                links.append(lk)
        if links and r.random() < 0.3:  # a later duplicate wins
            d = dict(links[0])
            d["gbps"] = round(rnd(r, 1, 200), 2)
            d["a"], d["b"] = d["b"], d["a"]
            links.append(d)
        covered = set()
        for lk in links:
            covered.add(frozenset((lk["a"], lk["b"])))
        need_inter = len(covered) < len(pairs)
    else:
        need_inter = True
    if links:
        cluster["links"] = links
    if need_inter or r.random() < 0.5:
        cluster["inter_gbps"] = round(rnd(r, 1, 400), 2)
        if r.random() < 0.7:
            cluster["inter_lat_us"] = round(rnd(r, 1, 30), 2)

    def matrix():
        g = [[0.0 if a == b else round(rnd(r, 1, 1500), 2) for b in range(D)] for a in range(D)]
        m = {"gbps": g}
        if r.random() < 0.6:
            m["lat_us"] = [[0.0 if a == b else round(rnd(r, 0.5, 40), 2) for b in range(D)]
                           for a in range(D)]
        return m

    if r.random() < 0.2:
        cluster["bandwidth_matrix"] = matrix()

    # ---------------- model
    model = {"name": "rand%d" % seed}
    if r.random() < 0.5:
        model["param_bytes"] = r.choice([2, 2, 4])
    pbv = model.get("param_bytes", 2)
    if r.random() < 0.5:
        model["grad_bytes"] = r.choice([2, 4])
    gbv = model.get("grad_bytes", 2)
    if r.random() < 0.5:
        model["state_bytes"] = r.choice([16, 18, 20])
    sbv = model.get("state_bytes", 16)
    if sbv < pbv + gbv:
        model["state_bytes"] = pbv + gbv + 12
    if r.random() < 0.4:
        model["update_bytes"] = r.choice([20, 30, 34, 40])
    if r.random() < 0.7:
        model["input_bytes"] = r.randint(1000, 5_000_000)
    layers = []
    nent = r.randint(2, 5)
    nl = 0
    for i in range(nent):
        if nl >= 6:
            break
        ly = {"name": "L%d" % i,
              "params": r.randint(10_000, 50_000_000),
              "act_bytes": r.randint(10_000, 80_000_000),
              "out_bytes": r.randint(1000, 20_000_000),
              "flops": float("%.6g" % rnd(r, 1e9, 5e13))}
        if r.random() < 0.3:
            ly["kind"] = r.choice(["blk", "blk", "k%d" % i])
        if r.random() < 0.6:
            ly["tp_comm_bytes"] = r.randint(0, 30_000_000)
        if r.random() < 0.25:
            ly["splittable"] = False
        if r.random() < 0.4:
            ly["act_bytes_replicated"] = r.randint(0, ly["act_bytes"])
        if r.random() < 0.4:
            ly["work_bytes"] = r.randint(0, 50_000_000)
        if r.random() < 0.4:
            ly["work_bytes_fixed"] = r.randint(0, 50_000_000)
        if r.random() < 0.3:
            ly["checkpointable"] = r.random() < 0.3
        if r.random() < 0.3 and nl + 2 <= 6:
            ly["repeat"] = r.randint(1, min(3, 6 - nl))
        rep = ly.get("repeat", 1)
        nl += rep
        layers.append(ly)
    model["layers"] = layers
    L = nl
    if L < 2:
        layers.append({"name": "tail", "params": 1234567, "act_bytes": 7654321,
                       "out_bytes": 11, "flops": 3.3e11})
        L += 1
    # expanded kinds, for the profile
    kinds = []
    for ly in layers:
        for _ in range(ly.get("repeat", 1)):
            kinds.append(ly.get("kind", ly["name"]))

    # ---------------- job
    job = {}
    if r.random() < 0.4:
        job["schedule"] = r.choice(["1f1b", "gpipe"])
    if r.random() < 0.5:
        job["sequence_parallel"] = r.random() < 0.5
    if r.random() < 0.6:
        job["grad_sync"] = r.choice(["end", "overlap"])
    if r.random() < 0.6:
        allm = ["dp", "zero1", "zero2", "zdp"]
        sub = [m for m in allm if r.random() < 0.6] or [r.choice(allm)]
        job["sharding"] = sub
    if r.random() < 0.3:
        job["uniform_sharding"] = True
    if r.random() < 0.4:
        job["idle_devices"] = True
    if r.random() < 0.5:
        job["max_slices"] = r.choice([1, 2, 4, 8])
    modes_ok = job.get("sharding", ["dp", "zero1", "zero2", "zdp"])
    max_slices = job.get("max_slices", 1)
    idle = job.get("idle_devices", False)

    # ---------------- plan
    devs_of_node = []
    base = 0
    for n in nodes:
        devs_of_node.append(list(range(base, base + n["gpus"])))
        base += n["gpus"]
    tps = [t for t in (1, 2, 3, 4) if any(n["gpus"] % t == 0 for n in nodes)]
    if not idle:
        tps = [t for t in tps if all(n["gpus"] % t == 0 for n in nodes)]
    tp = r.choice(tps)
    groups = []
    for i, n in enumerate(nodes):
        if n["gpus"] % tp:
            continue
        ds = list(devs_of_node[i])
        r.shuffle(ds)
        for g in range(n["gpus"] // tp):
            groups.append(ds[g * tp:(g + 1) * tp])
    if idle:
        r.shuffle(groups)
        groups = groups[:r.randint(1, len(groups))]
    ng = len(groups)
    choices = [(pp, ng // pp) for pp in range(1, min(ng, L) + 1) if ng % pp == 0]
    pp, dp = r.choice(choices)
    r.shuffle(groups)
    mbs = r.choice([1, 1, 2, 3, 4])
    gas = r.choice([1, 1, 2, 3, 4, 6])
    gbs = dp * mbs * gas
    job["gbs"] = gbs
    cuts = sorted(r.sample(range(1, L), pp - 1))
    bounds = [0] + cuts + [L]
    stages = []
    gi = 0
    for s in range(pp):
        devices = []
        for rr in range(dp):
            devices.append(groups[gi])
            gi += 1
        st = {"layers": [bounds[s], bounds[s + 1] - 1], "devices": devices}
        if r.random() < 0.4:
            st["recompute"] = True
        elif r.random() < 0.3:
            st["recompute"] = False
        stages.append(st)
    plan = {"version": 1, "pp": pp, "tp": tp, "dp": dp, "mbs": mbs, "stages": stages}
    if r.random() < 0.5:
        plan["gas"] = gas
    if r.random() < 0.3:
        plan["schedule"] = job.get("schedule", "1f1b")
    if job.get("uniform_sharding"):
        m = r.choice(modes_ok)
        modes = [m] * L
    else:
        modes = [r.choice(modes_ok) for _ in range(L)]
    names = [("zero3" if (m == "zdp" and r.random() < 0.2) else m) for m in modes]
    if not (modes == ["dp"] * L and r.random() < 0.5):
        plan["sharding"] = names
    if max_slices > 1 and "zdp" in modes and r.random() < 0.8:
        opts = [1 << i for i in range(max_slices.bit_length()) if (1 << i) <= max_slices]
        plan["slices"] = [r.choice(opts) if m == "zdp" else 1 for m in modes]
    if idle and r.random() < 0.3:
        used = set(d for st in stages for row in st["devices"] for d in row)
        plan["idle"] = [d for d in range(D) if d not in used]

    # ---------------- profile
    profile = None
    if r.random() < 0.55:
        profile = {"device_types": list(tnames)}
        if r.random() < 0.5:
            profile["sequence_parallel"] = r.random() < 0.5
        # expanded layer figures, for times at or above the type's peak (hetplan
        # refuses a profile faster than peak: an input check, not a cost term)
        exp = []
        for ly in layers:
            for _ in range(ly.get("repeat", 1)):
                exp.append(ly)

        def peak_time(kd, tn, t):
            pk = dtypes[tn]["tflops"] * 1e12
            return max(ly["flops"] / ((t if ly.get("splittable", True) else 1) * pk)
                       for ly in exp if ly.get("kind", ly["name"]) == kd)

        def secs(kd, tn, t, m, fixed, slack):
            return float("%.6g" % ((fixed + m * peak_time(kd, tn, t) * (1 + slack)) * 1.0001))

        lts = []
        for kd in sorted(set(kinds)):
            for tn in tnames:
                for t in sorted(set([1, tp, r.choice([1, 2, 4])])):
                    u = r.random()
                    if u < 0.25:
                        continue
                    fixed = rnd(r, 0, 0.01) if r.random() < 0.7 else 0.0
                    if u < 0.5:
                        pts = [r.choice([1, 2, 4])]  # single point
                    elif u < 0.6:
                        pts = [mbs]
                    else:
                        pts = r.sample([1, 2, 3, 4, 6, 8], r.randint(2, 3))
                    for m in pts:
                        e = {"kind": kd, "type": tn, "tp": t, "mbs": m,
                             "seconds": secs(kd, tn, t, m, fixed, rnd(r, 0, 1.5))}
                        if r.random() < 0.3:
                            e["act_bytes"] = float("%.6g" % max(0.0, m * rnd(r, 1e5, 3e7) + rnd(r, -1e6, 1e6)))
                        if r.random() < 0.3:
                            e["work_bytes"] = float("%.6g" % max(0.0, m * rnd(r, 1e5, 3e7) + rnd(r, -1e6, 1e6)))
                        lts.append(e)
                    if r.random() < 0.12 and lts:  # duplicate, the last wins
                        d = dict(lts[-1])
                        d["seconds"] = float("%.6g" % (d["seconds"] * 1.3))
                        if r.random() < 0.5:
                            d.pop("act_bytes", None)
                        elif r.random() < 0.5:
                            d["act_bytes"] = float("%.6g" % (d["mbs"] * rnd(r, 1e5, 3e7)))
                        lts.append(d)
        # single-point TP split case: (kind, k, 1) and (kind, k, tp) measured at one m0
        if tp > 1 and r.random() < 0.5:
            kd = r.choice(kinds)
            tn = r.choice(tnames)
            m0 = r.choice([1, 2, 4])
            lts = [e for e in lts if not (e["kind"] == kd and e["type"] == tn and e["tp"] in (1, tp))]
            lts.append({"kind": kd, "type": tn, "tp": 1, "mbs": m0,
                        "seconds": secs(kd, tn, 1, m0, rnd(r, 0, 0.005), rnd(r, 0, 1))})
            lts.append({"kind": kd, "type": tn, "tp": tp, "mbs": m0,
                        "seconds": secs(kd, tn, tp, m0, rnd(r, 0, 0.01), rnd(r, 0, 2))})
        profile["layer_times"] = lts
        if r.random() < 0.15:
            profile["bandwidth_matrix"] = matrix()
    return model, cluster, profile, job, plan


def main():
    seed = int(sys.argv[1])
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    model, cluster, profile, job, plan = gen(seed)
    for name, obj in (("model", model), ("cluster", cluster), ("job", job), ("plan", plan),
                      ("profile", profile)):
        p = os.path.join(out, name + ".json")
        if obj is None:
            if os.path.exists(p):
                os.remove(p)
            continue
        with open(p, "w") as f:
            json.dump(obj, f, indent=1)


if __name__ == "__main__":
    main()
