#include "cli/cli_common.h"

#include <functional>

#include "cli/llama_compat.h"
#include "cli/version.h"

namespace sf::cli {

bool parse_args(CLI::App& app, int argc, char** argv, int* exit_code) {
  auto args = normalize_llama_args(app, argc, argv);
  if (!args.ok()) {
    *exit_code = usage_error(args.status());
    return false;
  }
  // Every command answers --version, as llama.cpp's tools do.
  if (app.get_option_no_throw("--version") == nullptr)
    app.set_version_flag("--version", std::function<std::string()>(version_text),
                         "print the commit, build type and SIMD targets, and exit");
  try {
    // CLI11 takes the arguments in reverse order.
    std::vector<std::string> reversed(args->rbegin(), args->rend());
    app.parse(reversed);
    return true;
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    *exit_code = 0;
  } catch (const CLI::CallForVersion& e) {
    std::printf("%s", e.what());
    *exit_code = 0;
  } catch (const CLI::CallForAllHelp&) {
    std::printf("%s", app.help("", CLI::AppFormatMode::All).c_str());
    *exit_code = 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s (see '%s --help')\n", e.what(), app.get_name().c_str());
    *exit_code = 2;
  }
  return false;
}

}  // namespace sf::cli
