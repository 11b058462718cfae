// CATS adapters on stories260K: the runtime adapter computes what the trainer trained
// (same logits on a window), the untrained adapter is exactly the plain exit head,
// training raises held-out agreement, the committed adapters keep decoding lossless while
// raising acceptance over the plain exit head, and wrong files are clear errors.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/session.h"
#include "spec/cats_adapter.h"
#include "test_paths.h"
#include "train/adapter_trainer.h"
#include "train/distill.h"

namespace sf {
namespace {

const char* kTarget = "models/stories260K.gguf";

std::unique_ptr<Session> plain_session() {
  SessionOptions o;
  o.model_path = test::shared_path(kTarget);
  o.n_threads = 2;
  o.n_ctx = 256;
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(*s) : nullptr;
}

// Logits of a window through the runtime adapter (causal, from position 0) and the head.
std::vector<float> runtime_logits(Session& s, const AdapterLayout& layout, const std::vector<float>& params,
                                  const std::vector<float>& hidden, const std::vector<int32_t>& tokens) {
  const int E = s.model().hparams().n_embd, V = s.model().hparams().n_vocab;
  CatsAdapter adapter(layout, params, 1, 64, s.pool());
  std::vector<float> y(tokens.size() * E), logits(tokens.size() * V);
  adapter.forward(ForwardBatch::causal(tokens, 0), hidden.data(), y.data());
  EXPECT_TRUE(s.target().head_logits(y.data(), static_cast<int64_t>(tokens.size()), logits.data()).ok());
  return logits;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
  return d;
}

TEST(CatsAdapter, RuntimeMatchesTrainerAndUntrainedIsThePlainHead) {
  auto s = plain_session();
  ASSERT_TRUE(s);
  const Model& model = s->model();
  const int E = model.hparams().n_embd, V = model.hparams().n_vocab;
  auto tokens = s->tokenize("Once upon a time, there was a little girl named Lily. She liked to play");
  ASSERT_TRUE(tokens.ok());
  const int L = static_cast<int>(tokens->size());
  const std::vector<float> hidden = train::target_hidden_states(model, *tokens, L, 1, s->pool());
  const AdapterLayout layout = AdapterLayout::for_model(model);
  const train::ExitHead head = train::exit_head_from_model(model);

  // Untrained (Wo = 0): the plain exit head's logits.
  std::vector<float> params = init_adapter_params(layout, 3);
  std::vector<float> plain(static_cast<size_t>(L) * V);
  ASSERT_TRUE(s->target().head_logits(hidden.data(), L, plain.data()).ok());
  EXPECT_LT(max_abs_diff(runtime_logits(*s, layout, params, hidden, *tokens), plain), 1e-3);

  // A non-trivial adapter: the runtime (KV cache, masks) equals the trainer's forward.
  for (int64_t i = layout.wo(); i < layout.out_norm(); ++i) params[i] = 0.05f * std::sin(static_cast<float>(i));
  for (int i = 0; i < E; ++i) params[layout.out_norm() + i] = 1.0f + 0.1f * std::cos(static_cast<float>(i));
  std::vector<float> trained_view;
  train::adapter_logits(layout, params, head, hidden.data(), 1, L, trained_view, s->pool());
  const std::vector<float> runtime = runtime_logits(*s, layout, params, hidden, *tokens);
  EXPECT_GT(max_abs_diff(runtime, plain), 1e-2) << "the perturbed adapter must change the logits";
  EXPECT_LT(max_abs_diff(runtime, trained_view), 2e-3);
}

TEST(CatsAdapter, TrainingRaisesHeldOutAgreement) {
  train::AdapterPipelineOptions o;
  o.target_path = test::shared_path(kTarget);
  o.out_path = test::scratch_dir("cats_adapter_train") + "/draft.gguf";
  o.data = {test::shared_path("datasets/tinystories/validation_100.txt")};
  o.layer = 2;
  o.max_windows = 80;
  o.n_threads = 2;
  o.train.steps = 80;
  auto r = train::run_train_adapter(o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::printf("held-out top-1: %.3f -> %.3f (loss %.3f)\n", r->heldout_top1_before, r->heldout_top1_after, r->loss);
  EXPECT_GT(r->heldout_top1_after, r->heldout_top1_before + 0.05);
  // The file loads for its role and layer only.
  auto model = Model::load(o.target_path);
  ASSERT_TRUE(model.ok());
  ThreadPool pool(1);
  EXPECT_TRUE(CatsAdapter::load(o.out_path, **model, AdapterRole::kDraft, 2, 64, pool).ok());
  auto wrong_layer = CatsAdapter::load(o.out_path, **model, AdapterRole::kDraft, 1, 64, pool);
  ASSERT_FALSE(wrong_layer.ok());
  EXPECT_NE(wrong_layer.status().message().find("--cats-ldm 2"), std::string::npos) << wrong_layer.status().message();
  auto wrong_role = CatsAdapter::load(o.out_path, **model, AdapterRole::kVerifier, 2, 64, pool);
  ASSERT_FALSE(wrong_role.ok());
  EXPECT_NE(wrong_role.status().message().find("draft adapter"), std::string::npos) << wrong_role.status().message();
  auto not_adapter = CatsAdapter::load(o.target_path, **model, AdapterRole::kDraft, 2, 64, pool);
  ASSERT_FALSE(not_adapter.ok());
  EXPECT_NE(not_adapter.status().message().find("not a CATS adapter"), std::string::npos);
}

}  // namespace
}  // namespace sf

namespace sf {
namespace {

std::unique_ptr<Session> cats_session(SpecConfig::Method method, const char* budget, const std::string& draft_adapter,
                                      const std::string& verifier_adapter, int ldm = -1, int lsv = -1) {
  SessionOptions o;
  o.model_path = test::shared_path(kTarget);
  o.n_threads = 2;
  o.n_ctx = 256;
  o.mem_budget = *MemoryBudget::parse(budget);
  o.spec.method = method;
  o.spec.draft_len = 5;
  o.spec.cats.ldm = ldm;
  o.spec.cats.lsv = lsv;
  o.spec.cats.draft_adapter = draft_adapter.empty() ? "" : test::source_path(draft_adapter);
  o.spec.cats.verifier_adapter = verifier_adapter.empty() ? "" : test::source_path(verifier_adapter);
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(*s) : nullptr;
}

struct Totals {
  uint64_t proposed = 0, accepted = 0, cycles = 0, tokens = 0;
  double mean_accepted() const { return cycles ? static_cast<double>(accepted + cycles) / cycles : 0; }
};

// Greedy generations of every prompt must equal plain decoding; returns the counts.
Totals greedy_equal(Session& plain, Session& spec) {
  const std::vector<std::string> prompts = {"Once upon a time", "Lily wanted to play with her big red ball. One day",
                                            "The little dog was sad because", "Tom and Sue went to the park."};
  SamplingParams greedy;
  greedy.temperature = 0;
  Totals t;
  for (const std::string& text : prompts) {
    auto tokens = plain.tokenize(text);
    EXPECT_TRUE(tokens.ok());
    std::vector<int32_t> want, got;
    auto a = plain.generate(*tokens, 48, greedy, true, [&](int32_t id, const std::string&) {
      if (id >= 0) want.push_back(id);
      return true;
    });
    auto b = spec.generate(*tokens, 48, greedy, true, [&](int32_t id, const std::string&) {
      if (id >= 0) got.push_back(id);
      return true;
    });
    EXPECT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(want, got) << text;
    if (!b.ok()) continue;
    t.proposed += b->spec.draft_tokens;
    t.accepted += b->spec.accepted_draft_tokens;
    t.cycles += b->spec.cycles;
  }
  return t;
}

class CatsWithAdapters : public ::testing::TestWithParam<const char*> {};

TEST_P(CatsWithAdapters, LosslessAndAcceptMoreThanThePlainExitHead) {
  auto plain = plain_session();
  const char* budget = GetParam();
  const std::string dm = "models/stories260K-cats-draft-l1.gguf", sv = "models/stories260K-cats-verifier-l3.gguf";
  auto with = cats_session(SpecConfig::Method::kCats, budget, dm, sv);
  auto without = cats_session(SpecConfig::Method::kCats, budget, "", "", 1, 3);
  auto kangaroo = cats_session(SpecConfig::Method::kKangaroo, budget, dm, "");
  ASSERT_TRUE(plain && with && without && kangaroo);
  EXPECT_EQ(with->cats()->options().cuts.ldm, 1) << "the adapters' layers set the cuts";
  EXPECT_EQ(with->cats()->options().cuts.lsv, 3);
  const Totals a = greedy_equal(*plain, *with), b = greedy_equal(*plain, *without), k = greedy_equal(*plain, *kangaroo);
  std::printf(
      "at %s: cats with adapters %.2f tokens/pass (%llu of %llu accepted), plain exit head %.2f, kangaroo "
      "%.2f\n",
      budget, a.mean_accepted(), static_cast<unsigned long long>(a.accepted),
      static_cast<unsigned long long>(a.proposed), b.mean_accepted(), k.mean_accepted());
  EXPECT_GT(a.accepted, 0u);
  EXPECT_GT(k.accepted, 0u);
  EXPECT_GT(a.mean_accepted(), b.mean_accepted() + 0.3) << "trained adapters must raise acceptance";
}

INSTANTIATE_TEST_SUITE_P(Budgets, CatsWithAdapters, ::testing::Values("100%", "0%"),
                         [](const auto& info) { return std::string(info.param[0] == '1' ? "resident" : "streamed"); });

}  // namespace
}  // namespace sf

namespace sf {
namespace {

// Memory of CATS with both adapters against the target alone at 0%, 25% and 50%, in the
// session's accounted footprint (what --mem-budget bounds; the bench's peak RSS follows it).
// CATS has no draft model, so at a share budget it is held to the target alone's footprint
// at that share: the LM head it must pin and its adapters come out of the layers it pins.
// Where its smallest plan is larger than that (the target alone pins little or nothing), it
// runs with exactly the head (when the target alone streams it) and the adapters (weights +
// f32 KV cache) on top: the same pinned layers, one KV cache, no draft model, nothing else.
TEST(CatsMemory, NoMoreThanTheTargetAloneWhereItFitsElseOnlyHeadAndAdaptersOnTop) {
  const std::string dm = "models/stories260K-cats-draft-l1.gguf", sv = "models/stories260K-cats-verifier-l3.gguf";
  bool some_fit = false, some_on_top = false;
  for (const char* share : {"0%", "25%", "50%"}) {
    SessionOptions o;
    o.model_path = test::shared_path(kTarget);
    o.n_threads = 2;
    o.n_ctx = 256;
    o.mem_budget = *MemoryBudget::parse(share);
    auto plain_or = Session::create(o);
    ASSERT_TRUE(plain_or.ok()) << plain_or.status().message();
    const Session& plain = **plain_or;
    const ResidencyPlan& p = plain.plan();
    auto cats = cats_session(SpecConfig::Method::kCats, share, dm, sv);
    ASSERT_TRUE(cats);
    const ResidencyPlan& c = cats->plan();
    const uint64_t adapters = 2 * CatsAdapter::resident_bytes_for(AdapterLayout::for_model(plain.model()), o.n_ctx);
    const int head = plain.model().weights().head_unit();
    const uint64_t head_bytes = p.resident[head] ? 0 : plain.model().weights().unit_bytes(head);
    EXPECT_TRUE(c.head_resident) << share;
    EXPECT_EQ(c.base_bytes, p.base_bytes) << share;
    EXPECT_EQ(c.kv_bytes, p.kv_bytes) << share << ": one KV cache, the target's";
    EXPECT_EQ(c.scratch_bytes, p.scratch_bytes + adapters) << share << ": the adapters are counted";

    // The target alone's footprint as a byte budget: what the share plan must match.
    SessionOptions ob = o;
    ob.mem_budget = *MemoryBudget::parse(std::to_string(p.footprint_bytes()));
    ob.spec.method = SpecConfig::Method::kCats;
    ob.spec.draft_len = 5;
    ob.spec.cats.draft_adapter = test::source_path(dm);
    ob.spec.cats.verifier_adapter = test::source_path(sv);
    auto within = Session::create(ob);
    std::printf("%s: target alone %llu B (%d layers pinned, head %s); CATS %llu B, %d layers pinned (%s)\n", share,
                static_cast<unsigned long long>(p.footprint_bytes()), p.n_resident_layers,
                p.resident[head] ? "pinned" : "streamed", static_cast<unsigned long long>(c.footprint_bytes()),
                c.n_resident_layers, within.ok() ? "within the target's footprint" : "head and adapters on top");
    if (within.ok()) {
      some_fit = true;
      EXPECT_LE(c.footprint_bytes(), p.footprint_bytes()) << share;
      EXPECT_EQ(c.footprint_bytes(), (*within)->plan().footprint_bytes()) << share;
      EXPECT_EQ(c.n_resident_layers, (*within)->plan().n_resident_layers) << share;
      EXPECT_LE(c.n_resident_layers, p.n_resident_layers) << share << ": it pins fewer layers to pay for them";
    } else {
      some_on_top = true;
      EXPECT_NE(within.status().message().find("is below the minimum"), std::string::npos) << within.status().message();
      EXPECT_EQ(c.n_resident_layers, p.n_resident_layers) << share;
      EXPECT_EQ(c.resident_unit_bytes, p.resident_unit_bytes + head_bytes) << share;
      // The stream buffers hold the largest streamed unit: never larger once the head is pinned.
      EXPECT_LE(c.buffer_bytes, p.buffer_bytes) << share;
      EXPECT_EQ(c.footprint_bytes(), p.footprint_bytes() + adapters + head_bytes -
                                         static_cast<uint64_t>(c.n_buffers) * (p.buffer_bytes - c.buffer_bytes))
          << share;
    }
  }
  EXPECT_TRUE(some_fit) << "at 50% the target-only footprint holds CATS with both adapters";
  EXPECT_TRUE(some_on_top) << "at 0% the target alone pins nothing: CATS's head and adapters come on top";
}

}  // namespace
}  // namespace sf
