// The IFToMM multibody benchmark problems (library of computational benchmark problems, group A:
// González, Dopico, Lugrís, Cuadrado et al., lim.ii.udc.es/mbsbenchmark) that loopdyn generates,
// whose exact motions (reference/pendulums.hpp) use no loopdyn formulation (docs/results.md, "IFToMM benchmarks").
//
//   A02 N-four-bar  N parallelograms side by side: N + 1 cranks pinned to ground 1 m apart and N
//                   couplers joining their tips; 2N + 1 uniform rods of 1 m and 1 kg; gravity −y.
//                   Cranks start vertical, the x-velocity of point B0 (tip of crank 0) is 1 m/s.
//                   Whenever the cranks are horizontal every link is on the ground line and the
//                   mechanism has N + 1 degrees of freedom for an instant (N bifurcations at once).
//                   The motion that continues is the parallelogram one: every crank at the same
//                   angle θ (from +x), couplers translating, which is exactly the 1-dof pendulum
//                       I θ̈ + K cos θ = 0,  I = (N + 1)/3 + N,  K = g ((N + 1)/2 + N)
//                   (cranks: m l²/3 about the pivot and m g l/2 sin θ; couplers: m (l θ̇)²/2 and
//                   m g l sin θ), from θ = π/2, θ̇ = −1 rad/s.
#pragma once

#include <functional>
#include <vector>

#include "loopdyn/core/mechanism.hpp"

namespace loopdyn {

/// A02 with n four-bars. Bodies "crank0".."crank{n}" (frame at the ground pivot (k, 0, 0), rod
/// along +x of the frame) and "coupler1".."coupler{n}" (frame at its left end, rod along +x).
/// Joints, all revolute about z: "crank{k}_pivot" (ground → crank k), "coupler{k}_left"
/// (crank k−1's tip → coupler k), and the loop-closing "coupler{k}_right" (`cut: true`: coupler k's
/// right end with crank k's tip). Marker "B0" at crank 0's tip, "B{k}" at crank k's tip. The
/// initial state is the benchmark's, closed exactly: cranks at q = π/2, u = −1; couplers at
/// q = −π/2, u = +1 (horizontal, translating). Rods: inertia m l²/12 about the centre across the
/// rod, 10⁻³ about the rod axis (the planar motion does not see it). Throws std::invalid_argument
/// for n < 1.
Mechanism nfourbar_mechanism(int n);

}  // namespace loopdyn
