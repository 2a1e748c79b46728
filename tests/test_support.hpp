// Shared test helpers: random mechanisms with every joint type, random states, and one symmetric
// abs+rel comparison. Defined in test_support.cpp, compiled once (library loopdyn_test_support):
// their Eigen instantiations (the SVDs above all) cost each test file 10 s of compile time when
// they were inline here.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>

#include "loopdyn/core/model.hpp"
#include "loopdyn/core/tree_dynamics.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/run/simulator.hpp"

namespace loopdyn::test {

/// ‖a − b‖∞ ≤ tol · max(1, ‖a‖∞, ‖b‖∞): relative for large values, absolute near zero, and
/// symmetric in a and b.
::testing::AssertionResult near(const Eigen::Ref<const MatX>& a, const Eigen::Ref<const MatX>& b, double tol);

/// The message of any exception `f` throws, or "no error".
std::string message_of(const std::function<void()>& f);

/// The ModelError message of `action`, or "" when it throws nothing.
template <class F>
std::string error_of(F&& action) {
  try {
    action();
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

double uniform(std::mt19937_64& rng, double lo, double hi);
Vec3 random_vec(std::mt19937_64& rng, double r);
Mat3 random_rotation(std::mt19937_64& rng);
/// A valid rotational inertia: rotated principal moments that satisfy the triangle inequality.
Mat3 random_inertia(std::mt19937_64& rng);

// prefix + number, appended (GCC 12 warns falsely on "literal" + std::string temporaries at -O3).
std::string indexed(std::string prefix, int i);

/// Random tree of `nbodies` bodies; joint types cycle through all eight types starting at
/// `first_type`, parents drawn among earlier bodies or ground, random frames and axes.
Mechanism random_tree(std::uint64_t seed, int nbodies, int first_type = 0);

/// Random coordinates: unit quaternions for spherical/free joints, values in [-1, 1] otherwise.
VecX random_q(const Model& model, std::mt19937_64& rng);
VecX random_vector(int n, std::mt19937_64& rng, double r = 1.0);

/// q moved by ε along speed direction du: q + ε q̇(q, du), quaternions re-normalized (the
/// normalization changes q by O(ε²), which central differences cancel).
VecX moved(const Model& model, const VecX& q, const VecX& du, double eps);


/// Orthonormal basis of ker G by SVD (singular values below 1e-10 σ_max count as zero).
MatX null_space(const MatX& G);

/// Fixed-step simulation settings (RK4 unless told).
SimulationSettings fixed_step_settings(double dt, double t_end, double output_dt,
                                       IntegratorKind kind = IntegratorKind::rk4);

/// A bundled model file, models/<file>.yaml, built.
Model load_model(const std::string& file);

/// The text of tests/models/bar.yaml: a bar on a pivot about z (J = 0.35 kg m²), no gravity, to
/// which a test appends its `forces:`.
std::string bar_text();

/// Planar parallelogram four-bar in the x-y plane, unit links, all joints revolute about z: crank
/// and rocker on ground at (0,0) and (1,0), coupler from the crank tip, loop closed by joint C
/// (coupler tip to rocker tip). q = (θ, −θ, θ) closes it for any crank angle θ (default π/2);
/// at θ = 0 every link is collinear: a singular configuration (parallelogram/antiparallelogram
/// bifurcation).
Mechanism parallelogram_four_bar(bool pin_cut = true, double theta = M_PI / 2);

/// A closed state of a mechanism with loops.
struct ClosedCase {
  Mechanism mechanism;
  VecX q, u;
};

/// Random tree with `loops` loop-closing joints (types cycling from `first_type`, free excluded)
/// between random bodies, each closed exactly at the random state q: its child frame is placed
/// where its parent frame is at q, turned by the joint's own motion at a random joint coordinate.
/// u is a random velocity projected onto ker G.
ClosedCase closed_loops(std::uint64_t seed, int nbodies, int loops, int first_type = 0);

/// Φ, G and γ of the kept constraint rows at (q, u).
struct ConstraintValues {
  VecX phi;
  MatX G;
  VecX gamma;
};
ConstraintValues constraint_values(const Model& m, const VecX& q, const VecX& u);

/// Constrained accelerations by the null-space method, independent of the formulations (gravity
/// only: force elements are not included):
/// u̇ = u_p + N z with u_p the minimum-norm solution of G u̇ = γ and Nᵀ M N z = Nᵀ (Q − M u_p).
VecX reference_accelerations(const Model& m, const VecX& q, const VecX& u);

/// A closed state of a model: Φ(q) = 0 and G(q) u = 0 to round-off.
struct LoopState {
  std::string name;
  Model model;
  VecX q, u;
};

/// A bundled model file at its own initial state q0, u0, assembled as `loopdyn simulate` does.
LoopState file_state(const std::string& file);

/// A bundled model file assembled, with a random velocity in ker G (the files mostly start at rest).
LoopState assembled_state(const std::string& file, std::uint64_t seed);

/// dopri5 at rtol = atol = 1e-10 from (q, u), rows every output_dt.
Trajectory dopri5_run(const Model& model, Formulation& f, const VecX& q, const VecX& u, double t_end,
                             double output_dt, bool project = false);

/// u̇ of `method` at the state of c.
VecX accelerations(const std::string& method, const LoopState& c);

/// closed_loops(seed, 7 bodies, loops) as a LoopState.
LoopState random_loop_state(std::uint64_t seed, int loops);

/// A measured number with three significant digits ("%.3g") for RecordProperty keys and values
/// (std::to_string would print 1e-9 as 0.000000).
std::string fmt(double x);

}  // namespace loopdyn::test
