// Storage faults, injected where they happen:
//  - reading a streamed model: EIO, short reads with interruptions, the file truncated,
//    overwritten in place or replaced while the model streams (through the DirectReaderOptions test hooks and real
//    truncate/rename on a scratch copy);
//  - writing models: a full disk (ENOSPC) at every stage of quantize, pack and the distilled
//    draft's export, and at close (the base/output_file.h seam).
// Each must end in an error naming the file, never a crash, and never leave a partial file
// in place of a good one.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/output_file.h"
#include "convert/model_packer.h"
#include "convert/model_quantizer.h"
#include "engine/session.h"
#include "gguf/gguf_file.h"
#include "sampling/sampler.h"
#include "test_paths.h"
#include "train/draft_export.h"
#include "train/draft_model.h"

namespace sf {
namespace {

namespace fs = std::filesystem;

std::vector<char> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string model_path() { return test::source_path("models/stories260K.gguf"); }

// ---------------------------------------------------------------------------------------
// Reading: a session that streams every layer (budget 0%).

SessionOptions streamed_options(const std::string& path, DirectReaderOptions::Backend backend) {
  SessionOptions o;
  o.model_path = path;
  o.n_threads = 1;
  o.n_ctx = 64;
  o.mem_budget = *MemoryBudget::parse("0%");
  o.io.backend = backend;
  return o;
}

// A few decode steps from a fixed prompt; the logits of each step, or the first error.
Status run_steps(Session& s, int steps, std::vector<float>* all) {
  const int n_vocab = s.model().hparams().n_vocab;
  std::vector<int32_t> tokens = {1, 403, 261, 39, 91};
  std::vector<float> logits;
  s.reset();
  all->clear();
  SF_RETURN_IF_ERROR(s.evaluate(tokens, false, &logits));
  all->insert(all->end(), logits.begin(), logits.end());
  for (int i = 0; i < steps; ++i) {
    SF_RETURN_IF_ERROR(s.evaluate({argmax(logits.data(), n_vocab)}, false, &logits));
    all->insert(all->end(), logits.begin(), logits.end());
  }
  return Status::Ok();
}

std::vector<float> resident_logits() {
  SessionOptions o;
  o.model_path = model_path();
  o.n_threads = 1;
  o.n_ctx = 64;
  auto s = Session::create(o);
  EXPECT_TRUE(s.ok()) << s.status().message();
  std::vector<float> all;
  EXPECT_TRUE(run_steps(**s, 4, &all).ok());
  return all;
}

using Backend = DirectReaderOptions::Backend;

class StreamFaults : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    dir_ = test::scratch_dir(std::string("stream-faults-") + (GetParam() == Backend::kPread ? "pread" : "uring"));
    path_ = dir_ + "/model.gguf";
    fs::copy_file(model_path(), path_);
  }
  // A session streaming the scratch copy, or a skip where io_uring is unavailable.
  std::unique_ptr<Session> open(const DirectReaderOptions& io = {}) {
    SessionOptions o = streamed_options(path_, GetParam());
    const Backend backend = o.io.backend;
    o.io = io;
    o.io.backend = backend;
    auto s = Session::create(o);
    if (!s.ok()) {
      ADD_FAILURE() << s.status().message();
      return nullptr;
    }
    EXPECT_TRUE((*s)->plan().streams());
    return std::move(s).value();
  }
  // The first byte of layer 1's streamed data: reading it is part of every forward pass.
  uint64_t layer1_offset() const {
    auto f = gguf::GgufFile::open(path_);
    EXPECT_TRUE(f.ok());
    const gguf::TensorInfo* t = f->find_tensor("blk.1.attn_q.weight");
    EXPECT_NE(t, nullptr);
    return t == nullptr ? 0 : t->file_offset;
  }
  std::string dir_, path_;
};

TEST_P(StreamFaults, ShortAndInterruptedReadsChangeNothing) {
  DirectReaderOptions io;
  io.test_max_bytes_per_read = 4096;
  io.test_eintr_every = 3;
  auto s = open(io);
  ASSERT_TRUE(s);
  std::vector<float> got;
  const Status st = run_steps(*s, 4, &got);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(got, resident_logits());
  EXPECT_GT(s->counters().stream.bytes_read, 0u);
}

TEST_P(StreamFaults, IoErrorIsAnErrorNamingTheFile) {
  DirectReaderOptions io;
  io.test_fail_offset = static_cast<int64_t>(layer1_offset() + 100);
  auto s = open(io);
  ASSERT_TRUE(s);
  std::vector<float> got;
  const Status st = run_steps(*s, 2, &got);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(path_), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("Input/output error"), std::string::npos) << st.message();
}

TEST_P(StreamFaults, TruncatedWhileStreamingIsAnErrorNotZeros) {
  auto s = open();
  ASSERT_TRUE(s);
  std::vector<float> before;
  ASSERT_TRUE(run_steps(*s, 1, &before).ok());
  // Cut the file inside layer 1 while the session holds it open.
  ASSERT_EQ(::truncate(path_.c_str(), static_cast<off_t>(layer1_offset() + 4096)), 0);
  std::vector<float> after;
  const Status st = run_steps(*s, 2, &after);
  ASSERT_FALSE(st.ok()) << "a truncated model was read as zeros";
  EXPECT_NE(st.message().find(path_), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("truncated"), std::string::npos) << st.message();
}

