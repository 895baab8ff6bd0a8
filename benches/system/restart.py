#!/usr/bin/env python3
"""Restart to serving with 150,000 pods of ~1.8 KB, and the memory after it.

Starts the release binary on a free loopback port with a temporary data dir,
creates N pods (default 150,000) over keep-alive connections: by default the
same pods as list_rss.py (about 4.7 KB of JSON each once defaults and
managedFields are in); with --pod-bytes B, pods of about B bytes of JSON as
served (a smaller template, padded by one annotation whose length a probe pod,
created and deleted first, measures), waits for the log to write a snapshot (optional), stops the
server with SIGTERM (by PID) and waits for it to exit, then starts it again on
the same data dir and times, from the exec to:
  - the first successful GET /readyz (200);
  - the first successful list of pods (limit=1, 200 with one item);
after the first restart it lists every pod in pages and checks there are N.
It prints both times, the server's own "log recovered" line, VmRSS and VmHWM
after the restart, the data dir's size, and memory per object: the objects'
JSON per pod (the server's `shardline_memory_bytes{kind="live_json"}`) and
resident bytes per pod ((VmRSS - --baseline-rss-mib) / N) as a multiple of it. Repeats the restart --restarts
times (default 3) and prints each. Stops the server by PID. A measurement,
not a test: run it by hand, record results in docs/benchmarks.md.

Usage: python3 benches/system/restart.py [--pods N] [--shards S] [--pod-bytes B]
           [--binary target/release/shardline] [--restarts 3] [--keep]
           [--data-dir DIR [--resume]] [--baseline-rss-mib M]
With --data-dir it restarts on a data dir kept by an earlier run (--keep)
instead of loading a new one (--resume: first create the pods it lacks, after
an interrupted load). Copy the dir first when comparing binaries: a newer
binary may rewrite the log's files in a format the older cannot read.
"""
import argparse, http.client, json, os, shutil, signal, socket, subprocess, sys, tempfile, threading, time, urllib.parse

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0

PADDING = "bench.shardline.dev/padding"

def pod(ns, name, padding=None):
    """The pod template: 24 variables and resource limits (about 4.7 KB
    stored); with `padding` (the --pod-bytes template), one plain container
    (about 1.6 KB with defaults and managedFields) and an annotation of that
    many bytes."""
    metadata = {"name": name, "labels": {"app": "web", "tier": "front", "pod-template-hash": "7d4b9c"}}
    container = {"name": "app", "image": "registry.example/app:1.0"}
    if padding is None:
        container["env"] = [{"name": f"VARIABLE_{i:02}", "value": f"value-{i:02}-{name}"} for i in range(24)]
        container["resources"] = {"limits": {"cpu": "500m", "memory": "256Mi"}}
    else:
        metadata["annotations"] = {PADDING: "x" * padding}
    return {"metadata": metadata,
            "spec": {"nodeName": "node-17", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                     "serviceAccountName": "default", "containers": [container]}}

def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try: total += os.path.getsize(os.path.join(root, f))
            except OSError: pass
    return total

def start(binary, port, data, shards, log_path):
    args = [binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data]
    if shards: args += ["--shards", str(shards)]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=open(log_path, "a"))

def get(port, path, timeout=5):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    c.request("GET", path, headers={"Accept": "application/json"})
    r = c.getresponse(); body = r.read(); c.close()
    return r.status, body

def wait_ready(server, port, limit_s=120):
    deadline = time.time() + limit_s
    while time.time() < deadline:
        if server.poll() is not None: raise RuntimeError(f"server exited with {server.returncode}")
        try:
            if get(port, "/readyz")[0] == 200: return
        except OSError: pass
        time.sleep(0.002)
    raise RuntimeError("not ready in time")

def stop(server):
    server.send_signal(signal.SIGTERM)
    try: server.wait(timeout=600)  # a clean stop writes a snapshot first
    except subprocess.TimeoutExpired: server.kill(); server.wait()

