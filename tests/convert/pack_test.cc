// pack_model on every reference model in shared/: the packed file must hold the same
// metadata (but general.alignment = 4096) and byte-identical tensors, every tensor
// 4096-aligned, and each layer one contiguous range with nothing but alignment padding,
// matrices first, ordered by layer, output.weight last. Plus the order on synthetic names,
// idempotence, in-place packing and the CLI's error behaviour.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "convert/gguf_stream_writer.h"
#include "convert/model_packer.h"
#include "convert/model_quantizer.h"
#include "gguf/gguf_file.h"
#include "gguf/per_test_scratch.h"
#include "model/model.h"
#include "model/model_weights.h"
#include "model/stored_layout.h"
#include "quant/row_panels.h"
#include "test_paths.h"

namespace sf {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kAlign = 4096;

uint64_t align_up(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

bool same_value(const gguf::Value& a, const gguf::Value& b) {
  if (a.type != b.type) return false;
  if (a.data.index() != b.data.index()) return false;
  if (a.is_string()) return a.as_string() == b.as_string();
  if (a.is_float()) return a.as_double() == b.as_double();
  if (!a.is_array()) return a.as_int() == b.as_int();
  const gguf::Array &x = a.as_array(), &y = b.as_array();
  if (x.element_type != y.element_type || x.items.size() != y.items.size()) return false;
  for (size_t i = 0; i < x.items.size(); ++i)
    if (!same_value(x.items[i], y.items[i])) return false;
  return true;
}

int layer_of(const std::string& name) {
  int layer = -1;
  return std::sscanf(name.c_str(), "blk.%d.", &layer) == 1 ? layer : -1;
}

std::vector<std::string> reference_models() {
  std::vector<std::string> paths;
  for (const auto& e : fs::directory_iterator(sf::test::shared_path("reference/models")))
    if (e.path().extension() == ".gguf") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every property of a packed file, checked against its input (a standard GGUF). With
// row_panels, the matrices that can be are stored as row panels under their renamed name.
void expect_packed(const std::string& in_path, const std::string& out_path, bool row_panels = false) {
  SCOPED_TRACE(in_path);
  auto in = gguf::GgufFile::open(in_path);
  auto out = gguf::GgufFile::open(out_path);
  ASSERT_TRUE(in.ok()) << in.status().message();
  ASSERT_TRUE(out.ok()) << out.status().message();

  // Metadata: the input's keys in the input's order with equal values; alignment 4096.
  EXPECT_EQ(out->alignment(), kAlign);
  size_t next = 0;
  for (const auto& [key, value] : in->metadata()) {
    if (key == "general.alignment") continue;
    while (next < out->metadata().size() && out->metadata()[next].first == "general.alignment") ++next;
    ASSERT_LT(next, out->metadata().size()) << "missing key " << key;
    EXPECT_EQ(out->metadata()[next].first, key);
    EXPECT_TRUE(same_value(out->metadata()[next].second, value)) << key;
    ++next;
  }
  EXPECT_EQ(out->metadata().size(), in->metadata().size() + (in->has("general.alignment") ? 0 : 1));

  // Tensors: same set, same bytes, aligned.
  ASSERT_EQ(out->tensors().size(), in->tensors().size());
  for (const gguf::TensorInfo& t : in->tensors()) {
    const bool as_panels = row_panels && can_store_as_row_panels(t.name, t.type, t.rows());
    const gguf::TensorInfo* o = out->find_tensor(as_panels ? row_panel_tensor_name(t.name) : t.name);
    ASSERT_NE(o, nullptr) << t.name;
    EXPECT_EQ(out->find_tensor(as_panels ? t.name : row_panel_tensor_name(t.name)), nullptr) << t.name;
    EXPECT_EQ(o->type, t.type) << t.name;
    EXPECT_EQ(o->dims, t.dims) << t.name;
    EXPECT_EQ(o->file_offset % kAlign, 0u) << t.name;
    auto a = in->read_tensor_data(t);
    auto b = out->read_tensor_data(*o);
    ASSERT_TRUE(a.ok() && b.ok());
    if (as_panels) pack_row_panels(t.type, a.value().data(), t.rows(), t.dims[0]);
    EXPECT_TRUE(a.value() == b.value()) << t.name << ": data differs";
  }

  // Layout, walking the output by offset: each tensor starts where the previous one's
  // aligned end is (so there is nothing but padding), groups appear in pack order.
  std::vector<const gguf::TensorInfo*> by_offset;
  for (const auto& t : out->tensors()) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->file_offset < b->file_offset; });
  EXPECT_EQ(by_offset.front()->file_offset, out->data_offset());
  for (size_t i = 1; i < by_offset.size(); ++i)
    EXPECT_EQ(by_offset[i]->file_offset, by_offset[i - 1]->file_offset + align_up(by_offset[i - 1]->n_bytes))
        << by_offset[i]->name;
  EXPECT_EQ(out->file_size(), by_offset.back()->file_offset + align_up(by_offset.back()->n_bytes));

  // Group sequence: 0 = non-layer, 1 + l = layer l, INT_MAX = output.weight; nondecreasing,
  // so each layer is one contiguous range.
  int last_group = -1;
  std::map<int, std::vector<std::string>> layer_names;
  for (const auto* t : by_offset) {
    const int layer = layer_of(t->name);
    const int group = gguf_name_of_stored(t->name) == "output.weight" ? INT32_MAX : layer >= 0 ? 1 + layer : 0;
    EXPECT_GE(group, last_group) << t->name << " is out of pack order";
    last_group = group;
    if (layer >= 0) layer_names[layer].push_back(t->name);
  }
  // Inside a layer: its matrices first, in the streamer's order.
  EXPECT_FALSE(layer_names.empty());
  for (const auto& [layer, names] : layer_names) {
    std::vector<std::string> matrices;
    for (const auto& n : layer_matrix_tensor_names(layer))
      if (const gguf::TensorInfo* t = find_stored_matrix(*out, n).info) matrices.push_back(t->name);
    ASSERT_GE(names.size(), matrices.size());
    EXPECT_TRUE(std::equal(matrices.begin(), matrices.end(), names.begin())) << "layer " << layer;
  }
}

TEST(PackModel, EveryReferenceModel) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  const auto models = reference_models();
  ASSERT_FALSE(models.empty());
  for (const std::string& in : models) {
    const std::string out = dir + "/" + fs::path(in).filename().string();
    const Status st = pack_model(in, out, PackOptions{});
    ASSERT_TRUE(st.ok()) << st.message();
    expect_packed(in, out);
    EXPECT_FALSE(fs::exists(out + ".tmp"));
  }
}

