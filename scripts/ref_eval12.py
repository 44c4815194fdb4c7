#!/usr/bin/env python3
"""Independent reference evaluator of the plan cost model, version 1.2.

Written from docs cost-model.md (1.2, sections 1-8) and formats.md only, to
cross-check hetplan's evaluator.  Standard library only.

usage: ref_eval12.py --model M --cluster C [--profile P] --job J --plan PLAN
prints {"iteration_time", "mfu", "feasible", "oom_device", "peak_memory": [...]}.
The peak floor of profiled times is not in the spec and is not applied here.
"""
import argparse
import json
import sys

GIB = float(1 << 30)
MODES = ("dp", "zero1", "zero2", "zdp")


def gbps_to_bytes(g):
    return g * 1e9 / 8.0


# ---------------------------------------------------------------- loading


def load_model(path):
    with open(path) as f:
        m = json.load(f)
    pb = float(m.get("param_bytes", 2))
    gb = float(m.get("grad_bytes", 2))
    sb = float(m.get("state_bytes", 16))
    ob = sb - pb - gb
    if ob < 0:
        raise ValueError("negative opt_bytes")
    ub = float(m["update_bytes"]) if "update_bytes" in m else 2 * ob + gb + pb
    layers = []
    for ent in m["layers"]:
        rep = int(ent.get("repeat", 1))
        base = dict(
            kind=ent.get("kind", ent["name"]),
            P=float(ent["params"]), A=float(ent["act_bytes"]),
            O=float(ent["out_bytes"]), F=float(ent["flops"]),
            C=float(ent.get("tp_comm_bytes", 0)),
            split=bool(ent.get("splittable", True)),
            Ar=float(ent.get("act_bytes_replicated", 0)),
            W=float(ent.get("work_bytes", 0)),
            W0=float(ent.get("work_bytes_fixed", 0)),
            ck=bool(ent.get("checkpointable", True)))
        for i in range(rep):
            d = dict(base)
            d["name"] = ent["name"] if "repeat" not in ent else "%s.%d" % (ent["name"], i)
            layers.append(d)
    inp = float(m.get("input_bytes", 0))
    for i, l in enumerate(layers):
        l["I"] = inp if i == 0 else layers[i - 1]["O"]
    return dict(pb=pb, gb=gb, sb=sb, ob=ob, ub=ub, layers=layers)


def read_matrix(mat, D):
    g = mat["gbps"]
    lat = mat.get("lat_us")
    bw = [[0.0] * D for _ in range(D)]
    la = [[0.0] * D for _ in range(D)]
    for a in range(D):
        for b in range(D):
            if a == b:
                continue
            # 7.2: smaller bandwidth of the two directions, larger latency
            bw[a][b] = gbps_to_bytes(min(g[a][b], g[b][a]))
            if lat is not None:
                la[a][b] = max(lat[a][b], lat[b][a]) * 1e-6
    return bw, la


def load_cluster(path, profile):
    with open(path) as f:
        c = json.load(f)
    types = {}
    for name, t in c["device_types"].items():
        types[name] = dict(
            mem=float(t["mem_gib"]) * GIB,
            res=float(t.get("reserved_gib", 0)) * GIB,
            peak=float(t["tflops"]) * 1e12,
            eff=float(t.get("efficiency", 1)),
            hbm=float(t["hbm_gbs"]) * 1e9 if "hbm_gbs" in t else 0.0)
    dev_type, dev_node, nodes = [], [], []
    for ni, n in enumerate(c["nodes"]):
        nodes.append(n)
        for _ in range(int(n["gpus"])):
            dev_type.append(n["type"])
            dev_node.append(ni)
    D = len(dev_type)
    node_idx = {n["name"]: i for i, n in enumerate(nodes)}
    links = {}
    for lk in c.get("links", []):
        a, b = node_idx[lk["a"]], node_idx[lk["b"]]
        fig = (gbps_to_bytes(lk["gbps"]), lk.get("lat_us", 0) * 1e-6)
        links[(a, b)] = fig  # undirected, later duplicate wins
        links[(b, a)] = fig
    mat = None
    if profile is not None and profile.get("bandwidth_matrix") is not None:
        mat = profile["bandwidth_matrix"]  # 7.3: profile's matrix overrides
    elif c.get("bandwidth_matrix") is not None:
        mat = c["bandwidth_matrix"]
    if mat is not None:
        bw, la = read_matrix(mat, D)
    else:
        bw = [[0.0] * D for _ in range(D)]
        la = [[0.0] * D for _ in range(D)]
        for a in range(D):
            for b in range(D):
                if a == b:
                    continue
                na, nb = dev_node[a], dev_node[b]
                if na == nb:
                    n = nodes[na]
                    bw[a][b] = gbps_to_bytes(n["intra_gbps"])
                    la[a][b] = n.get("intra_lat_us", 0) * 1e-6
                elif (na, nb) in links:
                    bw[a][b], la[a][b] = links[(na, nb)]
                else:
                    bw[a][b] = gbps_to_bytes(c["inter_gbps"])
                    la[a][b] = c.get("inter_lat_us", 0) * 1e-6
    return dict(types=types, dev_type=dev_type, dev_node=dev_node, D=D,
                bw=bw, lat=la, nnodes=len(nodes))


