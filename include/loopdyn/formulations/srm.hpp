// `srm`: the sequential regularization method (paper 003, Ascher and Lin; its equations as
// reconstructed in docs/notes/srm-sources.md). The loop multipliers
// are not solved for: S regularized problems are integrated side by side, iterate s driven by
//     M u̇_s = Q(q_s, u_s) − Gᵀ λ_s,
//     λ_s = λ_{s−1} + ε⁻¹ (G u_s + α Φ(q_s)),           (003 eqs 3.6c, 3.12d: the stabilized form)
// with λ_{s−1} the previous iterate's multipliers at the same stage of the step, so that each
// stage is explicit, and λ_0 the last iterate's λ_S at the end of the previous step (at t = 0 the
// exact multipliers: 003 Assumption 3.1, no initial layer).
// Each iterate gains a factor O(ε) on the error of the one before it (003 Thm 3.1, eq 3.27), and
// the last one is the solution: to_joint() returns iterate S.
//
// In loopdyn's joint coordinates (docs/methods.md, "srm" has why) the tree is exact and each
// iterate costs one articulated-body solve with known body forces: λ_s enters as the wrench each
// loop joint's rows exert on its two bodies (constraint_forces) and G u, Φ are read from the two
// joint frames (constraint_velocity, constraint_position), O(1) per row. A call is therefore
// S × O(n) + O(m) however the loops are coupled, and allocates nothing.
//
// The regularized equations are stiff with rate a/ε, a up to a_max = the largest eigenvalue of
// G M⁻¹ Gᵀ (estimated at q0 by Lanczos). Each step carries S corrections ε⁻¹(G u + αΦ) into the
// next one through λ_0, so the explicit step sees rates up to S a_max/ε and is stable for
// h S a_max/ε up to 2 (rk2) or 2.78 (rk4). start() refuses dopri5 (its steps, and so ε ~ h, are
// not fixed: 003 §3.3 ties h ≤ γ ε) and an ε below that limit at q0; the default ε = h S a_max
// sits at half of it.
//
// Near a singular configuration of the loops a direction of G M⁻¹ Gᵀ has an eigenvalue a → 0,
// along which an iterate reduces the multiplier error by a factor about ε/(a T) only (T the time
// scale of the motion; 003 Thm 3.1): the iterates stop converging, the regularization there acts
// as a spring and damper, and the motion leaves the constraints and gains or loses energy (the
// square chain of 003 Ex 4.1 at its flat squares). Away from them the regularization error is
// O(h²) (ε ~ h), but with a constant that grows with a_max/a: on the random four-bars, five-bars
// and Bennett linkages of the zoo (docs/results.md, "Mechanism zoo") rk4 at h = 1e-3 left runs up
// to 3.4e-2 m off with the energy and closure within the run watch's bounds. Two checks after every
// step, each stopping the run with what to do (or reporting the first time and going on,
// on_singular = proceed):
//  * srm's own error: the work of the loop forces, ∫ −λᵀ G u dt on the last iterate, against
//    the mechanism's energy scale E_s, the energy that moves: the largest T + |V − V(0)| so far
//    (V gravity and springs, as the run watch's S_E), at least its weight × 1 m (as the zoo's)
//    and its springs' energy at the start,
//    times SrmSettings::max_work, 1e-5 = ten times a fixed step's accuracy τ (the
//    zoo's bound). Ideal loop joints do no work, so it measures the energy the regularization adds or removes,
//    whatever the applied forces; and it is what moves the motion along the loops: the multiplier
//    error e exerts −Gᵀe, normal to them (tᵀGᵀe = 0 for G t = 0). It grows with a step too long for
//    the motion (like h²) and fast where the loops soften. Its stop is a RunWatchError;
//  * the Rayleigh quotient of the last correction λ_S − λ_{S−1} (one more articulated-body solve),
//    at least the smallest eigenvalue of G M⁻¹ Gᵀ now, against the smallest one at the start
//    (SrmSettings::min_stiffness, naming the loops that dominate the correction): it
//    falls sharply as a singular configuration nears.
//
// The regularization has no u̇ at a joint state alone (its multipliers live in the iterates), so
// accelerations(t, q, u) returns the limit of the iterates there: the exact multipliers, by
// conjugate gradients on G M⁻¹ Gᵀ λ = G M⁻¹ Q − γ with the same O(n) solves (also λ_0 of the first
// step). Output rows report the iterates' own λ_S and its u̇ (joint_accelerations).
#pragma once

#include <algorithm>

#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/core/tree_dynamics.hpp"

namespace loopdyn {

class Srm final : public Formulation {
 public:
  /// Throws std::invalid_argument for ε or α not finite and > 0 (α >= 0), or iterations < 1.
  Srm(const Model& model, const FormulationSettings& settings);
  std::string_view name() const override { return "srm"; }

  void start(const StepPlan& plan, const VecX& q0, const VecX& u0) override;
  /// srm refuses runs that can reach a change point (with on_singular = stop): the constraint
  /// directions lose their stiffness there, and its iterates stop converging.
  std::string change_point_refusal() const override;
  /// u̇ and λ with the exact multipliers at (q, u) (conjugate gradients; see the file comment).
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override;
  /// u̇ of iterate S of x under λ_S of the last accepted step (x's own after accept(); the exact
  /// multipliers before the first step).
  void joint_accelerations(double t, const VecX& x, Eigen::Ref<VecX> udot) override;
  /// λ_S of the last call, or the exact multipliers after accelerations().
  const VecX& multipliers() const override { return lambda_; }

