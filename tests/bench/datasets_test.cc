// The dataset loaders on the real files in shared/datasets (counts, ids, categories,
// non-empty text), the deterministic selection, and the spec and prompt-file parsers.
#include "bench/datasets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "bench/dataset_formats.h"
#include "gguf/per_test_scratch.h"
#include "test_paths.h"

namespace sf::bench {
namespace {

std::string data_dir() { return sf::test::shared_path("datasets"); }

std::vector<Prompt> load(const std::string& name) {
  auto r = load_dataset(data_dir(), name);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : std::vector<Prompt>{};
}

std::map<std::string, int> category_counts(const std::vector<Prompt>& prompts) {
  std::map<std::string, int> counts;
  for (const auto& p : prompts) ++counts[p.category];
  return counts;
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = sf::test::per_test_scratch_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

struct Expected {
  const char* name;
  size_t count;
  const char* first_id;
};

class DatasetFileTest : public testing::TestWithParam<Expected> {};

TEST_P(DatasetFileTest, LoadsEveryPromptWithUniqueIdsAndText) {
  SF_SKIP_WITHOUT_SHARED();
  const Expected& e = GetParam();
  const std::vector<Prompt> prompts = load(e.name);
  ASSERT_EQ(prompts.size(), e.count);
  EXPECT_EQ(prompts.front().id, e.first_id);
  std::set<std::string> ids;
  for (const auto& p : prompts) {
    EXPECT_EQ(p.dataset, e.name);
    EXPECT_FALSE(p.category.empty()) << p.id;
    EXPECT_NE(p.text.find_first_not_of(" \n\t"), std::string::npos) << p.id;
    ids.insert(p.id);
  }
  EXPECT_EQ(ids.size(), prompts.size()) << "ids must be unique";
}

INSTANTIATE_TEST_SUITE_P(SharedDatasets, DatasetFileTest,
                         testing::Values(Expected{"spec_bench", 480, "spec_bench/81"},
                                         Expected{"mt_bench", 80, "mt_bench/81"},
                                         Expected{"human_eval", 164, "HumanEval/0"}, Expected{"gsm8k", 1319, "gsm8k/0"},
                                         Expected{"mbpp", 974, "mbpp/1"}, Expected{"tinystories", 99, "tinystories/0"}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Datasets, SpecBenchCategories) {
  SF_SKIP_WITHOUT_SHARED();
  const auto counts = category_counts(load("spec_bench"));
  EXPECT_EQ(counts.size(), 13u);  // 8 MT-Bench categories of 10 + 5 of 80
  for (const char* c : {"translation", "summarization", "qa", "math_reasoning", "rag"}) EXPECT_EQ(counts.at(c), 80);
  EXPECT_EQ(counts.at("writing"), 10);
}

TEST(Datasets, MtBenchUsesTheFirstTurn) {
  SF_SKIP_WITHOUT_SHARED();
  const auto prompts = load("mt_bench");
  EXPECT_EQ(category_counts(prompts).size(), 8u);
  EXPECT_EQ(prompts.front().text.rfind("Compose an engaging travel blog post", 0), 0u);
  EXPECT_EQ(prompts.front().text.find("Rewrite your previous response"), std::string::npos);
}

TEST(Datasets, TinyStoriesPromptIsTheFirstSentence) {
  SF_SKIP_WITHOUT_SHARED();
  const auto prompts = load("tinystories");
  // The file starts with the tail of a cut-off story; that fragment is skipped.
  EXPECT_EQ(prompts.front().text, "Once upon a time, in a warm and sunny place, there was a big pit.");
  for (const auto& p : prompts) EXPECT_TRUE(std::isupper(static_cast<unsigned char>(p.text[0]))) << p.text;
}

TEST(Datasets, TinyStoriesKeepsALeadingCompleteStory) {
  const std::string path =
      write_file("stories.txt", "\nOne day, Ann ran. She fell.\n<|endoftext|>\nTom is big! He is.\n<|endoftext|>\n");
  auto r = load_tinystories(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].text, "One day, Ann ran.");
  EXPECT_EQ((*r)[1].text, "Tom is big!");
}

TEST(Datasets, HumanEvalIsReadThroughGzip) {
  SF_SKIP_WITHOUT_SHARED();
  const auto prompts = load("human_eval");
  EXPECT_NE(prompts.front().text.find("def has_close_elements"), std::string::npos);
}

TEST(Datasets, MissingFileNamesThePath) {
  auto r = load_dataset(sf::test::per_test_scratch_dir(), "gsm8k");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("gsm8k/test.jsonl"), std::string::npos) << r.status().message();
}

TEST(Datasets, MalformedLineNamesTheLine) {
  const std::string path = write_file("bad.jsonl", "{\"question\": \"a?\"}\nnot json\n");
  auto r = load_gsm8k(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(":2"), std::string::npos) << r.status().message();
}

TEST(DatasetSpecs, Parse) {
  auto a = parse_dataset_spec("spec_bench/qa:8");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->name, "spec_bench");
  EXPECT_EQ(a->category, "qa");
  EXPECT_EQ(a->count, 8);
  EXPECT_EQ(a->to_string(), "spec_bench/qa:8");
  auto b = parse_dataset_specs({"gsm8k,mbpp:2", "tinystories:3"});
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(b->size(), 3u);
  EXPECT_EQ((*b)[0].count, 0);
  EXPECT_EQ((*b)[1].name, "mbpp");
  EXPECT_EQ((*b)[2].count, 3);
}

TEST(DatasetSpecs, Errors) {
  for (const char* bad : {"spec_bench:0", "spec_bench:x", "spec_bench:", "gsm8k:3x", "spec_bench/:2"})
    EXPECT_FALSE(parse_dataset_spec(bad).ok()) << bad;
  auto unknown = parse_dataset_spec("squad:4");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown dataset 'squad'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("spec_bench"), std::string::npos) << "lists the known names";
  EXPECT_FALSE(parse_dataset_specs({"gsm8k,,mbpp"}).ok());
}

