import sys, re
def parse(fn):
    rows=[]
    for l in open(fn):
        if not l.startswith('0x'): continue
        toks=l.split()[1:]; i=next(k for k,t in enumerate(toks) if t.isdigit()); txt=' '.join(toks[:i]); f=toks[i:]
        rows.append((txt,int(f[0]),int(f[1]),int(f[3])))
    return rows
for fn in sys.argv[1:]:
    rows=parse(fn)
    tot=sum(r[1] for r in rows); ex=sum(r[3] for r in rows)
    print(f"== {fn}: samples {tot}, warp instrs executed {ex}")
    top=sorted(rows,key=lambda r:-r[1])[:14]
    for t in top: print(f"  {t[1]:6d} {100*t[1]/tot:5.1f}%  exec {t[3]:8d}  {t[0]}")
    # executed by opcode class
    d={}
    for t in rows:
        op=re.sub(r'^@!?P\w+\s+','',t[0]).split()[0].split('.')[0] if t[0] else '?'
        d[op]=d.get(op,0)+t[3]
    print("  by op:", ", ".join(f"{k} {v/1e6:.1f}M" for k,v in sorted(d.items(),key=lambda x:-x[1])[:14]))
