// `tree`: forward dynamics of a mechanism without loops by the articulated-body algorithm,
// O(n) (Featherstone Table 7.1; Jain 002 §6, eq 42 and Algorithm 6.1).
#pragma once

#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/core/tree_dynamics.hpp"

namespace loopdyn {

class TreeFormulation final : public Formulation {
 public:
  /// Throws ModelError if the model has loop-closing joints.
  explicit TreeFormulation(const Model& model);
  /// Why `tree` cannot take the model (its loop-closing joints and couplings), or empty.
  static std::string out_of_scope(const Model& model, const VecX& q = {});
  std::string_view name() const override { return "tree"; }
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override;
  std::optional<double> applied_power() const override { return forces_.power; }

 private:
  AbaData aba_;
  ForceData forces_;
};

}  // namespace loopdyn
