// A llama.cpp user's first hour, end to end on the repository's own models (no ../shared):
// llama.cpp flag spellings, -n -1, stop strings, escapes, -f, seeds, penalties, help with
// defaults, --version, exit codes, and info.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gguf/gguf_file.h"
#include "gguf/gguf_raw_builder.h"
#include "gguf/gguf_writer.h"
#include "gguf/per_test_scratch.h"
#include "specflash_runner.h"
#include "test_paths.h"

namespace sf {
namespace {

using sf::test::CommandResult;

std::string scratch() { return sf::test::per_test_scratch_dir(); }
CommandResult run(const std::vector<std::string>& args) { return sf::test::run_specflash(args, scratch()); }
std::string stories() { return sf::test::source_path("models/stories260K.gguf"); }
std::string draft() { return sf::test::source_path("models/stories260K-draft.gguf"); }

// `run` on stories260K, greedy, plus extra flags.
CommandResult greedy(std::vector<std::string> extra, const std::string& prompt = "Once upon a time") {
  std::vector<std::string> args = {"run", "-m", stories(), "-p", prompt, "--temp", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}

nlohmann::json stats_json(const std::vector<std::string>& args) {
  const std::string path = scratch() + "/stats.json";
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--stats-json", path});
  const CommandResult r = run(a);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(sf::test::read_file(path));
}

void expect_usage_error(const CommandResult& r, const std::string& part) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
}

TEST(LlamaFlags, GpuOnlyFlagsAreAcceptedWithANote) {
  const CommandResult plain = greedy({"-n", "12"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const CommandResult r = greedy({"-n", "12", "-ngl", "99", "-fa", "-nkvo", "--main-gpu", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_NE(r.err.find("note: --n-gpu-layers does nothing in specflash"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("note: --flash-attn does nothing"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("note: --no-kv-offload does nothing"), std::string::npos) << r.err;
  // -fa with newer llama.cpp's value form.
  EXPECT_EQ(greedy({"-n", "2", "-fa", "on"}).exit_code, 0);
}

TEST(LlamaFlags, ModelDraftAndDraftMaxDriveSpeculation) {
  const CommandResult plain = greedy({"-n", "24"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto j = stats_json({"run", "-m", stories(), "-p", "Once upon a time", "--temp", "0", "-n", "24", "-md",
                             draft(), "--draft-max", "3", "--draft-min", "1"});
  EXPECT_GT(j["draft_tokens"].get<int>(), 0);
  // --draft-max is the per-cycle draft length: at most 3 drafts per target pass.
  EXPECT_LE(j["draft_tokens"].get<int>(), 3 * j["target_passes"].get<int>());
  EXPECT_GT(j["accepted_draft_tokens"].get<int>(), 0);
  const CommandResult spec = greedy({"-n", "24", "--model-draft", draft()});
  EXPECT_EQ(spec.out, plain.out);  // lossless
  expect_usage_error(greedy({"-md", draft(), "--draft-max", "2", "--draft-min", "3"}), "--draft-min 3");
}

// llama.cpp's meaning: drafting stops where the draft's top probability is below
// --draft-p-min, and a cycle with fewer than --draft-min drafted tokens decodes plainly.
TEST(LlamaFlags, DraftMinAndDraftPMinShapeTheChain) {
  const std::vector<std::string> base = {"run",    "-m",    stories(),     "-p", "Once upon a time",
                                         "--temp", "0",     "-n",          "48", "--ignore-eos",
                                         "-md",    draft(), "--draft-max", "4"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const auto fixed = stats_json(with({"--spec", "chain"}));  // the default is auto: ask for the chain
  const auto confident = stats_json(with({"--draft-p-min", "0.75"}));
  const auto with_min = stats_json(with({"--draft-p-min", "0.75", "--draft-min", "2"}));
  // Not given: every pass verifies a full chain of 4, as before.
  EXPECT_EQ(fixed["draft_tokens"].get<int>(), 4 * fixed["target_passes"].get<int>());
  EXPECT_EQ(fixed["cycles_without_draft"].get<int>(), 0);
  // The stop proposes fewer tokens, still accepted; some passes get no draft at all.
  EXPECT_LT(confident["draft_tokens"].get<int>(), fixed["draft_tokens"].get<int>());
  EXPECT_GT(confident["accepted_draft_tokens"].get<int>(), 0);
  // The minimum turns more passes into plain decoding.
  EXPECT_GT(with_min["cycles_without_draft"].get<int>(), confident["cycles_without_draft"].get<int>());
  EXPECT_GT(with_min["accepted_draft_tokens"].get<int>(), 0);
  // Lossless: the same text in all three.
  const CommandResult a = run(base), b = run(with({"--draft-p-min", "0.75", "--draft-min", "2"}));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  const CommandResult stats = run(with({"--draft-p-min", "0.75", "--draft-min", "2", "--stats"}));
  EXPECT_NE(stats.err.find("of the passes without a draft"), std::string::npos) << stats.err;
  expect_usage_error(run(with({"--draft-p-min", "1.5"})), "--draft-p-min");
  // Other methods ignore both, with a note.
  const CommandResult tree = run(with({"--spec", "tree", "--draft-min", "2"}));
  EXPECT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_NE(tree.err.find("note: --draft-min and --draft-p-min apply to --spec chain"), std::string::npos) << tree.err;
}

// --spec not given + a draft: the default method (auto); --spec none + a draft:
// plain decoding, with a note that the draft is unused.
TEST(LlamaFlags, SpecNoneWithADraftDecodesPlainly) {
  const std::vector<std::string> base = {"run", "-m", stories(), "-p",   "Once upon a time", "--temp", "0",
                                         "-n",  "24", "-md",     draft()};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  // Afresh: a profile another test left in the runner's shared XDG cache can show every
  // drafting arm far behind plain decoding, and then a short run tries none of them (CI failed
  // so once). And streamed (0%, EMULATED 100 MB/s: ~9 ms a pass against ~10 us a draft step),
  // so that drafting pays and a first trial fits in auto's exploration budget at once. Resident,
  // where a pass of this tiny model costs ~30 us, whether 96 tokens try a drafting arm at all
  // follows the timings (5-81 drafted tokens when quiet, none under the suite's load on the
  // Zen 5 VM, 2026-12-07): auto is right not to insist there.
  std::vector<std::string> streamed = base;
  streamed.insert(streamed.end(), {"--auto-profile-dir", "none", "--mem-budget", "0%", "--io-bandwidth", "100M"});
  const auto by_default = stats_json(streamed);
  EXPECT_EQ(by_default["method"].get<std::string>(), "auto");
  EXPECT_GT(by_default["draft_tokens"].get<int>(), 0) << "auto, knowing nothing yet, tries its drafting arms";
  const auto none = stats_json(with({"--spec", "none"}));
  EXPECT_EQ(none["method"].get<std::string>(), "none");
  EXPECT_EQ(none["draft_tokens"].get<int>(), 0);
  EXPECT_EQ(none["target_passes"].get<int>(), 24);
  const CommandResult r = run(with({"--spec", "none"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: --spec none: the draft model " + draft() + " is not used"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, greedy({"-n", "24"}).out);
  // Without a draft nothing is noted.
  const CommandResult plain = greedy({"-n", "4", "--spec", "none"});
  EXPECT_EQ(plain.exit_code, 0);
  EXPECT_EQ(plain.err.find("note:"), std::string::npos) << plain.err;
}

TEST(LlamaFlags, UnknownSingleDashWordsNameThemselves) {
  expect_usage_error(greedy({"-ngx", "5"}), "unknown option '-ngx'");
  expect_usage_error(greedy({"-nfoo"}), "unknown option '-nfoo'");
  expect_usage_error(greedy({"-cnv"}), "for a conversation use 'specflash chat'");
  // A prompt that looks like a flag is a value, not an option.
  EXPECT_EQ(greedy({"-n", "2"}, "-ngl is a flag").exit_code, 0);
}

TEST(LlamaFlags, MinusOneGeneratesUntilTheContextIsFull) {
  const auto j = stats_json(
      {"run", "-m", stories(), "-p", "Once upon a time", "--temp", "0", "-n", "-1", "-c", "48", "--ignore-eos"});
  EXPECT_EQ(j["prompt_tokens"].get<int>() + j["generated_tokens"].get<int>(), 48);
}

TEST(LlamaFlags, ReversePromptStopsBeforeTheStopString) {
  const CommandResult full = greedy({"-n", "20"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const size_t lily = full.out.find("Lily");
  ASSERT_NE(lily, std::string::npos) << full.out;
  const CommandResult r = greedy({"-n", "20", "-r", "Lily"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, full.out.substr(0, lily));
  // --stop is the same list; a stop that never appears changes nothing.
  EXPECT_EQ(greedy({"-n", "20", "--stop", "zebra"}).out, full.out);
}

TEST(LlamaFlags, EscapesAndPromptFiles) {
  const CommandResult real_newline = greedy({"-n", "8"}, "Once upon\na time");
  const CommandResult escaped = greedy({"-n", "8"}, "Once upon\\na time");
  ASSERT_EQ(escaped.exit_code, 0) << escaped.err;
  EXPECT_EQ(escaped.out, real_newline.out);
  const auto raw =
      stats_json({"run", "-m", stories(), "-p", "Once upon\\na time", "--temp", "0", "-n", "1", "--no-escape"});
  const auto esc = stats_json({"run", "-m", stories(), "-p", "Once upon\\na time", "--temp", "0", "-n", "1"});
  EXPECT_NE(raw["prompt_tokens"], esc["prompt_tokens"]);

  // -f: the file's final newline is not part of the prompt (as in llama.cpp).
  const std::string file = scratch() + "/prompt.txt";
  std::ofstream(file) << "Once upon a time\n";
  const CommandResult from_file = run({"run", "-m", stories(), "-f", file, "--temp", "0", "-n", "8"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(from_file.out, greedy({"-n", "8"}).out);
  expect_usage_error(run({"run", "-m", stories(), "-f", file, "-p", "x"}), "excludes");
}

TEST(LlamaFlags, SeedIsRandomUnlessGiven) {
  const std::vector<std::string> base = {"run", "-m", stories(), "-p", "Once", "-n", "16", "--temp", "1.5"};
  const auto a = stats_json(base), b = stats_json(base);
  EXPECT_NE(a["seed"], b["seed"]);
  std::vector<std::string> fixed = base;
  fixed.insert(fixed.end(), {"--seed", "42"});
  const CommandResult x = run(fixed), y = run(fixed);
  ASSERT_EQ(x.exit_code, 0) << x.err;
  EXPECT_EQ(x.out, y.out);
  EXPECT_EQ(stats_json(fixed)["seed"].get<uint64_t>(), 42u);
  // -s is llama.cpp's short form; -1 asks for a random seed explicitly.
  std::vector<std::string> s = base;
  s.insert(s.end(), {"-s", "42"});
  EXPECT_EQ(run(s).out, x.out);
}

TEST(LlamaFlags, PenaltiesChangeSampledText) {
  const std::vector<std::string> base = {"run", "-m", stories(), "-p", "Once upon a time", "-n", "48", "--seed", "7"};
  std::vector<std::string> penalised = base;
  penalised.insert(penalised.end(), {"--repeat-penalty", "1.5", "--repeat-last-n", "-1", "--presence-penalty", "1.5",
                                     "--frequency-penalty", "1"});
  const CommandResult plain = run(base), pen = run(penalised);
  ASSERT_EQ(pen.exit_code, 0) << pen.err;
  EXPECT_NE(plain.out, pen.out);
  expect_usage_error(run({"run", "-m", stories(), "--presence-penalty", "99"}), "--presence-penalty");
}

TEST(HelpAndVersion, HelpShowsDefaultsAndRanges) {
  const CommandResult r = run({"run", "--help"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("-n,--n-predict INT:INT in [-2 - 1048576]=128"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--temp FLOAT:FLOAT in [0 - 100]=0.8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--draft-len INT=4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("also -ngl"), std::string::npos) << r.out;
  for (const char* cmd : {"chat", "dump", "info", "tokenize", "quantize", "pack", "bench", "distill", "synth"}) {
    const CommandResult h = run({cmd, "--help"});
    EXPECT_EQ(h.exit_code, 0) << cmd << ": " << h.err;
    EXPECT_NE(h.out.find("Usage: specflash "), std::string::npos) << cmd;
  }
  const CommandResult chat = run({"chat", "--help"});
  for (const char* flag : {"--draft", "--spec", "--mem-budget", "--io-bandwidth", "--min-p", "--stats", "-r,"})
    EXPECT_NE(chat.out.find(flag), std::string::npos) << "chat lacks " << flag;
}

TEST(HelpAndVersion, VersionNamesCommitBuildTypeAndSimd) {
  const CommandResult r = run({"--version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("commit: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("commit: unknown"), std::string::npos) << r.out;  // built from this git checkout
  EXPECT_NE(r.out.find("build type: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SIMD targets"), std::string::npos) << r.out;
  // Each command answers --version too.
  const CommandResult sub = run({"run", "--version"});
  EXPECT_EQ(sub.exit_code, 0) << sub.err;
  EXPECT_EQ(sub.out, r.out);
}

TEST(ExitCodes, UsageErrorsAreTwoOtherErrorsOne) {
  expect_usage_error(run({"run", "--temp", "abc"}), "--temp");
  expect_usage_error(run({"run", "-m", stories(), "--spec", "tree"}), "needs a draft model");
  expect_usage_error(run({"run", "-m", stories(), "--mem-budget", "banana"}), "banana");
  expect_usage_error(run({"info"}), "info -m MODEL");
  expect_usage_error(run({"frobnicate"}), "unknown command");
  const CommandResult missing = run({"run", "-m", scratch() + "/none.gguf"});
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_EQ(run({"--help"}).exit_code, 0);
}

TEST(Info, ModelFlagJsonAndTypeNames) {
  const CommandResult by_flag = run({"info", "-m", stories()});
  ASSERT_EQ(by_flag.exit_code, 0) << by_flag.err;
  EXPECT_EQ(by_flag.out, run({"info", stories()}).out);
  const CommandResult js = run({"info", "-m", stories(), "--json", "--tensors"});
  ASSERT_EQ(js.exit_code, 0) << js.err;
  const auto j = nlohmann::json::parse(js.out);
  EXPECT_EQ(j["architecture"], "llama");
  EXPECT_EQ(j["hparams"]["n_layer"], 5);
  EXPECT_TRUE(j["runnable"].get<bool>());
  EXPECT_EQ(j["tensors"].size(), j["n_tensors"].get<size_t>());

  // ggml type 20 is IQ4_NL: the error names it.
  sf::test::RawGguf g;
  g.header(3, 1, 1).kv_string("general.architecture", "llama");
  g.tensor_info("token_embd.weight", {64, 8}, 20, 0).pad_to(32).zeros(4096);
  const std::string path = scratch() + "/iq4nl.gguf";
  ASSERT_TRUE(g.save(path));
  const CommandResult r = run({"info", "-m", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("IQ4_NL"), std::string::npos) << r.err;
}

TEST(DraftVocabulary, MismatchNamesTheToken) {
  // The repository's draft with token 300's text changed.
  auto src = gguf::GgufFile::open(draft());
  ASSERT_TRUE(src.ok()) << src.status().message();
  gguf::GgufWriter w;
  w.copy_metadata_from(*src);
  const gguf::Value* tokens = nullptr;
  for (const auto& [key, value] : src->metadata())
    if (key == "tokenizer.ggml.tokens") tokens = &value;
  ASSERT_NE(tokens, nullptr);
  std::vector<gguf::Value> items = tokens->as_array().items;
  const std::string original = items[300].as_string();
  items[300] = gguf::Value::string("zzzz");
  w.set("tokenizer.ggml.tokens", gguf::Value::array(gguf::ValueType::kString, items));
  for (const auto& t : src->tensors()) w.add_tensor(t.name, t.type, t.dims, *src->read_tensor_data(t));
  const std::string path = scratch() + "/other-vocab.gguf";
  ASSERT_TRUE(w.write(path).ok());
  const CommandResult r = greedy({"-n", "4", "--draft", path});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("first difference at token 300: the target has '" + original + "', the draft 'zzzz'"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace sf
