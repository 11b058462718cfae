#include "cli/prompt_text.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sf::cli {

std::string process_escapes(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char c = text[++i];
    switch (c) {
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case '0':
        out += '\0';
        break;
      case '\'':
      case '"':
      case '\\':
        out += c;
        break;
      case 'x': {
        auto hex = [](char h) { return std::isxdigit(static_cast<unsigned char>(h)) != 0; };
        if (i + 2 < text.size() && hex(text[i + 1]) && hex(text[i + 2])) {
          out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
          i += 2;
        } else {
          out += "\\x";
        }
        break;
      }
      default:
        out += '\\';
        out += c;
    }
  }
  return out;
}

Result<std::string> read_prompt_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Errorf("%s: cannot open the prompt file: %s", path.c_str(), std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::Errorf("%s: cannot read the prompt file", path.c_str());
  std::string text = ss.str();
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace sf::cli
