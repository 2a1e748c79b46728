// The IFToMM benchmark cases of docs/results.md with their references (iftomm.hpp for A02's exact
// motion, andrews.hpp for A03's own equations, absolute_coordinates.hpp for A04 and A05): what the tests
// and bench/iftomm_results run. Also the singular four-bar of paper 001 (its exact 1-dof motion,
// park_parallelogram_exact) and the five-bar and double loop of paper 004 (absolute coordinates).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absolute_coordinates.hpp"
#include "pendulums.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/mechanisms/iftomm.hpp"
#include "loopdyn/core/mechanism.hpp"
#include "loopdyn/run/simulator.hpp"

namespace loopdyn::reference {

struct BenchmarkCase {
  std::string name;
  Mechanism mechanism;
  double t_end = 0.0, output_dt = 0.0;
  std::string marker;         ///< the benchmark's reported point
  /// Energy scale (J): total weight × 1 m; on A03 (no gravity) the spring's energy at release.
  double energy_scale = 1.0;
  /// The marker's world position at each output time (sorted, from 0).
  std::function<std::vector<Vec3>(const std::vector<double>&)> reference;
};

/// Total weight of the mechanism's bodies (N): times 1 m, the energy scale of the cases.
double weight(const Mechanism& m);

/// Body states of the mechanism's initial q, u (mechanism body order), from loopdyn's tree
/// kinematics at t = 0 only: the input of the absolute-coordinate reference, not its dynamics.
std::vector<BodyState> initial_bodies(const Mechanism& m);

/// A02 with n four-bars over t_end (the benchmark: n = 40, 20 s), B0 from the exact motion.
BenchmarkCase a02_case(int n, double t_end);
/// A03 Andrews' squeezer (models/iftomm_a03_andrews.yaml) over t_end (the benchmark: 0.03 s), the
/// crank tip F from Hairer & Wanner's equations (andrews.hpp) with RK4 step h.
BenchmarkCase a03_case(const std::string& models_dir, double t_end, double h = 2e-6);
/// A04 Bricard (models/iftomm_a04_bricard.yaml) over t_end (the benchmark: 10 s), P3 from the
/// absolute-coordinate reference with RK4 step h.
BenchmarkCase a04_case(const std::string& models_dir, double t_end, double h = 2.5e-4);
/// A05 stiff flyball governor (models/iftomm_a05_flyball.yaml) over t_end, the slider's centre (its
/// z is the benchmark's s) from the absolute-coordinate reference with RK4 step h. The couplers'
/// damping bounds RK4's stable step near 2e-4 s; at kA05Step s(1 s) is within 1e-11 m of RK4 at
/// half that step (tests/test_stiff.cpp, IftommA05.ReferenceStepIsConverged). Output every 0.01 s.
inline constexpr double kA05Step = 4e-5;
BenchmarkCase a05_case(const std::string& models_dir, double t_end, double h = kA05Step);
/// Paper 001's singular four-bar (models/fourbar_park_singular.yaml, case I of §4.2) over t_end (the
/// text gives no length; its Table 2, 303 function evaluations at a mean step of 0.033 s, suggests
/// 10 s), link2_com from the exact motion park_parallelogram_exact with RK4 step h.
BenchmarkCase park_singular_case(const std::string& models_dir, double t_end, double h = 1e-4);
/// Paper 004's five-bar (models/fivebar_malczyk.yaml, §4.2) and double loop
/// (models/doubleloop_malczyk.yaml, §4.3) over t_end (the paper: 10 s), released from rest as in the
/// paper; apex3 (the five-bar's cut joint) and lower_apex2 (the double loop's lower cut joint)
/// from the absolute-coordinate reference with RK4 step h.
BenchmarkCase fivebar_case(const std::string& models_dir, double t_end, double h = 2.5e-4);
BenchmarkCase doubleloop_case(const std::string& models_dir, double t_end, double h = 2.5e-4);

/// The exact motion of park_singular_case. The model is a rhombus (every link 2 m, the ground
/// pivots 2 m apart) started on its parallelogram branch: crank (link 1) and rocker (link 3) at one
/// angle θ, the connecting link (link 2) translating with the crank tip. Then, with the data of 001
/// §4.2 and the model's choices (its comment), the motion is the scalar ODE
///     I θ̈ = −U′(θ),   I = J1 + m1 a1² + m2 l² + J3 + m3 a3² = 77 kg m²   (l = a1 + b1 = 2 m)
///     U(θ) = ½ K (θ − θs)² − P·(cos θ, sin θ),   P = (m1 a1 + m3 a3) g + l (m2 g + Fp)
/// (kinetic energy of the two cranks about their pivots and of the translating link; potential of
/// the spring K = 100 N m/rad, θs = 0.524, of gravity g = (0, −9.81) m/s² and of the constant
/// force Fp = (80, 70) N at link 2's mass centre: P = (160, −134.68) N), from θ = 1.074, θ̇ = 0.
/// θ = 0 is the change point: every link on the ground line, where the branch θ ≡ 0 of the crank
/// (connecting link folded onto the rocker, the two turning about the rocker pivot) meets this one.
/// The motion passes it at |θ̇| = 2.30 rad/s every half period (6 times in 10 s) and swings between
/// −1.495 and 1.074 rad, away from the other change point θ = ±π. θ(t), θ̇(t) at the times t_out
/// (sorted, >= 0) by classical RK4 with step h, separate from every loopdyn formulation.
std::vector<PendulumSample> park_parallelogram_exact(const std::vector<double>& t_out, double h = 1e-4);
/// E = ½ I θ̇² + U(θ) of park_parallelogram_exact (J), constant along the exact motion.
double park_parallelogram_energy(const PendulumSample& s);

/// E(t_k) − E(0) − W(t_k) of row k of a run of mechanism m: the change of the energy column less the
/// work W = Σ value · (q(t_k) − q(0)) of its constant joint forces (`joint_force`, one-coordinate
/// joints only, else std::invalid_argument) and W = F · (x(t_k) − x(0)) of its constant body forces
/// (`body_force`, read from a marker at the force's point, else std::invalid_argument); zero for
/// the exact motion.
double energy_drift(const Mechanism& m, const Trajectory& traj, std::size_t k);

/// dopri5 at rtol = atol = tolerance: every IFToMM table and test runs the methods so (1e-10 unless
/// a precision sweep says otherwise).
IntegratorSettings dopri5_at(double tolerance);

/// The fixed-step integrator of the methods that refuse dopri5 (srm): rk4 with `steps` steps over
/// the case, 800 000 unless said otherwise. srm's error against the reference falls like h² (its
/// regularization ε ~ h, two iterates) and is below the bench's 1e-6 m at 800 000 steps on every
/// case it runs (bench/iftomm_results --srm prints the errors from 100 000 steps on).
IntegratorSettings fixed_step_integrator(const BenchmarkCase& c, double steps = 8e5);

/// Runs formulation f on the case's model (built from c.mechanism) from its initial state with this
/// integrator over the case's length and output interval.
Trajectory simulate_case(const BenchmarkCase& c, const Model& model, Formulation& f,
                         const IntegratorSettings& integrator = dopri5_at(1e-10));

}  // namespace loopdyn::reference
