// specflash train-predictor: train LEVER's early-exit predictor for a target (4.3) on its
// frozen hidden states, and write the file --lever-predictor loads.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "train/exit_predictor.h"

namespace sf::cli {

int train_predictor_command(int argc, char** argv) {
  CLI::App app{
      "Train LEVER's early-exit predictor: a linear scorer over the target's hidden state after --layer,\n"
      "initialised from the logit lens and distilled from the target's final logits (KD at --tau-kd plus\n"
      "a candidate-set term over the draft's top --candidates tokens). Writes the --lever-predictor file.",
      "specflash train-predictor"};
  show_defaults_in_help(app);
  train::PredictorPipelineOptions o;
  bool quiet = false;
  app.add_option("--target", o.target_path, "target model GGUF")->required();
  app.add_option("--draft", o.draft_path,
                 "draft model whose candidate sets the pruning will score (default: the "
                 "target's own top tokens)");
  app.add_option("-o,--out", o.out_path, "output predictor GGUF")->required();
  app.add_option("--data", o.data, "training text files or directories")->required();
  app.add_option("--layer", o.layer, "exit layer: hidden state after this many layers (default: half)");
  app.add_option("--seq-len", o.seq_len, "tokens per window")->check(CLI::Range(2, 4096));
  app.add_option("--max-windows", o.max_windows, "windows of text to use (last 10% held out)")
      ->check(CLI::Range(2, 1 << 20));
  app.add_option("--top-k", o.top_k, "teacher logits kept per position")->check(CLI::Range(2, 256));
  app.add_option("--candidates", o.candidates, "candidate-set size")->check(CLI::Range(2, 256));
  app.add_option("--steps", o.train.steps, "optimiser steps")->check(CLI::Range(1, 1000000));
  app.add_option("--batch", o.train.batch_rows, "rows per step")->check(CLI::Range(1, 65536));
  app.add_option("--lr", o.train.lr, "peak learning rate (cosine to 10%)");
  app.add_option("--tau-kd", o.train.tau_kd, "distillation temperature")->check(CLI::PositiveNumber);
  app.add_option("--tau-cand", o.train.tau_cand, "candidate-set temperature")->check(CLI::PositiveNumber);
  app.add_option("--lambda-cand", o.train.lambda_cand, "weight of the candidate-set loss")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", o.train.seed, "seed of the batch order");
  app.add_option("-t,--threads", o.n_threads, "worker threads (0: all cores)")->check(CLI::Range(0, 1024));
  app.add_flag("-q,--quiet", quiet, "no progress lines");
  int code = 0;
  if (!parse_args(app, argc, argv, &code)) return code;
  o.progress = !quiet;
  auto r = train::run_train_predictor(o);
  if (!r.ok()) return fail(r.status());
  const train::PredictorReport& rep = *r;
  std::printf("predictor: %s (exit after layer %d; %lld training rows, %lld held out; final loss %.4f)\n",
              o.out_path.c_str(), rep.layer, static_cast<long long>(rep.train_rows),
              static_cast<long long>(rep.heldout_rows), rep.loss);
  std::printf("held-out agreement with the target within the candidate set: logit lens %.3f -> trained %.3f\n",
              rep.heldout_agreement_before, rep.heldout_agreement_after);
  std::printf("held-out top-1 agreement over the whole vocabulary:          logit lens %.3f -> trained %.3f\n",
              rep.heldout_top1_before, rep.heldout_top1_after);
  return 0;
}

}  // namespace sf::cli
