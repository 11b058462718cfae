#!/usr/bin/env bash
# Reproduces docs/lever.md: LEVER against the other tree builders in one `specflash bench`
# run per storage setting, for (i) stories260K with its distilled draft (real acceptance)
# and (ii) the synthetic 1.1B Llama with a synthetic draft (cost only), plus the
# verification profile and the later-layer time when rows are pruned at the exit layer.
# Writes bench-out/lever/*.md and *.json. Takes about 30-40 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench-out/lever
mkdir -p "$out"
sf=build/specflash
methods="flash-ar,chain:4,chain:8,tree,opt-tree,lever-noprune,lever,lever-shadow"
stories=(-m models/stories260K.gguf --draft models/stories260K-draft.gguf --tree-widths 3,2,1
         --dataset tinystories:16 -n 64 --ignore-eos)
# (i) real acceptance: real storage, UFS 4.0 (EMULATED 4 GB/s) and the scaled phone regime
# (EMULATED 25 MB/s: one stories260K pass at 0% then costs ~40 draft steps, as an 8B Q4_0
# target on UFS 4.0 does against a ~0.5B draft).
$sf bench "${stories[@]}" --methods "$methods" --budgets 0%,50%,100% --json $out/stories-real.json >$out/stories-real.md
$sf bench "${stories[@]}" --methods "$methods" --budgets 0%,50%,100% --io-bandwidth 4G \
  --json $out/stories-ufs4.json >$out/stories-ufs4.md
$sf bench "${stories[@]}" --methods "$methods" --budgets 0%,50% --io-bandwidth 25M \
  --json $out/stories-phone.json >$out/stories-phone.md
# Pruning: scorer (logit lens, trained predictor) and theta, phone regime at 0%.
for theta in 0.1 0.3; do
  $sf bench "${stories[@]}" --methods flash-ar,lever-noprune,lever,lever-shadow --budgets 0% --io-bandwidth 25M \
    --lever-theta $theta --json $out/theta-$theta-lens.json >$out/theta-$theta-lens.md
  $sf bench "${stories[@]}" --methods flash-ar,lever-noprune,lever,lever-shadow --budgets 0% --io-bandwidth 25M \
    --lever-theta $theta --lever-predictor models/stories260K-predictor-l2.gguf \
    --json $out/theta-$theta-pred.json >$out/theta-$theta-pred.md
done
# (ii) cost only: synthetic 1.1B target and draft (random weights: drafts are not accepted).
[[ -f bench-out/llama1b-q4_0.gguf ]] || $sf synth --arch llama --vocab-from ../shared/vocab/ggml-vocab-llama-spm.gguf \
  --embd 2048 --layers 22 --heads 32 --kv-heads 4 --ffn 5632 --type Q4_0 --seed 1 -o bench-out/llama1b-q4_0.gguf
[[ -f bench-out/draft-small-q4_0.gguf ]] || $sf synth --arch llama \
  --vocab-from ../shared/vocab/ggml-vocab-llama-spm.gguf --embd 512 --layers 4 --heads 8 --kv-heads 4 --ffn 1408 \
  --type Q4_0 --seed 2 -o bench-out/draft-small-q4_0.gguf
big=(-m bench-out/llama1b-q4_0.gguf --draft bench-out/draft-small-q4_0.gguf --tree-widths 3,2,1
     --dataset spec_bench:3 -n 12 --ignore-eos --max-tree-nodes 32)
$sf bench "${big[@]}" --methods "$methods" --budgets 0%,50%,100% --json $out/llama1b-real.json >$out/llama1b-real.md
$sf bench "${big[@]}" --methods "$methods" --budgets 0% --io-bandwidth 4G \
  --json $out/llama1b-ufs4.json >$out/llama1b-ufs4.md
# Verification cost per row count and what pruning after layer 11 of 22 saves (resident).
$sf profile -m bench-out/llama1b-q4_0.gguf --max-rows 65 --prune-layer 11 -o $out/llama1b-profile.json \
  >$out/llama1b-profile.md
echo "wrote $out"
