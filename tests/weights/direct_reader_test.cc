// DirectReader against a file of known pseudo-random bytes, for each backend with O_DIRECT
// and with the buffered fallback: data equality for random ranges (crossing chunk
// boundaries and end of file), many tickets in flight, forced short reads, injected
// EINTR/EAGAIN and EIO, exact byte accounting, clean destruction with reads in flight, and
// that the page cache really is bypassed (mincore after reading).
#include "weights/direct_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/timer.h"
#include "gguf/per_test_scratch.h"

namespace sf {
namespace {

using Backend = DirectReaderOptions::Backend;
constexpr uint64_t kPage = DirectReader::kAlignment;
// Not a multiple of 4096, so the last block is partial and EOF handling is exercised.
constexpr uint64_t kFileSize = (8u << 20) + 1234;

uint64_t round_up(uint64_t n) { return (n + kPage - 1) / kPage * kPage; }

struct Variant {
  Backend backend;
  bool direct;
};

std::string variant_name(const testing::TestParamInfo<Variant>& info) {
  return std::string(info.param.backend == Backend::kIoUring ? "IoUring" : "Pread") +
         (info.param.direct ? "Direct" : "Buffered");
}

class DirectReaderTest : public testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    path_ = sf::test::per_test_scratch_dir() + "/data.bin";
    bytes_.resize(kFileSize);
    std::mt19937_64 rng(1234);
    for (size_t i = 0; i < bytes_.size(); i += 8) {
      const uint64_t v = rng();
      std::memcpy(&bytes_[i], &v, std::min<size_t>(8, bytes_.size() - i));
    }
    std::ofstream(path_, std::ios::binary).write(reinterpret_cast<const char*>(bytes_.data()), bytes_.size());
  }

  DirectReaderOptions options() const {
    DirectReaderOptions o;
    o.backend = GetParam().backend;
    o.direct = GetParam().direct;
    o.chunk_bytes = 64 << 10;  // small, so ordinary requests span several chunks
    o.queue_depth = 8;
    o.pread_threads = 3;
    return o;
  }

  // Opens with the variant's backend; skips when io_uring is unavailable on this system.
  std::unique_ptr<DirectReader> open_reader(const DirectReaderOptions& o) {
    auto r = DirectReader::open(path_, o);
    if (!r.ok() && o.backend == Backend::kIoUring) return nullptr;
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok()) return nullptr;
    EXPECT_STREQ(r.value()->backend_name(), o.backend == Backend::kIoUring ? "io_uring" : "pread");
    return std::move(r).value();
  }

  // Bytes past EOF must read as zero.
  testing::AssertionResult matches_file(const uint8_t* got, uint64_t offset, uint64_t length) const {
    for (uint64_t i = 0; i < length; ++i) {
      const uint64_t pos = offset + i;
      const uint8_t want = pos < bytes_.size() ? bytes_[pos] : 0;
      if (got[i] != want)
        return testing::AssertionFailure() << "byte at file offset " << pos << " is " << int(got[i]) << ", want "
                                           << int(want) << " (range " << offset << "+" << length << ")";
    }
    return testing::AssertionSuccess();
  }

  std::string path_;
  std::vector<uint8_t> bytes_;
};

#define OPEN_OR_SKIP(reader, opts)                                      \
  auto reader = open_reader(opts);                                      \
  if (!reader && !HasFailure()) GTEST_SKIP() << "io_uring unavailable"; \
  ASSERT_TRUE(reader)

TEST_P(DirectReaderTest, ReportsFileSizeAndMode) {
  OPEN_OR_SKIP(reader, options());
  EXPECT_EQ(reader->file_size(), kFileSize);
  // The build tree is on a real disk where O_DIRECT works; buffered only when asked.
  if (!GetParam().direct) {
    EXPECT_FALSE(reader->direct());
  }
}