def padding_for(conn, pod_bytes):
    """The annotation length that makes a pod about `pod_bytes` of JSON as
    served: a probe pod with an empty one is created, read and deleted."""
    path = "/api/v1/namespaces/ns-10/pods"
    conn.request("POST", path, json.dumps(pod("ns-10", "probe-000000", padding=0)), {"Content-Type": "application/json"})
    r = conn.getresponse(); r.read()
    if r.status != 201: raise RuntimeError(f"probe pod: {r.status}")
    conn.request("GET", f"{path}/probe-000000", headers={"Accept": "application/json"})
    r = conn.getresponse(); size = len(r.read())
    conn.request("DELETE", f"{path}/probe-000000?gracePeriodSeconds=0")
    r = conn.getresponse(); r.read()
    if r.status not in (200, 202): raise RuntimeError(f"deleting the probe pod: {r.status}")
    if size > pod_bytes: print(f"pods without padding are {size} bytes, more than --pod-bytes {pod_bytes}")
    return max(0, pod_bytes - size)

def load(port, pods, threads, first=0, pod_bytes=0):
    namespaces = [f"ns-{i}" for i in range(50)]
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for ns in namespaces:
        c.request("POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": ns}}), {"Content-Type": "application/json"})
        c.getresponse().read()
    padding = padding_for(c, pod_bytes) if pod_bytes else None
    counter = iter(range(first, pods)); lock = threading.Lock(); errors = []
    def loader():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while True:
            with lock:
                i = next(counter, None)
            if i is None: return
            ns = namespaces[i % 50]; name = f"pod-{i:06}"
            conn.request("POST", f"/api/v1/namespaces/{ns}/pods", json.dumps(pod(ns, name, padding)), {"Content-Type": "application/json"})
            r = conn.getresponse(); r.read()
            if r.status != 201 and not (first and r.status == 409): errors.append(r.status)
    ts = [threading.Thread(target=loader) for _ in range(threads)]
    for t in ts: t.start()
    for t in ts: t.join()
    return errors

def timed_restart(binary, port, data, shards, log_path, pods):
    with open(log_path, "a") as f: f.write("--- restart ---\n")
    t0 = time.monotonic()
    server = start(binary, port, data, shards, log_path)
    ready_s = list_s = None
    deadline = t0 + 120
    while time.monotonic() < deadline:
        if server.poll() is not None: raise RuntimeError(f"server exited with {server.returncode}")
        try:
            if ready_s is None and get(port, "/readyz")[0] == 200:
                ready_s = time.monotonic() - t0
            if ready_s is not None:
                st, body = get(port, "/api/v1/pods?limit=1", timeout=30)
                if st == 200 and len(json.loads(body)["items"]) == 1:
                    list_s = time.monotonic() - t0
                    break
        except OSError: pass
        time.sleep(0.002)
    if list_s is None: raise RuntimeError("not serving in time")
    return server, ready_s, list_s

def count_pods(port):
    """Pods listed in pages of 5,000 (after the timing: checks that all came back)."""
    token, n = "", 0
    while True:
        q = "limit=5000" + (f"&continue={urllib.parse.quote(token)}" if token else "")
        st, body = get(port, f"/api/v1/pods?{q}", timeout=60)
        if st != 200: raise RuntimeError(f"list answered {st}")
        page = json.loads(body); n += len(page["items"])
        token = page["metadata"].get("continue", "")
        if not token: return n

