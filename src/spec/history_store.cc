#include "spec/history_store.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/fnv1a.h"

namespace sf {
namespace {

constexpr char kMagic[8] = {'S', 'F', 'H', 'I', 'S', 'T', '0', '1'};

template <typename T>
void put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <typename T>
bool get(const std::string& in, size_t* pos, T* v) {
  if (in.size() - *pos < sizeof(T)) return false;
  std::memcpy(v, in.data() + *pos, sizeof(T));
  *pos += sizeof(T);
  return true;
}

bool valid_task_name(const std::string& s) {
  if (s.empty() || s == "." || s == "..") return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return true;
}

Status write_all(int fd, const std::string& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Errorf("%s: write failed: %s", path.c_str(), std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

uint64_t vocabulary_fingerprint(const Tokenizer& tokenizer) {
  const int32_t n = tokenizer.n_vocab();
  uint64_t h = fnv1a(&n, sizeof(n));
  for (int32_t id = 0; id < n; ++id) {
    const std::string& text = tokenizer.token_text(id);
    const uint32_t len = static_cast<uint32_t>(text.size());
    h = fnv1a(&len, sizeof(len), h);
    h = fnv1a(text.data(), text.size(), h);
  }
  return h;
}

Result<HistoryStore> HistoryStore::open(const HistoryOptions& options, uint64_t fingerprint, int n_vocab) {
  if (!valid_task_name(options.task))
    return Status::Errorf("history task name '%s' is invalid: use letters, digits, '-', '_' and '.'",
                          options.task.c_str());
  if (options.max_tokens < 1) return Status::Error("the history store's size bound must be at least one token");
  HistoryStore s;
  s.options_ = options;
  s.fingerprint_ = fingerprint;
  s.path_ = (std::filesystem::path(options.dir) / (options.task + ".sfhist")).string();
  std::error_code ec;
  // Temporary files of writers that were killed mid-save are garbage: the rename never
  // happened. Only those whose process is gone are removed (a live writer keeps its own).
  const std::string tmp_prefix = options.task + ".sfhist.tmp.";
  for (const auto& entry : std::filesystem::directory_iterator(options.dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(tmp_prefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + tmp_prefix.size(), nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path(), ec);
  }
  if (!std::filesystem::exists(s.path_, ec)) return s;
  std::ifstream in(s.path_, std::ios::binary);
  if (!in) return Status::Errorf("%s: cannot read the history store", s.path_.c_str());
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string corrupt = s.path_ + ": the history store is corrupt (";
  const std::string fix = "); delete the file or clear the store to start afresh";
  if (bytes.size() < sizeof(kMagic) + 3 * sizeof(uint64_t) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return Status::Error(corrupt + "not a specflash history file or truncated" + fix);
  uint64_t stored_sum = 0;
  std::memcpy(&stored_sum, bytes.data() + bytes.size() - sizeof(uint64_t), sizeof(uint64_t));
  const std::string body = bytes.substr(0, bytes.size() - sizeof(uint64_t));
  if (fnv1a(body.data(), body.size()) != stored_sum) return Status::Error(corrupt + "checksum mismatch" + fix);
  size_t pos = sizeof(kMagic);
  uint64_t file_fingerprint = 0, n_docs = 0;
  get(body, &pos, &file_fingerprint);
  get(body, &pos, &n_docs);
  if (file_fingerprint != fingerprint)
    return Status::Errorf(
        "%s: the history store was written for another tokenizer (vocabulary fingerprint %016llx, this model's "
        "%016llx); use another --history-dir or task for this model",
        s.path_.c_str(), static_cast<unsigned long long>(file_fingerprint),
        static_cast<unsigned long long>(fingerprint));
  for (uint64_t d = 0; d < n_docs; ++d) {
    uint32_t len = 0;
    if (!get(body, &pos, &len) || (body.size() - pos) / sizeof(int32_t) < len)
      return Status::Error(corrupt + "document " + std::to_string(d) + " runs past the end" + fix);
    std::vector<int32_t> doc(len);
    std::memcpy(doc.data(), body.data() + pos, len * sizeof(int32_t));
    pos += len * sizeof(int32_t);
    for (int32_t t : doc)
      if (t < 0 || t >= n_vocab)
        return Status::Error(corrupt + "token id " + std::to_string(t) + " out of range" + fix);
    s.add(std::move(doc));
  }
  if (pos != body.size()) return Status::Error(corrupt + "trailing bytes" + fix);
  return s;
}

void HistoryStore::add(std::vector<int32_t> document) {
  if (document.empty()) return;
  if (document.size() > options_.max_tokens)
    document.erase(document.begin(), document.end() - static_cast<std::ptrdiff_t>(options_.max_tokens));
  tokens_ += document.size();
  docs_.push_back(std::move(document));
  size_t drop = 0;
  while (tokens_ > options_.max_tokens) tokens_ -= docs_[drop++].size();
  docs_.erase(docs_.begin(), docs_.begin() + static_cast<std::ptrdiff_t>(drop));
}

Status HistoryStore::save() const {
  std::error_code ec;
  if (!std::filesystem::exists(options_.dir, ec)) {
    if (::mkdir(options_.dir.c_str(), 0700) != 0 && errno != EEXIST)
      return Status::Errorf("%s: cannot create the history directory: %s", options_.dir.c_str(), std::strerror(errno));
  }
  std::string bytes(kMagic, sizeof(kMagic));
  put(&bytes, fingerprint_);
  put(&bytes, static_cast<uint64_t>(docs_.size()));
  for (const auto& doc : docs_) {
    put(&bytes, static_cast<uint32_t>(doc.size()));
    bytes.append(reinterpret_cast<const char*>(doc.data()), doc.size() * sizeof(int32_t));
  }
  put(&bytes, fnv1a(bytes.data(), bytes.size()));

  const std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Errorf("%s: cannot write the history store: %s", tmp.c_str(), std::strerror(errno));
  Status st = write_all(fd, bytes, tmp);
  if (st.ok() && ::fchmod(fd, 0600) != 0) st = Status::Errorf("%s: chmod failed", tmp.c_str());
  if (st.ok() && ::fsync(fd) != 0) st = Status::Errorf("%s: fsync failed: %s", tmp.c_str(), std::strerror(errno));
  ::close(fd);
  if (st.ok() && std::rename(tmp.c_str(), path_.c_str()) != 0)
    st = Status::Errorf("%s: rename failed: %s", path_.c_str(), std::strerror(errno));
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  // The rename itself must reach the disk for the new store to survive a power loss.
  const int dir = ::open(options_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return Status::Ok();
}

Status HistoryStore::clear() {
  docs_.clear();
  tokens_ = 0;
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT)
    return Status::Errorf("%s: cannot remove the history store: %s", path_.c_str(), std::strerror(errno));
  return Status::Ok();
}

}  // namespace sf
