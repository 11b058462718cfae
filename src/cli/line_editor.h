// A small line editor for `specflash chat` on a terminal, written here so chat needs no
// extra library: Left/Right (Ctrl-B/F), Home/End (Ctrl-A/E), Backspace, Delete, Ctrl-K/U/W
// to kill, Up/Down (Ctrl-P/N) through the history, Ctrl-C to drop the line, Ctrl-D on an
// empty line for end of input. UTF-8 characters move as one; wide characters are not
// measured (the cursor may drift on CJK text, the text itself is never damaged).
// The terminal is in raw mode only inside read_line, so outside it Ctrl-C is a SIGINT.
// Not thread-safe; one editor per terminal.
#pragma once

#include <string>
#include <vector>

namespace sf::cli {

class LineEditor {
 public:
  enum class Result { kLine, kInterrupted, kEndOfInput };

  // in_fd: the terminal to read keys from; out_fd: where the prompt and echo are drawn.
  LineEditor(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {}

  // Reads one line after showing `prompt`; the line (without newline) goes to *line.
  Result read_line(const std::string& prompt, std::string* line);
  // Adds a line to the history (empty lines and repeats of the last one are skipped).
  void add_history(const std::string& line);

 private:
  void refresh(const std::string& prompt, const std::string& buffer, size_t cursor) const;
  void write_out(const std::string& s) const;

  int in_fd_, out_fd_;
  std::vector<std::string> history_;
};

}  // namespace sf::cli