def load_profile(path):
    if path is None:
        return None
    with open(path) as f:
        return json.load(f)


def profile_tables(profile):
    """(kind, type, tp) -> {m: value} for seconds, act_bytes, work_bytes; last wins."""
    times, acts, works = {}, {}, {}
    if profile is None:
        return times, acts, works
    for e in profile.get("layer_times", []):
        key = (e["kind"], e["type"], int(e["tp"]))
        m = int(e["mbs"])
        # 7.4: of duplicate entries the last wins, as a whole (its memory too)
        times.setdefault(key, {})[m] = float(e["seconds"])
        for fld, tab in (("act_bytes", acts), ("work_bytes", works)):
            if fld in e:
                tab.setdefault(key, {})[m] = float(e[fld])
            elif m in tab.get(key, {}):
                del tab[key][m]
                if not tab[key]:
                    del tab[key]
    return times, acts, works


def interp(points, m):
    """Linear interpolation/extrapolation over measured points, clamped at 0;
    a single point scales in proportion to m."""
    ms = sorted(points)
    if m in points:
        return points[m]
    if len(ms) == 1:
        m0 = ms[0]
        return max(0.0, points[m0] * m / m0)
    if m < ms[0]:
        x0, x1 = ms[0], ms[1]
    elif m > ms[-1]:
        x0, x1 = ms[-2], ms[-1]
    else:
        x0 = max(x for x in ms if x < m)
        x1 = min(x for x in ms if x > m)
    y0, y1 = points[x0], points[x1]
    v = y0 + (y1 - y0) * (m - x0) / (x1 - x0)
    return max(0.0, v)


# ---------------------------------------------------------------- evaluation