// The checker must be able to fail: the unpacked inputs (32-byte alignment, output.weight
// not last) do not pass as packed files.
TEST(PackModel, CheckerRejectsUnpackedInputs) {
  SF_SKIP_WITHOUT_SHARED();
  for (const std::string& in : reference_models()) {
    testing::TestPartResultArray failures;
    {
      testing::ScopedFakeTestPartResultReporter reporter(
          testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
      expect_packed(in, in);
    }
    EXPECT_GT(failures.size(), 0) << in << " already looks packed";
  }
}

TEST(PackModel, PackingAPackedFileChangesNothing) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  const std::string in = reference_models().front();
  ASSERT_TRUE(pack_model(in, dir + "/once.gguf", {}).ok());
  ASSERT_TRUE(pack_model(dir + "/once.gguf", dir + "/twice.gguf", {}).ok());
  EXPECT_TRUE(file_bytes(dir + "/once.gguf") == file_bytes(dir + "/twice.gguf"));
}

TEST(PackModel, InPlace) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  const std::string in = reference_models().back();
  const std::string copy = dir + "/model.gguf";
  fs::copy_file(in, copy);
  ASSERT_TRUE(pack_model(copy, copy, {}).ok());
  expect_packed(in, copy);
}

TEST(PackModel, OrderOfSyntheticNames) {
  std::vector<gguf::TensorInfo> ts;
  for (const char* n : {"blk.10.ffn_norm.weight", "output.weight", "blk.2.attn_k.weight", "token_embd.weight",
                        "blk.2.attn_q.weight", "blk.10.attn_q.weight", "blk.2.attn_norm.weight", "output_norm.weight",
                        "blk.2.ffn_down.weight", "blkx.3.odd", "blk.2.attn_q.bias", "rope_freqs.weight"}) {
    gguf::TensorInfo t;
    t.name = n;
    ts.push_back(t);
  }
  std::vector<std::string> got;
  for (size_t i : packed_tensor_order(ts)) got.push_back(ts[i].name);
  const std::vector<std::string> want = {"token_embd.weight",     "output_norm.weight",     "blkx.3.odd",
                                         "rope_freqs.weight",     "blk.2.attn_q.weight",    "blk.2.attn_k.weight",
                                         "blk.2.ffn_down.weight", "blk.2.attn_norm.weight", "blk.2.attn_q.bias",
                                         "blk.10.attn_q.weight",  "blk.10.ffn_norm.weight", "output.weight"};
  EXPECT_EQ(got, want);
}

