// Session::decode_speculative: the draft -> verify -> commit cycle.
//
// The target always holds the committed sequence except its last token (the "pending"
// token). Each cycle the drafter proposes a tree below the pending token; the target runs
// [pending, tree nodes] as one batch (one streamed pass over its layers), the verifier
// walks the tree computing the LM head only for the rows it visits, and the accepted path
// plus a bonus token are committed in both caches. With an empty tree this is exactly
// plain decoding, one token per pass.
#include <algorithm>

#include "base/log.h"
#include "base/timer.h"
#include "engine/session.h"
#include "spec/tree_batch.h"
#include "spec/verifier.h"

namespace sf {

Status Session::decode_speculative(Slot& slot, TreePolicy& policy, const std::vector<int32_t>& prompt, int n_predict,
                                   const SamplingParams& sampling, bool ignore_eos,
                                   const std::function<bool(int32_t, const std::string&)>& on_token,
                                   GenerationStats* stats) {
  ModelRunner& target = *slot.target;
  Drafter& drafter = *slot.drafter;
  const int n_vocab = model_->hparams().n_vocab;
  Sampler verify_sampler(sampling);
  SamplingParams draft_params = sampling;
  draft_params.seed = sampling.seed ^ 0x9E3779B97F4A7C15ull;  // the draft's own random stream
  Sampler draft_sampler(draft_params);
  StreamingDecoder decoder(*tokenizer_);
  std::vector<int32_t> history = prompt;

  Stopwatch prefill_timer;
  const size_t reused = reuse_cached_prefix(target, prompt, prompt.size() - 1);
  if (prompt.size() - 1 > reused)
    SF_RETURN_IF_ERROR(evaluate(target, {prompt.begin() + reused, prompt.end() - 1}, false, nullptr));
  stats->reused_prompt_tokens = static_cast<int>(reused);
  stats->prefill_seconds = prefill_timer.elapsed();
  drafter.reset(prompt);
  int32_t pending = prompt.back();

  Stopwatch decode_timer;
  TokenTree tree;
  std::vector<float> row_buffer(static_cast<size_t>(n_vocab));
  bool done = n_predict <= 0;
  while (!done) {
    const int64_t room = target.n_ctx() - target.n_past();
    if (room < 1) {
      SF_LOG_WARN("context of %d tokens is full; stopping generation", target.n_ctx());
      break;
    }
    Stopwatch draft_timer;
    policy.begin_cycle(room - 1);  // one cell is the pending token's
    SF_RETURN_IF_ERROR(drafter.propose(policy, sampling, draft_sampler, history, &tree));
    const double draft_seconds = draft_timer.elapsed();
    stats->spec.draft_seconds += draft_seconds;

    Stopwatch verify_timer;
    const int32_t n_past = target.n_past();
    SF_RETURN_IF_ERROR(target.forward(make_tree_batch(tree, pending, n_past)));
    SF_RETURN_IF_ERROR(target.begin_head());
    const VerifyResult result = verify_tree(
        tree, n_vocab,
        [&](int64_t row) {
          target.row_logits(row, row_buffer.data());
          return row_buffer.data();
        },
        verify_sampler, history);
    target.end_head();
    std::vector<int32_t> cells = {n_past}, tokens = {pending};
    for (int32_t node : result.accepted) {
      cells.push_back(n_past + static_cast<int32_t>(tree_row(node)));
      tokens.push_back(tree.node(node).token);
    }
    target.commit(cells, tokens);
    drafter.commit(tree, result.accepted, result.bonus);
    const double verify_seconds = verify_timer.elapsed();
    stats->spec.verify_seconds += verify_seconds;
    policy.observe({tree.size(), static_cast<int32_t>(result.accepted.size()), draft_seconds, verify_seconds});

    ++stats->spec.cycles;
    stats->spec.draft_tokens += static_cast<uint64_t>(tree.size());
    stats->spec.accepted_draft_tokens += result.accepted.size();
    stats->spec.rows_verified += static_cast<uint64_t>(tree.size()) + 1;
    stats->spec.head_rows += static_cast<uint64_t>(result.rows_visited);
    stats->spec.head_rows_saved += static_cast<uint64_t>(tree.size() + 1 - result.rows_visited);

    std::vector<int32_t> emitted;
    for (int32_t node : result.accepted) emitted.push_back(tree.node(node).token);
    emitted.push_back(result.bonus);
    for (int32_t token : emitted) {
      if (!ignore_eos && tokenizer_->is_eog(token)) {
        done = true;
        break;
      }
      history.push_back(token);
      ++stats->generated_tokens;
      if (!on_token(token, decoder.push(token)) || stats->generated_tokens >= n_predict) {
        done = true;
        break;
      }
    }
    pending = result.bonus;
  }
  const std::string tail = decoder.flush();
  if (!tail.empty()) on_token(-1, tail);
  stats->decode_seconds = decode_timer.elapsed();
  return Status::Ok();
}

}  // namespace sf
