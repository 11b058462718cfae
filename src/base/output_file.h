// Output files that replace a good file only when completely written: writers create
// PATH.tmp with open_output_file(), write it through stdio, and commit_output_file()
// flushes it, syncs it to storage, closes it and renames it over PATH. Any failure on the
// way removes the temporary and leaves whatever was at PATH untouched. The fsync before the
// rename matters: without it a crash shortly after the rename can leave an empty or partial
// file under the final name on filesystems that delay allocation.
//
// The storage fault seam: tests install a WriteFault (ScopedWriteFault) and every output
// file opened while it is installed fails like a full disk after a given number of bytes,
// or at close. No LD_PRELOAD, no special filesystem; production code never installs one.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "base/status.h"

namespace sf {

// fopen(path, "wb"), or a file with the installed fault. nullptr with errno set on failure.
FILE* open_output_file(const std::string& path);

// Flushes, fsyncs and closes `f` (always closed), then renames tmp_path to final_path.
// `write_ok` is the writer's own record of its fwrite results. On any failure tmp_path is
// removed and the error names final_path with the system's reason.
// kCache skips the fsync: for a file that is rewritten often and may be lost (auto's
// profile after every generation), where a sync would add milliseconds to each request and
// a reader refuses a damaged file anyway.
enum class Durability { kSynced, kCache };
Status commit_output_file(FILE* f, bool write_ok, int write_errno, const std::string& tmp_path,
                          const std::string& final_path, Durability durability = Durability::kSynced);

// Closes `f` (if not null) and removes tmp_path: an abandoned write.
void abandon_output_file(FILE* f, const std::string& tmp_path);

struct WriteFault {
  uint64_t fail_after_bytes = UINT64_MAX;  // writes past this many bytes fail
  int error = 28;                          // errno of the failure: ENOSPC
  bool fail_on_close = false;              // close() fails (delayed allocation, NFS)
};

// Installs a fault for the output files opened during its lifetime (tests only; not
// thread-safe against concurrent writers being opened).
class ScopedWriteFault {
 public:
  explicit ScopedWriteFault(const WriteFault& fault);
  ~ScopedWriteFault();
  ScopedWriteFault(const ScopedWriteFault&) = delete;
  ScopedWriteFault& operator=(const ScopedWriteFault&) = delete;
};

}  // namespace sf