// --row-panels: every Q4_0/Q4_K layer matrix (and an untied Q4_0/Q4_K head) of whole panels
// is stored as panels under its renamed name, everything else as before; packing that file
// again without the option gives back exactly the plain packed file.
TEST(PackModel, RowPanelsStoreTheEligibleMatricesAndPackingAgainRestoresRows) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  int files_with_panels = 0;
  for (const std::string& in : reference_models()) {
    auto f = gguf::GgufFile::open(in);
    ASSERT_TRUE(f.ok());
    int eligible = 0;
    for (const auto& t : f->tensors()) eligible += can_store_as_row_panels(t.name, t.type, t.rows()) ? 1 : 0;
    const std::string name = fs::path(in).filename().string();
    const std::string panels = dir + "/panels-" + name;
    const Status st = pack_model(in, panels, PackOptions{.show_progress = false, .row_panels = true});
    if (eligible == 0) {
      // Nothing to convert (F32/F16/Q8_0/Q6_K files): a clear error, no file.
      ASSERT_FALSE(st.ok()) << name;
      EXPECT_NE(st.message().find("pack without --row-panels"), std::string::npos) << st.message();
      EXPECT_FALSE(fs::exists(panels));
      continue;
    }
    ASSERT_TRUE(st.ok()) << name << ": " << st.message();
    ++files_with_panels;
    expect_packed(in, panels, /*row_panels=*/true);
    auto out = gguf::GgufFile::open(panels);
    ASSERT_TRUE(out.ok());
    EXPECT_TRUE(has_row_panel_tensors(*out));

    ASSERT_TRUE(pack_model(in, dir + "/rows-" + name, {}).ok());
    ASSERT_TRUE(pack_model(panels, dir + "/back-" + name, {}).ok());
    EXPECT_TRUE(file_bytes(dir + "/rows-" + name) == file_bytes(dir + "/back-" + name)) << name;
    ASSERT_TRUE(
        pack_model(panels, dir + "/again-" + name, PackOptions{.show_progress = false, .row_panels = true}).ok());
    EXPECT_TRUE(file_bytes(panels) == file_bytes(dir + "/again-" + name)) << name << ": packing panels again";
  }
  EXPECT_GE(files_with_panels, 3) << "the Q4_0 and Q4_K_M reference models";
}

// A tensor named as row panels whose type has no such layout (F32 here) is a corrupt file:
// loading it names the tensor instead of computing with it.
TEST(PackModel, LoadingRefusesRowPanelNamesWithoutTheLayout) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  auto in = gguf::GgufFile::open(sf::test::shared_path("reference/models/synth-llama-tok512.gguf"));
  ASSERT_TRUE(in.ok());
  const gguf::TensorInfo* renamed = in->find_tensor("blk.0.attn_q.weight");
  ASSERT_NE(renamed, nullptr);
  ASSERT_FALSE(has_row_panel_layout(renamed->type)) << type_name(renamed->type);
  const std::string bad = dir + "/bad.gguf";
  GgufStreamWriter writer(bad);
  writer.copy_metadata_from(*in);
  for (const auto& t : in->tensors())
    writer.add_tensor(t.name == renamed->name ? row_panel_tensor_name(t.name) : t.name, t.type, t.dims);
  ASSERT_TRUE(writer.begin().ok());
  for (const auto& t : in->tensors()) {
    auto bytes = in->read_tensor_data(t);
    ASSERT_TRUE(bytes.ok());
    ASSERT_TRUE(writer.write_next_tensor(bytes->data(), bytes->size()).ok());
  }
  ASSERT_TRUE(writer.finish().ok());
  auto model = Model::open(bad);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("blk.0.attn_q.weight.row_panels16"), std::string::npos)
      << model.status().message();
  EXPECT_NE(model.status().message().find("corrupt"), std::string::npos) << model.status().message();
}

