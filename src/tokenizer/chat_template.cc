#include "tokenizer/chat_template.h"

#include <cctype>

#include "tokenizer/tokenizer.h"

namespace sf {
namespace {

struct NamedKind {
  const char* name;
  ChatTemplateKind kind;
};

constexpr NamedKind kNames[] = {
    {"chatml", ChatTemplateKind::kChatML},
    {"llama2", ChatTemplateKind::kLlama2},
    {"llama2-sys", ChatTemplateKind::kLlama2Sys},
    {"llama2-sys-bos", ChatTemplateKind::kLlama2SysBos},
    {"llama2-sys-strip", ChatTemplateKind::kLlama2SysStrip},
    {"llama3", ChatTemplateKind::kLlama3},
    {"mistral-v1", ChatTemplateKind::kMistralV1},
    {"mistral-v3", ChatTemplateKind::kMistralV3},
    {"mistral-v3-tekken", ChatTemplateKind::kMistralV3Tekken},
    {"mistral-v7", ChatTemplateKind::kMistralV7},
    {"phi3", ChatTemplateKind::kPhi3},
    {"zephyr", ChatTemplateKind::kZephyr},
};

constexpr NamedKind kAliases[] = {
    {"qwen", ChatTemplateKind::kChatML},
    {"mistral", ChatTemplateKind::kMistralV3},
};

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string known_list() {
  std::string s;
  for (const auto& n : kNames) s += (s.empty() ? "" : ", ") + std::string(n.name);
  return s;
}

}  // namespace

std::vector<std::string> ChatTemplate::known_names() {
  std::vector<std::string> names;
  for (const auto& n : kNames) names.emplace_back(n.name);
  return names;
}

Result<ChatTemplate> ChatTemplate::from_name(std::string_view name) {
  for (const auto& n : kNames) {
    if (name == n.name) return ChatTemplate(n.kind, n.name);
  }
  for (const auto& a : kAliases) {
    if (name == a.name) {
      for (const auto& n : kNames) {
        if (n.kind == a.kind) return ChatTemplate(n.kind, n.name);
      }
    }
  }
  return Status::Errorf("unknown chat template '%s' (known: %s)", std::string(name).c_str(), known_list().c_str());
}

Result<ChatTemplate> ChatTemplate::detect(std::string_view t) {
  // A name stored in place of a Jinja program (llama.cpp allows it too).
  if (auto named = from_name(trim(t)); named.ok()) return named;
  auto has = [&](std::string_view marker) { return t.find(marker) != std::string_view::npos; };
  // The markers and their order follow llama.cpp's llm_chat_detect_template.
  if (has("<|im_start|>") && !has("<|im_sep|>") && !has("<end_of_utterance>")) {
    return from_name("chatml");
  }
  if (t.substr(0, 7) == "mistral" || has("[INST]")) {
    if (has("[SYSTEM_PROMPT]")) return from_name("mistral-v7");
    if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]")) {
      if (has(" [INST]")) return from_name("mistral-v1");
      if (has("\"[INST]\"")) return from_name("mistral-v3-tekken");
      return from_name("mistral-v3");
    }
    if (has("content.strip()")) return from_name("llama2-sys-strip");
    if (has("bos_token + '[INST]")) return from_name("llama2-sys-bos");
    if (has("<<SYS>>")) return from_name("llama2-sys");
    return from_name("llama2");
  }
  if (has("<|assistant|>") && has("<|end|>")) return from_name("phi3");
  // Zephyr ends every turn with EOS; llama.cpp looks for <|endoftext|> (StableLM Zephyr),
  // the Hugging Face Zephyr template spells it eos_token right after the user's text.
  if (has("<|user|>") && (has("<|endoftext|>") || has("message['content'] + eos_token"))) {
    return from_name("zephyr");
  }
  if (has("<|start_header_id|>") && has("<|end_header_id|>")) return from_name("llama3");
  std::string head(t.substr(0, 60));
  for (char& c : head) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return Status::Errorf(
      "unsupported chat template in the model (tokenizer.chat_template starts with \"%s...\"); "
      "pick one by name with --chat-template NAME (known: %s)",
      head.c_str(), known_list().c_str());
}

