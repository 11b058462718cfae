#include "cli/checked_output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

namespace sf::cli {

Status write_checked(FILE* f, const std::string& data, const std::string& what) {
  if (!data.empty() && std::fwrite(data.data(), 1, data.size(), f) != data.size())
    return Status::Errorf("%s: write failed: %s", what.c_str(), std::strerror(errno));
  return Status::Ok();
}

Status close_checked(FILE* f, const std::string& path) {
  // fflush first: fclose's own error would hide which step failed, and errno is kept.
  const bool flushed = std::fflush(f) == 0 && !std::ferror(f);
  const int flush_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!flushed) return Status::Errorf("%s: write failed: %s", path.c_str(), std::strerror(flush_errno));
  if (!closed) return Status::Errorf("%s: write failed on close: %s", path.c_str(), std::strerror(errno));
  return Status::Ok();
}

Status write_file_checked(const std::string& path, const std::string& content) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return Status::Errorf("%s: cannot write: %s", path.c_str(), std::strerror(errno));
  if (Status s = write_checked(f, content, path); !s.ok()) {
    std::fclose(f);
    return s;
  }
  return close_checked(f, path);
}

Status finish_stdout() {
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    return Status::Errorf("stdout: write failed: %s", std::strerror(errno ? errno : EIO));
  return Status::Ok();
}

Status check_model_output_path(const std::string& out, const std::vector<std::string>& inputs,
                               bool allow_same_as_input) {
  namespace fs = std::filesystem;
  if (out.empty()) return Status::Error("the output path is empty");
  struct stat st {};
  if (lstat(out.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      return Status::Errorf(
          "%s: is a symbolic link; refusing to replace it (give the path of the file it points to, or remove the "
          "link)",
          out.c_str());
    if (S_ISDIR(st.st_mode)) return Status::Errorf("%s: is a directory; give a file name for the output", out.c_str());
    if (!S_ISREG(st.st_mode))
      return Status::Errorf("%s: is a device or special file, not a regular file; refusing to replace it", out.c_str());
  }
  std::error_code ec;
  for (const auto& in : inputs)
    if (!allow_same_as_input && fs::equivalent(in, out, ec))
      return Status::Errorf("%s: the output would replace the input; give another output path", out.c_str());
  fs::path dir = fs::path(out).parent_path();
  if (dir.empty()) dir = ".";
  if (!fs::is_directory(dir, ec))
    return Status::Errorf("%s: the folder %s does not exist", out.c_str(), dir.string().c_str());
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    return Status::Errorf("%s: cannot write in the folder %s: %s", out.c_str(), dir.string().c_str(),
                          std::strerror(errno));
  const std::string tmp = out + ".tmp";
  if (lstat(tmp.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return Status::Errorf("%s: exists and is not a regular file; the output is staged there, remove it first",
                          tmp.c_str());
  return Status::Ok();
}

namespace {
// Filled before the handlers are installed; read only by the handler.
constexpr int kMaxStagingFiles = 4;
char g_staging_paths[kMaxStagingFiles][4096];
int g_n_staging = 0;

void remove_staging_and_die(int sig) {
  for (int i = 0; i < g_n_staging; ++i) unlink(g_staging_paths[i]);  // async-signal-safe
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
}  // namespace

void remove_staging_file_on_signal(const std::string& out) {
  const std::string tmp = out + ".tmp";
  if (tmp.size() >= sizeof(g_staging_paths[0]) || g_n_staging == kMaxStagingFiles) return;
  std::memcpy(g_staging_paths[g_n_staging], tmp.c_str(), tmp.size() + 1);
  ++g_n_staging;
  struct sigaction sa {};
  sa.sa_handler = remove_staging_and_die;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

}  // namespace sf::cli
