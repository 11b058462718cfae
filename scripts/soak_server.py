#!/usr/bin/env python3
"""A long, bounded run of `specflash serve` with speculation and streaming (docs/robustness.md).

usage: soak_server.py [--requests N] [--seconds S] [--bin build/specflash] [--budget 0%]

Starts the server on the stories260K target with the stories260K draft (tree drafts) and
every layer streamed (--mem-budget 0%), two slots, then sends requests until N are done or
S seconds have passed: the same prompts over and over, alternately with speculation off
("specflash": {"method": "none"}) and on, streamed (SSE) and not, greedy. It checks that
every speculative answer equals the plain answer to the same prompt, and samples the
server's RSS (VmRSS) after a warm-up and at the end. Prints one summary line; exit 1 on a
mismatch, a failed request or RSS growth over 4 MiB after warm-up.
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


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


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
        rss_warm = None
        samples = []  # "requests:MiB" every 24 requests, to see the shape of any growth
        while done < a.requests and time.time() - t0 < a.seconds:
            prompt = PROMPTS[done % len(PROMPTS)]
            method = "none" if (done // len(PROMPTS)) % 2 == 0 else "tree"
            stream = (done // (2 * len(PROMPTS))) % 2 == 1
            text, n = request(port, prompt, method, stream, a.max_tokens)
            if prompt not in plain and method == "none":
                plain[prompt] = text
            elif prompt in plain and text != plain[prompt]:
                mismatches += 1
                print(f"soak_server: mismatch on {prompt!r} ({method}, stream={stream})", file=sys.stderr)
            done += 1
            tokens += n
            if done == 4 * len(PROMPTS):
                rss_warm = rss_kib(server.pid)
            if done % (4 * len(PROMPTS)) == 0:
                samples.append(f"{done}:{rss_kib(server.pid) / 1024:.1f}")
        seconds = time.time() - t0
        rss_end = rss_kib(server.pid)
        rss_warm = rss_warm or rss_end
        growth = (rss_end - rss_warm) / 1024
        print(f"soak_server: requests={done} tokens={tokens} seconds={seconds:.1f} mismatches={mismatches} "
              f"rss_start={rss_start / 1024:.1f}MiB rss_after_warmup={rss_warm / 1024:.1f}MiB "
              f"rss_end={rss_end / 1024:.1f}MiB growth_after_warmup={growth:.2f}MiB")
        print("soak_server: rss samples (requests:MiB) " + " ".join(samples))
        return 0 if mismatches == 0 and growth < 4 else 1
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
