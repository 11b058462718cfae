#include "base/aligned_buffer.h"

#include <sys/mman.h>

namespace sf {

void AlignedBuffer::allocate_huge(size_t size) {
  constexpr size_t kHugePage = size_t{2} << 20;
  if (size < kHugePage) {
    allocate(size, 64);
    return;
  }
  const size_t rounded = reallocate(size, kHugePage);
#ifdef MADV_HUGEPAGE
  // Advice only: without THP (or with it disabled) the buffer simply keeps 4 KiB pages.
  ::madvise(data_, rounded, MADV_HUGEPAGE);
#endif
  std::memset(data_, 0, rounded);  // faults the pages in, huge where the kernel can
}

}  // namespace sf
