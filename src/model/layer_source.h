// LayerSource: supplies the weights of each layer (and of the LM head) to a forward pass,
// wherever they live: resident in DRAM, or streamed from storage into a ring of buffers.
//
// A forward pass acquires units in order (layer 0, 1, ..., then the head) and releases
// each when it is done with it; a streaming source uses the order to prefetch. Pointers
// returned by acquire stay valid until the matching release. Not thread-safe: one forward
// pass at a time.
#pragma once

#include "base/status.h"
#include "model/model_weights.h"

namespace sf {

class LayerSource {
 public:
  virtual ~LayerSource() = default;
  virtual Result<const LayerWeights*> acquire_layer(int layer) = 0;
  virtual void release_layer(int layer) = 0;
  virtual Result<const WeightMatrix*> acquire_output() = 0;
  virtual void release_output() = 0;
};

// A LayerSource over weights that are all resident (ModelWeights::fully_resident()).
class ResidentLayerSource : public LayerSource {
 public:
  explicit ResidentLayerSource(const ModelWeights& w) : w_(w) {}
  Result<const LayerWeights*> acquire_layer(int layer) override { return &w_.layers[layer]; }
  void release_layer(int) override {}
  Result<const WeightMatrix*> acquire_output() override { return &w_.output; }
  void release_output() override {}

 private:
  const ModelWeights& w_;
};

}  // namespace sf
