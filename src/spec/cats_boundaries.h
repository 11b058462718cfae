// Where CATS cuts the target (paper section 4.1): layers 1..L_DM draft, L_DM+1..L_SV
// verify shallowly, L_SV+1..N run once per cycle in the final pass.
//
// The cuts follow the memory budget: L_SV is the deepest cut whose layers are all pinned
// (the residency plan pins a prefix of layers), so the draft and shallow-verifier passes
// never touch storage and the final pass streams the suffix once, in order. L_DM is kept
// shallow (about a tenth of the layers, as the paper's 3 of 32) because it runs gamma
// times per cycle. Both can be set by hand (--cats-ldm, --cats-lsv).
//
// When fewer than L_DM + 1 layers are pinned (e.g. a 0% budget) the shallow layers stream
// too: still lossless, but every draft pass restarts the streaming ring (it reads layers
// out of the ring's order), which the bytes-per-token figures show.
#pragma once

#include <string>

#include "base/status.h"

namespace sf {

struct CatsBoundaries {
  int ldm = 0;  // layers [0, ldm) draft
  int lsv = 0;  // layers [ldm, lsv) verify shallowly (kangaroo: lsv == ldm)
  int n_layer = 0;
  int n_pinned = 0;       // layers the residency plan keeps in DRAM
  bool kangaroo = false;  // no shallow verifier: the final pass runs [ldm, n_layer)
  bool shallow_streamed() const { return lsv > n_pinned || ldm > n_pinned; }
  std::string describe() const;
};

// ldm, lsv: overrides (-1: choose). kangaroo ignores lsv. Errors name the flag and the
// valid range for this model.
Result<CatsBoundaries> choose_cats_boundaries(int n_layer, int n_pinned, int ldm, int lsv, bool kangaroo);

}  // namespace sf
