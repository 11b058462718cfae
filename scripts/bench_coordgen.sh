#!/usr/bin/env bash
# Reproduces docs/coordgen.md: retrieval drafting (coordgen and its ablations) against the
# PLD and SAM baselines, one `specflash bench` run per table:
#  (1) stories260K on context-heavy TinyStories prompts (scripts/coordgen_prompts.py), resident;
#  (2) the same at 0% with storage EMULATED at 25 MB/s (the phone regime of docs/lever.md);
#  (3) stories260K on Spec-Bench summarization/rag and HumanEval prompts, same regime;
#  (4) a synthetic 32k-vocabulary target (random weights: cost only, e.g. calibration's prefill cost);
#  (5)+(6) the history store cold, then warm (separate runs; the store fills in prompt order).
# Writes bench-out/coordgen/*.md and *.json.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench-out/coordgen
mkdir -p "$out"
sf=build/specflash
python3 scripts/coordgen_prompts.py ../shared/datasets "$out/tinystories-context.jsonl" 6
methods="flash-ar,pld,sam,coordgen-nocalib,coordgen-noreuse,coordgen,coordgen-hybrid"
stories=(-m models/stories260K.gguf --draft models/stories260K-draft.gguf -n 48 --ignore-eos --per-category)
ctx=(--prompt-file "$out/tinystories-context.jsonl")
$sf bench "${stories[@]}" "${ctx[@]}" --methods "$methods" --budgets 100% --json $out/stories-resident.json \
  >$out/stories-resident.md
$sf bench "${stories[@]}" "${ctx[@]}" --methods "$methods" --budgets 0% --io-bandwidth 25M \
  --json $out/stories-phone.json >$out/stories-phone.md
$sf bench "${stories[@]}" --dataset spec_bench/summarization:3,spec_bench/rag:3,human_eval:3 --methods "$methods" \
  --budgets 0% --io-bandwidth 25M --json $out/stories-specbench-phone.json >$out/stories-specbench-phone.md
# (4) cost only: a synthetic ~150M Llama with the 32k Llama vocabulary.
[[ -f bench-out/synth-150m-q4_0.gguf ]] || $sf synth --arch llama --vocab-from ../shared/vocab/ggml-vocab-llama-spm.gguf \
  --embd 1024 --layers 8 --heads 16 --kv-heads 4 --ffn 2816 --type Q4_0 --seed 3 -o bench-out/synth-150m-q4_0.gguf -q
$sf bench -m bench-out/synth-150m-q4_0.gguf --ctx-size 512 -n 16 --ignore-eos \
  --dataset spec_bench/summarization:2,spec_bench/rag:2,human_eval:2 --methods flash-ar,pld,sam,coordgen-nocalib,coordgen \
  --budgets 100% --json $out/synth-resident.json >$out/synth-resident.md
# (5)+(6) history store: cold (cleared first), then warm over the same prompts.
hist=(-m models/stories260K.gguf -n 48 --ignore-eos "${ctx[@]}" --methods flash-ar,coordgen --budgets 0% --io-bandwidth 25M
      --history-dir "$out/history" --history-task tinystories)
$sf bench "${hist[@]}" --history-clear --json $out/history-cold.json >$out/history-cold.md
$sf bench "${hist[@]}" --json $out/history-warm.json >$out/history-warm.md
echo "wrote $out"
