// `specflash chat` as a person uses it: on a pseudo-terminal for the line editor (arrow
// keys, history, multi-line input) and Ctrl-C, and with piped input for the default
// model's fallback format, context shifting and the session flags it shares with run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "gguf/per_test_scratch.h"
#include "specflash_runner.h"
#include "test_paths.h"

namespace sf {
namespace {

std::string stories() { return sf::test::source_path("models/stories260K.gguf"); }
std::string draft() { return sf::test::source_path("models/stories260K-draft.gguf"); }

// The editor draws an empty prompt exactly once per message: carriage return, the prompt,
// clear to the end of the line. Redraws while typing are followed by text instead.
const char* const kPrompt = "\r> \x1b[K";
const char* const kContinuation = "\r... \x1b[K";

// specflash on the slave side of a pty; the test plays the terminal.
class PtyChat {
 public:
  explicit PtyChat(const std::vector<std::string>& args) {
    winsize ws{};
    ws.ws_col = 200;
    ws.ws_row = 50;
    pid_ = forkpty(&master_, nullptr, nullptr, &ws);
    if (pid_ == 0) {
      std::vector<std::string> all = {sf::test::binary_path("specflash")};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~PtyChat() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) close(master_);
  }
  bool started() const { return pid_ > 0; }

  void send(const std::string& keys) { ASSERT_EQ(write(master_, keys.data(), keys.size()), ssize_t(keys.size())); }

  // Reads until `text` appears after the last match; false after timeout_s.
  bool wait_for(const std::string& text, double timeout_s = 20) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (true) {
      const size_t at = output_.find(text, consumed_);
      if (at != std::string::npos) {
        consumed_ = at + text.size();
        return true;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{master_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(master_, buf, sizeof(buf));
      if (n <= 0) return output_.find(text, consumed_) != std::string::npos;
      output_.append(buf, static_cast<size_t>(n));
    }
  }

  // Exit code once the process ends (drains the pty meanwhile); -1 after timeout_s.
  int wait_exit(double timeout_s = 20) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      wait_for("\x01never\x01", 0.05);
    }
    return -1;
  }
  const std::string& output() const { return output_; }

