#include "engine/pack_hint.h"

namespace sf {

std::string row_panel_pack_hint(const Session& session, const std::string& model_path) {
  if (session.streamer() == nullptr) return "";
  const int matrices = session.model().weights().streamed_rows_with_panel_kernel();
  if (matrices == 0) return "";
  return std::to_string(matrices) +
         " streamed matrices are stored as GGUF rows; this CPU decodes them faster as row panels. `specflash pack "
         "--row-panels " +
         model_path +
         " OUT.gguf` stores them so once (same output; verifying a token tree over streamed layers costs less)";
}

}  // namespace sf
