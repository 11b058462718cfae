// Request parsing: every field lands in the config, defaults are OpenAI's, unknown fields
// are ignored, and each wrong type or range is a 400 naming the field.
#include "server/completion_request.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace sf::server {
namespace {

CompletionRequest ok(const std::string& body, Endpoint e = Endpoint::kCompletion) {
  auto r = parse_completion_request(body, e);
  if (auto* err = std::get_if<ApiError>(&r)) {
    ADD_FAILURE() << body << " -> " << err->message;
    return {};
  }
  return std::get<CompletionRequest>(r);
}

ApiError bad(const std::string& body, Endpoint e = Endpoint::kCompletion) {
  auto r = parse_completion_request(body, e);
  if (!std::holds_alternative<ApiError>(r)) {
    ADD_FAILURE() << body << " was accepted";
    return {};
  }
  return std::get<ApiError>(r);
}

TEST(CompletionRequest, ParsesEveryField) {
  const auto r = ok(R"({"model":"m","prompt":"hi","max_tokens":7,"temperature":0.5,"top_p":0.9,"top_k":12,
    "min_p":0.1,"seed":99,"stop":["a","bc"],"stream":true,"stream_options":{"include_usage":true},
    "specflash":{"method":"tree","draft_len":3}})");
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.prompt, "hi");
  EXPECT_EQ(r.max_tokens.value_or(-1), 7);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_EQ(r.sampling.top_k, 12);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.1f);
  EXPECT_EQ(r.sampling.seed, 99u);
  EXPECT_TRUE(r.seed_given);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"a", "bc"}));
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.spec.method, SpecConfig::Method::kTree);
  EXPECT_EQ(r.spec.draft_len, 3);
  EXPECT_FALSE(r.spec.disable);
}

TEST(CompletionRequest, DefaultsAreOpenAIs) {
  const auto r = ok(R"({"prompt":"hi","unknown_field":{"x":[1,2]},"logit_bias":{},"user":"u","top_k":null})");
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_FLOAT_EQ(r.sampling.temperature, 1.0f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 1.0f);
  EXPECT_EQ(r.sampling.top_k, 0);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.0f);
  EXPECT_FALSE(r.seed_given);
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.spec.active());
}

TEST(CompletionRequest, ChatMessagesAndContentParts) {
  const auto r = ok(R"({"messages":[{"role":"developer","content":"be brief"},
    {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]})",
                    Endpoint::kChat);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[1].content, "ab");
}

TEST(CompletionRequest, IntegersMayBeWholeFloatsAndPromptAOneStringArray) {
  const auto r = ok(R"({"prompt":["x"],"max_tokens":5.0,"stop":"s","specflash":{"method":"none"}})");
  EXPECT_EQ(r.prompt, "x");
  EXPECT_EQ(r.max_tokens.value_or(-1), 5);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"s"}));
  EXPECT_TRUE(r.spec.disable);
}

TEST(CompletionRequest, ErrorsNameTheField) {
  struct Case {
    const char* body;
    const char* param;
  } cases[] = {
      {R"({"prompt":"x","max_tokens":"5"})", "max_tokens"},
      {R"({"prompt":"x","max_tokens":5.5})", "max_tokens"},
      {R"({"prompt":"x","max_tokens":-1})", "max_tokens"},
      {R"({"prompt":"x","temperature":"0"})", "temperature"},
      {R"({"prompt":"x","temperature":2.5})", "temperature"},
      {R"({"prompt":"x","top_p":-0.1})", "top_p"},
      {R"({"prompt":"x","top_k":true})", "top_k"},
      {R"({"prompt":"x","min_p":2})", "min_p"},
      {R"({"prompt":"x","seed":"1"})", "seed"},
      {R"({"prompt":"x","stop":[""]})", "stop"},
      {R"({"prompt":"x","stop":{"a":1}})", "stop"},
      {R"({"prompt":"x","stream":1})", "stream"},
      {R"({"prompt":"x","stream_options":{"include_usage":"yes"}})", "stream_options.include_usage"},
      {R"({"prompt":"x","n":3})", "n"},
      {R"({"prompt":"x","model":[]})", "model"},
      {R"({"prompt":[1,2,3]})", "prompt"},
      {R"({"prompt":"x","specflash":{"method":"beam"}})", "specflash.method"},
      {R"({"prompt":"x","specflash":{"draft_len":65}})", "specflash.draft_len"},
      {R"({"max_tokens":3})", "prompt"},
  };
  for (const auto& c : cases) {
    const ApiError e = bad(c.body);
    EXPECT_EQ(e.http_status, 400) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    EXPECT_EQ(e.type, "invalid_request_error");
    EXPECT_NE(e.message.find('\''), std::string::npos) << "the message quotes the field: " << e.message;
  }
  EXPECT_EQ(bad(R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})", Endpoint::kChat).param,
            "messages[0].content");
  EXPECT_EQ(bad(R"({"messages":{}})", Endpoint::kChat).param, "messages");
}

TEST(CompletionRequest, MalformedJsonIsInvalidJson) {
  for (const char* body : {"", "{", "[]", "\"x\"", "{\"prompt\": \"x\",}"}) {
    const ApiError e = bad(body);
    EXPECT_EQ(e.http_status, 400);
    EXPECT_EQ(e.code, "invalid_json") << body;
  }
}

// Random corruptions of a valid body (bytes replaced, inserted, cut; nesting) are either
// accepted or a 400, never an exception or a crash.
TEST(CompletionRequest, CorruptedBodiesNeverThrow) {
  const std::string valid =
      R"({"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"max_tokens":7,)"
      R"("temperature":0.5,"stop":["a"],"stream":true,"stream_options":{"include_usage":true},)"
      R"("specflash":{"method":"tree","draft_len":3},"seed":-5})";
  const std::string alphabet = "{}[]\":,0123456789.-+eE truefalsn\\\x80\xff";
  std::mt19937 rng(7);
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string body = valid;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !body.empty(); ++e) {
      const size_t pos = rng() % body.size();
      switch (rng() % 3) {
        case 0:
          body[pos] = alphabet[rng() % alphabet.size()];
          break;
        case 1:
          body.insert(pos, 1, alphabet[rng() % alphabet.size()]);
          break;
        default:
          body.resize(pos);
      }
    }
    for (Endpoint endpoint : {Endpoint::kChat, Endpoint::kCompletion}) {
      std::variant<CompletionRequest, ApiError> r;
      ASSERT_NO_THROW(r = parse_completion_request(body, endpoint)) << body;
      if (auto* err = std::get_if<ApiError>(&r)) {
        EXPECT_EQ(err->http_status, 400) << body;
        ++rejected;
      } else {
        ++accepted;
      }
    }
  }
  EXPECT_GT(accepted, 0);  // some edits keep the body valid (e.g. a digit changed)
  EXPECT_GT(rejected, 0);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(std::get<ApiError>(parse_completion_request(deep, Endpoint::kChat)).code, "invalid_json");
}

TEST(ApiError, SerialisesLikeOpenAI) {
  const auto j = ApiError::not_found("no such model", "model", "model_not_found").to_json();
  EXPECT_EQ(j["error"]["message"], "no such model");
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["param"], "model");
  EXPECT_EQ(j["error"]["code"], "model_not_found");
  const auto k = ApiError::bad_request("x").to_json();
  EXPECT_TRUE(k["error"]["param"].is_null());
  EXPECT_TRUE(k["error"]["code"].is_null());
}

}  // namespace
}  // namespace sf::server
