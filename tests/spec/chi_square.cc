#include "chi_square.h"

#include <cmath>

namespace sf::test {

namespace {
// Series for P(a, x), good for x < a + 1.
double gamma_p_series(double a, double x) {
  double sum = 1.0 / a, term = sum;
  for (int n = 1; n < 1000; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::fabs(term) < std::fabs(sum) * 1e-15) break;
  }
  return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}
// Continued fraction for Q(a, x) (modified Lentz), good for x >= a + 1.
double gamma_q_fraction(double a, double x) {
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 1000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-15) break;
  }
  return std::exp(-x + a * std::log(x) - std::lgamma(a)) * h;
}
}  // namespace

double gamma_q(double a, double x) {
  if (x <= 0) return 1.0;
  return x < a + 1 ? 1.0 - gamma_p_series(a, x) : gamma_q_fraction(a, x);
}

double chi_square_p_value(const std::vector<double>& observed, const std::vector<double>& expected_probs) {
  double n = 0;
  for (double o : observed) n += o;
  double stat = 0, pooled_obs = 0, pooled_exp = 0;
  int categories = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    const double e = expected_probs[i] * n;
    if (e < 5) {
      pooled_obs += observed[i];
      pooled_exp += e;
      continue;
    }
    stat += (observed[i] - e) * (observed[i] - e) / e;
    ++categories;
  }
  if (pooled_exp > 0) {
    stat += (pooled_obs - pooled_exp) * (pooled_obs - pooled_exp) / std::max(pooled_exp, 1e-9);
    ++categories;
  }
  const int dof = categories - 1;
  if (dof < 1) return 1.0;
  return gamma_q(dof / 2.0, stat / 2.0);
}

double two_sample_p_value(const std::vector<double>& a, const std::vector<double>& b) {
  double na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) na += a[i], nb += b[i];
  double chi2 = 0, pool_a = 0, pool_b = 0;
  int categories = 0;
  auto add = [&](double x, double y) {
    const double total = x + y;
    const double ea = total * na / (na + nb), eb = total * nb / (na + nb);
    chi2 += (x - ea) * (x - ea) / ea + (y - eb) * (y - eb) / eb;
    ++categories;
  };
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] + b[i] >= 10) {
      add(a[i], b[i]);
    } else {
      pool_a += a[i];
      pool_b += b[i];
    }
  }
  if (pool_a + pool_b > 0) add(pool_a, pool_b);
  if (categories < 2) return 1.0;
  return gamma_q((categories - 1) / 2.0, chi2 / 2.0);
}

}  // namespace sf::test
