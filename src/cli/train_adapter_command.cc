// specflash train-adapter: train a CATS draft or shallow-verifier adapter for a target on
// its frozen hidden states (Reduced KL over the target's top-K), and write the file
// --cats-draft-adapter / --cats-verifier-adapter load.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/checked_output.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "train/adapter_trainer.h"

namespace sf::cli {

int train_adapter_command(int argc, char** argv) {
  CLI::App app{
      "Train a CATS adapter: two RMSNorms and one attention layer on the target's hidden state after --layer,\n"
      "feeding the target's own (frozen) final norm and LM head, distilled from the target's top-K final\n"
      "logits with the Reduced KL loss (CATS appendix B). Starts from the plain early-exit head.",
      "specflash train-adapter"};
  show_defaults_in_help(app);
  train::AdapterPipelineOptions o;
  std::string role = "draft";
  bool quiet = false;
  app.add_option("--target", o.target_path, "target model GGUF")->required();
  app.add_option("--role", role, "draft (layers 1..L_DM) or verifier (layers 1..L_SV)")
      ->check(CLI::IsMember({"draft", "verifier"}));
  app.add_option("--layer", o.layer, "the hidden state after this many layers (L_DM or L_SV)")->required();
  app.add_option("-o,--out", o.out_path, "output adapter GGUF")->required();
  app.add_option("--data", o.data, "training text files or directories (required unless --steps 0)");
  app.add_option("--seq-len", o.seq_len, "tokens per window")->check(CLI::Range(2, 4096));
  app.add_option("--max-windows", o.max_windows, "windows of text to use (last 10% held out)")
      ->check(CLI::Range(2, 1 << 20));
  app.add_option("--top-k", o.top_k, "teacher logits kept per position (the Reduced KL's K)")
      ->check(CLI::Range(2, 256));
  app.add_option("--steps", o.train.steps,
                 "optimiser steps; 0 writes the untrained adapter (= the plain exit head plus the adapter's cost), "
                 "for cost measurements on random-weight models")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--batch", o.train.batch_windows, "windows per step")->check(CLI::Range(1, 4096));
  app.add_option("--lr", o.train.lr, "peak learning rate (cosine to 10%)")->check(CLI::PositiveNumber);
  app.add_option("--seed", o.train.seed, "seed of the initial weights and the batch order");
  app.add_option("--checkpoint", o.train.checkpoint,
                 "checkpoint file (weights + optimiser state + step), written every --checkpoint-every steps and at "
                 "the end");
  app.add_option("--checkpoint-every", o.train.checkpoint_every, "steps between checkpoints")
      ->check(CLI::Range(1, 1000000));
  app.add_flag("--resume", o.train.resume,
               "continue from --checkpoint when it exists (same target, role, layer, data, batch and seed)");
  app.add_option("-t,--threads", o.n_threads, "worker threads (0: all cores)")->check(CLI::Range(0, 1024));
  app.add_flag("-q,--quiet", quiet, "no progress lines");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;
  o.role = role == "draft" ? AdapterRole::kDraft : AdapterRole::kVerifier;
  o.train.progress = !quiet;
  if (o.train.resume && o.train.checkpoint.empty()) return usage_error("train-adapter: --resume needs --checkpoint");
  if (Status st = check_model_output_path(o.out_path, {o.target_path}); !st.ok()) return fail(st);
  remove_staging_file_on_signal(o.out_path);
  if (!o.train.checkpoint.empty()) remove_staging_file_on_signal(o.train.checkpoint);
  auto r = train::run_train_adapter(o);
  if (!r.ok()) return fail(r.status());
  const train::AdapterReport& rep = *r;
  if (rep.resumed_from > 0) std::printf("resumed from step %lld\n", static_cast<long long>(rep.resumed_from));
  std::printf(
      "adapter: %s (%s, layer %d, %lld parameters; %lld training rows, %lld held out; final loss %.4f; %.1f s)\n",
      o.out_path.c_str(), role.c_str(), o.layer, static_cast<long long>(rep.parameters),
      static_cast<long long>(rep.train_rows), static_cast<long long>(rep.heldout_rows), rep.loss, rep.seconds);
  if (o.train.steps > 0)
    std::printf("held-out top-1 agreement with the target: plain exit head %.3f -> adapter %.3f\n",
                rep.heldout_top1_before, rep.heldout_top1_after);
  else
    std::printf("untrained (--steps 0): it predicts exactly what the plain exit head does\n");
  return 0;
}

}  // namespace sf::cli
