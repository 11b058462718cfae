#include "fuzz_entry_points.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string_view>

#include "base/thread_pool.h"
#include "cli/chat_format.h"
#include "gguf/gguf_file.h"
#include "model/hparams.h"
#include "model/model.h"
#include "server/completion_request.h"
#include "spec/draft_model_drafter.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace sf::fuzz {
namespace {

struct Resources {
  std::vector<std::string> vocab_names;
  std::vector<Tokenizer> vocabs;
  std::unique_ptr<Tokenizer> target_vocab;  // stories260K, the draft target
  int target_n_vocab = 0;
  std::unique_ptr<ThreadPool> pool;
};

Resources* g_res = nullptr;

Resources& res() {
  FUZZ_INVARIANT(g_res != nullptr, "sf::fuzz::init() was not called");
  return *g_res;
}

bool add_vocab(Resources& r, const std::string& path) {
  auto file = gguf::GgufFile::open(path);
  if (!file.ok()) return false;
  auto t = Tokenizer::from_gguf(*file);
  if (!t.ok()) return false;
  r.vocab_names.push_back(std::filesystem::path(path).filename().string());
  r.vocabs.push_back(std::move(t.value()));
  return true;
}

// The code under test opens files by path: the input goes into a memory file, reached
// through /proc/self/fd. One per process, rewritten for every input.
std::string input_as_file(const uint8_t* data, size_t size) {
  static int fd = -1;
  if (fd < 0) fd = ::memfd_create("specflash-fuzz-input", 0);
  FUZZ_INVARIANT(fd >= 0, "memfd_create failed");
  FUZZ_INVARIANT(::ftruncate(fd, 0) == 0, "ftruncate failed");
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    FUZZ_INVARIANT(n > 0, "pwrite to the memfd failed");
    done += static_cast<size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, at - start));
    start = at + 1;
  }
}

// Encoded ids must all be in range: the engine indexes embeddings with them.
void check_ids(const Tokenizer& t, const std::vector<int32_t>& ids) {
  for (int32_t id : ids) FUZZ_INVARIANT(t.is_valid(id), "encode returned an id outside the vocabulary");
}

}  // namespace

void init(const std::string& source_dir, const std::string& shared_dir) {
  if (g_res != nullptr) return;
  auto* r = new Resources();
  // SPM (the stories model) first: it is the one always present.
  add_vocab(*r, source_dir + "/models/stories260K.gguf");
  std::error_code ec;
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(shared_dir + "/vocab", ec))
    if (e.path().extension() == ".gguf") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  for (const auto& p : paths) add_vocab(*r, p);
  FUZZ_INVARIANT(!r->vocabs.empty(), "no vocabulary could be loaded (models/stories260K.gguf missing?)");
  auto target = gguf::GgufFile::open(source_dir + "/models/stories260K.gguf");
  FUZZ_INVARIANT(target.ok(), "cannot open the target model");
  auto hp = read_hparams(*target);
  FUZZ_INVARIANT(hp.ok(), "cannot read the target's hyper-parameters");
  r->target_vocab = std::make_unique<Tokenizer>(r->vocabs[0]);
  r->target_n_vocab = hp->n_vocab;
  r->pool = std::make_unique<ThreadPool>(1);
  g_res = r;
}

const std::vector<std::string>& loaded_vocabularies() { return res().vocab_names; }

void gguf_reader(const uint8_t* data, size_t size) {
  const std::string path = input_as_file(data, size);
  auto file = gguf::GgufFile::open(path);
  if (!file.ok()) {
    FUZZ_INVARIANT(!file.status().message().empty(), "an error without a message");
    return;
  }
  const gguf::GgufFile& f = *file;
  for (const auto& [key, value] : f.metadata()) {
    FUZZ_INVARIANT(f.find(key) != nullptr, "a listed key is not found by lookup");
    (void)f.get_string(key);
    (void)f.get_int(key);
    (void)f.get_float(key);
    (void)f.get_bool(key);
    (void)f.get_string_array(key);
    (void)f.get_float_array(key);
    (void)f.get_int_array(key);
  }
  for (const auto& t : f.tensors()) {
    FUZZ_INVARIANT(t.file_offset >= f.data_offset(), "tensor data before the data section");
    FUZZ_INVARIANT(t.file_offset <= f.file_size() && t.n_bytes <= f.file_size() - t.file_offset,
                   "tensor data past the end of the file was accepted");
    (void)t.n_elements();
    (void)t.rows();
    if (t.n_bytes <= (1u << 16)) {
      auto bytes = f.read_tensor_data(t);
      if (bytes.ok()) FUZZ_INVARIANT(bytes->size() == t.n_bytes, "read_tensor_data returned the wrong size");
    }
  }
  (void)read_hparams(f);
  auto spec = read_vocab_spec(f);
  if (spec.ok()) (void)Tokenizer::from_spec(std::move(spec.value()));
}

