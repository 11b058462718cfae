#!/usr/bin/env bash
# Reproduces docs/mirror.md: Mirror-SD against vanilla speculative decoding with the same
# draft (chain:4 = gamma 4, the window Mirror-SD rolls out), with the fallback frequency
# for kappa in {1, 2, 4, 8} and the early exit at 1/4, 1/2 and 3/4 of the target's depth
# (paper appendix E), all in ONE `specflash bench` run per model, at budgets 0% and 50%:
# (i) stories260K with its distilled draft (real acceptance and reuse), (ii) the synthetic
# 1.1B Llama with a synthetic draft (random weights: cost only; its fallback numbers say
# nothing about a trained model). Writes bench-out/mirror/*.md and *.json.
# The 1.1B models are made by scripts/bench_edgellm.sh; MODELS_DIR points at them.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench-out/mirror
mkdir -p "$out"
sf=build/specflash
models_dir=${MODELS_DIR:-bench-out}
grid=""
for k in 1 2 4 8; do for e in 25 50 75; do grid+=",mirror:$k@$e%"; done; done
methods="flash-ar,chain:4$grid"
# stories260K passes take well under a millisecond: REPEAT (default 3) interleaved
# repetitions, medians and ranges.
rep=(--repeat "${REPEAT:-3}")
$sf bench -m models/stories260K.gguf --draft models/stories260K-draft.gguf --draft-len 4 "${rep[@]}" \
  --dataset tinystories:16 -n 64 --ignore-eos --methods "$methods" --budgets 0%,50% \
  --json $out/stories.json >$out/stories.md
# One generation with --stats and per-cycle JSON (T_prefix, T_suffix, T_draft, T per cycle).
$sf run -m models/stories260K.gguf --draft models/stories260K-draft.gguf --spec mirror -p "Once upon a time" \
  -n 200 --ignore-eos --temp 0 --mem-budget 0% --stats --stats-json $out/stories-run.json >/dev/null \
  2>$out/stories-run.txt
$sf bench -m "$models_dir/llama1b-q4_0.gguf" --draft "$models_dir/draft-small-q4_0.gguf" --draft-len 4 \
  --dataset spec_bench:2 -n 8 --ignore-eos --methods "$methods" --budgets 0%,50% \
  --json $out/llama1b.json >$out/llama1b.md

# Control for the thread split: Mirror-SD's target runs on total - draft threads (1 of 2
# here), vanilla SD's on all of them. With --threads 1 vanilla's target also gets one
# thread (Mirror-SD's draft keeps its own one), so the target sides match.
$sf bench -m models/stories260K.gguf --draft models/stories260K-draft.gguf --draft-len 4 --threads 1 "${rep[@]}" \
  --dataset tinystories:16 -n 64 --ignore-eos --methods "flash-ar,chain:4,mirror:8@50%,mirror:8@75%" \
  --budgets 0%,50% --json $out/stories-threads1.json >$out/stories-threads1.md
echo "wrote $out"
