# Samples CPU busy share per second of a loadgen process and its child servers until it exits.
# usage: sample_cpu.py OUT.tsv -- command...
import os, subprocess, sys, time
out = sys.argv[1]; cmd = sys.argv[3:]
hz = os.sysconf('SC_CLK_TCK')
def ticks(pid):
    try:
        s = open(f'/proc/{pid}/stat').read()
        f = s[s.rfind(')')+2:].split()
        return int(f[11]) + int(f[12])
    except Exception:
        return None
def children(pid):
    try:
        return [int(c) for c in open(f'/proc/{pid}/task/{pid}/children').read().split()]
    except Exception:
        return []
p = subprocess.Popen(cmd)
rows = []
prev = None
t0 = time.time()
while p.poll() is None:
    time.sleep(1)
    kids = children(p.pid)
    lg = ticks(p.pid); sv = sum(t for t in (ticks(k) for k in kids) if t is not None) if kids else None
    now = (time.time(), lg, sv, len(kids))
    if prev and lg is not None and prev[1] is not None:
        dt = now[0] - prev[0]
        l = (lg - prev[1]) / hz / dt
        s = (sv - prev[2]) / hz / dt if (sv is not None and prev[2] is not None and now[3] == prev[3]) else float('nan')
        rows.append(f"{now[0]-t0:.1f}\t{l:.3f}\t{s:.3f}\t{os.getloadavg()[0]:.1f}")
    prev = now
open(out, 'w').write("t_s\tloadgen_busy\tserver_busy\tload1\n" + "\n".join(rows) + "\n")
sys.exit(p.returncode)
