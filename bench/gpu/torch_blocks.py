"""torch_blocks.py MODEL.json PROFILE.json OUT.json -- PyTorch's fwd+bwd time and saved
activations of the same transformer block that hetplan-profile timed (the model's
"block" kind), at the profile's micro-batch sizes, bf16 on the GPU present. Two attention
paths: 'math' (scores materialised, as the profiler's op list and hetplan's memory model
have it) and 'sdpa' (PyTorch's fused attention). Prints a table, writes JSON."""
import json, math, sys, statistics
import torch
import torch.nn as nn
import torch.nn.functional as F

model = json.load(open(sys.argv[1]))
prof = json.load(open(sys.argv[2]))
tf = model["transformer"]
fam, h, a, s = tf["family"], tf["hidden"], tf["heads"], tf["seq"]
kv = tf.get("kv_heads") or a
ffn = tf.get("ffn") or (4 * h if fam == "gpt" else 256 * ((int(8 * h / 3) + 255) // 256))
d = h // a
dev = "cuda"
dt = torch.bfloat16
drop = 0.1 if fam == "gpt" and "--dropout" in sys.argv else 0.0   # Megatron's GPT dropouts

class Block(nn.Module):
    def __init__(self, attn):
        super().__init__()
        self.attn = attn
        gpt = fam == "gpt"
        self.n1 = nn.LayerNorm(h) if gpt else nn.RMSNorm(h)
        self.n2 = nn.LayerNorm(h) if gpt else nn.RMSNorm(h)
        self.qkv = nn.Linear(h, h + 2 * kv * d, bias=gpt or bool(tf.get("qkv_bias")))
        self.proj = nn.Linear(h, h, bias=gpt)
        if gpt:
            self.fc1 = nn.Linear(h, ffn); self.fc2 = nn.Linear(ffn, h)
        else:
            self.gate = nn.Linear(h, ffn, bias=False); self.up = nn.Linear(h, ffn, bias=False)
            self.down = nn.Linear(ffn, h, bias=False)
        self.register_buffer("mask", torch.ones(s, s, dtype=torch.bool).triu(1), persistent=False)

    def forward(self, x):                      # x: (b, s, h)
        b = x.shape[0]
        y = self.qkv(self.n1(x))
        q, k, v = y.split([h, kv * d, kv * d], dim=-1)
        q = q.view(b, s, a, d).transpose(1, 2)
        k = k.view(b, s, kv, d).transpose(1, 2)
        v = v.view(b, s, kv, d).transpose(1, 2)
        if kv != a:
            k = k.repeat_interleave(a // kv, 1); v = v.repeat_interleave(a // kv, 1)
        if self.attn == "sdpa":
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            sc = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(d))
            sc = sc.masked_fill(self.mask, float("-inf"))
            o = F.dropout(torch.softmax(sc, dim=-1), drop, self.training) @ v
        x = x + F.dropout(self.proj(o.transpose(1, 2).reshape(b, s, h)), drop, self.training)
        z = self.n2(x)
        if fam == "gpt":
            z = F.dropout(self.fc2(F.gelu(self.fc1(z), approximate="tanh")), drop, self.training)
        else:
            z = self.down(F.silu(self.gate(z)) * self.up(z))
        return x + z

def measure(attn, mbs, warm=10, reps=20):
    torch.manual_seed(0)
    blk = Block(attn).to(dev, dt)
    x = torch.randn(mbs, s, h, device=dev, dtype=dt, requires_grad=True)
    g = torch.randn(mbs, s, h, device=dev, dtype=dt)
    for _ in range(warm):
        blk(x).backward(g)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); blk(x).backward(g); e1.record(); torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) / 1e3)
    # saved activations: allocated after the forward less before it, the output excluded
    for p in blk.parameters(): p.grad = None
    x.grad = None
    torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
    m0 = torch.cuda.memory_allocated()
    y = blk(x)
    torch.cuda.synchronize()
    saved = torch.cuda.memory_allocated() - m0 - y.numel() * y.element_size()
    y.backward(g); torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - m0
    del y, blk, x, g
    torch.cuda.empty_cache()
    return statistics.median(times), saved, peak

kind_rows = [r for r in prof.get("layer_times", []) if r["kind"] == "block" and r["tp"] == 1]
exp_block = next(l for l in model.get("layers_expanded", []) if l["kind"] == "block") if model.get("layers_expanded") else None
out = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "family": fam, "hidden": h, "dropout": drop,
       "heads": a, "kv_heads": kv, "ffn": ffn, "seq": s, "rows": []}
print("%s on %s, torch %s: block of %s (h %d, a %d, kv %d, ffn %d, s %d), bf16, dropout %g" % (
      model.get("name"), out["gpu"], torch.__version__, fam, h, a, kv, ffn, s, drop))
print("%4s %12s %12s %8s %12s %8s %14s %14s %8s %14s" % ("mbs", "profiler s", "torch math s", "err", "torch sdpa s",
      "err", "hetplan act B", "torch saved B", "err", "torch peak B"))
for r in sorted(kind_rows, key=lambda r: r["mbs"]):
    mbs = r["mbs"]
    tm, saved, peak = measure("math", mbs)
    ts, _, _ = measure("sdpa", mbs)
    act = exp_block["act_bytes"] * mbs if exp_block else float("nan")
    row = {"mbs": mbs, "profiler_s": r["seconds"], "torch_math_s": tm, "torch_sdpa_s": ts,
           "err_math": r["seconds"] / tm - 1, "err_sdpa": r["seconds"] / ts - 1,
           "hetplan_act_bytes": act, "torch_saved_bytes": saved, "act_err": act / saved - 1,
           "torch_peak_bytes": peak, "profiler_act_bytes": r.get("act_bytes"), "profiler_peak_bytes": r.get("peak_bytes")}
    out["rows"].append(row)
    print("%4d %12.6f %12.6f %+7.1f%% %12.6f %+7.1f%% %14.0f %14.0f %+7.1f%% %14.0f" % (
          mbs, r["seconds"], tm, 100 * row["err_math"], ts, 100 * row["err_sdpa"], act, saved,
          100 * row["act_err"], peak))
json.dump(out, open(sys.argv[3], "w"), indent=1)