TEST(Selection, StratifiedRoundRobinOverCategories) {
  SF_SKIP_WITHOUT_SHARED();
  const auto all = load("spec_bench");
  auto r = select_prompts(all, {"spec_bench", "", 16});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 16u);
  const auto counts = category_counts(*r);
  EXPECT_EQ(counts.size(), 13u) << "every category appears";
  // Deterministic: the same spec selects the same prompts.
  auto again = select_prompts(all, {"spec_bench", "", 16});
  for (size_t i = 0; i < r->size(); ++i) EXPECT_EQ((*r)[i].id, (*again)[i].id);
}

TEST(Selection, CategoryFilterTakesTheFirstN) {
  SF_SKIP_WITHOUT_SHARED();
  const auto all = load("spec_bench");
  auto r = select_prompts(all, {"spec_bench", "qa", 8});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 8u);
  for (const auto& p : *r) EXPECT_EQ(p.category, "qa");
  auto whole = select_prompts(all, {"spec_bench", "rag", 0});
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->size(), 80u);
}

TEST(Selection, UnknownCategoryListsTheKnownOnes) {
  SF_SKIP_WITHOUT_SHARED();
  auto r = select_prompts(load("spec_bench"), {"spec_bench", "poetry", 4});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no category 'poetry'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("translation"), std::string::npos) << r.status().message();
}

TEST(Selection, CountLargerThanTheDatasetTakesAll) {
  SF_SKIP_WITHOUT_SHARED();
  auto r = select_prompts(load("tinystories"), {"tinystories", "", 1000});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 99u);
}

TEST(PromptFile, LinesWithEscapedNewlines) {
  const std::string path = write_file("prompts.txt", "Hello there\n\n  \nline one\\nline two\r\n");
  auto r = load_prompt_file(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].text, "Hello there");
  EXPECT_EQ((*r)[1].text, "line one\nline two");
  EXPECT_EQ((*r)[1].id, "file/1");
}

TEST(PromptFile, Jsonl) {
  const std::string path = write_file(
      "prompts.jsonl", "{\"id\": \"a\", \"category\": \"code\", \"text\": \"x\\ny\"}\n{\"prompt\": \"z\"}\n");
  auto r = load_prompt_file(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].id, "a");
  EXPECT_EQ((*r)[0].category, "code");
  EXPECT_EQ((*r)[0].text, "x\ny");
  EXPECT_EQ((*r)[1].text, "z");
  EXPECT_FALSE(load_prompt_file(write_file("bad.jsonl", "{\"txt\": 1}\n")).ok());
  EXPECT_FALSE(load_prompt_file(write_file("empty.txt", "\n\n")).ok());
  EXPECT_FALSE(load_prompt_file(sf::test::per_test_scratch_dir() + "/missing.txt").ok());
}

}  // namespace
}  // namespace sf::bench