TEST_P(StreamFaults, OverwrittenInPlaceWhileStreamingIsAnError) {
  // The copy's modification time is set far in the past, so the write below changes it
  // even where timestamps are coarse (a copy and a write in the same clock tick).
  const struct timespec times[2] = {{0, UTIME_OMIT}, {946684800, 0}};  // mtime 2000-01-01
  ASSERT_EQ(::utimensat(AT_FDCWD, path_.c_str(), times, 0), 0);
  auto s = open();
  ASSERT_TRUE(s);
  std::vector<float> before;
  ASSERT_TRUE(run_steps(*s, 1, &before).ok());
  // Another program writes into layer 1, in place: same size, no rename.
  const uint64_t size = fs::file_size(path_);
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::vector<char> junk(4096, 0x5a);
  ASSERT_EQ(::pwrite(fd, junk.data(), junk.size(), static_cast<off_t>(layer1_offset())), 4096);
  ASSERT_EQ(::close(fd), 0);
  ASSERT_EQ(fs::file_size(path_), size);
  std::vector<float> after;
  const Status st = run_steps(*s, 2, &after);
  ASSERT_FALSE(st.ok()) << "weights overwritten under the streamer were used";
  EXPECT_NE(st.message().find(path_), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("modified while being read"), std::string::npos) << st.message();
}

TEST_P(StreamFaults, ReplacedWhileStreamingKeepsReadingTheOpenedFile) {
  // `specflash quantize m.gguf m.gguf` or a download finishing renames a new file over the
  // path: the open descriptor still names the old file, so the output must not change.
  auto s = open();
  ASSERT_TRUE(s);
  std::vector<float> before, after;
  ASSERT_TRUE(run_steps(*s, 4, &before).ok());
  const std::string other = dir_ + "/other.gguf";
  {
    std::vector<char> junk(read_all(path_).size(), 0x5a);
    std::ofstream(other, std::ios::binary).write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  fs::rename(other, path_);
  const Status st = run_steps(*s, 4, &after);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(before, after);
  EXPECT_EQ(after, resident_logits());
}

INSTANTIATE_TEST_SUITE_P(Backends, StreamFaults, testing::Values(Backend::kPread, Backend::kAuto),
                         [](const auto& info) { return info.param == Backend::kPread ? "Pread" : "Auto"; });

// ---------------------------------------------------------------------------------------
// Writing: every writer, a full disk at several points and at close.

struct Writer {
  const char* name;
  Status (*write)(const std::string& out);
};

Status quantize(const std::string& out) { return quantize_model(model_path(), out, GgmlType::Q8_0, {}); }
Status pack(const std::string& out) { return pack_model(model_path(), out, {}); }
Status export_draft(const std::string& out) {
  auto vocab = gguf::GgufFile::open(model_path());
  if (!vocab.ok()) return vocab.status();
  train::DraftConfig c;
  c.n_vocab = 512;
  c.n_embd = 16;
  c.n_layer = 1;
  c.n_head = 2;
  c.n_head_kv = 1;
  c.n_ff = 32;
  return train::export_draft_gguf(c, train::init_params(c, 7), *vocab, out);
}

const Writer kWriters[] = {{"quantize", quantize}, {"pack", pack}, {"distill_export", export_draft}};

class FullDisk : public testing::TestWithParam<Writer> {};

TEST_P(FullDisk, FailsCleanlyAndKeepsThePreviousFile) {
  const std::string dir = test::scratch_dir(std::string("full-disk-") + GetParam().name);
  const std::string out = dir + "/out.gguf";
  // A good file from an earlier run sits at the output path.
  const Status first = GetParam().write(out);
  ASSERT_TRUE(first.ok()) << first.message();
  const std::vector<char> good = read_all(out);
  ASSERT_GT(good.size(), 4096u);

  struct Point {
    uint64_t after;
    bool at_close;
  };
  const Point points[] = {
      {0, false}, {7, false}, {4096, false}, {good.size() / 2, false}, {good.size() - 1, false}, {UINT64_MAX, true}};
  for (const Point& p : points) {
    SCOPED_TRACE("fail after " + std::to_string(p.after) + (p.at_close ? " at close" : ""));
    Status st;
    {
      WriteFault fault;
      fault.fail_after_bytes = p.after;
      fault.fail_on_close = p.at_close;
      ScopedWriteFault scoped(fault);
      st = GetParam().write(out);
    }
    ASSERT_FALSE(st.ok()) << "a full disk went unnoticed";
    EXPECT_NE(st.message().find(out), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("No space left on device"), std::string::npos) << st.message();
    EXPECT_EQ(read_all(out), good) << "the previous file was damaged";
    EXPECT_FALSE(fs::exists(out + ".tmp")) << "the partial temporary was left behind";
    size_t n_files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n_files;
    EXPECT_EQ(n_files, 1u);
  }
  // And with the fault gone the writer works again and writes the same bytes.
  ASSERT_TRUE(GetParam().write(out).ok());
  EXPECT_EQ(read_all(out), good);
}

INSTANTIATE_TEST_SUITE_P(Writers, FullDisk, testing::ValuesIn(kWriters),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace sf
