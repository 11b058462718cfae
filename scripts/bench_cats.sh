#!/usr/bin/env bash
# The CATS tables of docs/cats.md in one invocation: flash-ar, Kangaroo, CATS without
# adapters and CATS at gamma 3/5/7/10, budgets 0%/25%/50% (and 100% for stories260K),
# reporting mean accepted, BPT and tokens/s (the bench's table and JSON), on
#  (i)  stories260K with its trained adapters (real acceptance), and
#  (ii) the synthetic 1.1B Llama (random weights: cost only, drafts are essentially never
#       accepted) with an untrained draft adapter (--steps 0) so the adapter's cost is in
#       the numbers.
# Run from anywhere after building; writes $CATS_OUT (default bench-out/cats). Timing runs
# belong on a quiet machine. Knobs (environment):
#   CATS_GAMMAS="3 5 7 10"    gammas of kangaroo, cats-noadapter and cats
#   CATS_PROMPTS=16 CATS_TOKENS=64           stories260K: tinystories prompts, tokens each
#   CATS_BIG_PROMPTS=2 CATS_BIG_TOKENS=8     1.1B: spec_bench prompts, tokens each
#   CATS_SMOKE=1   a check that the script works, in seconds: 1 prompt, 2-4 tokens, and a
#                  small synthetic model in place of the 1.1B (numbers meaningless).
set -euo pipefail
cd "$(dirname "$0")/.."
sf=build/specflash
smoke=${CATS_SMOKE:-0}
if [[ $smoke == 1 ]]; then
  out=${CATS_OUT:-bench-out/cats-smoke}
  prompts=${CATS_PROMPTS:-1} tokens=${CATS_TOKENS:-4} big_prompts=${CATS_BIG_PROMPTS:-1} big_tokens=${CATS_BIG_TOKENS:-2}
  big_model=$out/synth-small-q4_0.gguf
  big_shape=(--embd 256 --layers 8 --heads 8 --kv-heads 4 --ffn 688 --type Q4_0 --seed 1)
else
  out=${CATS_OUT:-bench-out/cats}
  prompts=${CATS_PROMPTS:-16} tokens=${CATS_TOKENS:-64} big_prompts=${CATS_BIG_PROMPTS:-2}
  big_tokens=${CATS_BIG_TOKENS:-8}
  big_model=bench-out/llama1b-q4_0.gguf
  big_shape=(--embd 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 --type Q4_0 --seed 1)
fi
gammas=${CATS_GAMMAS:-3 5 7 10}
mkdir -p "$out"

# flash-ar, then kangaroo:G, cats-noadapter:G and cats:G for every gamma.
methods=flash-ar
for family in kangaroo cats-noadapter cats; do
  for g in $gammas; do methods+=",$family:$g"; done
done

# (i) stories260K: the adapters for the cuts L_DM 1, L_SV 3.
stories=(-m models/stories260K.gguf --dataset "tinystories:$prompts" -n "$tokens" --ignore-eos --cats-ldm 1
         --cats-lsv 3 --cats-draft-adapter models/stories260K-cats-draft-l1.gguf
         --cats-verifier-adapter models/stories260K-cats-verifier-l3.gguf)
$sf bench "${stories[@]}" --methods "$methods" --budgets 0%,25%,50%,100% \
  --json "$out/stories-real.json" >"$out/stories-real.md"

# (ii) cost only. The draft adapter is untrained (it predicts what the plain exit head
# does) but costs what a trained one costs; no verifier adapter: its layer (L_SV) is the
# residency plan's, which differs per budget.
mkdir -p "$(dirname "$big_model")"
[[ -f $big_model ]] || $sf synth --arch llama --vocab-from ../shared/vocab/ggml-vocab-llama-spm.gguf \
  "${big_shape[@]}" -o "$big_model"
adapter=$out/llama1b-draft-adapter-l2.gguf
[[ -f $adapter ]] || $sf train-adapter --target "$big_model" --role draft --layer 2 --steps 0 -q -o "$adapter"
big=(-m "$big_model" --dataset "spec_bench:$big_prompts" -n "$big_tokens" --ignore-eos --cats-ldm 2
     --cats-draft-adapter "$adapter")
$sf bench "${big[@]}" --methods "$methods" --budgets 0%,25%,50% \
  --json "$out/llama1b-real.json" >"$out/llama1b-real.md"
echo "wrote $out"