TEST_P(DirectReaderTest, RandomRangesMatchFile) {
  OPEN_OR_SKIP(reader, options());
  std::mt19937 rng(7);
  const uint64_t blocks = round_up(kFileSize) / kPage;
  for (int i = 0; i < 150; ++i) {
    const uint64_t offset = rng() % blocks * kPage;
    // Up to 24 chunks long, and up to 16 blocks past the rounded end of file.
    const uint64_t max_len = std::min<uint64_t>(384, blocks + 16 - offset / kPage);
    const uint64_t length = (1 + rng() % max_len) * kPage;
    AlignedBuffer buf(length, kPage);
    std::memset(buf.data(), 0xAB, length);  // so a missing zero fill shows
    ASSERT_TRUE(reader->wait(reader->submit(buf.data(), offset, length)).ok());
    ASSERT_TRUE(matches_file(buf.data(), offset, length));
  }
}

TEST_P(DirectReaderTest, LastSpanRoundedPastEndOfFileIsZeroFilled) {
  OPEN_OR_SKIP(reader, options());
  const uint64_t offset = kFileSize / kPage * kPage - 3 * kPage;
  const uint64_t length = round_up(kFileSize) - offset + 2 * kPage;
  AlignedBuffer buf(length, kPage);
  std::memset(buf.data(), 0xCD, length);
  const uint64_t before = reader->bytes_read();
  ASSERT_TRUE(reader->wait(reader->submit(buf.data(), offset, length)).ok());
  EXPECT_TRUE(matches_file(buf.data(), offset, length));
  EXPECT_EQ(reader->bytes_read() - before, kFileSize - offset);  // the zero fill is not a read
}

// The streaming ring reads into huge-page buffers (aligned_buffer.h): whole-file reads into
// one must come back exact, with O_DIRECT as with the buffered fallback.
TEST_P(DirectReaderTest, ReadsIntoAHugePageBufferMatchFile) {
  OPEN_OR_SKIP(reader, options());
  const uint64_t length = round_up(kFileSize);
  AlignedBuffer buf;
  buf.allocate_huge(length, kPage);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(buf.data()) % AlignedBuffer::kHugePageBytes, 0u);
  std::memset(buf.data(), 0xAB, length);
  ASSERT_TRUE(reader->wait(reader->submit(buf.data(), 0, length)).ok());
  EXPECT_TRUE(matches_file(buf.data(), 0, length));
}

TEST(AlignedBufferHuge, SmallBuffersKeepTheAskedAlignmentLargeOnesAreWholeHugePages) {
  constexpr size_t kHuge = AlignedBuffer::kHugePageBytes;
  AlignedBuffer small;
  small.allocate_huge(5000, kPage);  // below a huge page: a plain O_DIRECT-aligned buffer
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % kPage, 0u);
  EXPECT_EQ(small.size(), 5000u);
  EXPECT_EQ(AlignedBuffer::huge_allocation_bytes(5000, kPage), 8192u);  // rounded to its alignment
  EXPECT_EQ(AlignedBuffer::huge_allocation_bytes(8192, kPage), 8192u);
  EXPECT_EQ(AlignedBuffer::huge_allocation_bytes(kHuge), kHuge);
  EXPECT_EQ(AlignedBuffer::huge_allocation_bytes(kHuge + 1), 2 * kHuge);
  EXPECT_EQ(AlignedBuffer::huge_allocation_bytes(3 * kHuge - 4096), 3 * kHuge);
}

TEST_P(DirectReaderTest, ManyTicketsInFlight) {
  OPEN_OR_SKIP(reader, options());
  constexpr int kTickets = 64;
  const uint64_t length = 160 << 10;  // 2.5 chunks each
  AlignedBuffer buf(kTickets * length, kPage);
  std::vector<uint64_t> tickets, offsets;
  std::mt19937 rng(11);
  const double start = now_seconds();
  for (int i = 0; i < kTickets; ++i) {
    offsets.push_back(rng() % ((kFileSize - length) / kPage) * kPage);
    tickets.push_back(reader->submit(buf.data() + i * length, offsets.back(), length));
  }
  // Waiting in reverse order must not depend on completion order.
  for (int i = kTickets - 1; i >= 0; --i) {
    ASSERT_TRUE(reader->wait(tickets[i]).ok());
    EXPECT_TRUE(reader->is_done(tickets[i]));
    EXPECT_TRUE(matches_file(buf.data() + i * length, offsets[i], length));
  }
  // Busy time is the union of overlapping reads, so it cannot exceed the wall time (summing
  // per-read times would give several times the wall time at this queue depth).
  EXPECT_GT(reader->busy_seconds(), 0.0);
  EXPECT_LE(reader->busy_seconds(), now_seconds() - start);
}

