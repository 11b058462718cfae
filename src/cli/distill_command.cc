// specflash distill: train a small Llama draft for a target from the target's top-K logits.
#include "cli/distill_command.h"

#include <cstdio>
#include <string>
#include <vector>

#include "cli/checked_output.h"
#include "cli/cli_common.h"
#include "train/distill.h"

namespace sf::cli {

int distill_command(int argc, char** argv) {
  CLI::App app{
      "Train a small Llama-architecture draft that shares the target's vocabulary, distilled from the\n"
      "target's top-K logits (computed once with the engine's forward pass). Writes a normal GGUF.",
      "specflash distill"};
  show_defaults_in_help(app);
  train::DistillOptions o;
  std::string loss = "rkl";
  bool quiet = false;
  app.add_option("--target", o.target_path, "target model GGUF (teacher; its vocabulary is copied)")->required();
  app.add_option("--out", o.out_path, "output draft GGUF")->required();
  app.add_option("--data", o.data, "training text files or directories (stories split at <|endoftext|>)");
  app.add_option("--sample-tokens", o.sample_tokens, "also train on this many tokens sampled from the target");
  app.add_option("--holdout-stories", o.holdout_stories,
                 "hold out the last N stories of --data for evaluation (default: last 5% of windows)");
  app.add_option("--max-train-tokens", o.max_train_tokens, "use at most this many training tokens (0: all)");
  app.add_option("--layers", o.draft.n_layer, "draft layers (default 2)");
  app.add_option("--embd", o.draft.n_embd, "draft embedding size (default 64)");
  app.add_option("--heads", o.draft.n_head, "draft attention heads (default 8)");
  app.add_option("--kv-heads", o.draft.n_head_kv, "draft key/value heads (default 4)");
  app.add_option("--ffn", o.draft.n_ff, "draft feed-forward size (default 172)");
  app.add_option("--steps", o.train.steps, "optimiser steps (default 1000)");
  app.add_option("--seq-len", o.seq_len, "tokens per training window (default 128)");
  app.add_option("--batch", o.train.batch, "windows per step (default 16)");
  app.add_option("--lr", o.train.lr, "peak learning rate (default 3e-3; cosine to 10%, 50 warmup steps)");
  app.add_option("--warmup", o.train.warmup, "warmup steps (default 50)");
  app.add_option("--weight-decay", o.train.weight_decay, "AdamW weight decay on matrices (default 0.01)");
  app.add_option("--clip", o.train.clip, "clip gradients to this global L2 norm (default 1; 0 = off)");
  app.add_option("--top-k", o.top_k, "teacher logits kept per position (default 16)");
  app.add_option("--loss", loss, "rkl: Reduced KL over the teacher's top-K (CATS App. B); kl: full KL")
      ->check(CLI::IsMember({"rkl", "kl"}));
  app.add_option("--seed", o.train.seed, "seed for initialisation, batch order and sampling (default 1)");
  app.add_option("--checkpoint", o.train.checkpoint, "checkpoint file, written every --checkpoint-every steps");
  app.add_option("--checkpoint-every", o.train.checkpoint_every, "steps between checkpoints (default 200)");
  app.add_flag("--resume", o.train.resume, "continue from --checkpoint when it exists");
  app.add_flag("--f16", o.f16, "store the draft's matrices as F16 (default F32)");
  app.add_option("-t,--threads", o.n_threads, "worker threads (default: all cores)")->check(CLI::Range(0, 1024));
  app.add_flag("-q,--quiet", quiet, "no progress line");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;
  o.train.loss = loss == "kl" ? train::DistillLoss::kFullKl : train::DistillLoss::kReducedKl;
  o.train.progress = !quiet;
  if (o.data.empty() && o.sample_tokens <= 0)
    return usage_error("distill: give training text with --data and/or --sample-tokens");

  if (Status st = check_model_output_path(o.out_path, {o.target_path}); !st.ok()) return fail(st);
  remove_staging_file_on_signal(o.out_path);
  if (!o.train.checkpoint.empty()) remove_staging_file_on_signal(o.train.checkpoint);
  auto r = train::run_distill(o);
  if (!r.ok()) return fail(r.status());
  const train::DistillReport& rep = r.value();
  std::printf("draft: %s (%lld params, %d layers, embd %d)\n", o.out_path.c_str(), static_cast<long long>(rep.n_params),
              o.draft.n_layer, o.draft.n_embd);
  if (rep.train.resumed_from > 0)
    std::printf("resumed from step %lld\n", static_cast<long long>(rep.train.resumed_from));
  std::printf("data: %lld text tokens, %lld sampled tokens; %lld train / %lld held-out windows of %d\n",
              static_cast<long long>(rep.data_tokens), static_cast<long long>(rep.sampled_tokens),
              static_cast<long long>(rep.train_windows), static_cast<long long>(rep.heldout_windows), o.seq_len);
  std::printf("training: %.1f s, %.0f tokens/s, final loss %.4f\n", rep.train.seconds, rep.train.tokens_per_s,
              rep.train.final_loss);
  std::printf("top-1 agreement with the target: held-out %.4f (loss %.4f, %lld positions), train %.4f\n",
              rep.heldout.top1, rep.heldout.loss, static_cast<long long>(rep.heldout.positions), rep.train_eval.top1);
  return 0;
}

}  // namespace sf::cli
