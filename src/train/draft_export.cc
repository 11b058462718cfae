#include "train/draft_export.h"

#include <cstring>

#include "base/fp16.h"
#include "gguf/gguf_writer.h"

namespace sf::train {

Status export_draft_gguf(const DraftConfig& c, const std::vector<float>& params, const gguf::GgufFile& vocab_source,
                         const std::string& path, bool f16) {
  using gguf::Value;
  ParamLayout layout(c);
  SF_CHECK(static_cast<int64_t>(params.size()) == layout.total);
  gguf::GgufWriter w;
  const std::string a = "llama.";
  w.set("general.architecture", Value::string("llama"));
  w.set("general.name", Value::string("specflash distilled draft"));
  w.set("general.file_type", Value::u32(f16 ? 1 : 0));
  w.set("general.alignment", Value::u32(gguf::kDefaultAlignment));
  w.set(a + "context_length", Value::u32(c.n_ctx));
  w.set(a + "embedding_length", Value::u32(c.n_embd));
  w.set(a + "block_count", Value::u32(c.n_layer));
  w.set(a + "feed_forward_length", Value::u32(c.n_ff));
  w.set(a + "attention.head_count", Value::u32(c.n_head));
  w.set(a + "attention.head_count_kv", Value::u32(c.n_head_kv));
  w.set(a + "attention.layer_norm_rms_epsilon", Value::f32(c.rms_eps));
  w.set(a + "rope.freq_base", Value::f32(c.rope_freq_base));
  w.set(a + "rope.dimension_count", Value::u32(c.head_dim()));
  w.set(a + "vocab_size", Value::u32(c.n_vocab));
  w.copy_metadata_from(vocab_source, "tokenizer.");
  for (const auto& t : layout.named(c)) {
    const float* src = params.data() + t.offset;
    const int64_t n = t.cols * t.rows;
    std::vector<int64_t> dims = t.rows == 1 ? std::vector<int64_t>{t.cols} : std::vector<int64_t>{t.cols, t.rows};
    if (f16 && t.rows > 1) {
      std::vector<uint8_t> bytes(n * 2);
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h = fp32_to_fp16(src[i]);
        std::memcpy(bytes.data() + 2 * i, &h, 2);
      }
      w.add_tensor(t.name, GgmlType::F16, dims, std::move(bytes));
    } else {
      std::vector<uint8_t> bytes(n * 4);
      std::memcpy(bytes.data(), src, n * 4);
      w.add_tensor(t.name, GgmlType::F32, dims, std::move(bytes));
    }
  }
  return w.write(path).with_context("writing draft " + path);
}

}  // namespace sf::train
