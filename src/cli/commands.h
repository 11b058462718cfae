// Entry points of the `specflash` subcommands. Each parses its own arguments (argv[0] is
// the subcommand name), writes its output to stdout and diagnostics to stderr, and returns
// the process exit code (0 ok, 1 runtime error, 2 usage error).
#pragma once

namespace sf::cli {
int run_command(int argc, char** argv);
int dump_command(int argc, char** argv);
int info_command(int argc, char** argv);
int quantize_command(int argc, char** argv);
int synth_command(int argc, char** argv);
int profile_command(int argc, char** argv);
int speed_command(int argc, char** argv);
int train_predictor_command(int argc, char** argv);
int train_adapter_command(int argc, char** argv);
int serve_command(int argc, char** argv);
}  // namespace sf::cli
