#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Writes the hand-made fuzz_session seeds (hand-*, regress-*) into the folder
# given: records a ring seldom shows (deferred callchains, tid reuse, backward
# reads, idle, exits, lost/throttle) and two regressions (see regress_*).
# Usage: fuzz/tools/hand_seeds.py fuzz/corpus/session
import struct, sys
IP,TID,TIME,CPU,READ,CALLCHAIN,IDENT=1,2,4,0x80,0x10,0x20,0x10000
ST=IP|TID|TIME|CPU|READ|CALLCHAIN|IDENT
RF=0xc
KCTX=(1<<64)-128; UCTX=(1<<64)-512; UDEF=(1<<64)-640
def rec(typ, body, misc=0):
    size=8+len(body)
    return struct.pack('<IHH',typ,misc,size)+body
def trailer(pid,tid,t,cpu=0,ident=10):
    return struct.pack('<IIQIIQ',pid,tid,t,cpu,0,ident)
def sample(ident,pid,tid,t,cpu,vals,chain,misc=2):
    b=struct.pack('<QQIIQII',ident,chain[-1] if chain else 0x1234,pid,tid,t,cpu,0)
    b+=struct.pack('<Q',len(vals))+b''.join(struct.pack('<QQ',v,i) for v,i in vals)
    b+=struct.pack('<Q',len(chain))+b''.join(struct.pack('<Q',c) for c in chain)
    return rec(9,b,misc)
def comm(pid,tid,name,t,exec_=False):
    s=name.encode()+b'\0'
    s+=b'\0'*((8-len(s)%8)%8)
    return rec(3,struct.pack('<II',pid,tid)+s+trailer(pid,tid,t),0x2000 if exec_ else 0)
def task(typ,pid,ppid,tid,ptid,t,cpu=0):
    return rec(typ,struct.pack('<IIIIQ',pid,ppid,tid,ptid,t)+trailer(pid,tid,t,cpu))
def mmap2(pid,tid,addr,ln,pgoff,name,t):
    s=name.encode()+b'\0'; s+=b'\0'*((8-len(s)%8)%8)
    b=struct.pack('<IIQQQIIQQII',pid,tid,addr,ln,pgoff,8,1,1234,0,5,2)+s
    return rec(10,b+trailer(pid,tid,t))
def deferred(pid,tid,t,cookie,ips):
    return rec(22,struct.pack('<QQ',cookie,len(ips))+b''.join(struct.pack('<Q',i) for i in ips)+trailer(pid,tid,t))
def lost(t): return rec(2,struct.pack('<QQ',10,7)+trailer(100,100,t))
def throttle(t): return rec(5,struct.pack('<QQQ',t,10,10)+trailer(100,100,t))
def lost_samples(t): return rec(13,struct.pack('<Q',3)+trailer(100,100,t))
def header(mode,root,ids):
    h=struct.pack('<BBBBIQQQ',mode,len(ids),1,0,root,ST,RF,0)
    return h+b''.join(struct.pack('<Qb',i,r) for i,r in ids)
ids=[(10,-1),(11,-2),(12,0),(13,-3),(14,1)]
def stream(per_cpu):
    r=[]
    r.append(comm(100,100,'main',1))
    r.append(comm(100,100,'main2',2,True))
    r.append(mmap2(100,100,0x400000,0x10000,0,'/bin/true',3))
    r.append(task(7,101,100,101,100,4))
    r.append(task(7,100,100,102,100,4))
    r.append(comm(100,102,'worker',5))
    ch=[KCTX,0xffffffff81000010,UDEF,77]
    r.append(sample(10,100,100,10,0,[(100,10),(50,11),(5,12),(1,13),(2,14)],ch))
    r.append(deferred(100,100,11,77,[0x401000,0x402000]))
    r.append(sample(10,100,100,12,0,[(200,10),(90,11),(9,12)],[KCTX,0xffffffff81000020,UDEF,78]))
    r.append(deferred(100,100,13,79,[0x401000]))
    r.append(sample(10,100,100,14,0,[(250,10),(95,11)],[KCTX,0xffffffff81000020,UDEF,80]))
    r.append(sample(13,100,102,15,1,[(300,10),(120,11),(12,12),(4,13)],[UCTX,0x401234,0x401300]))
    r.append(sample(10,100,102,16,1,[(310,10),(130,11),(13,12)],[UCTX,0x401234]))
    r.append(sample(10,101,101,17,1,[(5,10),(3,11),(20,12)],[UCTX,0x9999]))
    r.append(sample(10,100,102,18,1,[(100,10),(10,11),(2,12)],[UCTX,0x401234]))  # backwards
    r.append(lost(19)); r.append(throttle(19)); r.append(lost_samples(19))
    r.append(task(4,101,100,101,100,20,1))
    r.append(sample(13,0xffffffff,0xffffffff,21,1,[(400,10),(140,11),(14,12),(5,13)],[UCTX,0x401234]))
    r.append(sample(13,0,0,22,0,[(500,10),(150,11),(15,12),(6,13)],[KCTX,0xffffffff81000030]))
    r.append(sample(10,0,0,23,0,[(510,10),(160,11),(16,12)],[KCTX,0xffffffff81000030]))
    r.append(task(7,103,100,103,100,24))
    r.append(sample(10,103,103,25,0,[(600,10),(170,11),(20,12)],[UCTX,0x401234]))
    r.append(task(7,100,100,102,100,26))  # tid reuse
    r.append(sample(10,100,102,27,1,[(7,10),(1,11),(1,12)],[UCTX,0x401234]))
    r.append(rec(9,b'\0'*4))  # malformed
    return b''.join(r)
for name,mode in [('hand-task',0x10),('hand-cpu',0x01|0x02),('hand-cpu-tree',0x01|0x04|0x10),('hand-task-tree',0x04|0x08)]:
    open(sys.argv[1]+'/'+name,'wb').write(header(mode,100,ids)+stream(mode&1))
# Regressions: a FORK of tid -1 in per-CPU mode must not restart the CPU's
# counters; a cut reading an id its thread's samples lack keeps its delta.
def regress_fork():
    r=[sample(10,100,100,10,0,[(100,10),(50,11),(5,12)],[UCTX,0x401000])]
    r.append(task(7,0xffffffff,100,0xffffffff,100,15))
    r.append(sample(10,100,100,20,0,[(150,10),(60,11),(9,12)],[UCTX,0x401000]))
    return b''.join(r)
def regress_cut():
    r=[sample(10,100,101,10,0,[(100,10),(50,11)],[UCTX,0x401000])]
    r.append(sample(13,100,101,20,0,[(150,10),(60,11),(9,12),(1,13)],[UCTX,0x401000]))
    return b''.join(r)
open(sys.argv[1]+'/regress-cpu-fork-tid-1','wb').write(header(0x01,100,ids)+regress_fork())
open(sys.argv[1]+'/regress-cut-slot','wb').write(header(0x00,100,ids)+regress_cut())
b=bytearray(open(sys.argv[1]+'/hand-task-tree','rb').read()); b[0]|=0x20
open(sys.argv[1]+'/hand-task-seeded','wb').write(b)
