// The slider-crank of models/slider_crank_driven.yaml in closed form (test_drives, test_analysis).
#pragma once

#include <cmath>

namespace loopdyn::test {

// The slider-crank of models/slider_crank_driven.yaml in closed form: crank angle θ, x_B(θ), the
// generalized mass M(θ) and potential V(θ) (the file's comment). Lagrange's equation of the
// one-degree-of-freedom mechanism gives the crank torque τ = M(θ) α + ½ M'(θ) ω² + V'(θ) at crank
// speed ω and acceleration α, with M' and V' by five-point differences of the closed forms (error
// h⁴ f⁽⁵⁾/30 ~ 1e-13 at h = 1e-3 for these trigonometric functions).
struct SliderCrank {
  double r = 0.1, L = 0.3, m1 = 1.0, m2 = 2.0, m3 = 0.5, g = 9.81;
  double slider(double th) const { return r * std::cos(th) + std::sqrt(L * L - r * r * std::sin(th) * std::sin(th)); }
  double mass(double th) const {
    const double s = std::sin(th), c = std::cos(th), D = std::sqrt(L * L - r * r * s * s);
    const double dxB = -r * s - r * r * s * c / D, dphi = -r * c / D;
    const double gx = (-r * s + dxB) / 2.0, gy = r * c / 2.0;
    const double J_O = m1 * r * r / 12.0 + m1 * r * r / 4.0;
    return J_O + m2 * (gx * gx + gy * gy) + m2 * L * L / 12.0 * dphi * dphi + m3 * dxB * dxB;
  }
  double potential(double th) const { return g * (m1 * r / 2.0 + m2 * r / 2.0) * std::sin(th); }
  template <class F>
  static double derivative(F f, double x) {
    const double h = 1e-3;
    return (8.0 * (f(x + h) - f(x - h)) - (f(x + 2 * h) - f(x - 2 * h))) / (12.0 * h);
  }
  /// The crank torque that turns it at θ with ω and α (α = 0: the motor torque at constant speed).
  double torque(double th, double w, double alpha = 0.0) const {
    return mass(th) * alpha + 0.5 * w * w * derivative([this](double x) { return mass(x); }, th) +
           derivative([this](double x) { return potential(x); }, th);
  }
};

}  // namespace loopdyn::test