TEST_P(DirectReaderTest, IsDoneBecomesTrueWithoutWaiting) {
  OPEN_OR_SKIP(reader, options());
  AlignedBuffer buf(1 << 20, kPage);
  const uint64_t t = reader->submit(buf.data(), 0, 1 << 20);
  for (int i = 0; i < 10000 && !reader->is_done(t); ++i) usleep(1000);
  EXPECT_TRUE(reader->is_done(t));
  EXPECT_TRUE(reader->wait(t).ok());
  EXPECT_TRUE(matches_file(buf.data(), 0, 1 << 20));
}

TEST_P(DirectReaderTest, ZeroLengthRequestCompletesAtOnce) {
  OPEN_OR_SKIP(reader, options());
  AlignedBuffer buf(kPage, kPage);
  const uint64_t t = reader->submit(buf.data(), 0, 0);
  EXPECT_TRUE(reader->is_done(t));
  EXPECT_TRUE(reader->wait(t).ok());
  EXPECT_EQ(reader->bytes_read(), 0u);
}

TEST_P(DirectReaderTest, ConcurrentSubmittersFromManyThreads) {
  OPEN_OR_SKIP(reader, options());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(100 + t);
      const uint64_t length = 96 << 10;
      AlignedBuffer buf(length, kPage);
      for (int i = 0; i < 40; ++i) {
        const uint64_t offset = rng() % ((kFileSize - length) / kPage) * kPage;
        if (!reader->wait(reader->submit(buf.data(), offset, length)).ok() || !matches_file(buf.data(), offset, length))
          ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_P(DirectReaderTest, ForcedShortReadsStillReturnFullData) {
  DirectReaderOptions o = options();
  o.chunk_bytes = 1 << 20;
  o.test_max_bytes_per_read = 12288;  // every 1 MiB chunk takes ~86 reads
  OPEN_OR_SKIP(reader, o);
  const uint64_t length = round_up(kFileSize);
  AlignedBuffer buf(length, kPage);
  ASSERT_TRUE(reader->wait(reader->submit(buf.data(), 0, length)).ok());
  EXPECT_TRUE(matches_file(buf.data(), 0, length));
  EXPECT_EQ(reader->bytes_read(), kFileSize);
}

TEST_P(DirectReaderTest, UnalignedShortReadCapInBufferedMode) {
  if (GetParam().direct) GTEST_SKIP() << "O_DIRECT caps are rounded to whole blocks";
  DirectReaderOptions o = options();
  o.test_max_bytes_per_read = 5000;  // short reads end mid-page; the remainder is unaligned
  OPEN_OR_SKIP(reader, o);
  const uint64_t length = round_up(kFileSize);
  AlignedBuffer buf(length, kPage);
  ASSERT_TRUE(reader->wait(reader->submit(buf.data(), 0, length)).ok());
  EXPECT_TRUE(matches_file(buf.data(), 0, length));
  EXPECT_EQ(reader->bytes_read(), kFileSize);
}

TEST_P(DirectReaderTest, InterruptedReadsAreRetried) {
  for (int every : {1, 3}) {
    DirectReaderOptions o = options();
    o.test_eintr_every = every;
    o.test_max_bytes_per_read = 32 << 10;  // more reads, more interruptions
    OPEN_OR_SKIP(reader, o);
    const uint64_t length = round_up(kFileSize);
    AlignedBuffer buf(length, kPage);
    ASSERT_TRUE(reader->wait(reader->submit(buf.data(), 0, length)).ok()) << "every " << every;
    EXPECT_TRUE(matches_file(buf.data(), 0, length)) << "every " << every;
    EXPECT_EQ(reader->bytes_read(), kFileSize) << "interrupted reads must not count";
  }
}

TEST_P(DirectReaderTest, IoErrorFailsOnlyItsTicket) {
  DirectReaderOptions o = options();
  const uint64_t bad = (3u << 20) + 100;
  o.test_fail_offset = static_cast<int64_t>(bad);
  OPEN_OR_SKIP(reader, o);
  const uint64_t length = 1 << 20;
  AlignedBuffer a(length, kPage), b(length, kPage), c(length, kPage);
  const uint64_t ta = reader->submit(a.data(), 1 << 20, length);  // before the bad byte
  const uint64_t tb = reader->submit(b.data(), 3 << 20, length);  // covers it
  const uint64_t tc = reader->submit(c.data(), 5 << 20, length);  // after it
  const Status sb = reader->wait(tb);
  ASSERT_FALSE(sb.ok());
  EXPECT_NE(sb.message().find(path_), std::string::npos) << sb.message();
  EXPECT_NE(sb.message().find("offset " + std::to_string(3u << 20)), std::string::npos) << sb.message();
  EXPECT_NE(sb.message().find(std::strerror(EIO)), std::string::npos) << sb.message();
  EXPECT_TRUE(reader->wait(ta).ok());
  EXPECT_TRUE(reader->wait(tc).ok());
  EXPECT_TRUE(matches_file(a.data(), 1 << 20, length));
  EXPECT_TRUE(matches_file(c.data(), 5 << 20, length));
  // The reader keeps working after the error.
  const uint64_t td = reader->submit(a.data(), 6 << 20, length);
  EXPECT_TRUE(reader->wait(td).ok());
  EXPECT_TRUE(matches_file(a.data(), 6 << 20, length));
}

TEST_P(DirectReaderTest, BytesReadIsExact) {
  OPEN_OR_SKIP(reader, options());
  std::mt19937 rng(5);
  uint64_t expected = 0;
  AlignedBuffer buf(1 << 20, kPage);
  for (int i = 0; i < 30; ++i) {
    const uint64_t length = (1 + rng() % 256) * kPage;
    const uint64_t offset = rng() % ((kFileSize - length) / kPage) * kPage;
    ASSERT_TRUE(reader->wait(reader->submit(buf.data(), offset, length)).ok());
    expected += length;
  }
  EXPECT_EQ(reader->bytes_read(), expected);
  EXPECT_GT(reader->busy_seconds(), 0.0);
}

TEST_P(DirectReaderTest, DestroyWithReadsInFlight) {
  // Buffers outlive the reader: the destructor must not return while the kernel can still
  // write into them, and must neither hang nor leak (checked under sanitizers).
  const uint64_t length = round_up(kFileSize);
  std::vector<AlignedBuffer> bufs;
  for (int i = 0; i < 8; ++i) bufs.emplace_back(length, kPage);
  for (int round = 0; round < 5; ++round) {
    OPEN_OR_SKIP(reader, options());
    for (auto& b : bufs) reader->submit(b.data(), 0, length);
  }
}

// Counts the file's pages resident in the page cache.
size_t resident_pages(const std::string& path, uint64_t size) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return SIZE_MAX;
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return SIZE_MAX;
  std::vector<unsigned char> vec(round_up(size) / kPage);
  size_t resident = SIZE_MAX;
  if (mincore(map, size, vec.data()) == 0) {
    resident = 0;
    for (unsigned char v : vec) resident += v & 1;
  }
  munmap(map, size);
  return resident;
}

void drop_cache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  fsync(fd);  // dirty pages cannot be dropped
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

TEST_P(DirectReaderTest, PageCacheIsBypassed) {
  const size_t pages = round_up(kFileSize) / kPage;
  drop_cache(path_);
  const size_t before = resident_pages(path_, kFileSize);
  if (before > pages / 50) GTEST_SKIP() << "cannot drop this file's cached pages here (" << before << " resident)";
  {
    OPEN_OR_SKIP(reader, options());
    // The buffered fallback is expected to evict what it read, so it is checked too.
    const uint64_t length = round_up(kFileSize);
    AlignedBuffer buf(length, kPage);
    ASSERT_TRUE(reader->wait(reader->submit(buf.data(), 0, length)).ok());
    ASSERT_TRUE(matches_file(buf.data(), 0, length));
  }
  const size_t after = resident_pages(path_, kFileSize);
  EXPECT_LE(after, pages / 50) << after << " of " << pages << " pages cached after reading";

  // Control: an ordinary read does fill the cache, so the measurement can see caching.
  std::vector<char> plain(kFileSize);
  std::ifstream(path_, std::ios::binary).read(plain.data(), plain.size());
  EXPECT_GT(resident_pages(path_, kFileSize), pages * 9 / 10);
}

INSTANTIATE_TEST_SUITE_P(Backends, DirectReaderTest,
                         testing::Values(Variant{Backend::kIoUring, true}, Variant{Backend::kPread, true},
                                         Variant{Backend::kIoUring, false}, Variant{Backend::kPread, false}),
                         variant_name);

class DirectReaderOpenTest : public testing::Test {};

TEST_F(DirectReaderOpenTest, MissingFileIsAClearError) {
  const std::string path = sf::test::per_test_scratch_dir() + "/no-such-file.bin";
  auto r = DirectReader::open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(std::strerror(ENOENT)), std::string::npos) << r.status().message();
}

