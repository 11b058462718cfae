// Prompt text as llama.cpp users expect it: -e style escapes and -f prompt files.
#pragma once

#include <string>

#include "base/status.h"

namespace sf::cli {

// Replaces \n \r \t \' \" \\ \a \b \f \v \0 and \xHH with the characters they name, as
// llama.cpp's --escape does; an unknown escape such as \q is kept as it is.
std::string process_escapes(const std::string& text);

// The prompt file's bytes with one trailing newline removed (an editor's final newline is
// not part of the prompt; llama.cpp's -f drops it the same way). Error: unreadable file.
Result<std::string> read_prompt_file(const std::string& path);

}  // namespace sf::cli
