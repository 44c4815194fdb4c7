"""stage_mem.py MODEL.json EXPANDED.json CLUSTER.json HETPLAN OUT.json [PROFILE.json] -- the memory of one
pipeline stage of K Llama blocks (K = 1, 2, 4; mbs 1, 2) on the GPU present: PyTorch's
max_memory_allocated over a training step (bf16 weights and gradients, fp32 master weights
and AdamW moments as in Megatron's mixed precision; the attention scores materialised)
against hetplan's memory model (evaluate --json, the CUDA-context reserve taken off). With
PROFILE.json (hetplan-profile's, cost model 1.2) the prediction charges its measured act_bytes
and work_bytes for the blocks instead of the formula's."""
import json, math, subprocess, sys
import torch
import torch.nn as nn
import torch.nn.functional as F

model, expanded, cluster, hetplan, outp = sys.argv[1:6]
profile = sys.argv[6] if len(sys.argv) > 6 else None
tf = json.load(open(model))["transformer"]
h, a, s = tf["hidden"], tf["heads"], tf["seq"]
ffn = tf.get("ffn") or 256 * ((int(8 * h / 3) + 255) // 256)
d = h // a
ex = json.load(open(expanded))


def leaves(nodes):
    """The layers of a "modules" tree in document order (formats.md "Model")."""
    return [l for n in nodes for l in (leaves(n["children"]) if "children" in n else [n])]


if "modules" in ex:   # hetplan expand writes the generator's module tree
    ex["layers"] = leaves(ex.pop("modules"))
blk_layer = next(l for l in ex["layers"] if l["kind"] == "block")
reserved = json.load(open(cluster))["device_types"]["H100"]["reserved_gib"] * 2**30

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.n1, self.n2 = nn.RMSNorm(h), nn.RMSNorm(h)
        self.qkv = nn.Linear(h, 3 * h, bias=False); self.proj = nn.Linear(h, h, bias=False)
        self.gate = nn.Linear(h, ffn, bias=False); self.up = nn.Linear(h, ffn, bias=False)
        self.down = nn.Linear(ffn, h, bias=False)
        self.register_buffer("mask", torch.ones(s, s, dtype=torch.bool).triu(1), persistent=False)
    def forward(self, x):
        b = x.shape[0]
        q, k, v = (t.view(b, s, a, d).transpose(1, 2) for t in self.qkv(self.n1(x)).split(h, -1))
        sc = ((q @ k.transpose(-1, -2)) / math.sqrt(d)).masked_fill(self.mask, float("-inf"))
        x = x + self.proj((torch.softmax(sc, -1) @ v).transpose(1, 2).reshape(b, s, h))
        z = self.n2(x)
        return x + self.down(F.silu(self.gate(z)) * self.up(z))

rows = []
top = {k: ex[k] for k in ("param_bytes", "grad_bytes", "state_bytes") if k in ex}
for K in (1, 2, 4):
    for mbs in (1, 2):
        mj = dict(top, version=1, name="stage", layers=[dict(blk_layer, name="block.%d" % i) for i in range(K)])
        json.dump(mj, open("/tmp/stage.json", "w"))
        pj = {"version": 1, "pp": 1, "tp": 1, "dp": 1, "mbs": mbs, "schedule": "1f1b",
              "stages": [{"layers": [0, K - 1], "devices": [[0]]}]}
        json.dump(pj, open("/tmp/stage.plan.json", "w"))
        r = subprocess.run([hetplan, "evaluate", "--model", "/tmp/stage.json", "--cluster", cluster,
                            "--plan", "/tmp/stage.plan.json", "--gbs", str(mbs), "--json"]
                           + (["--profile", profile] if profile else []),
                           capture_output=True, text=True)
        if r.returncode not in (0, 5):
            print(r.stderr); sys.exit(1)
        M = json.loads(r.stdout)["peak_memory"][0]["bytes"] - reserved
        torch.manual_seed(0)
        blocks = nn.Sequential(*[Block() for _ in range(K)]).cuda().to(torch.bfloat16)
        master = [p.detach().float().clone().requires_grad_(True) for p in blocks.parameters()]
        opt = torch.optim.AdamW(master, lr=1e-5, foreach=False)
        x = torch.randn(mbs, s, h, device="cuda", dtype=torch.bfloat16)
        def step():
            blocks(x).float().pow(2).mean().backward()
            for p, q in zip(blocks.parameters(), master):
                q.grad = p.grad.float(); p.grad = None
            opt.step(); opt.zero_grad(set_to_none=True)
            with torch.no_grad():
                for p, q in zip(blocks.parameters(), master): p.copy_(q)
        step(); torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        step(); torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        params = sum(p.numel() for p in blocks.parameters())
        row = {"blocks": K, "mbs": mbs, "params": params, "hetplan_bytes": M, "torch_peak_bytes": peak,
               "err": M / peak - 1, "profile": profile}
        rows.append(row)
        print("K %d mbs %d: %d parameters; hetplan %.3f GiB, torch max_memory_allocated %.3f GiB: %+.1f%%" % (
              K, mbs, params, M / 2**30, peak / 2**30, 100 * row["err"]), flush=True)
        del blocks, master, opt, x
        torch.cuda.empty_cache()
json.dump(rows, open(outp, "w"), indent=1)