def live_json_bytes(port):
    """The objects' JSON the shards hold (/metrics, summed over shards)."""
    st, body = get(port, "/metrics", timeout=30)
    if st != 200: raise RuntimeError(f"/metrics answered {st}")
    total = 0
    for line in body.decode().splitlines():
        if line.startswith('shardline_memory_bytes{kind="live_json"'):
            total += int(float(line.rsplit(" ", 1)[1]))
    return total

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, default=150_000)
    ap.add_argument("--shards", type=int, default=0, help="--shards of the server (0: its default)")
    ap.add_argument("--binary", default="target/release/shardline")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--restarts", type=int, default=3)
    ap.add_argument("--data-dir", default="", help="reuse a loaded data dir (skips loading; --pods must match)")
    ap.add_argument("--resume", action="store_true", help="with --data-dir: create the pods it lacks first")
    ap.add_argument("--keep", action="store_true", help="keep the data dir (printed)")
    ap.add_argument("--pod-bytes", type=int, default=0,
                    help="pods of about this many bytes of JSON as served (0: the 4.7 KB template)")
    ap.add_argument("--baseline-rss-mib", type=float, default=0.0,
                    help="VmRSS of the server with (almost) nothing loaded, subtracted for memory per object")
    args = ap.parse_args()
    port = free_port()
    data = args.data_dir or tempfile.mkdtemp(prefix="shardline-restart-")
    log_path = os.path.join(tempfile.gettempdir(), f"shardline-restart-{os.getpid()}.log")
    server = None
    try:
        if not args.data_dir or args.resume:
            server = start(args.binary, port, data, args.shards, log_path)
            wait_ready(server, port)
            # Resuming an interrupted load: the pods are created in about the
            # order of their numbers, so start a little before the count.
            first = max(0, count_pods(port) - 1000) if args.resume else 0
            t0 = time.time()
            errors = load(port, args.pods, args.threads, first, args.pod_bytes)
            if errors: print(f"load errors: {len(errors)} (first {errors[0]})"); return 1
            dt = time.time() - t0
            print(f"loaded pods {first}..{args.pods} in {dt:.1f} s ({(args.pods-first)/dt:.0f}/s); "
                  f"server VmRSS {status(server.pid, 'VmRSS')/2**20:.1f} MiB", flush=True)
            stop(server); server = None
        print(f"binary {args.binary}, shards {args.shards or 'default'}, data dir {dir_bytes(data)/2**20:.1f} MiB "
              f"({', '.join(sorted(os.listdir(os.path.join(data, 'log'))))})", flush=True)
        for n in range(args.restarts):
            server, ready_s, list_s = timed_restart(args.binary, port, data, args.shards, log_path, args.pods)
            time.sleep(0.5)
            rss, hwm = status(server.pid, "VmRSS"), status(server.pid, "VmHWM")
            if n == 0:
                count = count_pods(port)
                if count != args.pods: raise RuntimeError(f"after restart {count} pods listed, expected {args.pods}")
            json_bytes = live_json_bytes(port)
            per_pod = (rss - args.baseline_rss_mib * 2**20) / args.pods
            json_per_pod = json_bytes / args.pods
            print(f"restart {n+1}: ready {ready_s:.3f} s, first list {list_s:.3f} s; "
                  f"VmRSS {rss/2**20:.1f} MiB, VmHWM {hwm/2**20:.1f} MiB; JSON {json_per_pod:.0f} B/pod, "
                  f"resident {per_pod:.0f} B/pod (baseline {args.baseline_rss_mib} MiB) = "
                  f"{per_pod/json_per_pod if json_per_pod else 0:.2f}x its JSON", flush=True)
            with open(log_path) as f:
                said = f.read().rsplit("--- restart ---", 1)[-1].splitlines()
            for line in said:
                if "recovered" in line or "loaded" in line or "load phases" in line: print(f"  server: {line.strip()}")
            t_stop = time.monotonic()
            stop(server); server = None
            print(f"  stopped (SIGTERM to exit, the log's closing snapshot included) in {time.monotonic() - t_stop:.3f} s", flush=True)
        with open(log_path) as f:
            recovered = [l.strip() for l in f if "recovered" in l]
        if recovered: print(f"server says: {recovered[-1]}")
        return 0
    finally:
        if server is not None: stop(server)
        if args.keep or args.data_dir: print(f"data dir kept: {data}")
        else: shutil.rmtree(data, ignore_errors=True)

if __name__ == "__main__":
    sys.exit(main())
