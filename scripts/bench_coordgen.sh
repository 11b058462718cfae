#!/usr/bin/env bash
# Reproduces docs/coordgen.md: retrieval drafting (coordgen and its ablations) against the
# PLD and SAM baselines, one `specflash bench` run per table:
#  (1) stories260K on context-heavy TinyStories prompts (scripts/coordgen_prompts.py) at 0%
#      with storage EMULATED at 25 MB/s (the phone regime of docs/lever.md);
#  (2) a synthetic 32k-vocabulary target (random weights: cost only, e.g. calibration's prefill cost);
#  (3)+(4) the history store cold, then warm (separate runs; the store fills in prompt order);
#  (5) stories260K on Spec-Bench summarization/rag and HumanEval prompts, same regime as (1).
# The history runs are not repeated: a repetition would read the store the last one wrote.
# Writes bench-out/coordgen/*.md and *.json.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench-out/coordgen
mkdir -p "$out"
sf=build/specflash
python3 scripts/coordgen_prompts.py ../shared/datasets "$out/tinystories-context.jsonl" 2
methods="flash-ar,pld,sam,coordgen-nocalib,coordgen-noreuse,coordgen,coordgen-hybrid"
# REPEAT (default 3) interleaved repetitions: medians and ranges; the prefill column then
# shows calibration's cost (coordgen against coordgen-nocalib) above the noise.
rep=(--repeat "${REPEAT:-3}")
stories=(-m models/stories260K.gguf --draft models/stories260K-draft.gguf -n 32 --ignore-eos --per-category "${rep[@]}")
ctx=(--prompt-file "$out/tinystories-context.jsonl")
# (1) stories260K, context-heavy prompts, phone regime (0%, storage EMULATED at 25 MB/s).
$sf bench "${stories[@]}" "${ctx[@]}" --methods "$methods" --budgets 0% --io-bandwidth 25M \
  --json $out/stories-phone.json >$out/stories-phone.md
# (2) cost only: a synthetic ~150M Llama with the 32k Llama vocabulary, resident.
[[ -f bench-out/synth-150m-q4_0.gguf ]] || $sf synth --arch llama --vocab-from ../shared/vocab/ggml-vocab-llama-spm.gguf \
  --embd 1024 --layers 8 --heads 16 --kv-heads 4 --ffn 2816 --type Q4_0 --seed 3 -o bench-out/synth-150m-q4_0.gguf -q
$sf bench -m bench-out/synth-150m-q4_0.gguf --ctx-size 384 -n 8 --ignore-eos "${rep[@]}" \
  --dataset spec_bench/summarization:1,spec_bench/rag:1 --methods flash-ar,pld,sam,coordgen-nocalib,coordgen \
  --budgets 100% --json $out/synth-resident.json >$out/synth-resident.md
# (3)+(4) history store: cold (cleared first), then warm over the same prompts.
hist=(-m models/stories260K.gguf -n 32 --ignore-eos "${ctx[@]}" --methods flash-ar,coordgen --budgets 0% --io-bandwidth 25M
      --history-dir "$out/history" --history-task tinystories)
$sf bench "${hist[@]}" --history-clear --json $out/history-cold.json >$out/history-cold.md
$sf bench "${hist[@]}" --json $out/history-warm.json >$out/history-warm.md
# (5) Spec-Bench summarization/rag and HumanEval on stories260K (out of its domain), phone regime.
$sf bench "${stories[@]}" --ctx-size 512 --dataset spec_bench/summarization:1,spec_bench/rag:1,human_eval:1 \
  --methods flash-ar,pld,sam,coordgen --budgets 0% --io-bandwidth 25M --json $out/stories-specbench-phone.json \
  >$out/stories-specbench-phone.md
echo "wrote $out"
