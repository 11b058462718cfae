#include "reference_runner.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/check.h"
#include "base/thread_pool.h"
#include "kv/kv_cache.h"
#include "model/model.h"
#include "model/transformer.h"
#include "sampling/sampler.h"

namespace sf::test {

double ReferenceAgreement::top1_rate() const {
  int n = 0, m = 0;
  for (const auto& p : prompts) n += p.positions, m += p.top1_matches;
  return n ? static_cast<double>(m) / n : 0;
}
double ReferenceAgreement::max_nmse() const {
  double worst = 0;
  for (const auto& p : prompts) worst = std::max(worst, p.last_logits_nmse);
  return worst;
}
bool ReferenceAgreement::greedy_identical() const {
  for (const auto& p : prompts)
    if (p.greedy_matching_prefix != p.greedy_len) return false;
  return true;
}
std::string ReferenceAgreement::summary() const {
  std::ostringstream s;
  s << "top1=" << top1_rate() << " max_nmse=" << max_nmse() << " greedy_prefix=[";
  for (size_t i = 0; i < prompts.size(); ++i)
    s << (i ? "," : "") << prompts[i].greedy_matching_prefix << "/" << prompts[i].greedy_len;
  s << "]";
  return s.str();
}

ReferenceAgreement run_reference(const std::string& model_path, const std::string& jsonl_path, int n_threads) {
  auto loaded = Model::load(model_path);
  SF_CHECK(loaded.ok(), "%s", loaded.status().message().c_str());
  const Model& model = **loaded;
  const ModelHParams& hp = model.hparams();
  ThreadPool pool(n_threads);
  Transformer tf(hp, pool);

  ReferenceAgreement result;
  std::ifstream in(jsonl_path);
  SF_CHECK(in.good(), "cannot open %s", jsonl_path.c_str());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto rec = nlohmann::json::parse(line);
    const std::vector<int32_t> tokens = rec["tokens"].get<std::vector<int32_t>>();
    const std::vector<int32_t> greedy_ref = rec["greedy"].get<std::vector<int32_t>>();
    const std::vector<float> last_ref = rec["last_logits"].get<std::vector<float>>();
    const int64_t n = static_cast<int64_t>(tokens.size());
    KvCache cache(hp.n_layer, static_cast<int>(n + greedy_ref.size() + 1), hp.n_head_kv, hp.head_dim);

    std::vector<float> hidden(n * hp.n_embd), logits(n * hp.n_vocab);
    tf.embed(model.weights(), tokens.data(), n, hidden.data());
    tf.run_layers(model.weights(), ForwardBatch::causal(tokens, 0), 0, hp.n_layer, cache, hidden.data());
    tf.logits(model.weights(), hidden.data(), n, logits.data());

    PromptAgreement p;
    const auto& topk = rec["topk"];
    for (int64_t t = 0; t < n; ++t) {
      const int32_t ref_top = topk[t][0][0].get<int32_t>();
      const float ref_top_logit = topk[t][0][1].get<float>();
      const int32_t ours = argmax(logits.data() + t * hp.n_vocab, hp.n_vocab);
      // A tie within float noise between the reference's top two is not a disagreement.
      const bool near_tie = topk[t].size() > 1 && ref_top_logit - topk[t][1][1].get<float>() < 1e-5f;
      ++p.positions;
      if (ours == ref_top || (near_tie && ours == topk[t][1][0].get<int32_t>())) ++p.top1_matches;
    }
    const float* last = logits.data() + (n - 1) * hp.n_vocab;
    double err = 0, norm = 0;
    for (int i = 0; i < hp.n_vocab; ++i) {
      err += (static_cast<double>(last[i]) - last_ref[i]) * (static_cast<double>(last[i]) - last_ref[i]);
      norm += static_cast<double>(last_ref[i]) * last_ref[i];
    }
    p.last_logits_nmse = norm > 0 ? err / norm : err;

    p.greedy_len = static_cast<int>(greedy_ref.size());
    std::vector<float> step(last, last + hp.n_vocab);
    std::vector<float> h1(hp.n_embd);
    bool matching = true;
    for (int i = 0; i < p.greedy_len && matching; ++i) {
      const int32_t next = argmax(step.data(), hp.n_vocab);
      if (next != greedy_ref[i]) {
        matching = false;
        break;
      }
      ++p.greedy_matching_prefix;
      // Feed the reference token so later steps stay comparable.
      tf.embed(model.weights(), &next, 1, h1.data());
      tf.run_layers(model.weights(), ForwardBatch::causal({next}, static_cast<int32_t>(n + i)), 0, hp.n_layer, cache,
                    h1.data());
      tf.logits(model.weights(), h1.data(), 1, step.data());
    }
    result.prompts.push_back(p);
  }
  return result;
}

}  // namespace sf::test