TEST_F(DirectReaderOpenTest, DirectoryIsAClearError) {
  const std::string dir = sf::test::per_test_scratch_dir();
  auto r = DirectReader::open(dir);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("directory"), std::string::npos) << r.status().message();
}

// Runs in a child process that a seccomp filter forbids io_uring_setup (as Docker's default
// profile does): kAuto must fall back to pread and still read correctly, and an explicit
// kIoUring must fail with a message saying so. Exit codes: 0 pass, 77 seccomp unavailable.
int child_with_io_uring_blocked(const std::string& path, const std::vector<uint8_t>& bytes) {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program = {static_cast<unsigned short>(std::size(filter)), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
    return 77;
  DirectReaderOptions o;
  o.backend = Backend::kIoUring;
  auto forced = DirectReader::open(path, o);
  if (forced.ok() || forced.status().message().find("io_uring") == std::string::npos) return 1;
  auto r = DirectReader::open(path);  // kAuto
  if (!r.ok() || std::string(r.value()->backend_name()) != "pread") return 2;
  AlignedBuffer buf(round_up(bytes.size()), kPage);
  if (!r.value()->wait(r.value()->submit(buf.data(), 0, buf.size())).ok()) return 3;
  return std::memcmp(buf.data(), bytes.data(), bytes.size()) == 0 ? 0 : 4;
}

TEST_F(DirectReaderOpenTest, FallsBackToPreadWhenIoUringIsBlocked) {
  const std::string path = sf::test::per_test_scratch_dir() + "/f.bin";
  std::vector<uint8_t> bytes(300000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + (i >> 9));
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(child_with_io_uring_blocked(path, bytes));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "seccomp unavailable";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: kIoUring not refused, 2: no pread fallback, 3: read failed, 4: wrong data";
}

TEST_F(DirectReaderOpenTest, InvalidOptionsAreErrors) {
  const std::string path = sf::test::per_test_scratch_dir() + "/f.bin";
  std::ofstream(path) << "x";
  DirectReaderOptions o;
  o.chunk_bytes = 1000;
  EXPECT_FALSE(DirectReader::open(path, o).ok());
  o = {};
  o.queue_depth = 0;
  EXPECT_FALSE(DirectReader::open(path, o).ok());
  o = {};
  o.pread_threads = 0;
  EXPECT_FALSE(DirectReader::open(path, o).ok());
}

TEST_F(DirectReaderOpenTest, AutoPicksAWorkingBackendAndEmptyFilesWork) {
  const std::string path = sf::test::per_test_scratch_dir() + "/empty.bin";
  std::ofstream(path).close();
  auto r = DirectReader::open(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string name = r.value()->backend_name();
  EXPECT_TRUE(name == "io_uring" || name == "pread") << name;
  EXPECT_EQ(r.value()->file_size(), 0u);
  AlignedBuffer buf(kPage, kPage);
  std::memset(buf.data(), 0xEE, kPage);
  ASSERT_TRUE(r.value()->wait(r.value()->submit(buf.data(), 0, kPage)).ok());
  EXPECT_TRUE(std::all_of(buf.data(), buf.data() + kPage, [](uint8_t b) { return b == 0; }));
}

}  // namespace
}  // namespace sf
