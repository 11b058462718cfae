#include "base/aligned_buffer.h"

#include <sys/mman.h>

namespace sf {

void AlignedBuffer::allocate_huge(size_t size, size_t min_alignment) {
  if (size < kHugePageBytes) {
    allocate(size, std::max<size_t>(64, min_alignment));
    return;
  }
  SF_CHECK(kHugePageBytes % min_alignment == 0, "alignment %zu does not divide a huge page", min_alignment);
  const size_t rounded = reallocate(size, kHugePageBytes);
#ifdef MADV_HUGEPAGE
  // Advice only: without THP (or with it disabled) the buffer simply keeps 4 KiB pages.
  ::madvise(data_, rounded, MADV_HUGEPAGE);
#endif
  std::memset(data_, 0, rounded);  // faults the pages in, huge where the kernel can
}

}  // namespace sf
