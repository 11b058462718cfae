// LazyThreadPool: threads follow the number of concurrent jobs (not the maximum), every
// job runs, jobs beyond the maximum wait for a thread, and shutdown runs what is queued.
#include "server/lazy_thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace sf::server {
namespace {

// Polls until pred() holds or 10 s pass.
template <typename Pred>
bool eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Jobs that block until opened.
class Gate {
 public:
  void pass() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++waiting_;
    cv_.wait(lock, [&] { return open_; });
    --waiting_;
  }
  void open() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  int waiting() {
    std::lock_guard<std::mutex> lock(mutex_);
    return waiting_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
  int waiting_ = 0;
};

TEST(LazyThreadPool, StartsNoThreadBeforeTheFirstJob) {
  LazyThreadPool pool(70);
  EXPECT_EQ(pool.threads_started(), 0u);
}

TEST(LazyThreadPool, OneJobAtATimeIsServedByOneThread) {
  LazyThreadPool pool(70);
  std::atomic<int> done{0};
  for (int i = 0; i < 200; ++i) {
    pool.enqueue([&] { done.fetch_add(1); });
    // The next job arrives once the thread is idle again, as with one client at a time.
    ASSERT_TRUE(eventually([&] { return done.load() == i + 1 && pool.idle_threads() == 1; }));
  }
  EXPECT_EQ(pool.threads_started(), 1u);
  pool.shutdown();
  EXPECT_EQ(done.load(), 200);
}

TEST(LazyThreadPool, ConcurrentJobsGetAThreadEach) {
  LazyThreadPool pool(70);
  Gate gate;
  for (int i = 0; i < 5; ++i) pool.enqueue([&] { gate.pass(); });
  // All five run at once (none waits for another to finish).
  ASSERT_TRUE(eventually([&] { return gate.waiting() == 5; }));
  EXPECT_EQ(pool.threads_started(), 5u);
  gate.open();
  ASSERT_TRUE(eventually([&] { return pool.idle_threads() == 5; }));
  // Idle threads are reused.
  std::atomic<int> done{0};
  for (int i = 0; i < 5; ++i) pool.enqueue([&] { done.fetch_add(1); });
  ASSERT_TRUE(eventually([&] { return done.load() == 5; }));
  EXPECT_EQ(pool.threads_started(), 5u);
}

TEST(LazyThreadPool, JobsBeyondTheMaximumWaitForAThread) {
  LazyThreadPool pool(3);
  Gate gate;
  std::atomic<int> done{0};
  for (int i = 0; i < 7; ++i) {
    pool.enqueue([&] {
      gate.pass();
      done.fetch_add(1);
    });
  }
  ASSERT_TRUE(eventually([&] { return gate.waiting() == 3; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(gate.waiting(), 3);
  EXPECT_EQ(pool.threads_started(), 3u);
  gate.open();
  ASSERT_TRUE(eventually([&] { return done.load() == 7; }));
  EXPECT_EQ(pool.threads_started(), 3u);
}

TEST(LazyThreadPool, ShutdownRunsTheQueuedJobs) {
  std::atomic<int> done{0};
  {
    LazyThreadPool pool(1);
    for (int i = 0; i < 20; ++i) {
      pool.enqueue([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        done.fetch_add(1);
      });
    }
    pool.shutdown();
    EXPECT_EQ(done.load(), 20);
  }
  EXPECT_EQ(done.load(), 20);
}

}  // namespace
}  // namespace sf::server
