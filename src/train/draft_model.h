// A small Llama-architecture decoder for training: configuration, a flat parameter vector
// with named views, and the forward + backward pass over a batch of equal-length
// sequences (each starting at position 0) with a distillation loss.
//
// The parameters live in one contiguous vector (the optimiser, checkpoints and the
// determinism test treat them as one array). Layout, each matrix in GGUF row order (one
// row per output):
//   token_embd [V, E]; per layer: attn_norm [E], wq [H*hd, E], wk [KV*hd, E], wv [KV*hd, E],
//   wo [E, H*hd], ffn_norm [E], ffn_gate [F, E], ffn_up [F, E], ffn_down [E, F];
//   output_norm [E], output [V, E].
// Templated on the scalar (float for training, double for gradient checks). A
// DraftModelRunner owns its activation buffers; not thread-safe, uses the ThreadPool.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "train/train_ops.h"

namespace sf::train {

struct DraftConfig {
  int n_vocab = 0;
  int n_embd = 64;
  int n_layer = 2;
  int n_head = 8;
  int n_head_kv = 4;
  int n_ff = 172;
  float rms_eps = 1e-5f;
  float rope_freq_base = 10000.0f;
  int n_ctx = 256;  // written to the GGUF as context_length

  int head_dim() const { return n_embd / n_head; }
  int q_dim() const { return n_head * head_dim(); }
  int kv_dim() const { return n_head_kv * head_dim(); }
  // Shape problems a user can cause (bad flags) as a Status.
  Status validate() const;
};

// Offsets (in scalars) of every tensor in the flat parameter vector.
struct ParamLayout {
  struct Layer {
    int64_t attn_norm, wq, wk, wv, wo, ffn_norm, ffn_gate, ffn_up, ffn_down;
  };
  int64_t token_embd = 0;
  std::vector<Layer> layers;
  int64_t output_norm = 0, output = 0;
  int64_t total = 0;

  explicit ParamLayout(const DraftConfig& c);
  // (GGUF name, offset, cols, rows) of every tensor, in file order; rows == 1 for vectors.
  struct Named {
    std::string name;
    int64_t offset, cols, rows;
  };
  std::vector<Named> named(const DraftConfig& c) const;
};

// Initial weights: matrices N(0, 0.02) (output projections scaled by 1/sqrt(2 n_layer)),
// norms 1. Deterministic in the seed.
std::vector<float> init_params(const DraftConfig& c, uint64_t seed);

// One forward/backward over tokens [n_seq, seq_len].
template <typename T>
class DraftModelRunner {
 public:
  DraftModelRunner(const DraftConfig& c, ThreadPool* pool) : c_(c), layout_(c), pool_(pool) {}

  // logits [n_seq*seq_len, V] (kept until the next call). When round_kv_to_half, K and V
  // are rounded to IEEE half after RoPE, as the engine's KV cache stores them (used only
  // to compare with the engine; training never sets it).
  const std::vector<T>& forward(const T* params, const int32_t* tokens, int64_t n_seq, int64_t seq_len,
                                bool round_kv_to_half = false);
  // Backward from dlogits [n, V] (of the last forward); grad [total] is overwritten.
  void backward(const T* params, const T* dlogits, T* grad);

  const DraftConfig& config() const { return c_; }
  const ParamLayout& layout() const { return layout_; }

 private:
  struct LayerActs {
    std::vector<T> x_in, xn, rstd1, q, k, v, probs, att, x_mid, xn2, rstd2, g, u, h;
  };
  DraftConfig c_;
  ParamLayout layout_;
  ThreadPool* pool_;
  int64_t n_seq_ = 0, seq_len_ = 0;
  std::vector<int32_t> tokens_, positions_;
  std::vector<LayerActs> acts_;
  std::vector<T> x_final_, xn_final_, rstd_final_, logits_;
};

extern template class DraftModelRunner<float>;
extern template class DraftModelRunner<double>;

}  // namespace sf::train
