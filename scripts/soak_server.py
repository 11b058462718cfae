#!/usr/bin/env python3
"""A long, bounded run of `specflash serve` with speculation and streaming (docs/robustness.md).

usage: soak_server.py [--requests N] [--seconds S] [--max-tokens T] [--sample-every K]
                      [--flat-mib M] [--bin build/specflash] [--budget 0%]

Starts the server on the stories260K target with the stories260K draft (tree drafts) and
every layer streamed (--mem-budget 0%), two slots, then sends requests until N are done or
S seconds have passed: the same prompts over and over, alternately with speculation off
("specflash": {"method": "none"}) and on, streamed (SSE) and not, greedy. It checks that
every answer equals the plain (speculation off, not streamed) answer to the same prompt,
and samples the server's RSS (VmRSS) and thread count every K requests. Prints the
samples and one summary line; exit 1 on a mismatch, a failed request, or RSS that is not
flat: over the second half of the run the samples may differ by at most M MiB (default
0.25), and the end may be at most 4 MiB above the first sample.
"""
import argparse
import json
import os
import re
import subprocess
import sys
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
    body = {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": stream,
            "specflash": {"method": method}}
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
    ap.add_argument("--sample-every", type=int, default=50)
    ap.add_argument("--flat-mib", type=float, default=0.25)
    ap.add_argument("--bin", default=os.path.join(REPO, "build/specflash"))
    ap.add_argument("--budget", default="0%")
    a = ap.parse_args()
    cmd = [a.bin, "serve", "-m", os.path.join(REPO, "models/stories260K.gguf"), "--draft",
           os.path.join(REPO, "models/stories260K-draft.gguf"), "--spec", "tree", "--draft-len", "4",
           "--mem-budget", a.budget, "--parallel", "2", "--port", "0", "-t", "1"]
    server = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    port = None
    try:
        for line in server.stderr:
            m = re.search(r"listening on http://[^:]+:(\d+)", line)
            if m:
                port = int(m.group(1))
                break
        if port is None:
            print("soak_server: the server did not start", file=sys.stderr)
            return 1
        plain = {}
        t0 = time.time()
        done = tokens = mismatches = 0
        rss_start = rss_kib(server.pid)
        samples = []  # (requests, VmRSS KiB, threads) every sample_every requests
        while done < a.requests and time.time() - t0 < a.seconds:
            prompt = PROMPTS[done % len(PROMPTS)]
            method = "none" if (done // len(PROMPTS)) % 2 == 0 else "tree"
            stream = (done // (2 * len(PROMPTS))) % 2 == 1
            text, n = request(port, prompt, method, stream, a.max_tokens)
            if prompt not in plain and method == "none" and not stream:
                plain[prompt] = text
            elif prompt in plain and text != plain[prompt]:
                mismatches += 1
                print(f"soak_server: mismatch on {prompt!r} ({method}, stream={stream})", file=sys.stderr)
            done += 1
            tokens += n
            if done % a.sample_every == 0:
                samples.append((done, rss_kib(server.pid), proc_status(server.pid, "Threads")))
        seconds = time.time() - t0
        rss_end = rss_kib(server.pid)
        print("soak_server: samples (requests:VmRSS MiB:threads) " +
              " ".join(f"{r}:{k / 1024:.2f}:{t}" for r, k, t in samples))
        second_half = [k for r, k, t in samples if r > done / 2]
        spread = (max(second_half) - min(second_half)) / 1024 if len(second_half) >= 2 else float("nan")
        growth = (rss_end - samples[0][1]) / 1024 if samples else float("nan")
        flat = len(second_half) >= 2 and spread <= a.flat_mib and growth < 4
        print(f"soak_server: requests={done} tokens={tokens} seconds={seconds:.1f} mismatches={mismatches} "
              f"rss_start={rss_start / 1024:.2f}MiB rss_first_sample={samples[0][1] / 1024 if samples else 0:.2f}MiB "
              f"rss_end={rss_end / 1024:.2f}MiB second_half_spread={spread:.2f}MiB flat={'yes' if flat else 'no'}")
        return 0 if mismatches == 0 and flat else 1
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
