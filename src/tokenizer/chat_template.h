// Chat templates: turn a conversation into the prompt text a chat model was trained on.
// The GGUF's tokenizer.chat_template is a Jinja program; like llama.cpp's built-in
// templates (llama-chat.cpp) we recognise the common families by markers in that text and
// render them with fixed C++ code instead of running Jinja:
//   chatml (Qwen, Yi, ...), llama2 (+ the <<SYS>> variants), llama3, mistral-v1/v3/
//   v3-tekken/v7, phi3, zephyr.
// The rendered text contains special-token text ("<|im_start|>", "[INST]"), so it must be
// tokenized with parse_special = true; BOS is not included (encode adds it).
//
// A ChatTemplate is an immutable value, safe to share between threads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace sf {

class Tokenizer;

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

enum class ChatTemplateKind {
  kChatML,
  kLlama2,          // [INST] ... [/INST]; a system message is folded into the first turn
  kLlama2Sys,       // ... with <<SYS>> blocks
  kLlama2SysBos,    // ... and <s> before every later [INST]
  kLlama2SysStrip,  // ... and message text trimmed
  kLlama3,
  kMistralV1,
  kMistralV3,
  kMistralV3Tekken,
  kMistralV7,
  kPhi3,
  kZephyr,
};

class ChatTemplate {
 public:
  // By name: "chatml" (alias "qwen"), "llama2", "llama2-sys", "llama2-sys-bos",
  // "llama2-sys-strip", "llama3", "mistral-v1", "mistral-v3", "mistral-v3-tekken",
  // "mistral-v7", "phi3", "zephyr"; aliases "qwen" (chatml) and "mistral" (mistral-v3).
  // Error lists the known names.
  static Result<ChatTemplate> from_name(std::string_view name);
  // From a Jinja template text (tokenizer.chat_template), or a template name. Error when it
  // matches none of the supported families.
  static Result<ChatTemplate> detect(std::string_view jinja);
  // The template to use for a model: `override_name` when not empty, else detected from the
  // tokenizer's metadata. Errors say how to pick one by name (--chat-template NAME).
  static Result<ChatTemplate> for_tokenizer(const Tokenizer& tokenizer, std::string_view override_name = "");
  static std::vector<std::string> known_names();

  ChatTemplateKind kind() const { return kind_; }
  const std::string& name() const { return name_; }

  // Renders the conversation; with add_generation_prompt the text ends where the
  // assistant's reply begins (templates whose user turn already ends there, like [/INST],
  // add nothing). Error for a role other than system/user/assistant.
  Result<std::string> render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

  // Text that ends an assistant turn in this format ("<|im_end|>", "</s>", ...), for chat
  // loops that stop on it in addition to the tokenizer's end-of-generation tokens.
  std::string end_of_turn() const;

 private:
  ChatTemplate(ChatTemplateKind kind, std::string name) : kind_(kind), name_(std::move(name)) {}
  ChatTemplateKind kind_;
  std::string name_;
  std::string eos_text_;  // the model's EOS text, when known (zephyr ends turns with it)
};

}  // namespace sf
