// Session::decode_cats: the CATS / Kangaroo cycle loop (spec/cats_cycle.h).
//
// Like decode_speculative, the target holds the committed sequence except its last token
// (the pending token; the first is sampled from the prefill's logits); each cycle drafts
// with the target's first layers, verifies shallowly with the pinned middle layers, runs
// the streamed suffix once over the tree, and commits the accepted path plus a bonus
// token. There is no draft model: peak memory is the target's own.
#include <algorithm>

#include "base/log.h"
#include "base/timer.h"
#include "engine/emit_tokens.h"
#include "engine/session.h"

namespace sf {

Status Session::decode_cats(Slot& slot, const SpecConfig& spec, const std::vector<int32_t>& prompt, int n_predict,
                            const SamplingParams& sampling, bool ignore_eos,
                            const std::function<bool(int32_t, const std::string&)>& on_token, GenerationStats* stats) {
  ModelRunner& target = *slot.target;
  CatsCycle& cats = *slot.cats;
  Sampler sampler(sampling);
  StreamingDecoder decoder(*tokenizer_);
  std::vector<int32_t> history = prompt;

  // The whole prompt is prefilled and the first token sampled from its last row, as in
  // plain and speculative decoding (decode_speculative says why).
  Stopwatch prefill_timer;
  size_t reused = reuse_cached_prefix(target, prompt, prompt.size() - 1);
  std::vector<float> logits;
  if (cats.has_adapters()) {
    // The adapters' caches must hold the same prefix: prefill through the cycle's ranges.
    reused = std::min<size_t>(reused, static_cast<size_t>(cats.n_committed()));
    cats.truncate(static_cast<int>(reused));
    SF_RETURN_IF_ERROR(cats.prefill({prompt.begin() + static_cast<std::ptrdiff_t>(reused), prompt.end()},
                                    options_.max_batch, &logits));
  } else {
    SF_RETURN_IF_ERROR(evaluate(target, {prompt.begin() + reused, prompt.end()}, false, &logits));
  }
  stats->reused_prompt_tokens = static_cast<int>(reused);
  stats->first_token_from_prefill = true;
  stats->prefill_seconds = prefill_timer.elapsed();

  Stopwatch decode_timer;
  const uint64_t weight_before = target.counters().weight_bytes;
  const uint64_t stream_before = streamer_ ? streamer_->stats().bytes_read : 0;
  const double stall_before_decode = streamer_ ? streamer_->stats().io_stall_seconds : 0;
  int32_t pending = sampler.sample(logits.data(), target.hparams().n_vocab, history);
  bool done = n_predict <= 0;
  if (!done)
    done = emit_cycle_tokens(TokenTree(), {}, pending, *tokenizer_, ignore_eos, n_predict, decoder, on_token, &history,
                             stats);
  CatsCycleResult r;
  while (!done) {
    const int64_t room = target.n_ctx() - target.n_past();
    if (room < 1) {
      SF_LOG_WARN("context of %d tokens is full; stopping generation", target.n_ctx());
      break;
    }
    CycleStats cycle;
    cycle.context = target.n_past();
    const double stall_before = streamer_ ? streamer_->stats().io_stall_seconds : 0;
    SF_RETURN_IF_ERROR(cats.run(pending, spec.draft_len, static_cast<int>(room - 1), sampler, history, &r));
    cycle.tree_nodes = r.tree.size();
    cycle.max_depth = r.tree.max_depth();
    cycle.draft_seconds = r.draft_seconds;
    cycle.verify_seconds = r.shallow_seconds + r.final_seconds;
    cycle.io_stall_seconds = (streamer_ ? streamer_->stats().io_stall_seconds : 0) - stall_before;
    cycle.rows_verified = r.tree.size() + 1;
    cycle.accepted = static_cast<int32_t>(r.accepted.size());
    cycle.head_rows = static_cast<int32_t>(r.rows_visited);

    SpecStats& sp = stats->spec;
    ++sp.cycles;
    sp.draft_tokens += static_cast<uint64_t>(r.tree.size());
    sp.accepted_draft_tokens += r.accepted.size();
    sp.rows_verified += static_cast<uint64_t>(cycle.rows_verified);
    sp.head_rows += static_cast<uint64_t>(r.rows_visited);
    sp.head_rows_saved += static_cast<uint64_t>(cycle.rows_verified - r.rows_visited);
    sp.max_tree_nodes = std::max<uint64_t>(sp.max_tree_nodes, static_cast<uint64_t>(r.tree.size()));
    sp.corrections += static_cast<uint64_t>(r.corrections);
    sp.accepted_corrections += r.accepted_leaf ? 1 : 0;
    sp.draft_seconds += cycle.draft_seconds;
    sp.verify_seconds += cycle.verify_seconds;
    sp.verify_io_stall_seconds += cycle.io_stall_seconds;
    stats->cycles.push_back(std::move(cycle));

    done = emit_cycle_tokens(r.tree, r.accepted, r.bonus, *tokenizer_, ignore_eos, n_predict, decoder, on_token,
                             &history, stats);
    pending = r.bonus;
  }
  const std::string tail = decoder.flush();
  if (!tail.empty()) on_token(-1, tail);
  stats->decode_seconds = decode_timer.elapsed();
  stats->decode_weight_bytes = target.counters().weight_bytes - weight_before;
  stats->decode_stream_bytes = (streamer_ ? streamer_->stats().bytes_read : 0) - stream_before;
  stats->decode_io_stall_seconds = (streamer_ ? streamer_->stats().io_stall_seconds : 0) - stall_before_decode;
  return Status::Ok();
}

}  // namespace sf