Result<ChatTemplate> ChatTemplate::for_tokenizer(const Tokenizer& tokenizer, std::string_view override_name) {
  Result<ChatTemplate> chosen = Status::Error("");
  if (!override_name.empty()) {
    chosen = from_name(override_name);
  } else if (tokenizer.spec().chat_template.empty()) {
    return Status::Errorf(
        "the model has no chat template (tokenizer.chat_template is missing); pick one by name "
        "with --chat-template NAME (known: %s)",
        known_list().c_str());
  } else {
    chosen = detect(tokenizer.spec().chat_template);
  }
  if (!chosen.ok()) return chosen;
  ChatTemplate result = std::move(chosen).value();
  if (tokenizer.eos_id() >= 0) result.eos_text_ = tokenizer.token_text(tokenizer.eos_id());
  return result;
}

std::string ChatTemplate::end_of_turn() const {
  switch (kind_) {
    case ChatTemplateKind::kChatML:
      return "<|im_end|>";
    case ChatTemplateKind::kLlama3:
      return "<|eot_id|>";
    case ChatTemplateKind::kPhi3:
      return "<|end|>";
    case ChatTemplateKind::kZephyr:
      return eos_text_.empty() ? "<|endoftext|>" : eos_text_;
    default:
      return "</s>";
  }
}

Result<std::string> ChatTemplate::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  for (const ChatMessage& m : messages) {
    if (m.role != "system" && m.role != "user" && m.role != "assistant") {
      return Status::Errorf("chat message role '%s' is not one of system, user, assistant", m.role.c_str());
    }
  }
  std::string out;
  switch (kind_) {
    case ChatTemplateKind::kChatML:
      for (const auto& m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      if (add_generation_prompt) out += "<|im_start|>assistant\n";
      break;
    case ChatTemplateKind::kLlama3:
      for (const auto& m : messages) {
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
      }
      if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      break;
    case ChatTemplateKind::kPhi3:
      for (const auto& m : messages) out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
      if (add_generation_prompt) out += "<|assistant|>\n";
      break;
    case ChatTemplateKind::kZephyr: {
      const std::string eos = end_of_turn();
      for (const auto& m : messages) out += "<|" + m.role + "|>\n" + m.content + eos + "\n";
      if (add_generation_prompt) out += "<|assistant|>\n";
      break;
    }
    case ChatTemplateKind::kLlama2:
    case ChatTemplateKind::kLlama2Sys:
    case ChatTemplateKind::kLlama2SysBos:
    case ChatTemplateKind::kLlama2SysStrip: {
      const bool system_blocks = kind_ != ChatTemplateKind::kLlama2;
      const bool bos_inside = kind_ == ChatTemplateKind::kLlama2SysBos;
      const bool strip = kind_ == ChatTemplateKind::kLlama2SysStrip;
      bool inside_turn = true;  // the first [INST] follows the BOS that encode() adds
      out += "[INST] ";
      for (const auto& m : messages) {
        const std::string content = strip ? trim(m.content) : m.content;
        if (!inside_turn) {
          inside_turn = true;
          out += bos_inside ? "<s>[INST] " : "[INST] ";
        }
        if (m.role == "system") {
          out += system_blocks ? "<<SYS>>\n" + content + "\n<</SYS>>\n\n" : content + "\n";
        } else if (m.role == "user") {
          out += content + " [/INST]";
        } else {
          out += content + "</s>";
          inside_turn = false;
        }
      }
      break;
    }
    case ChatTemplateKind::kMistralV1:
    case ChatTemplateKind::kMistralV3:
    case ChatTemplateKind::kMistralV3Tekken: {
      const std::string lead = kind_ == ChatTemplateKind::kMistralV1 ? " " : "";
      const std::string trail = kind_ == ChatTemplateKind::kMistralV3Tekken ? "" : " ";
      const bool trim_assistant = kind_ == ChatTemplateKind::kMistralV3;
      bool inside_turn = false;
      for (const auto& m : messages) {
        if (!inside_turn) {
          out += lead + "[INST]" + trail;
          inside_turn = true;
        }
        if (m.role == "system") {
          out += m.content + "\n\n";
        } else if (m.role == "user") {
          out += m.content + lead + "[/INST]";
        } else {
          out += trail + (trim_assistant ? trim(m.content) : m.content) + "</s>";
          inside_turn = false;
        }
      }
      break;
    }
    case ChatTemplateKind::kMistralV7:
      for (const auto& m : messages) {
        if (m.role == "system") {
          out += "[SYSTEM_PROMPT] " + m.content + "[/SYSTEM_PROMPT]";
        } else if (m.role == "user") {
          out += "[INST] " + m.content + "[/INST]";
        } else {
          out += " " + m.content + "</s>";
        }
      }
      break;
  }
  return out;
}

}  // namespace sf
