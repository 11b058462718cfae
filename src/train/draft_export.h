// Writing a trained draft as a GGUF (llama architecture, F32 or F16 matrices) that
// Model::load and llama.cpp read. The target's tokenizer.* metadata is copied, so the draft
// shares the target's vocabulary and the engine accepts it as a draft for that target.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"
#include "train/draft_model.h"

namespace sf::train {

// params: the flat vector of draft_model.h. f16 stores the 2-D matrices as F16 (norms stay
// F32). Errors: the file cannot be written.
Status export_draft_gguf(const DraftConfig& config, const std::vector<float>& params,
                         const gguf::GgufFile& vocab_source, const std::string& path, bool f16 = false);

}  // namespace sf::train
