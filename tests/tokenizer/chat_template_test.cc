// Chat templates: detection from tokenizer.chat_template, rendering of each family, the
// error for unknown templates, lookup by name, and tokenization of a rendered prompt.
#include "tokenizer/chat_template.h"

#include <gtest/gtest.h>

#include "tokenizer_test_util.h"

namespace sf {
namespace {

const std::vector<ChatMessage> kConversation = {
    {"system", "You are terse."},
    {"user", "Hi"},
    {"assistant", "Hello."},
    {"user", "Bye"},
};

std::string render(const std::string& name, bool gen = true) {
  auto t = ChatTemplate::from_name(name);
  EXPECT_TRUE(t.ok()) << t.status().message();
  if (!t.ok()) return "";
  auto text = t->render(kConversation, gen);
  EXPECT_TRUE(text.ok()) << text.status().message();
  return text.ok() ? *text : "";
}

TEST(ChatTemplate, RendersChatML) {
  EXPECT_EQ(render("chatml"),
            "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(render("qwen", false),
            "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n");
}

TEST(ChatTemplate, RendersLlama3) {
  EXPECT_EQ(render("llama3"),
            "<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, RendersLlama2Variants) {
  EXPECT_EQ(render("llama2"), "[INST] You are terse.\nHi [/INST]Hello.</s>[INST] Bye [/INST]");
  EXPECT_EQ(render("llama2-sys"), "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST]Hello.</s>[INST] Bye [/INST]");
  EXPECT_EQ(render("llama2-sys-bos"),
            "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\nHi [/INST]Hello.</s><s>[INST] Bye [/INST]");
}

TEST(ChatTemplate, RendersMistral) {
  EXPECT_EQ(render("mistral-v1"), " [INST] You are terse.\n\nHi [/INST] Hello.</s> [INST] Bye [/INST]");
  EXPECT_EQ(render("mistral"), "[INST] You are terse.\n\nHi[/INST] Hello.</s>[INST] Bye[/INST]");
  EXPECT_EQ(render("mistral-v3-tekken"), "[INST]You are terse.\n\nHi[/INST]Hello.</s>[INST]Bye[/INST]");
  EXPECT_EQ(render("mistral-v7"),
            "[SYSTEM_PROMPT] You are terse.[/SYSTEM_PROMPT][INST] Hi[/INST] Hello.</s>[INST] Bye[/INST]");
}

TEST(ChatTemplate, RendersPhi3AndZephyr) {
  EXPECT_EQ(render("phi3"),
            "<|system|>\nYou are terse.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello.<|end|>\n"
            "<|user|>\nBye<|end|>\n<|assistant|>\n");
  EXPECT_EQ(render("zephyr"),
            "<|system|>\nYou are terse.<|endoftext|>\n<|user|>\nHi<|endoftext|>\n"
            "<|assistant|>\nHello.<|endoftext|>\n<|user|>\nBye<|endoftext|>\n<|assistant|>\n");
}

TEST(ChatTemplate, DetectsFamiliesFromJinja) {
  const std::pair<const char*, const char*> cases[] = {
      {"{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
       "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}",
       "chatml"},
      {"{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + "
       "'<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}",
       "llama3"},
      {"{% if messages[0]['role'] == 'system' %}{{ '<<SYS>>\\n' + system_message + "
       "'\\n<</SYS>>\\n\\n' }}{% endif %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}",
       "llama2-sys-strip"},
      {"{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
       "{{ '[INST] ' + message['content'] + ' [/INST]' }}{% else %}{{ message['content'] + "
       "eos_token}}{% endif %}{% endfor %}",
       "llama2"},
      {"{%- if messages[0]['role'] == 'system' %}{{- bos_token }}{%- for message in loop_messages %}"
       "{{- '[AVAILABLE_TOOLS] [' }}{{- '[INST] ' + message['content'] + '[/INST]' }}",
       "mistral-v3"},
      {"{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
       "{{'<|user|>' + '\\n' + message['content'] + '<|end|>' + '\\n' + '<|assistant|>' + '\\n'}}"
       "{% endif %}{% endfor %}",
       "phi3"},
      {"{% for message in messages %}\\n{% if message['role'] == 'user' %}\\n{{ '<|user|>\\n' + "
       "message['content'] + eos_token }}\\n{% elif message['role'] == 'assistant' %}\\n"
       "{{ '<|assistant|>\\n'  + message['content'] + eos_token }}{% endif %}{% endfor %}",
       "zephyr"},
      {"llama3", "llama3"},
  };
  for (const auto& [jinja, expected] : cases) {
    auto t = ChatTemplate::detect(jinja);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->name(), expected) << jinja;
  }
}

TEST(ChatTemplate, UnknownTemplateIsReported) {
  auto t = ChatTemplate::detect("{% for m in messages %}<start_of_turn>{{ m.content }}{% endfor %}");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("unsupported chat template"), std::string::npos);
  EXPECT_NE(t.status().message().find("--chat-template"), std::string::npos);
  auto n = ChatTemplate::from_name("no-such");
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("chatml"), std::string::npos);
  auto role = ChatTemplate::from_name("chatml")->render({{"tool", "x"}}, true);
  EXPECT_FALSE(role.ok());
}

TEST(ChatTemplate, Phi3ModelTemplateDetectedAndTokenized) {
  if (!test::vocab_present("phi-3")) GTEST_SKIP();
  auto tok = test::load_vocab("phi-3");
  ASSERT_TRUE(tok.has_value());
  auto t = ChatTemplate::for_tokenizer(*tok);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->kind(), ChatTemplateKind::kPhi3);
  auto prompt = t->render({{"user", "Hi"}}, true);
  ASSERT_TRUE(prompt.ok());
  auto ids = tok->encode(*prompt, /*add_special=*/true, /*parse_special=*/true);
  ASSERT_TRUE(ids.ok());
  // BOS, <|user|>, "Hi" (after the rstrip of "\n"), <|end|>, <|assistant|>.
  ASSERT_GE(ids->size(), 5u);
  EXPECT_EQ((*ids)[0], tok->bos_id());
  EXPECT_EQ((*ids)[1], tok->find_token("<|user|>"));
  EXPECT_EQ(ids->back(), tok->find_token("<|assistant|>"));
  EXPECT_TRUE(tok->is_eog(tok->find_token("<|end|>")));
  // Overriding by name works even when the model has a template; no template is an error.
  EXPECT_EQ(ChatTemplate::for_tokenizer(*tok, "chatml")->name(), "chatml");
  if (test::vocab_present("gpt-2")) {
    auto gpt2 = test::load_vocab("gpt-2");
    auto none = ChatTemplate::for_tokenizer(*gpt2);
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.status().message().find("no chat template"), std::string::npos);
  }
}

}  // namespace
}  // namespace sf
