// pack_model: rewrites a GGUF model so that each layer's tensors are contiguous and
// 4096-aligned (what `specflash pack` runs). The streamer reads a non-resident layer as one
// O_DIRECT span per forward pass; in a file laid out by a converter, a layer's matrices may
// be interleaved with other layers' or packed at 32-byte alignment, so its span would also
// read neighbouring bytes and need rounding at both ends. After packing, a layer is one
// aligned range holding exactly its tensors (plus alignment padding).
//
// Layout: general.alignment = 4096; tensors ordered as every non-layer tensor except
// output.weight (token_embd, output_norm, rope_freqs, ... in input order), then blk.0.*
// (the matrices of layer_matrix_tensor_names(0) in that order, then the layer's other
// tensors - norms, biases - in input order), blk.1.*, ..., then output.weight. All other
// metadata and every tensor's bytes are copied unchanged, except with row_panels (below):
// then the eligible matrices' bytes are rearranged into row panels and renamed.
//
// Memory: the input is memory-mapped and copied one tensor at a time, each tensor's pages
// released after it is written, so models larger than RAM pack in bounded memory (mapped
// file pages are clean and reclaimable). A media error under the mapping raises SIGBUS
// rather than a Status: acceptable for an offline tool. The output goes to OUT.tmp and is
// renamed at the end; OUT may equal IN.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"

namespace sf {

struct PackOptions {
  bool show_progress = false;  // progress and a summary line on stderr
  // Store every matrix that can be (model/stored_layout.h: block-quantised layer matrices and
  // output.weight with whole panels) as row panels, renamed "<name>.row_panels16", so
  // streamed layers reach the panel kernels (AVX512-VNNI) without a conversion per pass.
  // Off: every matrix is written as GGUF rows, converting any panels of the input back.
  bool row_panels = false;
};

// The order pack_model writes tensors in, as indices into `tensors`.
std::vector<size_t> packed_tensor_order(const std::vector<gguf::TensorInfo>& tensors);

// Errors: unreadable or corrupt input, a file without tensors, I/O failures writing OUT.
Status pack_model(const std::string& in, const std::string& out, const PackOptions& options);

}  // namespace sf