 private:
  int master_ = -1;
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string output_;
  size_t consumed_ = 0;
};

TEST(ChatPty, LineEditingHistoryAndMultiLineInput) {
  PtyChat chat({"chat", "-m", stories(), "--temp", "0", "-n", "4"});
  ASSERT_TRUE(chat.started());
  ASSERT_TRUE(chat.wait_for(kPrompt)) << chat.output();
  // Left twice, then insert: "abc" becomes "aZbc".
  chat.send("abc\x1b[D\x1b[DZ\r");
  ASSERT_TRUE(chat.wait_for(kPrompt)) << chat.output();
  // Up recalls "aZbc"; Backspace twice, Home, insert X: "XaZ".
  chat.send("\x1b[A\x7f\x7f\x01X\r");
  ASSERT_TRUE(chat.wait_for(kPrompt)) << chat.output();
  // A trailing backslash continues the message on the next line.
  chat.send("line one\\\r");
  ASSERT_TRUE(chat.wait_for(kContinuation)) << chat.output();
  chat.send("line two\r");
  ASSERT_TRUE(chat.wait_for(kPrompt)) << chat.output();
  chat.send("/history\r");
  ASSERT_TRUE(chat.wait_for("[user] aZbc")) << chat.output();
  ASSERT_TRUE(chat.wait_for("[user] XaZ")) << chat.output();
  ASSERT_TRUE(chat.wait_for("[user] line one\r\nline two")) << chat.output();
  ASSERT_TRUE(chat.wait_for(kPrompt)) << chat.output();
  chat.send("/exit\r");
  EXPECT_EQ(chat.wait_exit(), 0) << chat.output();
}

TEST(ChatPty, CtrlCStopsTheReplyAndKeepsTheConversation) {
  // Streaming every layer at an emulated 2 MB/s makes each token take about half a second,
  // so the reply is still running when Ctrl-C arrives.
  PtyChat chat({"chat", "-m", stories(), "--temp", "0", "-n", "400", "--ignore-eos", "--mem-budget", "0%",
                "--io-bandwidth", "2M"});
  ASSERT_TRUE(chat.started());
  ASSERT_TRUE(chat.wait_for(kPrompt)) << chat.output();
  chat.send("Once upon a time\r");
  ASSERT_TRUE(chat.wait_for("Once upon a time\x1b[K\r")) << chat.output();
  const auto t0 = std::chrono::steady_clock::now();
  chat.wait_for("\x01never\x01", 3.0);  // let the reply run
  chat.send("\x03");
  ASSERT_TRUE(chat.wait_for("(reply stopped; it stays in the conversation)", 10)) << chat.output();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  ASSERT_TRUE(chat.wait_for(kPrompt)) << chat.output();
  chat.send("/history\r");
  ASSERT_TRUE(chat.wait_for("[user] Once upon a time")) << chat.output();
  ASSERT_TRUE(chat.wait_for("[assistant] ")) << chat.output();
  ASSERT_TRUE(chat.wait_for(kPrompt)) << chat.output();
  // Ctrl-C at an empty prompt quits cleanly.
  chat.send("\x03");
  EXPECT_EQ(chat.wait_exit(), 0) << chat.output();
}

sf::test::CommandResult chat_with_input(const std::vector<std::string>& args, const std::string& input) {
  const std::string dir = sf::test::per_test_scratch_dir();
  const std::string in = dir + "/input.txt";
  std::ofstream(in) << input;
  return sf::test::run_specflash_io(args, dir, in);
}

TEST(ChatPiped, WorksWithNoArgumentsOnTheDefaultModel) {
  const auto r = chat_with_input({"chat", "-n", "8"}, "Hello there\n/exit\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("no chat template; using the plain 'User:/Assistant:' transcript"), std::string::npos) << r.err;
  EXPECT_FALSE(r.out.empty());
}

TEST(ChatPiped, LongConversationsShiftInsteadOfFailing) {
  std::string input;
  for (int i = 0; i < 10; ++i) input += "Tell me a story about a dog and a cat number " + std::to_string(i) + "\n";
  const auto r = chat_with_input({"chat", "-m", stories(), "-c", "96", "-n", "16", "--temp", "0"}, input);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("error:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("note: the conversation outgrew the context of 96 tokens; dropped the"), std::string::npos)
      << r.err;
}

TEST(ChatPiped, SharesRunsSessionFlags) {
  const auto r = chat_with_input({"chat", "-m", stories(), "--temp", "0", "-n", "16", "--draft", draft(),
                                  "--mem-budget", "50%", "--stats", "-ngl", "99"},
                                 "Once upon a time\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("speculative:      auto"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("streaming:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("note: --n-gpu-layers does nothing"), std::string::npos) << r.err;
  // The same reply without the draft: speculation is lossless in chat too.
  const auto plain = chat_with_input({"chat", "-m", stories(), "--temp", "0", "-n", "16"}, "Once upon a time\n");
  EXPECT_EQ(plain.out, r.out);
}

TEST(ChatPiped, CtrlCDuringALongPrefillStopsIt) {
  const std::string dir = sf::test::per_test_scratch_dir();
  std::string message;
  for (int i = 0; i < 100; ++i) message += "Once upon a time there was a dog. ";
  std::ofstream(dir + "/in.txt") << message << "\n";
  const std::string err = dir + "/err.txt";
  const pid_t pid = fork();
  if (pid == 0) {
    const int in = open((dir + "/in.txt").c_str(), O_RDONLY);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = open("/dev/null", O_WRONLY);
    dup2(in, 0);
    dup2(null, 1);
    dup2(e, 2);
    // Four 256-token chunks, each a pass over every layer at an emulated 1 MB/s.
    execl(sf::test::binary_path("specflash").c_str(), "specflash", "chat", "-m", stories().c_str(), "-c", "2048",
          "--mem-budget", "0%", "--io-bandwidth", "1M", static_cast<char*>(nullptr));
    _exit(127);
  }
  usleep(1500 * 1000);
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string text = sf::test::read_file(err);
  ASSERT_TRUE(WIFEXITED(status)) << text;
  EXPECT_EQ(WEXITSTATUS(status), 0) << text;
  EXPECT_NE(text.find("(stopped before the reply began; the message was not sent)"), std::string::npos) << text;
}

}  // namespace
}  // namespace sf
