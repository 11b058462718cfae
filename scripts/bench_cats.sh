#!/usr/bin/env bash
# The CATS tables of docs/cats.md: (i) stories260K with its trained adapters (real
# acceptance) on the real device; (ii) the synthetic
# 1.1B Llama (random weights: cost only, drafts are essentially never accepted) with an
# untrained draft adapter (--steps 0) so the adapter's cost is in the numbers.
# Run from the repository root after building; writes bench-out/cats/.
set -euo pipefail
sf=build/specflash
out=bench-out/cats
mkdir -p $out
gammas="kangaroo:3,kangaroo:5,kangaroo:7,kangaroo:10,cats-noadapter:5,cats:3,cats:5,cats:7,cats:10"
stories=(-m models/stories260K.gguf --dataset tinystories:16 -n 64 --ignore-eos --cats-ldm 1 --cats-lsv 3
         --cats-draft-adapter models/stories260K-cats-draft-l1.gguf
         --cats-verifier-adapter models/stories260K-cats-verifier-l3.gguf)
$sf bench "${stories[@]}" --methods "flash-ar,$gammas" --budgets 0%,25%,50%,100% \
  --json $out/stories-real.json >$out/stories-real.md
# (ii) cost only.
[[ -f bench-out/llama1b-q4_0.gguf ]] || $sf synth --arch llama --vocab-from ../shared/vocab/ggml-vocab-llama-spm.gguf \
  --embd 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 --type Q4_0 --seed 1 -o bench-out/llama1b-q4_0.gguf
[[ -f $out/llama1b-draft-adapter-l2.gguf ]] || $sf train-adapter --target bench-out/llama1b-q4_0.gguf \
  --role draft --layer 2 --steps 0 -o $out/llama1b-draft-adapter-l2.gguf
# Small on purpose: one 0% flash-ar token of this model takes over a second here.
big=(-m bench-out/llama1b-q4_0.gguf --dataset spec_bench:2 -n 8 --ignore-eos --cats-ldm 2
     --cats-draft-adapter $out/llama1b-draft-adapter-l2.gguf)
$sf bench "${big[@]}" --methods "flash-ar,kangaroo:5,cats-noadapter:5,cats:5" \
  --budgets 0%,25%,50% --json $out/llama1b-real.json >$out/llama1b-real.md
echo "wrote $out"
