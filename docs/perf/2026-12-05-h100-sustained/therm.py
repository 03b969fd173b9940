# Per-launch device times of cuBLAS bmm 8x4096^3, back to back for 4 s after 3 s idle,
# summarised per 200 ms window: how fast sustained clocks set in.
import time, sys, torch
x = torch.randn(8, 4096, 4096, device="cuda", dtype=torch.float16)
y = torch.randn(8, 4096, 4096, device="cuda", dtype=torch.float16)
o = torch.empty_like(x)
flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
for _ in range(3): torch.bmm(x, y, out=o)
torch.cuda.synchronize()
for flush_on in (False, True):
    time.sleep(3)
    ev = []
    t0 = time.time()
    while time.time() - t0 < 4:
        batch = []
        for _ in range(20):
            if flush_on: flush.zero_()
            s, e = torch.cuda.Event(True), torch.cuda.Event(True)
            s.record(); torch.bmm(x, y, out=o); e.record(); batch.append((s, e))
        torch.cuda.synchronize()
        ev += [(time.time() - t0, s.elapsed_time(e)) for s, e in batch]
    w = {}
    for t, ms in ev: w.setdefault(int(t / 0.2), []).append(ms)
    print("flush", flush_on, " ".join(f"{k*0.2:.1f}s:{sorted(v)[len(v)//2]:.3f}" for k, v in sorted(w.items())), file=sys.stderr)
