#include "spec/cycle_stats.h"

#include <algorithm>

namespace sf {

void add_policy_uses(const std::vector<CycleStats>& cycles, std::vector<PolicyUse>* uses) {
  for (const CycleStats& c : cycles) {
    auto use = std::find_if(uses->begin(), uses->end(), [&](const PolicyUse& u) { return u.policy == c.policy; });
    if (use == uses->end()) use = uses->insert(uses->end(), PolicyUse{c.policy});
    ++use->cycles;
    use->tokens += static_cast<uint64_t>(c.accepted) + 1;  // the accepted nodes and a bonus token
    use->seconds += c.draft_seconds + c.verify_seconds;
  }
}

}  // namespace sf
