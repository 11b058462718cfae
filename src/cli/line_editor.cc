#include "cli/line_editor.h"

#include <termios.h>
#include <unistd.h>

#include <cerrno>

namespace sf::cli {
namespace {

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Display columns of UTF-8 text: one per character.
size_t columns(const std::string& s, size_t begin, size_t end) {
  size_t n = 0;
  for (size_t i = begin; i < end; ++i) n += !is_continuation(s[i]);
  return n;
}

size_t prev_char(const std::string& s, size_t i) {
  if (i == 0) return 0;
  do --i;
  while (i > 0 && is_continuation(s[i]));
  return i;
}

size_t next_char(const std::string& s, size_t i) {
  if (i >= s.size()) return s.size();
  do ++i;
  while (i < s.size() && is_continuation(s[i]));
  return i;
}

// Raw mode for the lifetime of the object; the previous settings come back on every exit.
class RawMode {
 public:
  explicit RawMode(int fd) : fd_(fd) {
    if (tcgetattr(fd_, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_iflag &= ~static_cast<tcflag_t>(BRKINT | ICRNL | INPCK | ISTRIP | IXON);
    raw.c_lflag &= ~static_cast<tcflag_t>(ECHO | ICANON | IEXTEN | ISIG);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    active_ = tcsetattr(fd_, TCSAFLUSH, &raw) == 0;
  }
  ~RawMode() {
    if (active_) tcsetattr(fd_, TCSAFLUSH, &saved_);
  }

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

// One byte from fd; false at end of input or on an error other than EINTR.
bool read_byte(int fd, char* c) {
  while (true) {
    const ssize_t n = read(fd, c, 1);
    if (n == 1) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

}  // namespace

void LineEditor::write_out(const std::string& s) const {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = write(out_fd_, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void LineEditor::refresh(const std::string& prompt, const std::string& buffer, size_t cursor) const {
  // Redraw the whole line, clear what was after it, then step back to the cursor.
  std::string s = "\r" + prompt + buffer + "\x1b[K";
  const size_t back = columns(buffer, cursor, buffer.size());
  if (back > 0) s += "\x1b[" + std::to_string(back) + "D";
  write_out(s);
}

void LineEditor::add_history(const std::string& line) {
  if (line.empty() || (!history_.empty() && history_.back() == line)) return;
  history_.push_back(line);
}

LineEditor::Result LineEditor::read_line(const std::string& prompt, std::string* line) {
  RawMode raw(in_fd_);
  std::string buffer;
  size_t cursor = 0;
  // Browsing the history edits copies; index history_.size() is the new line being typed.
  std::vector<std::string> lines = history_;
  lines.push_back("");
  size_t index = lines.size() - 1;
  auto show = [&](size_t i) {
    lines[index] = buffer;
    index = i;
    buffer = lines[index];
    cursor = buffer.size();
  };
  refresh(prompt, buffer, cursor);
  char c = 0;
  while (read_byte(in_fd_, &c)) {
    switch (c) {
      case '\r':
      case '\n':
        write_out("\r\n");
        *line = buffer;
        return Result::kLine;
      case 3:  // Ctrl-C
        write_out("^C\r\n");
        line->clear();
        return Result::kInterrupted;
      case 4:  // Ctrl-D: end of input on an empty line, else delete forward
        if (buffer.empty()) {
          write_out("\r\n");
          return Result::kEndOfInput;
        }
        buffer.erase(cursor, next_char(buffer, cursor) - cursor);
        break;
      case 127:
      case 8: {  // Backspace
        const size_t p = prev_char(buffer, cursor);
        buffer.erase(p, cursor - p);
        cursor = p;
        break;
      }
      case 1:
        cursor = 0;
        break;  // Ctrl-A
      case 5:
        cursor = buffer.size();
        break;  // Ctrl-E
      case 2:
        cursor = prev_char(buffer, cursor);
        break;  // Ctrl-B
      case 6:
        cursor = next_char(buffer, cursor);
        break;  // Ctrl-F
      case 11:
        buffer.erase(cursor);
        break;  // Ctrl-K
      case 21:
        buffer.erase(0, cursor), cursor = 0;
        break;  // Ctrl-U
      case 16:
        if (index > 0) show(index - 1);
        break;  // Ctrl-P
      case 14:
        if (index + 1 < lines.size()) show(index + 1);
        break;    // Ctrl-N
      case 23: {  // Ctrl-W: the word before the cursor
        size_t p = cursor;
        while (p > 0 && buffer[p - 1] == ' ') --p;
        while (p > 0 && buffer[p - 1] != ' ') --p;
        buffer.erase(p, cursor - p);
        cursor = p;
        break;
      }
      case 27: {  // escape sequences: ESC [ X, ESC O X, ESC [ n ~
        char a = 0, b = 0;
        if (!read_byte(in_fd_, &a) || !read_byte(in_fd_, &b)) break;
        if (a == '[' && b >= '0' && b <= '9') {
          char t = 0;
          if (!read_byte(in_fd_, &t) || t != '~') break;
          if (b == '3') buffer.erase(cursor, next_char(buffer, cursor) - cursor);  // Delete
          if (b == '1' || b == '7') cursor = 0;                                    // Home
          if (b == '4' || b == '8') cursor = buffer.size();                        // End
        } else if (a == '[' || a == 'O') {
          if (b == 'A' && index > 0) show(index - 1);
          if (b == 'B' && index + 1 < lines.size()) show(index + 1);
          if (b == 'C') cursor = next_char(buffer, cursor);
          if (b == 'D') cursor = prev_char(buffer, cursor);
          if (b == 'H') cursor = 0;
          if (b == 'F') cursor = buffer.size();
        }
        break;
      }
      default:
        if (static_cast<unsigned char>(c) >= 32 || c == '\t') {
          buffer.insert(cursor, 1, c);
          ++cursor;
        }
    }
    refresh(prompt, buffer, cursor);
  }
  // The terminal closed: whatever was typed is the last line.
  write_out("\r\n");
  if (buffer.empty()) return Result::kEndOfInput;
  *line = buffer;
  return Result::kLine;
}

}  // namespace sf::cli
