#!/usr/bin/env python3
"""Context-heavy prompts for the CoordGen benchmark, built from shared/datasets/tinystories
(stories260K's own domain): documents in the prompt, then a start the model continues.

  retell:  a story, a blank line, then the story's first sentence again (summarisation-like:
           the continuation can copy or re-word the document).
  rag:     two stories as retrieved documents, then the first sentence of one of them
           (lookup-like: the answer is in one of the documents).

Writes JSONL ({"id", "category", "text"}) for `specflash bench --prompt-file`.
Usage: coordgen_prompts.py DATASETS_DIR OUT.jsonl [N_PER_CATEGORY]
"""
import json
import re
import sys


def stories(path):
    text = open(path, encoding="utf-8").read()
    parts = [p.strip() for p in text.split("<|endoftext|>")]
    # The sample file starts mid-story: skip the leading fragment.
    return [p for p in parts[1:] if len(p.split()) > 40]


def first_sentence(story):
    m = re.match(r"(.+?[.!?])\s", story)
    return m.group(1) if m else story.split("\n")[0]


def main():
    data, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    docs = stories(f"{data}/tinystories/validation_100.txt")
    rows = []
    for i in range(n):
        s = docs[i]
        rows.append({"id": f"retell/{i}", "category": "retell", "text": f"{s}\n\n{first_sentence(s)}"})
    for i in range(n):
        a, b = docs[n + 2 * i], docs[n + 2 * i + 1]
        rows.append({"id": f"rag/{i}", "category": "rag", "text": f"{a}\n\n{b}\n\n{first_sentence(b if i % 2 else a)}"})
    with open(out, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
