#!/usr/bin/env bash
# The CATS tables of docs/cats.md in one invocation: flash-ar, Kangaroo, CATS without
# adapters and CATS at gamma 3/5/7/10, budgets 0%/25%/50% (and 100% for stories260K),
# reporting mean accepted, BPT and tokens/s (the bench's table and JSON), on
#  (i)  stories260K with its trained adapters (real acceptance), and
#  (ii) the synthetic 1.1B Llama (random weights: cost only, drafts are essentially never
#       accepted) with untrained adapters (--steps 0) so the adapters' cost is in the
#       numbers; one bench run per budget (the verifier adapter's layer depends on it).
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

# (ii) cost only. The adapters are untrained (they predict what the plain exit heads do)
# but cost what trained ones cost. The verifier adapter must sit at L_SV, which the
# residency plan picks per budget (the pinned layers), so each budget is its own bench run
# with the verifier adapter for that budget's L_SV (read from a one-token run's --stats).
mkdir -p "$(dirname "$big_model")"
[[ -f $big_model ]] || $sf synth --arch llama --vocab-from ../shared/vocab/ggml-vocab-llama-spm.gguf \
  "${big_shape[@]}" -o "$big_model"
adapter() {  # role layer -> path
  local path=$out/llama1b-$1-adapter-l$2.gguf
  [[ -f $path ]] || $sf train-adapter --target "$big_model" --role "$1" --layer "$2" --steps 0 -q -o "$path" >/dev/null
  echo "$path"
}
draft_adapter=$(adapter draft 2)
for budget in 0% 25% 50%; do
  lsv=$($sf run -m "$big_model" -p "Hi" -n 1 --temp 0 --spec cats --cats-ldm 2 --mem-budget $budget --stats \
          2>&1 >/dev/null | sed -n 's/.*L_SV \([0-9][0-9]*\).*/\1/p' | head -n 1)
  [[ -n $lsv ]] || { echo "bench_cats.sh: no L_SV in the --stats of a cats run at $budget" >&2; exit 1; }
  big=(-m "$big_model" --dataset "spec_bench:$big_prompts" -n "$big_tokens" --ignore-eos --cats-ldm 2
       --cats-draft-adapter "$draft_adapter" --cats-verifier-adapter "$(adapter verifier "$lsv")")
  $sf bench "${big[@]}" --methods "$methods" --budgets $budget \
    --json "$out/llama1b-real-${budget%\%}.json" >"$out/llama1b-real-${budget%\%}.md"
done
echo "wrote $out"
