// The specflash binary on bad input: every failure is a non-zero exit with exactly one
// "error: ..." line on stderr that names the problem, never a crash or a stack of
// messages. Also the happy paths of info, quantize and synth end to end.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "gguf/gguf_file.h"
#include "gguf/gguf_raw_builder.h"
#include "gguf/gguf_writer.h"
#include "gguf/per_test_scratch.h"
#include "ops/matmul.h"
#include "specflash_runner.h"
#include "test_paths.h"

namespace sf {
namespace {

using RunResult = sf::test::CommandResult;
using sf::test::read_file;

std::string scratch() { return sf::test::per_test_scratch_dir(); }

RunResult run(const std::vector<std::string>& args) { return sf::test::run_specflash(args, scratch()); }

// Non-zero exit, and stderr is exactly one line "error: ...<substring>...".
void expect_one_line_error(const RunResult& r, const std::string& substring, int exit_code = 1) {
  EXPECT_EQ(r.exit_code, exit_code) << "stderr: " << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << "stderr: " << r.err;
  EXPECT_EQ(r.err.back(), '\n') << "stderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr: " << r.err;
  EXPECT_NE(r.err.find(substring), std::string::npos) << "stderr: " << r.err << "expected: " << substring;
}

std::string stories() { return sf::test::shared_path("models/stories260K.gguf"); }

std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = scratch() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// stories260K cut to its first n bytes.
std::string truncated_stories(const std::string& name, size_t n) {
  return write_file(name, read_file(stories()).substr(0, n));
}

TEST(CliErrors, MissingModelFile) {
  const std::string missing = scratch() + "/no-such-model.gguf";
  expect_one_line_error(run({"run", "-m", missing, "-p", "hello"}), "no-such-model.gguf: cannot open");
  expect_one_line_error(run({"info", missing}), "no-such-model.gguf: cannot open");
}

TEST(CliErrors, WrongMagic) {
  const std::string path = write_file("magic.gguf", std::string("GGML") + std::string(64, '\0'));
  expect_one_line_error(run({"run", "-m", path, "-p", "hello"}), "not a GGUF file (bad magic");
  expect_one_line_error(run({"info", path}), "bad magic");
}

TEST(CliErrors, TruncatedFile) {
  // Cut inside the header counts' promise, inside the metadata, then inside the tensor data.
  expect_one_line_error(run({"run", "-m", truncated_stories("trunc-header.gguf", 300), "-p", "hello"}),
                        "cannot fit in the file");
  expect_one_line_error(run({"run", "-m", truncated_stories("trunc-meta.gguf", 2000), "-p", "hello"}),
                        "trunc-meta.gguf: file is truncated");
  const std::string data_cut = truncated_stories("trunc-data.gguf", 200000);
  expect_one_line_error(run({"run", "-m", data_cut, "-p", "hello"}), "points past the end of the file");
  expect_one_line_error(run({"info", data_cut}), "points past the end of the file");
}

TEST(CliErrors, TensorPastEndOfFile) {
  sf::test::RawGguf g;
  g.header(3, 1, 1).kv_string("general.architecture", "llama");
  g.tensor_info("blk.0.attn_q.weight", {64, 64}, 0, 4096).pad_to(32).zeros(64);
  const std::string path = scratch() + "/past-end.gguf";
  ASSERT_TRUE(g.save(path));
  expect_one_line_error(run({"run", "-m", path, "-p", "hello"}),
                        "tensor 'blk.0.attn_q.weight' points past the end of the file");
}

TEST(CliErrors, UnknownArchitecture) {
  auto src = gguf::GgufFile::open(stories());
  ASSERT_TRUE(src.ok());
  gguf::GgufWriter w;
  w.copy_metadata_from(*src);
  w.set("general.architecture", gguf::Value::string("gpt-j-unknown"));
  for (const auto& t : src->tensors()) w.add_tensor(t.name, t.type, t.dims, *src->read_tensor_data(t));
  const std::string path = scratch() + "/unknown-arch.gguf";
  ASSERT_TRUE(w.write(path).ok());
  expect_one_line_error(run({"run", "-m", path, "-p", "hello"}),
                        "unsupported architecture 'gpt-j-unknown' (supported: llama, qwen2, qwen3)");
  expect_one_line_error(run({"quantize", path, scratch() + "/never.gguf", "Q4_X"}), "unknown quantization type 'Q4_X'",
                        2);
}

TEST(CliErrors, UnknownTensorWeightType) {
  sf::test::RawGguf g;
  g.header(3, 1, 1).kv_string("general.architecture", "llama");
  g.tensor_info("token_embd.weight", {64, 8}, 99, 0).pad_to(32).zeros(4096);
  const std::string path = scratch() + "/unknown-type.gguf";
  ASSERT_TRUE(g.save(path));
  expect_one_line_error(run({"run", "-m", path, "-p", "hello"}), "tensor 'token_embd.weight' has weight type 99");
  expect_one_line_error(run({"quantize", path, scratch() + "/never.gguf", "Q8_0"}), "has weight type 99");
}

TEST(CliErrors, PromptLongerThanContext) {
  std::string prompt;
  for (int i = 0; i < 20; ++i) prompt += "Once upon a time there was a little dog. ";
  const RunResult r = run({"run", "-m", stories(), "-c", "16", "-n", "4", "-p", prompt});
  expect_one_line_error(r, "context");
  EXPECT_NE(r.err.find("16"), std::string::npos) << r.err;
}

TEST(CliErrors, UnknownCommandAndBadFlag) {
  expect_one_line_error(run({"frobnicate"}), "unknown command 'frobnicate'", 2);
  expect_one_line_error(run({"run", "--no-such-flag"}), "--no-such-flag", 2);
  expect_one_line_error(run({"quantize", "--bogus", "a", "b", "c"}), "--bogus", 2);
  expect_one_line_error(run({"synth", "--arch", "llama"}), "required", 2);
}

TEST(CliErrors, QuantizeAndSynthInputs) {
  const std::string out = scratch() + "/never.gguf";
  expect_one_line_error(run({"quantize", scratch() + "/missing.gguf", out, "Q8_0"}), "missing.gguf: cannot open");
  expect_one_line_error(run({"quantize", stories(), out, "q8_k"}), "unknown quantization type 'q8_k'", 2);
  // Every synth flag once; each case replaces some of them.
  auto synth = [&](std::map<std::string, std::string> changes) {
    std::map<std::string, std::string> flags = {
        {"--arch", "llama"}, {"--vocab-from", stories()}, {"--embd", "64"}, {"--layers", "2"}, {"--heads", "4"},
        {"--ffn", "128"},    {"--type", "q8_0"},          {"-o", out}};
    for (const auto& [k, v] : changes) flags[k] = v;
    std::vector<std::string> args = {"synth"};
    for (const auto& [k, v] : flags) args.insert(args.end(), {k, v});
    return run(args);
  };
  expect_one_line_error(synth({{"--heads", "3"}}), "embedding size 64 is not divisible by 3 heads");
  expect_one_line_error(synth({{"--kv-heads", "3"}}), "KV head count 3 does not divide the head count 4");
  expect_one_line_error(synth({{"--heads", "0"}}), "head count (--heads) must be positive");
  expect_one_line_error(synth({{"--layers", "0"}}), "layer count (--layers) must be positive");
  expect_one_line_error(synth({{"--arch", "mamba"}}), "unsupported architecture 'mamba'");
  expect_one_line_error(synth({{"--type", "Q9_9"}}), "unknown weight type 'Q9_9'", 2);
  expect_one_line_error(synth({{"--vocab-from", scratch() + "/no-vocab.gguf"}}), "no-vocab.gguf: cannot open");
  expect_one_line_error(synth({{"--embd", "abc"}}), "--embd", 2);
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CliSuccess, InfoOnReferenceModel) {
  const RunResult r = run({"info", sf::test::shared_path("reference/models/synth-qwen2-tok512-Q8_0.gguf")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("qwen2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Q8_0"), std::string::npos) << r.out;
}

TEST(CliSuccess, SynthQuantizeInfoRun) {
  const std::string synth = scratch() + "/synth.gguf", quant = scratch() + "/synth-q4_0.gguf";
  RunResult r = run({"synth", "--arch",  "qwen2", "--vocab-from", stories(), "--embd", "256", "--layers",
                     "2",     "--heads", "4",     "--kv-heads",   "2",       "--ffn",  "512", "--type",
                     "F16",   "--seed",  "5",     "-o",           synth});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("synth: wrote"), std::string::npos) << r.err;
  r = run({"quantize", "-q", synth, quant, "Q4_0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  r = run({"info", quant});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Q4_0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Q6_K"), std::string::npos) << "LM head: " << r.out;
  r = run({"run", "-m", quant, "-p", "Once upon a time", "-n", "8", "--ignore-eos"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
}

// The load-time pack note (engine/pack_hint.h) is printed by every command that streams a
// model, `profile` included (it measures streamed passes, which the note is about); where
// the CPU has no row-panel kernel, by none of them.
TEST(CliSuccess, CommandsThatStreamAModelOfRowsPrintThePackNote) {
  const std::string rows = sf::test::shared_path("reference/models/synth-qwen2-gpt2-Q4_0.gguf");
  auto file = gguf::GgufFile::open(rows);
  ASSERT_TRUE(file.ok()) << file.status().message();
  const gguf::TensorInfo* wq = file->find_tensor("blk.0.attn_q.weight");
  ASSERT_NE(wq, nullptr);
  const bool cpu_has_panels = preferred_layout(GgmlType::Q4_0, wq->rows()) == WeightLayout::kRowPanels;
  const std::vector<std::vector<std::string>> commands = {
      {"run", "-m", rows, "--mem-budget", "50%", "-p", "Once", "-n", "2", "--spec", "none"},
      {"profile", "-m", rows, "--mem-budget", "50%", "--max-rows", "2", "--repeats", "1"}};
  for (const auto& args : commands) {
    const RunResult r = run(args);
    ASSERT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err.find("note: ") != std::string::npos && r.err.find("pack --row-panels") != std::string::npos,
              cpu_has_panels)
        << args[0] << ": " << r.err;
  }
  // Resident, there is nothing to pack.
  const RunResult resident = run({"profile", "-m", rows, "--max-rows", "2", "--repeats", "1"});
  ASSERT_EQ(resident.exit_code, 0) << resident.err;
  EXPECT_EQ(resident.err.find("pack --row-panels"), std::string::npos) << resident.err;
}

}  // namespace
}  // namespace sf
