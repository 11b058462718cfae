#!/usr/bin/env python3
"""A long, bounded run of `specflash serve` with speculation and streaming (docs/robustness.md).

usage: soak_server.py [--requests N] [--seconds S] [--max-tokens T] [--sample-every K]
                      [--flat-mib M] [--clients C] [--threads T] [--spec METHOD] [--no-rss-check]
                      [--bin build/specflash]

Starts the server on the stories260K target with the stories260K draft (tree drafts) and
every layer streamed (--mem-budget 0%), two slots, then sends requests from C concurrent
clients until N are done or S seconds have passed: the same prompts over and over,
alternately with speculation off ("specflash": {"method": "none"}) and on (tree, or the
server's --spec METHOD), streamed (SSE) and not, greedy. It checks that
every answer equals the plain (speculation off, not streamed) answer to the same prompt,
and samples the server's RSS (VmRSS) and thread count every K requests. Prints the
samples and one summary line; exit 1 on a mismatch, a failed request, or RSS that is not
flat: over the second half of the run the samples may differ by at most M MiB (default
0.25), and the end may be at most 4 MiB above the first sample. A sanitizer report in
the server's log (a build with -DSPECFLASH_SANITIZE) or an unclean exit also fails it.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPTS = ["Once upon a time", "Lily wanted to play with her big red ball. One day", "The little dog was sad because",
           "Tom and Sue went to the park.", "One day, a bird", "She looked at the sky and"]


def proc_status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(key + r":\s+(\d+)", f.read()).group(1))


def rss_kib(pid):
    return proc_status(pid, "VmRSS")


def request(port, prompt, method, stream, max_tokens):
    body = {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": stream}
    if method is not None:  # None: the server's own method (--spec)
        body["specflash"] = {"method": method}
    if stream:
        body["stream_options"] = {"include_usage": True}
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        if not stream:
            answer = json.loads(r.read())
            return answer["choices"][0]["text"], answer["usage"]["completion_tokens"]
        text = ""
        n = 0
        for line in r:
            line = line.decode().strip()
            if line.startswith("data: ") and line != "data: [DONE]":
                chunk = json.loads(line[6:])
                if chunk.get("choices"):
                    text += chunk["choices"][0].get("text") or ""
                if chunk.get("usage"):
                    n = chunk["usage"]["completion_tokens"]
        return text, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--max-tokens", type=int, default=200)
    ap.add_argument("--clients", type=int, default=1, help="concurrent clients (the server has 2 slots)")
    ap.add_argument("--sample-every", type=int, default=50)
    ap.add_argument("--flat-mib", type=float, default=0.25)
    ap.add_argument("--no-rss-check", action="store_true", help="report RSS but do not fail on it (sanitizer builds)")
    ap.add_argument("--bin", default=os.path.join(REPO, "build/specflash"))
    ap.add_argument("--budget", default="0%")
    ap.add_argument("--threads", type=int, default=1, help="the server's compute threads (-t)")
    ap.add_argument("--spec", default="tree",
                    help="the server's method (--spec); speculative requests use it (tree: asked per request)")
    a = ap.parse_args()
    cmd = [a.bin, "serve", "-m", os.path.join(REPO, "models/stories260K.gguf"), "--draft",
           os.path.join(REPO, "models/stories260K-draft.gguf"), "--spec", a.spec, "--draft-len", "4",
           "--mem-budget", a.budget, "--parallel", "2", "--port", "0", "-t", str(a.threads)]
    server = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    # The server's log is read to its end (a full pipe would block the server); sanitizer
    # reports in it fail the run.
    log = []
    port_found = threading.Event()
    port = [None]

    def read_log():
        for line in server.stderr:
            log.append(line)
            m = re.search(r"listening on http://[^:]+:(\d+)", line)
            if m and port[0] is None:
                port[0] = int(m.group(1))
                port_found.set()
        port_found.set()

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    try:
        port_found.wait(timeout=300)
        port = port[0]
        if port is None:
            print("soak_server: the server did not start:\n" + "".join(log[-20:]), file=sys.stderr)
            return 1
        # The reference: each prompt decoded plainly (no speculation, not streamed).
        plain = {p: request(port, p, "none", False, a.max_tokens)[0] for p in PROMPTS}
        lock = threading.Lock()
        state = {"next": 0, "done": 0, "tokens": 0, "mismatches": 0, "errors": 0}
        samples = []  # (requests, VmRSS KiB, threads) every sample_every requests
        t0 = time.time()
        rss_start = rss_kib(server.pid)

        def client():
            while True:
                with lock:
                    i = state["next"]
                    if i >= a.requests or time.time() - t0 >= a.seconds:
                        return
                    state["next"] += 1
                prompt = PROMPTS[i % len(PROMPTS)]
                method = "none" if (i // len(PROMPTS)) % 2 == 0 else ("tree" if a.spec == "tree" else None)
                stream = (i // (2 * len(PROMPTS))) % 2 == 1
                try:
                    text, n = request(port, prompt, method, stream, a.max_tokens)
                except Exception as e:  # a failed request fails the soak
                    with lock:
                        state["errors"] += 1
                    print(f"soak_server: request {i} failed: {e}", file=sys.stderr)
                    continue
                with lock:
                    if text != plain[prompt]:
                        state["mismatches"] += 1
                        print(f"soak_server: mismatch on {prompt!r} ({method}, stream={stream})", file=sys.stderr)
                    state["done"] += 1
                    state["tokens"] += n
                    if state["done"] % a.sample_every == 0:
                        samples.append((state["done"], rss_kib(server.pid), proc_status(server.pid, "Threads")))

        clients = [threading.Thread(target=client) for _ in range(a.clients)]
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        seconds = time.time() - t0
        done = state["done"]
        rss_end = rss_kib(server.pid)
        print("soak_server: samples (requests:VmRSS MiB:threads) " +
              " ".join(f"{r}:{k / 1024:.2f}:{t}" for r, k, t in samples))
        second_half = [k for r, k, t in samples if r > done / 2]
        spread = (max(second_half) - min(second_half)) / 1024 if len(second_half) >= 2 else float("nan")
        growth = (rss_end - samples[0][1]) / 1024 if samples else float("nan")
        flat = len(second_half) >= 2 and spread <= a.flat_mib and growth < 4
        print(f"soak_server: clients={a.clients} requests={done} tokens={state['tokens']} seconds={seconds:.1f} "
              f"mismatches={state['mismatches']} errors={state['errors']} rss_start={rss_start / 1024:.2f}MiB "
              f"rss_first_sample={samples[0][1] / 1024 if samples else 0:.2f}MiB rss_end={rss_end / 1024:.2f}MiB "
              f"second_half_spread={spread:.2f}MiB flat={'yes' if flat else 'no'}")
        ok = state["mismatches"] == 0 and state["errors"] == 0 and (flat or a.no_rss_check)
    finally:
        server.terminate()
        server.wait(timeout=120)
        reader.join(timeout=30)
    reports = [line for line in log if re.search(r"(Sanitizer|runtime error:)", line)]
    # A clean exit (SIGTERM is handled: the server stops serving and returns from main) is
    # also when a leak checker (LSan, in the ASan build) reports.
    print(f"soak_server: server exit status {server.returncode}, sanitizer report lines {len(reports)}")
    if reports or server.returncode != 0:
        print(f"soak_server: the server exited with {server.returncode}; sanitizer lines: {len(reports)}",
              file=sys.stderr)
        sys.stderr.write("".join(log[-60:]))
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