// Requantising a panel file would read scrambled rows: refused, with the way out.
TEST(PackModel, QuantizeRefusesARowPanelFile) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  const std::string in = sf::test::shared_path("reference/models/synth-llama-tok512-Q4_0.gguf");
  ASSERT_TRUE(pack_model(in, dir + "/panels.gguf", PackOptions{.show_progress = false, .row_panels = true}).ok());
  const Status st = quantize_model(dir + "/panels.gguf", dir + "/q8.gguf", GgmlType::Q8_0, QuantizeOptions{});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("row panels"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("specflash pack"), std::string::npos) << st.message();
  EXPECT_FALSE(fs::exists(dir + "/q8.gguf"));
}

TEST(PackModel, MissingInputIsAnError) {
  const std::string dir = sf::test::per_test_scratch_dir();
  const Status st = pack_model(dir + "/absent.gguf", dir + "/out.gguf", {});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("absent.gguf"), std::string::npos) << st.message();
  EXPECT_FALSE(fs::exists(dir + "/out.gguf"));
}

TEST(PackModel, UnwritableOutputIsAnError) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  const Status st = pack_model(reference_models().front(), dir + "/no/such/dir/out.gguf", {});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("out.gguf"), std::string::npos) << st.message();
}

// The CLI: one "error: ..." line and exit 1. Skipped until main.cc dispatches `pack`.
struct CommandResult {
  int exit_code;
  std::string err;
};
CommandResult run_specflash(const std::string& args, const std::string& dir) {
  const std::string err_path = dir + "/stderr.txt";
  const int status = std::system((sf::test::binary_path("specflash") + " " + args + " 2>" + err_path).c_str());
  std::ifstream f(err_path);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, std::string(std::istreambuf_iterator<char>(f), {})};
}

TEST(PackCommand, ErrorsAreOneLineAndExitOne) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  if (!fs::exists(sf::test::binary_path("specflash"))) GTEST_SKIP() << "specflash not built";
  if (run_specflash("pack --help >/dev/null", dir).exit_code != 0) GTEST_SKIP() << "pack not registered in main.cc";
  for (const std::string& args :
       {dir + "/absent.gguf " + dir + "/out.gguf", reference_models().front() + " " + dir + "/no/dir/out.gguf"}) {
    const CommandResult r = run_specflash("pack " + args, dir);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  const CommandResult ok = run_specflash("pack " + reference_models().front() + " " + dir + "/ok.gguf", dir);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  expect_packed(reference_models().front(), dir + "/ok.gguf");
}

// `pack --row-panels` from the command line; `info` says what the file stores; a file with
// nothing to convert is one error line.
TEST(PackCommand, RowPanelsFlagAndInfo) {
  SF_SKIP_WITHOUT_SHARED();
  const std::string dir = sf::test::per_test_scratch_dir();
  if (!fs::exists(sf::test::binary_path("specflash"))) GTEST_SKIP() << "specflash not built";
  const std::string q4 = sf::test::shared_path("reference/models/synth-llama-tok512-Q4_0.gguf");
  const CommandResult ok = run_specflash("pack -q --row-panels " + q4 + " " + dir + "/panels.gguf", dir);
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  expect_packed(q4, dir + "/panels.gguf", /*row_panels=*/true);
  const CommandResult info = run_specflash("info " + dir + "/panels.gguf >" + dir + "/info.txt", dir);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  std::ifstream text(dir + "/info.txt");
  const std::string out{std::istreambuf_iterator<char>(text), {}};
  EXPECT_NE(out.find("matrices stored as row panels"), std::string::npos) << out;

  const std::string f32 = sf::test::shared_path("reference/models/synth-llama-tok512.gguf");
  const CommandResult none = run_specflash("pack --row-panels " + f32 + " " + dir + "/none.gguf", dir);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err.rfind("error: ", 0), 0u) << none.err;
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1) << none.err;
  EXPECT_FALSE(fs::exists(dir + "/none.gguf"));
}

}  // namespace
}  // namespace sf
