// The test suite's own method (docs/methods.md, "How to add a method"): everything a new method
// needs is in this one file (its settings, their option table, the formulation, its registry row),
// and test_add_method.cpp registers the row and checks that the factory, run() with the watch,
// the front ends' option parsing and the docs' tables pick it up.
//
// `toy`: Lagrange multipliers on top of the tree sweeps (CRBA, RNEA), paper 001 eq 10 with a
// compliance c of the loop rows: (G M⁻¹ Gᵀ + c I) λ = G M⁻¹ Q − γ, u̇ = M⁻¹ (Q − Gᵀ λ), with
// Q = τ − C(q, u) + Jᵀ f_ext. c = 0 (the default) is lagrange-dense without Baumgarte terms.
#pragma once

#include <Eigen/Cholesky>
#include <memory>
#include <stdexcept>

#include "loopdyn/core/forces.hpp"
#include "loopdyn/core/kinematics.hpp"
#include "loopdyn/core/options.hpp"
#include "loopdyn/core/tree_dynamics.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/loops/constraints.hpp"
#include "loopdyn/loops/loop_structure.hpp"

namespace loopdyn::toy {

inline constexpr std::string_view kName = "toy";

/// The method's settings: one option.
struct ToySettings {
  double compliance = 0.0;  ///< c (m/N for `along` rows): the loop rows yield by c λ
};

/// Its option table: the name is Python's keyword (toy_compliance=) and the CLI's flag (--toy-compliance).
inline const OptionTable<ToySettings>& toy_options() {
  static const OptionTable<ToySettings> table{
      member_option("toy_compliance", &ToySettings::compliance, "m/N",
                    "toy: compliance c of the loop rows in (G M⁻¹ Gᵀ + c I) λ = G M⁻¹ Q − γ"),
  };
  return table;
}

class ToyLagrange final : public Formulation {
 public:
  ToyLagrange(const Model& model, const FormulationSettings& settings)
      : Formulation(model), settings_(settings.extra<ToySettings>(kName)), cons_(model.loops().constraints),
        kin_(model), forces_(model), rnea_(model), crba_(model), cons_data_(model), M_(model.nv, model.nv),
        G_(cons_.rows(), model.nv), A_(cons_.rows(), cons_.rows()), gamma_(cons_.rows()), lambda_(cons_.rows()),
        Q_(model.nv), zero_(VecX::Zero(model.nv)) {}
  std::string_view name() const override { return kName; }
  const VecX& multipliers() const override { return lambda_; }

  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override {
    update_positions(model_, kin_, q);
    update_velocities(model_, kin_, q, u);
    evaluate_forces(model_, kin_, t, q, u, forces_);
    rnea(model_, kin_, rnea_, zero_, &forces_.f_body, Q_);  // C(q, u) − Jᵀ f_ext
    Q_ = forces_.applied.tau - Q_;
    crba(model_, kin_, crba_, M_);
    const Eigen::LLT<MatX> llt(M_);
    if (cons_.rows() > 0) {
      constraint_jacobian(model_, cons_, kin_, cons_data_, G_);
      constraint_bias(model_, cons_, kin_, t, cons_data_, gamma_);
      const MatX MinvGt = llt.solve(G_.transpose());
      A_.noalias() = G_ * MinvGt;
      A_.diagonal().array() += settings_.compliance;
      lambda_ = A_.ldlt().solve(G_ * llt.solve(Q_) - gamma_);
      Q_.noalias() -= G_.transpose() * lambda_;
    }
    udot = llt.solve(Q_);
  }

  /// The registry's row (formulation.hpp, MethodInfo): what register_method takes.
  static MethodInfo row() {
    MethodInfo m;
    m.name = kName;
    m.what = "test suite's toy: CRBA, RNEA and a compliant (n+m) KKT solve";
    m.paper = "001 §2.1";
    m.cost = "O(n³ + m³)";
    m.multipliers = true;
    m.make = [](const Model& model, const FormulationSettings& s) -> std::unique_ptr<Formulation> {
      return std::make_unique<ToyLagrange>(model, s);
    };
    m.options = [] () -> const OptionTable<FormulationSettings>& {
      static const OptionTable<FormulationSettings> table = nested_options<FormulationSettings>(
          toy_options(), [](auto& s) -> decltype(auto) { return s.template extra<ToySettings>(kName); });
      return table;
    };
    return m;
  }

 private:
  const ToySettings settings_;
  const Constraints& cons_;
  KinematicsData kin_;
  ForceData forces_;
  RneaData rnea_;
  CrbaData crba_;
  ConstraintData cons_data_;
  MatX M_, G_, A_;
  VecX gamma_, lambda_, Q_, zero_;
};

}  // namespace loopdyn::toy
