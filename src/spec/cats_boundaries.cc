#include "spec/cats_boundaries.h"

#include <algorithm>
#include <cstdio>

namespace sf {

std::string CatsBoundaries::describe() const {
  char buf[256];
  if (kangaroo) {
    std::snprintf(buf, sizeof(buf), "draft layers 1..%d, full-model verification %d..%d; %d of %d layers pinned%s", ldm,
                  ldm + 1, n_layer, n_pinned, n_layer,
                  shallow_streamed() ? " (draft layers stream: the ring restarts every draft pass)" : "");
  } else {
    std::snprintf(buf, sizeof(buf),
                  "L_DM %d (draft 1..%d), L_SV %d (shallow verify %d..%d), final pass %d..%d; %d of %d layers pinned%s",
                  ldm, ldm, lsv, ldm + 1, lsv, lsv + 1, n_layer, n_pinned, n_layer,
                  shallow_streamed() ? " (shallow layers stream: the ring restarts every draft pass)" : "");
  }
  return buf;
}

Result<CatsBoundaries> choose_cats_boundaries(int n_layer, int n_pinned, int ldm, int lsv, bool kangaroo) {
  CatsBoundaries b;
  b.n_layer = n_layer;
  b.n_pinned = n_pinned;
  b.kangaroo = kangaroo;
  const int min_layers = kangaroo ? 2 : 3;
  if (n_layer < min_layers)
    return Status::Errorf("%s needs a target with at least %d layers (it has %d)", kangaroo ? "kangaroo" : "cats",
                          min_layers, n_layer);
  // The deepest draft cut that still leaves room for a shallow verifier before the last layer.
  const int ldm_max = kangaroo ? n_layer - 1 : n_layer - 2;
  if (ldm != -1 && (ldm < 1 || ldm > ldm_max))
    return Status::Errorf("--cats-ldm %d is outside 1..%d for a target of %d layers", ldm, ldm_max, n_layer);
  if (!kangaroo && lsv != -1 && (lsv < 2 || lsv > n_layer - 1))
    return Status::Errorf("--cats-lsv %d is outside 2..%d for a target of %d layers", lsv, n_layer - 1, n_layer);
  if (!kangaroo && ldm != -1 && lsv != -1 && ldm >= lsv)
    return Status::Errorf("--cats-ldm %d must be below --cats-lsv %d", ldm, lsv);
  // About a tenth of the layers (3 of 32 in the paper), at least one.
  const int ldm_default = std::clamp((n_layer + 5) / 10, 1, ldm_max);
  if (kangaroo) {
    b.ldm = ldm != -1 ? ldm : ldm_default;
    b.lsv = b.ldm;
    return b;
  }
  if (lsv == -1) {
    const int floor = (ldm != -1 ? ldm : ldm_default) + 1;
    b.lsv = std::clamp(n_pinned, floor, n_layer - 1);
  } else {
    b.lsv = lsv;
  }
  b.ldm = ldm != -1 ? ldm : std::min(ldm_default, b.lsv - 1);
  return b;
}

}  // namespace sf
