// GatedLayerSource: a LayerSource that waits at a ComputeGate before handing out each
// layer (and the head), so a forward pass on a background thread pauses between layers
// whenever the target takes the cores back. Without a gate it is the inner source.
#pragma once

#include "model/layer_source.h"
#include "spec/compute_gate.h"

namespace sf {

class GatedLayerSource : public LayerSource {
 public:
  explicit GatedLayerSource(LayerSource& inner) : inner_(inner) {}
  // nullptr: no waiting. Set only while no forward pass uses the source.
  void set_gate(ComputeGate* gate) { gate_ = gate; }

  Result<const LayerWeights*> acquire_layer(int layer) override {
    if (gate_) gate_->wait_open();
    return inner_.acquire_layer(layer);
  }
  void release_layer(int layer) override { inner_.release_layer(layer); }
  Result<const WeightMatrix*> acquire_output() override {
    if (gate_) gate_->wait_open();
    return inner_.acquire_output();
  }
  void release_output() override { inner_.release_output(); }

 private:
  LayerSource& inner_;
  ComputeGate* gate_ = nullptr;
};

}  // namespace sf
