#include "model/architecture.h"

#include "base/check.h"

namespace sf {
namespace {
const ArchitectureTraits* const kAll[] = {&llama_traits(), &qwen2_traits(), &qwen3_traits()};
}

const ArchitectureTraits* find_architecture(const std::string& name) {
  for (const auto* t : kAll)
    if (name == t->name) return t;
  return nullptr;
}

const ArchitectureTraits& architecture_traits(Arch arch) {
  for (const auto* t : kAll)
    if (t->arch == arch) return *t;
  SF_CHECK(false, "unknown arch");
  return llama_traits();
}

std::string supported_architecture_list() {
  std::string out;
  for (const auto* t : kAll) out += (out.empty() ? "" : ", ") + std::string(t->name);
  return out;
}

}  // namespace sf
