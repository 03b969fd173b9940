import os, sys, time, torch
torch._inductor.config.emulate_precision_casts = True
b, n = 8, 4096
x = torch.randn(b, n, n, device="cuda", dtype=torch.float16)
y = torch.randn(b, n, n, device="cuda", dtype=torch.float16)
f = torch.compile(lambda a, c: torch.bmm(a, c), fullgraph=True, dynamic=False, mode="max-autotune-no-cudagraphs")
t0 = time.time(); out = f(x, y); torch.cuda.synchronize(); print("compile s", time.time() - t0, file=sys.stderr)
def t(fn, it=50):
    for _ in range(5): fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(True), torch.cuda.Event(True)
    ts = []
    for _ in range(it):
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts)//2]
if not os.environ.get("PROF"): print("compiled ms", t(lambda: f(x, y)), "bmm ms", t(lambda: torch.bmm(x, y)), file=sys.stderr)
if os.environ.get("PROF"):
    torch.cuda.synchronize()
    for _ in range(3): f(x, y)
    torch.cuda.synchronize()
