// SlotPool over a Session with several slots: concurrent requests interleave at token
// granularity and still produce exactly what one request alone produces; slots are handed
// out by prefix, queue first-come first-served, and a full queue or a timeout is a 503.
#include "server/slot_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "test_paths.h"

namespace sf::server {
namespace {

std::unique_ptr<Session> make_session(int n_slots, bool speculative) {
  SessionOptions o;
  o.model_path = test::source_path("models/stories260K.gguf");
  o.n_ctx = 256;
  o.n_threads = 1;
  o.n_slots = n_slots;
  if (speculative) {
    o.spec.method = SpecConfig::Method::kChain;
    o.spec.draft_model_path = test::source_path("models/stories260K-draft.gguf");
    o.spec.draft_len = 3;
  }
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(*s) : nullptr;
}

SamplingParams greedy() {
  SamplingParams p;
  p.temperature = 0;
  return p;
}

class SlotPoolInterleaving : public ::testing::TestWithParam<bool> {};

TEST_P(SlotPoolInterleaving, ConcurrentSlotsMatchSequentialOutput) {
  const bool speculative = GetParam();
  auto session = make_session(2, speculative);
  ASSERT_TRUE(session);
  const std::vector<std::string> prompts = {"Once upon a time", "The dog ran to the"};
  std::vector<std::vector<int32_t>> tokens;
  std::vector<std::string> expected;
  for (const auto& p : prompts) {
    tokens.push_back(*session->tokenize(p));
    std::string text;
    auto r = session->generate(tokens.back(), 40, greedy(), false, [&](int32_t, const std::string& t) {
      text += t;
      return true;
    });
    ASSERT_TRUE(r.ok());
    expected.push_back(text);
  }
  ASSERT_NE(expected[0], expected[1]);

  SlotPool pool(*session, 4, 10);
  ApiError error;
  auto a = pool.acquire(tokens[0], &error);
  auto b = pool.acquire(tokens[1], &error);
  ASSERT_TRUE(a && b);
  ASSERT_NE(a->slot(), b->slot());
  EXPECT_EQ(pool.busy_slots(), 2);

  std::mutex order_mutex;
  std::vector<int> order;  // which request each token callback belonged to
  std::string out[2];
  uint64_t accepted[2] = {0, 0};
  auto worker = [&](int i, const SlotPool::Lease& lease) {
    auto r = pool.generate(lease, tokens[i], 40, greedy(), SpecOverride{}, [&](int32_t, const std::string& t) {
      out[i] += t;
      {
        std::lock_guard<std::mutex> lock(order_mutex);
        order.push_back(i);
      }
      // Outside the engine turn: give the other request time to take its steps.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return true;
    });
    ASSERT_TRUE(r.ok()) << r.status().message();
    accepted[i] = r->spec.accepted_draft_tokens;
  };
  std::thread ta(worker, 0, std::cref(*a)), tb(worker, 1, std::cref(*b));
  ta.join();
  tb.join();
  EXPECT_EQ(out[0], expected[0]);
  EXPECT_EQ(out[1], expected[1]);
  int switches = 0;
  for (size_t k = 1; k < order.size(); ++k) switches += order[k] != order[k - 1];
  EXPECT_GE(switches, 4) << "the two generations ran one after the other instead of interleaving";
  if (speculative) {
    EXPECT_GT(accepted[0], 0u);
    EXPECT_GT(accepted[1], 0u);
  }
  a.reset();
  b.reset();
  EXPECT_EQ(pool.busy_slots(), 0);
  EXPECT_GT(pool.busy_seconds(), 0);
}

INSTANTIATE_TEST_SUITE_P(PlainAndSpeculative, SlotPoolInterleaving, ::testing::Values(false, true));

TEST(SlotPool, PicksTheFreeSlotHoldingThePrompt) {
  auto session = make_session(3, false);
  ASSERT_TRUE(session);
  SlotPool pool(*session, 4, 10);
  const auto prompt = *session->tokenize("Once upon a time there was a cat");
  ApiError error;
  int first_slot = -1;
  {
    // Occupy slot 0 so the generation lands in another slot.
    auto blocker = pool.acquire({1}, &error);
    auto lease = pool.acquire(prompt, &error);
    ASSERT_TRUE(lease);
    first_slot = lease->slot();
    ASSERT_TRUE(
        pool.generate(*lease, prompt, 4, greedy(), SpecOverride{}, [](int32_t, const std::string&) { return true; })
            .ok());
  }
  auto again = pool.acquire(prompt, &error);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->slot(), first_slot);
  auto r = pool.generate(*again, prompt, 4, greedy(), SpecOverride{}, [](int32_t, const std::string&) { return true; });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reused_prompt_tokens, static_cast<int>(prompt.size()) - 1);
}

TEST(SlotPool, FullQueueAndTimeoutAre503) {
  auto session = make_session(1, false);
  ASSERT_TRUE(session);
  {
    SlotPool no_queue(*session, 0, 10);
    ApiError error;
    auto held = no_queue.acquire({1}, &error);
    ASSERT_TRUE(held);
    EXPECT_FALSE(no_queue.acquire({1}, &error));
    EXPECT_EQ(error.http_status, 503);
    EXPECT_EQ(error.code, "server_overloaded");
  }
  SlotPool pool(*session, 1, 0.05);
  ApiError error;
  auto held = pool.acquire({1}, &error);
  ASSERT_TRUE(held);
  EXPECT_FALSE(pool.acquire({1}, &error));  // waited 50 ms in the queue, then gave up
  EXPECT_EQ(error.http_status, 503);
  EXPECT_EQ(pool.queue_depth(), 0);
  // A queued request gets the slot as soon as it is released.
  SlotPool waiting_pool(*session, 1, 10);
  auto first = waiting_pool.acquire({1}, &error);
  ASSERT_TRUE(first);
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    first.reset();
  });
  auto second = waiting_pool.acquire({1}, &error);
  releaser.join();
  EXPECT_TRUE(second);
}

TEST(SessionSlots, BudgetCountsEverySlot) {
  SessionOptions o;
  o.model_path = test::source_path("models/stories260K.gguf");
  o.n_ctx = 2048;
  auto one = MemoryBudget::parse("4M");
  ASSERT_TRUE(one.ok());
  o.mem_budget = *one;
  o.n_slots = 1;
  ASSERT_TRUE(Session::create(o).ok());
  o.n_slots = 8;
  auto eight = Session::create(o);
  ASSERT_FALSE(eight.ok());
  EXPECT_NE(eight.status().message().find("8 slots"), std::string::npos) << eight.status().message();
}

TEST(SessionSlots, DraftWeightsAreSharedAndTheirCachesCountedPerSlot) {
  auto footprint = [](int n_slots, bool speculative) -> uint64_t {
    auto s = make_session(n_slots, speculative);
    return s ? s->plan().footprint_bytes() : 0;
  };
  const uint64_t first_draft = footprint(1, true) - footprint(1, false);  // weights + KV + scratch
  const uint64_t both_drafts = footprint(2, true) - footprint(2, false);  // weights once, 2 x (KV + scratch)
  auto spec = make_session(2, true);
  ASSERT_TRUE(spec);
  const uint64_t weights = spec->drafter()->resident_bytes();
  ASSERT_GT(weights, 0u);
  EXPECT_EQ(both_drafts - first_draft, first_draft - weights) << "the second slot adds only the draft's KV and scratch";
}

}  // namespace
}  // namespace sf::server
