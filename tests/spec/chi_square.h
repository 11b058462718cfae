// Pearson's chi-square goodness-of-fit test for the sampling tests.
#pragma once

#include <vector>

namespace sf::test {
// p-value of observed counts against expected probabilities (categories with expected
// count below 5 are pooled into one).
double chi_square_p_value(const std::vector<double>& observed, const std::vector<double>& expected_probs);
// p-value of the chi-square homogeneity test of two samples' counts over the same
// categories (categories with fewer than 10 in both together are pooled into one).
double two_sample_p_value(const std::vector<double>& a, const std::vector<double>& b);
// Upper regularised incomplete gamma Q(a, x).
double gamma_q(double a, double x);
}  // namespace sf::test