  /// S copies of [q; u], iterate 1 first.
  int state_size() const override { return iterations_ * (model_.nq + model_.nv); }
  void to_state(const VecX& q, const VecX& u, Eigen::Ref<VecX> x) const override;
  void derivative(double t, const VecX& x, Eigen::Ref<VecX> dx) override;
  /// Re-normalizes every iterate's quaternions and takes λ_0 of the next step, λ_S at x; stops or
  /// reports when the loop forces do work or the iterates do not converge (check_work,
  /// check_convergence).
  void accept(double t, Eigen::Ref<VecX> x) override;
  void complete(double /*t*/, Eigen::Ref<VecX> /*x*/) override {}
  /// srm.work: the work of the loop forces since the start (J), srm's own energy error (measured
  /// with the check off too); srm.energy_scale: E_s (J), which --srm-max-work multiplies (check_work).
  std::vector<std::string> diagnostic_names() const override { return {"srm.work", "srm.energy_scale"}; }
  void diagnostic_values(Eigen::Ref<VecX> out) const override { out << work_, energy_scale(); }
  void to_joint(const VecX& x, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) const override;

  std::string summary() const override;
  int iterations() const { return iterations_; }
  /// ε of the run (after start()) and α.
  double epsilon() const { return epsilon_; }
  double alpha() const { return alpha_; }
  double a_max() const { return a_max_; }
  /// Smallest and largest eigenvalues of G M⁻¹ Gᵀ at q, by Lanczos with articulated-body
  /// solves: the largest bounds ε, the smallest is the convergence check's reference (see the
  /// file comment).
  struct Spectrum {
    double smallest = 0.0, largest = 0.0;
  };
  Spectrum constraint_spectrum(const VecX& q);

 private:
  int state_stride() const { return model_.nq + model_.nv; }
  /// λ ← λ + ε⁻¹(G u + αΦ) with positions and velocities for (q, u) current in aba_.kin.
  void correct(const VecX& u);
  /// u̇ = M⁻¹(τ − Gᵀλ + body forces) with positions factored (aba_factor) and velocities current.
  void solve(double t, const VecX& q, const VecX& u, const VecX& lambda, Bias bias, Eigen::Ref<VecX> udot);
  /// out = G M⁻¹ Gᵀ x at the factored configuration q.
  void constraint_operator(const VecX& q, const VecX& x, VecX& out);
  /// Stops (or reports, on_singular = proceed) when the last correction points along a direction
  /// of G M⁻¹ Gᵀ softer than min_stiffness_ · a_min at the start (see the file comment).
  void check_convergence(double t);
  /// Stops (or reports) when the loop forces' work since the start exceeds max_work_ times the
  /// energy scale (energy_scale; see the file comment).
  void check_work(double t);
  enum class StopKind { singular, accuracy };
  /// Throws with `why` and what to do, or reports it once (on_singular = proceed): a
  /// SingularConfigurationError, or a RunWatchError for srm's own error above its bound (accuracy).
  void stop_or_report(double t, const std::string& why, StopKind kind);
  /// λ_ = the exact multipliers at (q, u), by conjugate gradients; leaves the tree factored and
  /// the frames current at q.
  void exact_multipliers(double t, const VecX& q, const VecX& u);

  const Constraints& cons_;
  int iterations_;
  std::optional<double> epsilon_setting_;
  double alpha_;
  double min_stiffness_;
  double max_work_;
  FormulationSettings::OnSingular on_singular_;
  double epsilon_ = 0.0;  ///< of the run (start())
  double a_max_ = 0.0;    ///< largest eigenvalue of G M⁻¹ Gᵀ at the start
  double a_min_ = 0.0;    ///< smallest one
  bool reported_ = false;  ///< the first failure of a check, with on_singular = proceed
  double work_ = 0.0, power_ = 0.0;            ///< of the loop forces since the start, at the last step
  double potential0_ = 0.0;  ///< V(0), gravity and springs (J)
  double stored_max_ = 0.0;  ///< largest T + |V − V(0)| so far (J)
  double t_accepted_ = 0.0;
  double weight_energy_ = 0.0;  ///< m g × 1 m (J), m the mass of all the bodies
  double floor_ = 0.0;  ///< the larger of the weight × 1 m and the springs' energy at the start (J)
  /// E_s (J): the larger of stored_max_ and floor_.
  double energy_scale() const { return std::max(stored_max_, floor_); }
  AbaData aba_;
  ConstraintData data_;
  ForceData forces_;
  VecX phi_, phidot_;
  VecX lambda0_, lambda_;
  Mat6X loop_wrench_, fext_;
  VecX tau_, qs_, us_, udot_;
  VecX correction_;  ///< (m) λ_s − λ_{s−1} of the last iterate evaluated
  VecX cg_b_, cg_r_, cg_p_, cg_Ap_;  ///< conjugate gradients (m)
};

}  // namespace loopdyn
