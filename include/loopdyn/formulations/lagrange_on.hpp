// `lagrange-on`: the "traditional O(n)" closure of paper 000 §2.3-2.5. The articulated-body
// sweeps give u̇ = η + ζ λ (eq 13): η is the tree's acceleration without loop forces (eqs 24, 26,
// 27), each column of ζ the response to a unit constraint load (eqs 25, 28, 29); the m
// multipliers then solve [G ζ] λ = γ̄ − G η (eqs 30-32). Here a unit load is the generalized
// force −Gᵀ e_r pushed through the factored ABA (aba_solve with Bias::no), the same linear map
// as the paper's cut-joint loads E_i. Cost O(n + nm + nm² + m³) (000 §2.6): O(n) only when m ≪ n.
#pragma once

#include <utility>
#include <vector>

#include "loopdyn/formulations/lagrange.hpp"
#include "loopdyn/core/tree_dynamics.hpp"

namespace loopdyn {

class LagrangeOn final : public LagrangeFormulation {
 public:
  LagrangeOn(const Model& model, const FormulationSettings& settings);
  std::string_view name() const override { return "lagrange-on"; }
  void accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) override;
  std::optional<double> applied_power() const override { return forces_.power; }

 private:
  AbaData aba_;
  ForceData forces_;
  VecX eta_, load_, rhs_;  ///< (nv), (nv), (m)
  MatX zeta_, A_;          ///< (nv x m), (m x m)
  std::vector<std::pair<int, int>> support_;  ///< (m) columns [first, end) of G's nonzeros per row
};

}  // namespace loopdyn