void tokenizer(const uint8_t* data, size_t size) {
  Resources& r = res();
  if (size < 2) return;
  const Tokenizer& t = r.vocabs[data[0] % r.vocabs.size()];
  const uint8_t flags = data[1];
  data += 2;
  size -= 2;
  if ((flags & 1) == 0) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto ids = t.encode(text, (flags & 2) != 0, (flags & 4) != 0);
    if (ids.ok()) {
      check_ids(t, *ids);
      auto back = t.decode(*ids);
      FUZZ_INVARIANT(back.ok(), "decode of encoded ids failed");
    }
    return;
  }
  std::vector<int32_t> ids(size / 4);
  for (size_t i = 0; i < ids.size(); ++i) {
    uint32_t u = static_cast<uint32_t>(data[4 * i]) | static_cast<uint32_t>(data[4 * i + 1]) << 8 |
                 static_cast<uint32_t>(data[4 * i + 2]) << 16 | static_cast<uint32_t>(data[4 * i + 3]) << 24;
    // Mostly in-range ids (flag bit 1), sometimes raw ones, so both paths get exercised.
    ids[i] = (flags & 2) ? static_cast<int32_t>(u % static_cast<uint32_t>(t.n_vocab())) : static_cast<int32_t>(u);
  }
  DecodeOptions opts;
  opts.render_special = (flags & 4) != 0;
  opts.strip_space_prefix = (flags & 8) != 0;
  (void)t.decode(ids, opts);
  StreamingDecoder stream(t, (flags & 4) != 0);
  for (int32_t id : ids) {
    (void)t.token_to_piece(id, (flags & 16) != 0);
    (void)t.token_text(id);
    (void)t.token_attr(id);
    (void)t.is_eog(id);
    (void)t.is_control(id);
    (void)stream.push(id);
    FUZZ_INVARIANT(stream.pending_bytes() <= 3, "the streaming decoder holds more than 3 bytes");
  }
  (void)stream.flush();
}

void chat_format(const uint8_t* data, size_t size) {
  Resources& r = res();
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto parts = split(in, '\0');
  const std::string selector(parts[0]);
  const Tokenizer& t = r.vocabs[(selector.empty() ? 0 : static_cast<uint8_t>(selector[0])) % r.vocabs.size()];
  std::vector<ChatMessage> messages;
  for (size_t i = 1; i < parts.size(); ++i) {
    size_t nl = parts[i].find('\n');
    ChatMessage m;
    m.role = std::string(parts[i].substr(0, nl));
    if (nl != std::string_view::npos) m.content = std::string(parts[i].substr(nl + 1));
    messages.push_back(std::move(m));
  }
  // The template named (or detected from Jinja text) on its own, as the server uses it...
  auto tmpl = ChatTemplate::detect(selector);
  if (tmpl.ok()) {
    (void)tmpl->render(messages, true);
    (void)tmpl->render(messages, false);
    (void)tmpl->end_of_turn();
  }
  // ... and through ChatFormat as `specflash chat` does (a name, or "" for the model's own).
  bool used_fallback = false;
  auto format = cli::ChatFormat::for_tokenizer(t, selector.size() <= 32 ? selector : "", &used_fallback);
  if (!format.ok()) return;
  auto prompt = format->render(messages);
  (void)format->end_of_turn();
  (void)format->name();
  if (!prompt.ok()) return;
  auto ids = t.encode(*prompt, true, true);
  if (ids.ok()) check_ids(t, *ids);
}

void completion_request(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const server::Endpoint endpoint = (data[0] % 2 == 0) ? server::Endpoint::kChat : server::Endpoint::kCompletion;
  std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  auto r = server::parse_completion_request(body, endpoint);
  if (auto* err = std::get_if<server::ApiError>(&r)) {
    FUZZ_INVARIANT(!err->message.empty(), "an ApiError without a message");
    return;
  }
  const auto& req = std::get<server::CompletionRequest>(r);
  FUZZ_INVARIANT(req.endpoint == endpoint, "the request came back for another endpoint");
  if (req.max_tokens) FUZZ_INVARIANT(*req.max_tokens >= 0, "a negative max_tokens was accepted");
}

void draft_compat(const uint8_t* data, size_t size) {
  Resources& r = res();
  const std::string path = input_as_file(data, size);
  auto drafter = DraftModelDrafter::create(path, *r.target_vocab, r.target_n_vocab, *r.pool, /*n_ctx=*/16);
  if (!drafter.ok()) {
    FUZZ_INVARIANT(!drafter.status().message().empty(), "an error without a message");
    return;
  }
  FUZZ_INVARIANT((*drafter)->model().hparams().n_vocab == r.target_n_vocab,
                 "a draft with another vocabulary size was accepted");
}

}  // namespace sf::fuzz
