#include "cli/version.h"

#include "quant/dot_kernel.h"
#include "version_info.h"  // generated at build time by cmake/version_info.cmake

namespace sf::cli {

std::string version_text() {
  std::string simd;
  for (int64_t t : dot_kernel_targets()) simd += (simd.empty() ? "" : " ") + dot_kernel_target_name(t);
  return std::string("specflash ") + SPECFLASH_VERSION + "\ncommit: " + SPECFLASH_GIT_COMMIT +
         "\nbuild type: " + SPECFLASH_BUILD_TYPE + "\ncompiler: " + __VERSION__ +
         "\nSIMD targets (compiled in and supported by this CPU, best first; the first is used): " +
         (simd.empty() ? "none (scalar)" : simd) + "\n";
}

}  // namespace sf::cli
