// Every write the CLI makes is checked: a full disk or a closed pipe is an error with a
// non-zero exit, never a silent exit 0 with a truncated file. And the tools that write
// model files check their output path before hours of work, not after.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "base/status.h"

namespace sf::cli {

// Writes `content` to `path` (created or truncated) and checks every step including close.
Status write_file_checked(const std::string& path, const std::string& content);

// fwrite + a check; `what` names the destination in the error ("stdout", a path).
Status write_checked(FILE* f, const std::string& data, const std::string& what);

// Flushes stdout; error (naming errno) when any earlier write to it failed.
Status finish_stdout();

// Closes a file opened for writing; error when a write or the close failed.
Status close_checked(FILE* f, const std::string& path);

// For quantize, pack, synth and distill, before any work: OUT must not be a directory, a
// device or other special file, nor a symbolic link (the tools replace OUT by renaming
// OUT.tmp over it, which would silently cut the link); its folder must exist and be
// writable; and it must not be one of `inputs` unless allow_same_as_input.
Status check_model_output_path(const std::string& out, const std::vector<std::string>& inputs = {},
                               bool allow_same_as_input = false);

// Until the process exits, SIGINT, SIGTERM and SIGHUP remove OUT.tmp (the writers' staging
// file) before the process dies of the signal, so an interrupted run leaves nothing behind.
// Up to four files (a model and a training checkpoint); call once per file.
void remove_staging_file_on_signal(const std::string& out);

}  // namespace sf::cli
