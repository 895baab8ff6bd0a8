#!/usr/bin/env python3
"""Peak memory of the server during a whole list of 150,000 pods of ~2 KB.

Starts the release binary on a free loopback port with a temporary data dir,
creates N pods (default 150,000) over keep-alive connections, then resets the
process's peak-RSS counter (/proc/PID/clear_refs, "5") before each of:
  - a whole list without limit (streamed), read to the end and discarded;
  - the same collection in pages of limit=500, following continue tokens;
and prints VmRSS before, VmHWM during, and the list size. Stops the server by
PID. A measurement, not a test: run it by hand, record results in
docs/benchmarks.md.

Usage: python3 benches/system/list_rss.py [--pods N] [--binary target/release/shardline]
"""
import argparse, http.client, json, os, signal, socket, subprocess, sys, tempfile, threading, time, urllib.parse

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0

def reset_peak(pid):
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")

def pod(ns, name):
    env = [{"name": f"VARIABLE_{i:02}", "value": f"value-{i:02}-{name}"} for i in range(24)]
    return {"metadata": {"name": name, "labels": {"app": "web", "tier": "front", "pod-template-hash": "7d4b9c"}},
            "spec": {"nodeName": "node-17", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                     "serviceAccountName": "default",
                     "containers": [{"name": "app", "image": "registry.example/app:1.0", "env": env,
                                     "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}}}]}}

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pods", type=int, default=150_000)
    ap.add_argument("--binary", default="target/release/shardline")
    ap.add_argument("--threads", type=int, default=8)
    args = ap.parse_args()
    port = free_port()
    data = tempfile.mkdtemp(prefix="shardline-list-rss-")
    server = subprocess.Popen([args.binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(data, "stderr.log"), "w"))
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5); c.request("GET", "/readyz")
                if c.getresponse().status == 200: break
            except OSError: pass
            time.sleep(0.1)
        namespaces = [f"ns-{i}" for i in range(50)]
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for ns in namespaces:
            c.request("POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": ns}}), {"Content-Type": "application/json"})
            c.getresponse().read()
        counter = iter(range(args.pods)); lock = threading.Lock(); errors = []
        def loader():
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            while True:
                with lock:
                    i = next(counter, None)
                if i is None: return
                ns = namespaces[i % 50]; name = f"pod-{i:06}"
                conn.request("POST", f"/api/v1/namespaces/{ns}/pods", json.dumps(pod(ns, name)), {"Content-Type": "application/json"})
                r = conn.getresponse(); r.read()
                if r.status != 201: errors.append(r.status)
        start = time.time()
        threads = [threading.Thread(target=loader) for _ in range(args.threads)]
        for t in threads: t.start()
        for t in threads: t.join()
        load_s = time.time() - start
        if errors: print(f"load errors: {len(errors)} (first {errors[0]})"); return 1
        pid = server.pid
        rss_loaded = status(pid, "VmRSS")
        print(f"loaded {args.pods} pods in {load_s:.1f} s ({args.pods/load_s:.0f}/s); server VmRSS {rss_loaded/2**20:.1f} MiB")

        def whole_list():
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            conn.request("GET", "/api/v1/pods", headers={"Accept": "application/json"})
            r = conn.getresponse(); n = 0
            while True:
                chunk = r.read(1 << 20)
                if not chunk: break
                n += len(chunk)
            return n

        def paged_list():
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            token, n, pages = "", 0, 0
            while True:
                q = "limit=500" + (f"&continue={urllib.parse.quote(token)}" if token else "")
                conn.request("GET", f"/api/v1/pods?{q}"); body = conn.getresponse().read()
                n += len(body); pages += 1
                token = json.loads(body)["metadata"].get("continue", "")
                if not token: return n, pages

        for label, run in (("whole list (streamed)", whole_list), ("paged list, limit=500", paged_list)):
            before = status(pid, "VmRSS"); reset_peak(pid)
            t0 = time.time(); result = run(); dt = time.time() - t0
            peak = status(pid, "VmHWM")
            size = result if isinstance(result, int) else result[0]
            extra = f", {result[1]} pages" if not isinstance(result, int) else ""
            print(f"{label}: {size/2**20:.1f} MiB in {dt:.2f} s{extra}; VmRSS before {before/2**20:.1f} MiB, "
                  f"peak during {peak/2**20:.1f} MiB, peak extra {(peak-before)/2**20:.1f} MiB")
        return 0
    finally:
        server.send_signal(signal.SIGTERM)
        try: server.wait(timeout=20)
        except subprocess.TimeoutExpired: server.kill(); server.wait()

if __name__ == "__main__":
    sys.exit(main())
