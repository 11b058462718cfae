// Streaming changes no number: a Session whose layers stream from storage under a memory
// budget produces logits bit-identical to the fully resident Session, at several budgets,
// ring sizes and I/O backends. Each case also asserts that bytes really were streamed.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "base/aligned_buffer.h"
#include "convert/model_packer.h"
#include "convert/model_quantizer.h"
#include "engine/pack_hint.h"
#include "engine/session.h"
#include "gguf/per_test_scratch.h"
#include "spec/spec_config.h"
#include "test_paths.h"
#include "weights/residency_plan.h"

namespace sf {
namespace {

struct StreamCase {
  const char* model;
  const char* budget;
  int buffers;
  DirectReaderOptions::Backend backend;
};

// Prompt prefill (all rows) plus a few single-token decode steps.
std::vector<float> run_logits(Session& s) {
  const int n_vocab = s.model().hparams().n_vocab;
  std::vector<int32_t> prompt;
  for (int i = 0; i < 12; ++i) prompt.push_back((i * 37 + 1) % n_vocab);
  std::vector<float> all, step;
  s.reset();
  EXPECT_TRUE(s.evaluate(prompt, /*all_rows=*/true, &all).ok());
  for (int i = 0; i < 4; ++i) {
    const int32_t next = argmax(all.data() + all.size() - n_vocab, n_vocab);
    const Status st = s.evaluate({next}, false, &step);
    EXPECT_TRUE(st.ok()) << st.message();
    all.insert(all.end(), step.begin(), step.end());
  }
  return all;
}

class StreamingBitIdentical : public ::testing::TestWithParam<StreamCase> {};

TEST_P(StreamingBitIdentical, LogitsEqualResident) {
  const StreamCase& c = GetParam();
  SessionOptions resident_opts;
  resident_opts.model_path = test::shared_path(c.model);
  resident_opts.n_threads = 2;
  resident_opts.n_ctx = 64;
  auto resident = Session::create(resident_opts);
  ASSERT_TRUE(resident.ok()) << resident.status().message();
  ASSERT_FALSE((*resident)->plan().streams());

  SessionOptions streamed_opts = resident_opts;
  auto budget = MemoryBudget::parse(c.budget);
  ASSERT_TRUE(budget.ok());
  streamed_opts.mem_budget = *budget;
  streamed_opts.stream_buffers = c.buffers;
  streamed_opts.io.backend = c.backend;
  auto streamed = Session::create(streamed_opts);
  ASSERT_TRUE(streamed.ok()) << streamed.status().message();
  ASSERT_TRUE((*streamed)->plan().streams()) << (*streamed)->plan().describe();

  const auto want = run_logits(**resident);
  const auto got = run_logits(**streamed);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(want[i], got[i]) << "logit " << i;
  const SessionCounters counters = (*streamed)->counters();
  EXPECT_GT(counters.stream.bytes_read, 0u);
  EXPECT_GE(counters.stream.bytes_read, (*streamed)->plan().streamed_bytes_per_pass * counters.forward_passes);
  EXPECT_EQ(counters.stream.restarts, 0u);
}

using B = DirectReaderOptions::Backend;
const StreamCase kCases[] = {
    {"models/stories260K.gguf", "0%", 2, B::kAuto},
    {"models/stories260K.gguf", "50%", 1, B::kPread},
    {"reference/models/synth-llama-tok512-Q4_K_M.gguf", "0%", 2, B::kIoUring},
    {"reference/models/synth-llama-tok512-Q4_K_M.gguf", "40%", 3, B::kAuto},
    {"reference/models/synth-llama-tok512.gguf", "75%", 2, B::kPread},
    {"reference/models/synth-qwen2-gpt2-Q4_0.gguf", "0%", 2, B::kAuto},
    {"reference/models/synth-qwen2-gpt2-Q4_0.gguf", "50%", 2, B::kAuto},
    {"reference/models/synth-qwen2-tok512-Q8_0.gguf", "25%", 2, B::kAuto},
    {"reference/models/synth-qwen3-tok512-F16.gguf", "50%", 2, B::kAuto},
    {"reference/models/synth-llama3-spm.gguf", "0%", 2, B::kAuto},
};

INSTANTIATE_TEST_SUITE_P(Budgets, StreamingBitIdentical, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string s = info.param.model;
  s = s.substr(s.rfind('/') + 1);
  s = s.substr(0, s.find(".gguf")) + "_" + info.param.budget + "_b" + std::to_string(info.param.buffers);
  for (auto& ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
});

// On a CPU with the row-panel kernel (AVX512-VNNI), resident Q4_0 layers are converted to
// row panels at load and streamed ones keep GGUF's rows; the case above at 50% runs both in
// one pass, and its logits equal the fully resident (all panels) session's.
TEST(StreamingLayouts, ResidentQ4_0LayersTakeRowPanelsStreamedOnesKeepRows) {
  SessionOptions o;
  o.model_path = test::shared_path("reference/models/synth-qwen2-gpt2-Q4_0.gguf");
  o.n_ctx = 64;
  o.mem_budget = *MemoryBudget::parse("50%");
  auto s = Session::create(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const ModelWeights& w = (*s)->model().weights();
  ASSERT_EQ(w.layers[0].wq.type, GgmlType::Q4_0);
  const WeightLayout resident_layout = preferred_layout(GgmlType::Q4_0, w.layers[0].wq.rows);
  if (resident_layout != WeightLayout::kRowPanels) GTEST_SKIP() << "no row-panel kernel on this CPU";
  int resident = 0, streamed = 0;
  for (int l = 0; l < static_cast<int>(w.layers.size()); ++l) {
    const bool pinned = w.unit_resident(l);
    (pinned ? resident : streamed)++;
    EXPECT_EQ(w.layers[l].wq.layout, pinned ? WeightLayout::kRowPanels : WeightLayout::kRows) << "layer " << l;
    EXPECT_EQ(w.layers[l].ffn_down.layout, pinned ? WeightLayout::kRowPanels : WeightLayout::kRows) << "layer " << l;
  }
  EXPECT_GT(resident, 0);
  EXPECT_GT(streamed, 0);
}

// Sets whether the row-panel kernels run (off: as on a CPU without them) for its scope.
class RowPanelKernelsSetting {
 public:
  explicit RowPanelKernelsSetting(bool enabled) { set_row_panel_kernels_enabled(enabled); }
  ~RowPanelKernelsSetting() { set_row_panel_kernels_enabled(true); }
};

// The note a user streaming a GGUF of rows gets (engine/pack_hint.h): it counts the streamed
// matrices the panel kernels would run, names the file, and is silent where packing would
// change nothing: a resident session, a file already packed with panels, a CPU without the
// kernels.
TEST(StreamingLayouts, PackHintNamesTheStreamedRowMatricesOnlyWherePanelsWouldRunThem) {
  const std::string rows = test::shared_path("reference/models/synth-qwen2-gpt2-Q4_0.gguf");
  SessionOptions o;
  o.model_path = rows;
  o.n_ctx = 64;
  auto resident = Session::create(o);
  ASSERT_TRUE(resident.ok()) << resident.status().message();
  EXPECT_EQ(row_panel_pack_hint(**resident, rows), "");

  o.mem_budget = *MemoryBudget::parse("50%");
  auto streamed = Session::create(o);
  ASSERT_TRUE(streamed.ok()) << streamed.status().message();
  const ModelWeights& w = (*streamed)->model().weights();
  if (preferred_layout(GgmlType::Q4_0, w.layers[0].wq.rows) != WeightLayout::kRowPanels)
    GTEST_SKIP() << "no row-panel kernel on this CPU";
  int streamed_layers = 0;
  for (int l = 0; l < static_cast<int>(w.layers.size()); ++l) streamed_layers += w.unit_resident(l) ? 0 : 1;
  ASSERT_GT(streamed_layers, 0);
  ASSERT_LT(streamed_layers, static_cast<int>(w.layers.size()));
  // Seven block-quantised matrices a layer (q, k, v, o, gate, up, down) in this file.
  EXPECT_EQ(w.streamed_rows_with_panel_kernel(), 7 * streamed_layers);
  const std::string hint = row_panel_pack_hint(**streamed, rows);
  EXPECT_NE(hint.find(std::to_string(7 * streamed_layers) + " streamed matrices"), std::string::npos) << hint;
  EXPECT_NE(hint.find("specflash pack --row-panels " + rows), std::string::npos) << hint;

  const std::string panels = test::per_test_scratch_dir() + "/panels.gguf";
  ASSERT_TRUE(pack_model(rows, panels, PackOptions{.show_progress = false, .row_panels = true}).ok());
  o.model_path = panels;
  auto packed = Session::create(o);
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  ASSERT_TRUE((*packed)->plan().streams());
  EXPECT_EQ(row_panel_pack_hint(**packed, panels), "");

  // As on a CPU without the kernels (the switch is read when the hint is made, as at load).
  RowPanelKernelsSetting off(false);
  o.model_path = rows;
  auto without_kernels = Session::create(o);
  ASSERT_TRUE(without_kernels.ok()) << without_kernels.status().message();
  EXPECT_EQ(row_panel_pack_hint(**without_kernels, rows), "");
}

// Files written by `pack --row-panels` (model/stored_layout.h). With the panel kernels (this
// CPU, if it has AVX512-VNNI) streamed layers run the panels as read; with them turned off,
// as on any other CPU, every read is converted back to rows. Either way the logits equal
// the original file's fully resident session, bit for bit, at 0% and 50%: for three
// reference files and for the F32 reference quantised (pure) to each other panel type.
TEST(StreamingLayouts, RowPanelFilesGiveTheOriginalFilesLogits) {
  const std::string dir = test::per_test_scratch_dir();
  const bool cpu_has_kernels = [] {
    RowPanelKernelsSetting on(true);
    return preferred_layout(GgmlType::Q4_0, 16) == WeightLayout::kRowPanels;
  }();
  std::vector<std::string> models;
  for (const char* model :
       {"reference/models/synth-qwen2-gpt2-Q4_0.gguf", "reference/models/synth-llama-tok512-Q4_K_M.gguf",
        "reference/models/synth-llama-tok512-Q4_0.gguf"})
    models.push_back(test::shared_path(model));
  QuantizeOptions pure;
  pure.pure = true;
  pure.n_threads = 2;
  for (GgmlType type : {GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q2_K, GgmlType::Q3_K,
                        GgmlType::Q5_K, GgmlType::Q6_K}) {
    models.push_back(dir + "/synth-llama-tok512-pure-" + type_name(type) + ".gguf");
    ASSERT_TRUE(
        quantize_model(test::shared_path("reference/models/synth-llama-tok512.gguf"), models.back(), type, pure).ok())
        << type_name(type);
  }
  int panel_matrices_streamed = 0;
  for (const std::string& model : models) {
    const std::string original = model;
    const std::string panels = dir + "/panels-" + std::filesystem::path(model).filename().string();
    ASSERT_TRUE(pack_model(original, panels, PackOptions{.show_progress = false, .row_panels = true}).ok()) << model;
    for (bool kernels : {true, false}) {
      RowPanelKernelsSetting setting(kernels);
      SessionOptions o;
      o.model_path = original;
      o.n_threads = 2;
      o.n_ctx = 64;
      auto resident = Session::create(o);
      ASSERT_TRUE(resident.ok()) << resident.status().message();
      const auto want = run_logits(**resident);
      for (const char* budget : {"0%", "50%"}) {
        SCOPED_TRACE(model + " at " + budget + (kernels ? ", kernels on" : ", kernels off"));
        o.model_path = panels;
        o.mem_budget = *MemoryBudget::parse(budget);
        auto streamed = Session::create(o);
        ASSERT_TRUE(streamed.ok()) << streamed.status().message();
        ASSERT_TRUE((*streamed)->plan().streams());
        const ModelWeights& w = (*streamed)->model().weights();
        int stored_panels = 0;
        for (int l = 0; l < static_cast<int>(w.layers.size()); ++l) {
          const auto& stored = w.unit_stored_layouts(l);
          ASSERT_EQ(stored.size(), 7u);
          stored_panels += static_cast<int>(std::count(stored.begin(), stored.end(), WeightLayout::kRowPanels));
          // wq is stored as panels in every file; it runs as panels only with kernels.
          ASSERT_EQ(stored[0], WeightLayout::kRowPanels);
          EXPECT_EQ(w.layers[l].wq.layout, kernels && cpu_has_kernels ? WeightLayout::kRowPanels : WeightLayout::kRows)
              << "layer " << l;
          if (!w.unit_resident(l)) panel_matrices_streamed += kernels ? 1 : 0;
        }
        EXPECT_GT(stored_panels, 0);
        const auto got = run_logits(**streamed);
        ASSERT_EQ(want.size(), got.size());
        for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(want[i], got[i]) << "logit " << i;
        EXPECT_GT((*streamed)->counters().stream.bytes_read, 0u);
      }
    }
  }
  EXPECT_GT(panel_matrices_streamed, 0);
}

// The I/O still to come between two passes (what EdgeLLM's cost stop counts as free
// drafting): right after a pass, the ring's read-ahead of the next pass's first units, at
// most a unit per buffer at the device's rate (exact when emulated), and nothing once
// that time has passed.
// stories260K with every layer streamed (0%); io_bandwidth > 0 emulates the storage.
SessionOptions stories_streamed(int n_ctx, double io_bandwidth) {
  SessionOptions o;
  o.model_path = test::shared_path("models/stories260K.gguf");
  o.n_ctx = n_ctx;
  o.mem_budget = *MemoryBudget::parse("0%");
  o.io_bandwidth = io_bandwidth;
  return o;
}

TEST(StreamerPendingIo, IsTheReadAheadStillToComeAtTheDevicesRate) {
  const SessionOptions o = stories_streamed(64, 10e6);  // EMULATED: a 184 KiB unit takes ~19 ms
  auto s = Session::create(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::vector<float> logits;
  ASSERT_TRUE((*s)->evaluate({1, 2, 3}, false, &logits).ok());
  const double pending = (*s)->streamer()->pending_io_seconds();
  const ResidencyPlan& plan = (*s)->plan();
  ASSERT_EQ(plan.n_buffers, 2);
  const double unit_seconds = static_cast<double>(plan.buffer_bytes) / o.io_bandwidth;
  EXPECT_LE(pending, 2 * unit_seconds + 1e-6) << "no more than the two buffers' reads";
  EXPECT_GT(pending, 0.5 * unit_seconds) << "the head's release has just submitted a unit";
  std::this_thread::sleep_for(std::chrono::duration<double>(pending + 0.005));
  EXPECT_EQ((*s)->streamer()->pending_io_seconds(), 0.0);
}

// The real device: only reads that have not completed count, at the rate the device has
// delivered. Right after a pass that is at most the ring's reads; once they are done, zero,
// however many passes ran before (an estimate that kept its own clock drifted ahead of the
// device and called several milliseconds of drafting hidden).
TEST(StreamerPendingIo, OnTheRealDeviceIsOnlyTheReadsStillRunning) {
  auto s = Session::create(stories_streamed(128, 0));
  ASSERT_TRUE(s.ok()) << s.status().message();
  const LayerStreamer& streamer = *(*s)->streamer();
  ASSERT_FALSE(streamer.emulated());
  std::vector<float> logits;
  for (int32_t t = 1; t <= 60; ++t) ASSERT_TRUE((*s)->evaluate({t}, false, &logits).ok());
  const double pending = streamer.pending_io_seconds();
  const StreamStats st = streamer.stats();
  const ResidencyPlan& plan = (*s)->plan();
  ASSERT_GT(st.io_seconds, 0.0);
  const double per_byte = st.io_seconds / static_cast<double>(st.bytes_read);
  // bytes_read counts submitted reads, the rate completed ones: allow the difference.
  EXPECT_LE(pending, 1.5 * static_cast<double>(plan.n_buffers * plan.buffer_bytes) * per_byte + 1e-6)
      << "no more than the ring's reads";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(streamer.pending_io_seconds(), 0.0) << "every read has completed by now";
}

// A byte budget picks the largest pinned prefix that fits and reports its footprint.
TEST(ResidencyPlanning, ByteBudgetFitsAndTooSmallBudgetNamesTheMinimum) {
  SessionOptions o;
  o.model_path = test::shared_path("reference/models/synth-llama-tok512.gguf");
  o.n_ctx = 64;
  o.mem_budget = *MemoryBudget::parse("4M");
  auto small = Session::create(o);
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("below the minimum"), std::string::npos) << small.status().message();
  // 3 layers of 8.5 MiB (F32), each ring buffer rounded up to whole 2 MiB huge pages (10 MiB,
  // counted as allocated): the minimum is 2 buffers + base + KV + scratch = 26.7 MiB.
  o.mem_budget = *MemoryBudget::parse("27M");
  auto s = Session::create(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_LE((*s)->plan().footprint_bytes(), 27u << 20);
  EXPECT_EQ((*s)->plan().buffer_bytes % AlignedBuffer::kHugePageBytes, 0u);
  EXPECT_TRUE((*s)->plan().streams());
  // A share pins that share of the layers' bytes, the head on top: 70% holds 2 of the 3.
  o.mem_budget = *MemoryBudget::parse("70%");
  auto share = Session::create(o);
  ASSERT_TRUE(share.ok()) << share.status().message();
  EXPECT_EQ((*share)->plan().n_resident_layers, 2);
  EXPECT_TRUE((*share)->plan().streams());
}

// At a share budget every method keeps the LM head resident and pins the same layers, so
// all of them stream the same bytes per pass: before, only the methods that need the head
// (early-exit pruning: LEVER, and auto through its LEVER arm) pinned it on top of the share,
// and at 0% they streamed 904 KiB a pass of stories260K against everyone else's 1.0 MiB.
// A byte budget still counts the head like everything else.
TEST(ResidencyPlanning, AShareBudgetPinsTheHeadForEveryMethod) {
  const auto plan_for = [](const char* budget, SpecConfig::Method method) {
    SessionOptions o;
    o.model_path = test::shared_path("models/stories260K.gguf");
    o.n_ctx = 64;
    o.mem_budget = *MemoryBudget::parse(budget);
    o.spec.method = method;
    if (method != SpecConfig::Method::kNone)
      o.spec.draft_model_path = test::source_path("models/stories260K-draft.gguf");
    if (method == SpecConfig::Method::kLever) o.spec.prune.enabled = true;
    auto s = Session::create(o);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? (*s)->plan() : ResidencyPlan{};
  };
  for (const char* budget : {"0%", "25%", "50%"}) {
    const ResidencyPlan plain = plan_for(budget, SpecConfig::Method::kNone);
    const ResidencyPlan chain = plan_for(budget, SpecConfig::Method::kChain);
    const ResidencyPlan lever = plan_for(budget, SpecConfig::Method::kLever);
    EXPECT_TRUE(plain.head_resident) << budget;
    EXPECT_TRUE(chain.head_resident) << budget;
    EXPECT_TRUE(lever.head_resident) << budget;
    EXPECT_EQ(plain.n_resident_layers, lever.n_resident_layers) << budget;
    EXPECT_EQ(chain.n_resident_layers, lever.n_resident_layers) << budget;
    EXPECT_EQ(plain.streamed_bytes_per_pass, lever.streamed_bytes_per_pass) << budget;
    EXPECT_EQ(chain.streamed_bytes_per_pass, lever.streamed_bytes_per_pass) << budget;
    EXPECT_TRUE(plain.streams()) << budget;
  }
  // stories260K's five layers are equal: a share pins floor(share x 5) of them.
  EXPECT_EQ(plan_for("0%", SpecConfig::Method::kNone).n_resident_layers, 0);
  EXPECT_EQ(plan_for("25%", SpecConfig::Method::kNone).n_resident_layers, 1);
  EXPECT_EQ(plan_for("50%", SpecConfig::Method::kNone).n_resident_layers, 2);
  // A byte budget just above the smallest footprint with the head streamed: plain decoding
  // fits it with the head streamed, while pruning, which needs the head, does not.
  SessionOptions o;
  o.model_path = test::shared_path("models/stories260K.gguf");
  o.n_ctx = 64;
  const ResidencyPlan zero = plan_for("0%", SpecConfig::Method::kNone);
  const uint64_t head_bytes = zero.resident_unit_bytes;
  ASSERT_GT(head_bytes, 0u);
  o.mem_budget.kind = MemoryBudget::Kind::kBytes;
  o.mem_budget.bytes = zero.footprint_bytes() - head_bytes + head_bytes / 2;
  auto tight = Session::create(o);
  ASSERT_TRUE(tight.ok()) << tight.status().message();
  EXPECT_FALSE((*tight)->plan().head_resident);
}

}  // namespace
}  // namespace sf
