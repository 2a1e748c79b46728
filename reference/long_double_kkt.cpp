#include "long_double_kkt.hpp"

#include <Eigen/LU>

#include <algorithm>

#include "loopdyn/core/forces.hpp"
#include "loopdyn/core/tree_dynamics.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/run/simulator.hpp"

namespace loopdyn::reference {

VecX long_double_accelerations(const Model& model, const Constraints& cons, const VecX& q, const VecX& u,
                               std::uint64_t rounding) {
  using LD = long double;
  using MatL = Eigen::Matrix<LD, Eigen::Dynamic, Eigen::Dynamic>;
  KinematicsData kin(model);
  update_positions(model, kin, q);
  update_velocities(model, kin, q, u);
  ForceData forces(model);
  evaluate_forces(model, kin, 0.0, q, u, forces);
  // Q = τ − (C(q, u) − Jᵀ f_ext): RNEA at u̇ = 0 gives the bracket.
  RneaData rnea_data(model);
  VecX Q(model.nv);
  rnea(model, kin, rnea_data, VecX::Zero(model.nv), &forces.f_body, Q);
  Q = forces.applied.tau - Q;
  CrbaData crba_data(model);
  MatX M(model.nv, model.nv);
  crba(model, kin, crba_data, M);
  ConstraintData cd(model);
  const int m = cons.rows(), nv = model.nv;
  MatX G(m, nv);
  VecX gamma(m);
  constraint_jacobian(model, cons, kin, cd, G);
  constraint_bias(model, cons, kin, 0.0, cd, gamma);
  if (rounding) {
    SplitMix64 rng(rounding);
    for (MatX* A : {&M, &G})
      for (double& x : A->reshaped()) x *= 1.0 + (rng.next() % 2 ? 1.1e-16 : -1.1e-16);
    M = (0.5 * (M + M.transpose())).eval();
  }
  MatL K = MatL::Zero(nv + m, nv + m);
  K.topLeftCorner(nv, nv) = M.cast<LD>();
  K.topRightCorner(nv, m) = G.transpose().cast<LD>();
  K.bottomLeftCorner(m, nv) = G.cast<LD>();
  Eigen::Matrix<LD, Eigen::Dynamic, 1> rhs(nv + m);
  rhs << Q.cast<LD>(), gamma.cast<LD>();
  return K.partialPivLu().solve(rhs).head(nv).cast<double>();
}

double rounding_change(const Model& model, const Constraints& cons, const VecX& q, const VecX& u, const VecX& exact) {
  double change = 0.0;
  for (std::uint64_t seed : {1, 2, 3})
    change = std::max(change, (long_double_accelerations(model, cons, q, u, seed) - exact).norm() / exact.norm());
  return change;
}

std::vector<ClosedState> moving_states(const Model& model, const Constraints& cons, double h, double every,
                                       double from, double t_end) {
  auto dca = make_formulation("dca", model);
  SimulationSettings s;
  s.integrator.kind = IntegratorKind::rk4;
  s.integrator.dt = h;
  s.t_end = t_end;
  s.output_dt = every;
  Simulator sim(model, *dca, s);
  std::vector<ClosedState> states;
  for (const VecX& row : sim.run(model.q0, model.u0).rows) {
    if (row(0) < from - 1e-9) continue;
    const AssemblyResult a = assemble(model, cons, row.segment(1, model.nq), row.segment(1 + model.nq, model.nv));
    states.push_back({row(0), a.q, a.u});
  }
  return states;
}

}  // namespace loopdyn::reference
