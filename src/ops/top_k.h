// The k largest entries of a float array, by index, vectorised: a draft model's greedy
// distribution keeps its top 32 tokens (the candidate sets tree builders choose from) on
// every draft row, over the whole vocabulary.
#pragma once

#include <cstdint>
#include <vector>

namespace sf {

// The indices of the min(k, n) largest values of x[0..n), largest first, equal values in
// index order: exactly what inserting each index in turn into a sorted list of k (an equal
// value goes after those already there; one equal to the last of a full list stays out)
// gives. With a NaN entry it runs that insertion itself (top_k_indices_ref), so that even a
// broken model's logits give the same list.
//
// Why not the insertion: on 512 values in no particular order it inserts ~120 times, each
// a binary search through indirect loads and a move, ~4.6 us per call, a quarter of a
// stories260K draft step (10.7% of a resident chain:8 run's samples, perf). Here vector
// passes count how many values reach a threshold, bisecting it until between k and 2k do
// (or the values tie), and only those are collected and sorted.
void top_k_indices(const float* x, int64_t n, int k, std::vector<int32_t>* out);
// The insertion (the oracle).
void top_k_indices_ref(const float* x, int64_t n, int k, std::vector<int32_t>* out);

}  // namespace sf
