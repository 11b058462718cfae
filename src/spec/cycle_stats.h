// What one speculative cycle did, reported to the tree builder (for its online estimates)
// and to the session's statistics (--stats, --stats-json).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/token_tree.h"

namespace sf {

// A row the verifier's walk visited, and the token the target chose there (the accepted
// child's token, or the bonus token at the last visited row).
struct VisitedRow {
  int32_t node = TokenTree::kRoot;  // node of the drafted tree (kRoot for the root)
  int32_t target_token = -1;
};

struct CycleStats {
  int32_t tree_nodes = 0;     // nodes the builder proposed
  int32_t max_depth = 0;      // depth of the proposed tree
  int32_t rows_verified = 0;  // rows of the verification batch (root + nodes)
  int32_t rows_pruned = 0;    // rows dropped at the early-exit layer (ran only its first layers)
  int32_t accepted = 0;       // nodes on the accepted path
  int32_t head_rows = 0;      // rows whose LM head was computed (on demand, LEVER 4.4)
  int32_t context = 0;        // committed tokens before the cycle
  // The session offered its pruner for this cycle's tree (whether or not the builder took
  // it, builder.wants_pruning()): auto's pruning switch measures only such cycles.
  bool pruning_offered = false;
  double draft_seconds = 0;
  double verify_seconds = 0;    // target forward + acceptance walk
  double io_stall_seconds = 0;  // part of verify_seconds spent waiting for streamed weights
  // The read-ahead of this cycle's pass still to come when drafting began
  // (BuildContext::hidden_draft_seconds): drafting up to this long overlapped that I/O.
  double hidden_io_seconds = 0;
  double threshold = -1;  // the builder's verification threshold (EdgeLLM's alpha), if any
  // EdgeLLM's provisional generation during this cycle's verification: tokens drafted,
  // tokens the verification confirmed, and the worker's drafting time.
  int32_t provisional_tokens = 0;
  int32_t provisional_kept = 0;
  double provisional_seconds = 0;
  int32_t carried_nodes = 0;
  // Mirror-SD: the verification pass split at the token channel (T_prefix, the channel's
  // own time, T_suffix = the later layers plus the acceptance walk), the rollout worker's
  // drafting time (T_draft), its tokens and those carried into the next window, and the
  // outcome: 0 no rollout, 1 reused (the corrected prefix lay on the hypothesis tree),
  // 2 fallback (a fresh draft follows).
  double prefix_seconds = 0;
  double channel_seconds = 0;
  double suffix_seconds = 0;
  double rollout_seconds = 0;
  int32_t rollout_tokens = 0;
  int32_t rollout_kept = 0;
  int32_t mirror_outcome = 0;  // Mirror-SD: 0 no rollouts launched, 1 a rollout reused, 2 a fallback
  // The policy that built the tree (TreeBuilder::policy(): auto's chosen arm, else the
  // builder's own name). A copy: the stats outlive the session (the bench summarises runs
  // after their sessions are gone).
  std::string policy;
  std::vector<VisitedRow> visited;
};

// The cycles each policy built (auto's arms; a single entry for the other methods), with the
// tokens they emitted and their draft + verify seconds, for --stats and the bench.
struct PolicyUse {
  std::string policy;
  uint64_t cycles = 0;
  uint64_t tokens = 0;
  double seconds = 0;
};

// Adds `cycles` to `uses`, one entry per policy, in order of first use.
void add_policy_uses(const std::vector<CycleStats>& cycles, std::vector<PolicyUse>* uses);

}  // namespace sf
