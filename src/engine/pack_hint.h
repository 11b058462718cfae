// The one line that tells a user streaming a GGUF from a hub how to make tree verification of
// its streamed layers cheaper on this CPU: `specflash pack --row-panels` stores the
// block-quantised matrices in the decode kernels' layout (row panels), which resident layers
// get at load and streamed ones cannot get per read without paying a conversion every pass.
// Measured (docs/kernels.md, "Row panels in the file"): same output, a third less compute per
// streamed pass, and passes over 8-16 tree rows at 0% ~1.3-1.4x cheaper on the synthetic 1.1B.
#pragma once

#include <string>

#include "engine/session.h"

namespace sf {

// Empty when nothing streamed would change (everything resident, no panel kernel on this CPU,
// or the file already stores panels).
std::string row_panel_pack_hint(const Session& session, const std::string& model_path);

}  // namespace sf