def evaluate(model, cl, profile, job, plan, peak_floor=False):
    layers = model["layers"]
    L = len(layers)
    feat = set()  # which terms and branches this instance exercised (coverage)
    pb, gb, sb, ob, ub = model["pb"], model["gb"], model["sb"], model["ob"], model["ub"]
    types, dev_type, dev_node = cl["types"], cl["dev_type"], cl["dev_node"]
    BW, LAT = cl["bw"], cl["lat"]
    times, acts, works = profile_tables(profile)
    sp = bool(job.get("sequence_parallel", False))
    overlap = job.get("grad_sync", "end") == "overlap"
    schedule = job.get("schedule", "1f1b")
    gbs = int(job["gbs"])
    prof_sp = bool(profile.get("sequence_parallel", False)) if profile else False
    use_mem = profile is not None and prof_sp == sp

    pp, tp, dp, mbs = int(plan["pp"]), int(plan["tp"]), int(plan["dp"]), int(plan["mbs"])
    gas = gbs // (dp * mbs)
    assert gas * dp * mbs == gbs
    stages = plan["stages"]
    assert len(stages) == pp
    modes = [("zdp" if x == "zero3" else x) for x in plan.get("sharding", ["dp"] * L)]
    slices = [int(x) for x in plan.get("slices", [1] * L)]
    if dp == 1:
        modes = ["dp"] * L  # 7.1
    stage_layers = [list(range(st["layers"][0], st["layers"][1] + 1)) for st in stages]
    R = [bool(st.get("recompute", False)) for st in stages]
    dev = [st["devices"] for st in stages]  # dev[s][r][j]

    def tl(l):
        return tp if layers[l]["split"] else 1

    def bw(a, b):
        return BW[a][b]

    def lat(a, b):
        return LAT[a][b]

    # ---- TP group figures
    def tp_fig(s, r):
        grp = dev[s][r]
        bmin, lmax = float("inf"), 0.0
        for x in range(len(grp)):
            for y in range(len(grp)):
                if x != y:
                    bmin = min(bmin, bw(grp[x], grp[y]))
                    lmax = max(lmax, lat(grp[x], grp[y]))
        return bmin, lmax

    def analytic_time(l, k, Btp, lattp):
        L_ = layers[l]
        ty = types[k]
        v = L_["F"] * mbs / (tl(l) * ty["peak"] * ty["eff"])
        if tp > 1 and L_["C"] > 0:
            v += 2.0 * (tp - 1) / tp * L_["C"] * mbs / Btp + 2 * (tp - 1) * lattp
        return v

    def layer_time(l, k, Btp, lattp):
        v = profiled_time(l, k, Btp, lattp)
        if peak_floor and (layers[l]["kind"], k, tp) in times:
            # hetplan's floor (not in the spec): no profiled time below peak
            v = max(v, layers[l]["F"] * mbs / (tl(l) * types[k]["peak"]))
        return v

    def profiled_time(l, k, Btp, lattp):
        L_ = layers[l]
        key = (L_["kind"], k, tp)
        pts = times.get(key)
        if not pts:
            feat.add("analytic")
            return analytic_time(l, k, Btp, lattp)  # 7.4
        if mbs in pts:
            feat.add("prof-measured")
            return pts[mbs]
        if len(pts) >= 2:
            v = interp(pts, mbs)
            feat.add("prof-interp" if min(pts) < mbs < max(pts) else "prof-extrap")
            if v == 0.0:
                feat.add("prof-clamp0")
            return v
        (m0, t0), = pts.items()
        one = times.get((L_["kind"], k, 1))
        if tp > 1 and one is not None and m0 in one:
            w = one[m0] / (m0 * tl(l))
            if L_["C"] > 0:
                w += 2.0 * (tp - 1) / tp * L_["C"] / Btp
            e = max(0.0, t0 - m0 * w)
            feat.add("prof-split" + ("-e0" if e == 0 else ""))
            return max(0.0, e + mbs * w)
        feat.add("prof-prop")
        return max(0.0, t0 * mbs / m0)

    # ---- replica groups and R(n)  (section 3, 7.10, 7.19)
    Rn = [0] * cl["nnodes"]
    if dp > 1:
        for s in range(pp):
            for j in range(tp):
                grp = [dev[s][r][j] for r in range(dp)]
                ns = set(dev_node[d] for d in grp)
                if len(ns) > 1:
                    for n in ns:
                        Rn[n] += 1
    Bdp, latdp = [0.0] * pp, [0.0] * pp
    for s in range(pp):
        bmin, lmax = float("inf"), 0.0
        if dp > 1:
            for j in range(tp):
                grp = [dev[s][r][j] for r in range(dp)]
                for x in range(dp):
                    for y in range(dp):
                        if x == y:
                            continue
                        a, b = grp[x], grp[y]
                        v = bw(a, b)
                        if dev_node[a] != dev_node[b]:
                            v /= max(Rn[dev_node[a]], Rn[dev_node[b]])
                        bmin = min(bmin, v)
                        lmax = max(lmax, lat(a, b))
        Bdp[s], latdp[s] = bmin, lmax

    # ---- hand-offs e[s][r]  (H_s(n))
    e = [[0.0] * dp for _ in range(pp)]
    for s in range(pp - 1):
        H = [0] * cl["nnodes"]
        for r in range(dp):
            for j in range(tp):
                a, b = dev[s][r][j], dev[s + 1][r][j]
                if dev_node[a] != dev_node[b]:
                    H[dev_node[a]] += 1
                    H[dev_node[b]] += 1
        O = layers[stage_layers[s][-1]]["O"]
        if max(H) > 1:
            feat.add("H(n)>1")
        for r in range(dp):
            bmin, lmax = float("inf"), 0.0
            for j in range(tp):
                a, b = dev[s][r][j], dev[s + 1][r][j]
                v = bw(a, b)
                if dev_node[a] != dev_node[b]:
                    v /= max(H[dev_node[a]], H[dev_node[b]])
                bmin = min(bmin, v)
                lmax = max(lmax, lat(a, b))
            e[s][r] = 2.0 * O * mbs / tp / bmin + 2 * lmax

    # ---- stage times
    Z, Zr = [0.0] * pp, [0.0] * pp
    for s in range(pp):
        if dp > 1:
            z = 0.0
            zr = 0.0
            has = False
            for l in stage_layers[s]:
                q = layers[l]["P"] / tl(l)
                if modes[l] == "zdp":
                    z += 2.0 * (dp - 1) / dp * pb * q / Bdp[s] + 2 * (slices[l] - 1) * (dp - 1) * latdp[s]
                if modes[l] in ("zero2", "zdp"):
                    zr += (dp - 1) / dp * gb * q / Bdp[s]
                    has = True
            if has:
                zr += (dp - 1) * latdp[s]
            Z[s], Zr[s] = z, zr
    t = [[0.0] * dp for _ in range(pp)]
    bwd = [[0.0] * dp for _ in range(pp)]
    for s in range(pp):
        for r in range(dp):
            Btp, lattp = tp_fig(s, r) if tp > 1 else (float("inf"), 0.0)
            ktypes = set(dev_type[d] for d in dev[s][r])
            comp, back = 0.0, 0.0
            for l in stage_layers[s]:
                tm = max(layer_time(l, k, Btp, lattp) for k in ktypes)
                rc = 1 if (R[s] and layers[l]["ck"]) else 0
                comp += tm * (1 + rc / 3.0)
                back += tm * (2 + rc) / 3.0
            t[s][r] = comp + Z[s] + Zr[s]
            bwd[s][r] = back + Zr[s]
    Tr = []
    for r in range(dp):
        cmax = 0.0
        for s in range(pp):
            c = t[s][r] + ((e[s - 1][r] if s > 0 else 0.0) + (e[s][r] if s < pp - 1 else 0.0)) / 2
            cmax = max(cmax, c)
        Tr.append((gas - 1) * cmax + sum(t[s][r] for s in range(pp)) +
                  sum(e[s][r] for s in range(pp - 1)))

    red, gat = [0.0] * pp, [0.0] * pp
    if dp > 1:
        for s in range(pp):
            G = Gr = Gp = 0.0
            for l in stage_layers[s]:
                q = layers[l]["P"] / tl(l)
                if modes[l] == "dp":
                    G += gb * q
                if modes[l] == "zero1":
                    Gr += gb * q
                if modes[l] in ("zero1", "zero2"):
                    Gp += pb * q
            red[s] = (2.0 * (dp - 1) / dp * G + (dp - 1) / dp * Gr) / Bdp[s] + 2 * (dp - 1) * latdp[s]
            gat[s] = (dp - 1) / dp * Gp / Bdp[s]

    step = 0.0
    for s in range(pp):
        q = 0.0
        for l in stage_layers[s]:
            q += layers[l]["P"] / tl(l) / (dp if modes[l] != "dp" else 1)
        for r in range(dp):
            for d in dev[s][r]:
                h = types[dev_type[d]]["hbm"]
                if h > 0:
                    step = max(step, ub * q / h)

    if not overlap:
        T = max(Tr) + max(red) + step + max(gat)
    else:
        best = -float("inf")
        for r in range(dp):
            tail = 0.0
            for s in range(pp):
                best = max(best, Tr[r] - tail + max(0.0, red[s] - bwd[s][r]))
                tail += bwd[s][r] + (e[s][r] if s < pp - 1 else 0.0) / 2
        T = best + step + max(gat)

    # ---- memory
    def a_l(l):
        L_ = layers[l]
        if sp and tp > 1:
            return L_["A"] / tl(l)
        return (L_["A"] - L_["Ar"]) / tl(l) + L_["Ar"]

    mem = {}
    for s in range(pp):
        inflight = min(pp - s, gas) if schedule == "1f1b" else gas
        for r in range(dp):
            for d in dev[s][r]:
                k = dev_type[d]
                states = 0.0
                gather = 0.0
                for l in stage_layers[s]:
                    q = layers[l]["P"] / tl(l)
                    md = modes[l]
                    if md == "dp":
                        states += q * sb
                    elif md == "zero1":
                        states += q * (pb + gb + ob / dp)
                    elif md == "zero2":
                        states += q * (pb + (gb + ob) / dp)
                    else:
                        states += q * sb / dp
                        gather = max(gather, pb * layers[l]["P"] / tl(l) / slices[l])

                def act_of(l):
                    key = (layers[l]["kind"], k, tp)
                    if use_mem and key in acts:
                        feat.add("meas-act")
                        return interp(acts[key], mbs)
                    return mbs * a_l(l)

                def work_of(l):
                    key = (layers[l]["kind"], k, tp)
                    if use_mem and key in works:
                        feat.add("meas-work")
                        return interp(works[key], mbs)
                    return (mbs * layers[l]["W"] + layers[l]["W0"]) / tl(l)

                cks = [l for l in stage_layers[s] if layers[l]["ck"]]
                if R[s] and cks:
                    sm = 0.0
                    for l in stage_layers[s]:
                        if layers[l]["ck"]:
                            il = layers[l]["I"] / tl(l) if sp else layers[l]["I"]
                            sm += mbs * il
                        else:
                            sm += act_of(l)
                    act = inflight * sm + max(act_of(l) for l in cks)
                    feat.add("recompute-ck" + ("-mixed" if len(cks) < len(stage_layers[s]) else ""))
                else:
                    act = inflight * sum(act_of(l) for l in stage_layers[s])
                work = max(work_of(l) for l in stage_layers[s])
                mem[d] = states + gather + act + work + types[k]["res"]
    if profile is not None and not use_mem:
        feat.add("prof-mem-ignored")
    if any(x > 1 for x in Rn):
        feat.add("R(n)>1")
    if overlap and dp > 1:
        feat.add("overlap")
    if dp > 1:
        feat.update("mode-" + m for m in set(modes))
        if any(slices[l] > 1 for l in range(L) if modes[l] == "zdp"):
            feat.add("slices")
    if step > 0:
        feat.add("step")
    if len(mem) < cl["D"]:
        feat.add("idle")
    if sp and tp > 1:
        feat.add("sp")
    if tp > 1:
        feat.add("tp%d" % tp)
    if pp > 1:
        feat.add("pp>1")
    oom = None
    for d in sorted(mem):
        if mem[d] > types[dev_type[d]]["mem"]:
            oom = d
            break
    used_peak = sum(types[dev_type[d]]["peak"] for d in mem)
    mfu = sum(l["F"] for l in layers) * gbs / T / used_peak
    if oom is not None:
        feat.add("oom")
    return dict(iteration_time=T, mfu=mfu, feasible=oom is None, oom_device=oom, features=sorted(feat),
                peak_memory=[dict(device=d, bytes=mem[d], capacity=types[dev_type[d]]["mem"])
                             for d in sorted(mem)],
                detail=dict(t=t, b=bwd, e=e, Z=Z, Zr=Zr, red=red, gat=gat, step=step,
                            Tr=Tr, Bdp=Bdp, latdp=latdp))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--cluster", required=True)
    ap.add_argument("--profile")
    ap.add_argument("--job", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--detail", action="store_true")
    ap.add_argument("--peak-floor", action="store_true",
                    help="floor profiled times at the type's peak, as hetplan does (not in the spec)")
    a = ap.parse_args()
    profile = load_profile(a.profile)
    model = load_model(a.model)
    cl = load_cluster(a.cluster, profile)
    with open(a.job) as f:
        job = json.load(f)
    with open(a.plan) as f:
        plan = json.load(f)
    res = evaluate(model, cl, profile, job, plan, a.peak_floor)
    if not a.detail:
        del res["detail"]
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
