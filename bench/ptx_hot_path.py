#!/usr/bin/env python3
# PTX hot path of each cp.async-pipelined loop (header = a block holding
# cp.async.wait_group): over the paths from the header back to it that
# avoid per-element fallback blocks (16-bit ld.global / st.shared), those
# with the most cp.async, the shortest.  Counts PTX instruction statements
# (inline asm statements included, .reg lines excluded).  f16 tiles only
# (the fallback test is 16-bit specific).
# usage: ptx_hot_path.py FILE.ptx [-v LABEL]   (-v: print LABEL's path)
import re,sys
def parse(fn):
    lines=open(fn).read().split('\n')
    blocks={};order=[];cur='ENTRY';blocks[cur]=[];order.append(cur)
    for l in lines:
        s=l.strip()
        m=re.match(r'^(\$L__\w+):$',s)
        if m:
            cur=m.group(1);blocks[cur]=[];order.append(cur);continue
        if not s or s.startswith('//') or s.startswith('.') or s in('{','}') or not s.endswith(';'): continue
        if s.startswith('.reg'): continue
        blocks[cur].append(s)
        if re.match(r'^(@\S+\s+)?bra',s) and s.startswith('@'):
            cur=cur+'_f';blocks[cur]=[];order.append(cur)
    return blocks,order
def succ(blocks,order,b):
    ins=blocks[b];i=order.index(b);out=[]
    fall=True
    for last in ins[-2:]:
        m=re.match(r'^(@%?!?%?\w+\s+)?bra(\.uni)?\s+(\$L__\w+);',last)
        if m:
            out.append(m.group(3))
            if not m.group(1): fall=False
    if ins and ins[-1].startswith('ret'): fall=False
    if fall and i+1<len(order): out.append(order[i+1])
    return out
SETP=r'^(@\S+ )?setp'
def cnt(ins,p): return sum(1 for x in ins if re.search(p,x))
def cold(ins): return cnt(ins,r'ld\.global(\.nc)?\.b16|st\.shared\.u16')>0
def main(fn):
    blocks,order=parse(fn)
    res=[]
    for b in order:
        for s in succ(blocks,order,b):
            if order.index(s)<=order.index(b) or True:
                pass
    # loop headers: any block with a wgmma.fence or mma.sync reachable back to itself
    heads=[b for b in order if any('cp.async.wait_group' in x for x in blocks[b])]
    for h in heads:
        best=None
        sys.setrecursionlimit(10000)
        stack=[(h,[h])]
        found=[]
        def dfs(b,path,n):
            if len(found)>20000: return
            for s in succ(blocks,order,b):
                if s==h:
                    found.append(list(path));continue
                if s in path or cold(blocks[s]): continue
                path.append(s);dfs(s,path,n);path.pop()
        dfs(h,[h],0)
        if not found: continue
        stats=[]
        for p in found:
            ins=[x for b in p for x in blocks[b]]
            stats.append((cnt(ins,r'cp\.async\.cg|cp\.async\.ca'),cnt(ins,r'wgmma\.mma_async|mma\.sync'),-len(ins),p,ins))
        mx=max(s[0] for s in stats); 
        c=[s for s in stats if s[0]==mx]; c.sort(key=lambda s:-s[2])
        s=c[0]
        ins=s[4]
        print(f"{fn.split('/')[-1]} loop {h}: hot path {len(ins)} PTX, cp.async {s[0]}, mma {s[1]}, setp {cnt(ins,SETP)}, and.pred {cnt(ins,r'and.pred')}, selp {cnt(ins,r'selp')}, bra {cnt(ins,r'bra')}, add.s64 {cnt(ins,r'add.s64')}, paths {len(found)}")
        if len(sys.argv)>2 and sys.argv[2]=='-v' and h==sys.argv[3]: print('\n'.join(ins))
main(sys.argv[1])
