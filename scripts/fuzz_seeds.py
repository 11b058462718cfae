#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/) from the repository and shared/ files.

usage: fuzz_seeds.py OUT_DIR [--shared DIR] [--specflash BIN] [--small]

OUT_DIR/<target>/ gets one file per seed. --specflash names a built specflash binary, used
to synthesize tiny models (a few tens of KB) with the stories260K vocabulary; --small
leaves out the large files (models/*.gguf) so the result can be committed as the
regression corpus (tests/robustness/corpus). Input formats: tests/robustness/fuzz_entry_points.h.
"""
import argparse
import hashlib
import os
import shutil
import struct
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def put(out, target, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def tiny_gguf(version=3):
    """A hand-made GGUF with one value of every metadata type and three small tensors."""
    kv = []

    def add(key, type_id, payload):
        kv.append(gguf_string(key) + struct.pack("<I", type_id) + payload)

    add("general.architecture", 8, gguf_string("llama"))
    add("general.alignment", 4, struct.pack("<I", 32))
    add("t.u8", 0, struct.pack("<B", 7))
    add("t.i8", 1, struct.pack("<b", -7))
    add("t.u16", 2, struct.pack("<H", 700))
    add("t.i16", 3, struct.pack("<h", -700))
    add("t.i32", 5, struct.pack("<i", -70000))
    add("t.f32", 6, struct.pack("<f", 1.5))
    add("t.bool", 7, struct.pack("<B", 1))
    add("t.u64", 10, struct.pack("<Q", 1 << 40))
    add("t.i64", 11, struct.pack("<q", -(1 << 40)))
    add("t.f64", 12, struct.pack("<d", 2.25))
    add("t.arr_i32", 9, struct.pack("<IQ", 5, 3) + struct.pack("<3i", 1, 2, 3))
    add("t.arr_str", 9, struct.pack("<IQ", 8, 2) + gguf_string("a") + gguf_string("bc"))
    add("t.arr_f32", 9, struct.pack("<IQ", 6, 2) + struct.pack("<2f", 0.5, -0.5))
    add("t.arr_arr", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 4, 1) + struct.pack("<I", 9))
    # (name, dims, ggml type, bytes)
    tensors = [("a.f32", [4, 2], 0, 32), ("b.f16", [8], 1, 16), ("c.q8_0", [32, 1], 8, 34)]
    header = struct.pack("<II", 0x46554747, version)
    count = "<QQ" if version >= 3 else "<II"
    header += struct.pack(count, len(tensors), len(kv))
    body = b"".join(kv)
    index = b""
    offset = 0
    for name, dims, t, n in tensors:
        index += gguf_string(name) + struct.pack("<I", len(dims))
        index += b"".join(struct.pack("<Q", d) for d in dims)
        index += struct.pack("<IQ", t, offset)
        offset += (n + 31) // 32 * 32
    head = header + body + index
    head += b"\0" * ((32 - len(head) % 32) % 32)
    data = bytes((i * 37) & 0xFF for i in range(offset))
    return head + data


CHAT_NAMES = ["chatml", "qwen", "llama2", "llama2-sys", "llama2-sys-bos", "llama2-sys-strip", "llama3",
              "mistral-v1", "mistral-v3", "mistral-v3-tekken", "mistral-v7", "phi3", "zephyr", "mistral",
              "transcript", ""]
JINJA_MARKERS = ["{% for message in messages %}<|im_start|>{{ message['role'] }}",
                 "[INST] {{ message['content'] }} [/INST]", "<<SYS>>\n",
                 "<|start_header_id|>{{ role }}<|end_header_id|>", "<|user|>\n{{ content }}<|end|>",
                 "<|system|>", "[SYSTEM_PROMPT]", "{{ bos_token }}[INST]"]
MESSAGES = [["system\nBe brief.", "user\nHello there", "assistant\nHi!", "user\n  Tell me  a story  "],
            ["user\n<|im_start|>[INST]</s>"], [], ["tool\nnot a role"], ["assistant\n", "user\n\u00e9\u00e8 \U0001F600"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    ap.add_argument("--specflash")
    ap.add_argument("--small", action="store_true")
    a = ap.parse_args()
    vocab_dir = os.path.join(a.shared, "vocab")
    # The order the fuzz entry points load vocabularies in: stories260K, then shared/vocab sorted.
    vocabs = ["stories260K.gguf"] + sorted(f for f in os.listdir(vocab_dir) if f.endswith(".gguf")) \
        if os.path.isdir(vocab_dir) else ["stories260K.gguf"]

    # gguf_reader and draft_compat: the hand-made file, tiny synthesized models, the real ones.
    put(a.out, "gguf_reader", tiny_gguf(3))
    put(a.out, "gguf_reader", tiny_gguf(2))
    if a.specflash:
        tmp = os.path.join(a.out, ".synth")
        os.makedirs(tmp, exist_ok=True)
        for arch in ["llama", "qwen2", "qwen3"]:
            path = os.path.join(tmp, arch + ".gguf")
            subprocess.run([a.specflash, "synth", "--arch", arch, "--vocab-from",
                            os.path.join(REPO, "models/stories260K.gguf"), "--embd", "32", "--layers", "1",
                            "--heads", "2", "--kv-heads", "1", "--ffn", "64", "--type", "Q8_0", "--tied", "-q",
                            "-o", path], check=True)
            data = open(path, "rb").read()
            put(a.out, "gguf_reader", data)
            put(a.out, "draft_compat", data)
        shutil.rmtree(tmp)
    if not a.small:
        for m in ["stories260K-draft.gguf", "stories260K-predictor-l2.gguf"]:
            data = open(os.path.join(REPO, "models", m), "rb").read()
            put(a.out, "gguf_reader", data)
            put(a.out, "draft_compat", data)

    # tokenizer: the llama.cpp test texts (.inp, sections split by __ggml_vocab_test__) with
    # their vocabulary's index, and the expected ids (.out) as decode inputs.
    for i, v in enumerate(vocabs):
        inp = os.path.join(vocab_dir, v + ".inp")
        texts = ["Hello world", " leading space", "\u00e9\u00e8\u00ea \u4e2d\u6587 \U0001F600", "<s>[INST]</s>"]
        if os.path.exists(inp):
            texts += open(inp, encoding="utf-8").read().split("\n__ggml_vocab_test__\n")
        if a.small:
            texts = texts[:6]
        for j, t in enumerate(texts):
            put(a.out, "tokenizer", bytes([i, (j % 4) * 2]) + t.encode())
        out = os.path.join(vocab_dir, v + ".out")
        if os.path.exists(out):
            lines = open(out).read().splitlines()
            for j, line in enumerate(lines[: 3 if a.small else len(lines)]):
                ids = [int(x) for x in line.split()]
                if ids:
                    put(a.out, "tokenizer", bytes([i, 1 | ((j % 16) * 4)]) + struct.pack("<%di" % len(ids), *ids))
        put(a.out, "tokenizer", bytes([i, 3]) + struct.pack("<4i", 0, 1, 2, 3))

    # chat_format: every template name and some Jinja texts, with several conversations.
    for k, name in enumerate(CHAT_NAMES + JINJA_MARKERS):
        msgs = MESSAGES[k % len(MESSAGES)]
        put(a.out, "chat_format", "\0".join([name] + msgs))

    # completion_request: bodies like the parser's unit tests (byte 0: even chat, odd completion).
    bodies = [
        (1, '{"prompt":"hi","max_tokens":5,"temperature":0,"stop":["x","y"],"stream":true}'),
        (1, '{"prompt":["x"],"max_tokens":5.0,"stop":"s","specflash":{"method":"none"}}'),
        (1, '{"prompt":"x","stream_options":{"include_usage":true},"seed":-5,"top_k":40,"min_p":0.1}'),
        (1, '{"prompt":"x","specflash":{"method":"tree","draft_len":3},"n":1,"top_p":0.9}'),
        (0, '{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"max_tokens":7}'),
        (0, '{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}],"max_completion_tokens":3}'),
        (0, '{"messages":[{"role":"user","content":null}],"temperature":null}'),
        (1, '{"prompt":"x","max_tokens":"5"}'),
        (0, '[]'),
    ]
    for e, b in bodies:
        put(a.out, "completion_request", bytes([e]) + b.encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
