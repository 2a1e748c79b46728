// Analysis of a mechanism at a state (analysis.hpp): kinematics by name, M, G and its null space,
// the completion of a closed motion, and inverse dynamics of the closed mechanism.
#include "loopdyn/loops/analysis.hpp"

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "loopdyn/core/linalg.hpp"
#include "loopdyn/core/names.hpp"
#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/loops/projection.hpp"

namespace loopdyn {

namespace {

void check_state(const VecX& x, Eigen::Index size, const char* what, const char* size_name) {
  if (x.size() != size)
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(x.size()) + " entries, expected " +
                                size_name + " = " + std::to_string(size));
  for (Eigen::Index k = 0; k < x.size(); ++k)
    if (!std::isfinite(x(k)))
      throw std::invalid_argument(std::string(what) + "[" + std::to_string(k) + "] is not finite");
}

// Right singular vectors of G beyond its rank (numerical_rank's rule, linalg.hpp): an orthonormal
// null space.
MatX null_space(const MatX& G) {
  const Eigen::Index nv = G.cols();
  if (G.rows() == 0) return MatX::Identity(nv, nv);
  const Eigen::BDCSVD<MatX> svd(G, Eigen::ComputeFullV);
  const VecX& s = svd.singularValues();
  const double tol = static_cast<double>(std::max(G.rows(), nv)) * std::numeric_limits<double>::epsilon() *
                     (s.size() ? s(0) : 0.0);
  Eigen::Index rank = 0;
  while (rank < s.size() && s(rank) > tol) ++rank;
  return svd.matrixV().rightCols(nv - rank);
}

}  // namespace

Analysis::Analysis(const Model& model)
    : model_(model),
      constraints_(model.loops().constraints),
      kin_(model),
      constraint_data_(model),
      crba_(model),
      rnea_(model),
      forces_(model),
      G_(constraints_.rows(), model.nv) {}

void Analysis::at(const VecX& q) {
  check_state(q, model_.nq, "q", "nq");
  update_positions(model_, kin_, q);
}

void Analysis::at(const VecX& q, const VecX& u) {
  at(q);
  check_state(u, model_.nv, "u", "nv");
  update_velocities(model_, kin_, q, u);
}

int Analysis::body(std::string_view name) const {
  const int i = model_.body_index(name);  // ModelError (an invalid_argument) for an unknown name
  if (i < 0) throw std::invalid_argument("body '" + std::string(name) + "': the ground has no pose or speeds to ask for");
  return i;
}

const ModelMarker& Analysis::marker(std::string_view name) const {
  for (const ModelMarker& m : model_.markers)
    if (m.name == name) return m;
  std::vector<std::string> names;
  for (const ModelMarker& m : model_.markers) names.push_back(m.name);
  throw std::invalid_argument("unknown marker '" + std::string(name) + "' (" +
                              (names.empty() ? std::string("the model has none") : "markers: " + quoted_list(names)) + ")");
}

std::vector<int> Analysis::speeds_of(const std::vector<std::string>& joints, const char* what) const {
  std::vector<int> speeds;
  for (std::size_t k = 0; k < joints.size(); ++k) {
    int j = -1;
    try {
      j = model_.joint_index(joints[k]);
    } catch (const ModelError& e) {
      throw std::invalid_argument(std::string(what) + ": " + e.what());
    }
    if (std::find(joints.begin(), joints.begin() + static_cast<long>(k), joints[k]) != joints.begin() + static_cast<long>(k))
      throw std::invalid_argument(std::string(what) + ": joint '" + joints[k] + "' is named twice");
    for (int s = 0; s < model_.nv_joint[j]; ++s) speeds.push_back(model_.v_index[j] + s);
  }
  return speeds;
}

const MatX& Analysis::jacobian() {
  constraint_jacobian(model_, constraints_, kin_, constraint_data_, G_);
  return G_;
}

Transform Analysis::body_pose(const VecX& q, std::string_view name) {
  const int i = body(name);
  at(q);
  return kin_.X_world[i];
}

Vec3 Analysis::marker_position(const VecX& q, std::string_view name) {
  const ModelMarker& m = marker(name);
  at(q);
  return point_position(kin_, m.body, m.point);
}

Vec3 Analysis::marker_velocity(const VecX& q, const VecX& u, std::string_view name) {
  const ModelMarker& m = marker(name);
  at(q, u);
  return point_velocity(kin_, m.body, m.point);
}

Mat6X Analysis::frame_jacobian(const VecX& q, std::string_view name, const Transform& frame, Axes axes) {
  const int i = body(name);
  at(q);
  Mat6X J(6, model_.nv);
  loopdyn::frame_jacobian(model_, kin_, i, frame, J);
  if (axes == Axes::world) {
    const Mat3 R = kin_.X_world[i].R * frame.R;  // frame axes → world axes
    J.topRows<3>() = (R * J.topRows<3>()).eval();
    J.bottomRows<3>() = (R * J.bottomRows<3>()).eval();
  }
  return J;
}

Eigen::Matrix<double, 3, Eigen::Dynamic> Analysis::marker_jacobian(const VecX& q, std::string_view name) {
  const ModelMarker& m = marker(name);
  at(q);
  Eigen::Matrix<double, 3, Eigen::Dynamic> J(3, model_.nv);
  point_jacobian(model_, kin_, m.body, m.point, J);
  return J;
}

MatX Analysis::mass_matrix(const VecX& q) {
  at(q);
  MatX M(model_.nv, model_.nv);
  crba(model_, kin_, crba_, M);
  return M;
}

MatX Analysis::loop_jacobian(const VecX& q) {
  at(q);
  return jacobian();
}

MatX Analysis::loop_null_space(const VecX& q) {
  at(q);
  return null_space(jacobian());
}

ClosedMotion Analysis::complete_motion(double t, const VecX& q_guess, const std::vector<std::string>& joints,
                                       const VecX& q, const VecX& u, const VecX& udot) {
  check_state(q_guess, model_.nq, "q_guess", "nq");
  const std::vector<int> given = speeds_of(joints, "complete_motion");
  int nq_given = 0;
  for (const std::string& name : joints) nq_given += model_.nq_joint[model_.joint_index(name)];
  const auto ng = static_cast<Eigen::Index>(given.size());
  check_state(q, nq_given, "q (of the given joints)", "their coordinates");
  check_state(u, ng, "u (of the given joints)", "their speeds");
  check_state(udot, ng, "udot (of the given joints)", "their speeds");

  ClosedMotion out{q_guess, VecX::Zero(model_.nv), VecX::Zero(model_.nv)};
  AssemblySettings settings;
  settings.time = t;
  settings.fixed_speeds.assign(static_cast<std::size_t>(model_.nv), false);
  Eigen::Index qk = 0;
  for (const std::string& name : joints) {
    const int j = model_.joint_index(name);
    out.q.segment(model_.q_index[j], model_.nq_joint[j]) = q.segment(qk, model_.nq_joint[j]);
    qk += model_.nq_joint[j];
  }
  for (Eigen::Index k = 0; k < ng; ++k) {
    out.u(given[k]) = u(k);
    out.udot(given[k]) = udot(k);
    settings.fixed_speeds[static_cast<std::size_t>(given[k])] = true;
  }
  const AssemblyResult a = assemble(model_, constraints_, out.q, out.u, settings);
  // The given joints must be the independent ones, and all of them.
  std::vector<int> moved, free;
  for (int s : given)
    if (!std::binary_search(a.independent_speeds.begin(), a.independent_speeds.end(), s)) moved.push_back(s);
  for (int s : a.independent_speeds)
    if (std::find(given.begin(), given.end(), s) == given.end()) free.push_back(s);
  if (!moved.empty())
    throw std::runtime_error("complete_motion: the given joints are not independent: the loops fix " +
                             model_.speed_names(moved) + " once the others are given");
  if (!free.empty())
    throw std::runtime_error("complete_motion: the given joints leave " + std::to_string(free.size()) +
                             " degree(s) of freedom open: give also " + model_.speed_names(free) + " (or joints that fix them)");
  out.q = a.q;
  out.u = a.u;
  // Accelerations: G_d u̇_d = γ(t) − G_i u̇_i (001 eq 14 differentiated once more).
  at(out.q, out.u);
  const MatX& G = jacobian();
  const int m = constraints_.rows();
  if (m > 0) {
    VecX gamma(m);
    constraint_bias(model_, constraints_, kin_, t, constraint_data_, gamma);
    std::vector<int> dependent;
    for (int s = 0; s < model_.nv; ++s)
      if (std::find(given.begin(), given.end(), s) == given.end()) dependent.push_back(s);
    const MatX Gd = G(Eigen::all, dependent);
    const VecX rhs = gamma - G * out.udot;
    const VecX udot_d = Gd.completeOrthogonalDecomposition().solve(rhs);
    out.udot(dependent) = udot_d;
  }
  return out;
}

InverseDynamicsResult Analysis::inverse_dynamics(double t, const VecX& q, const VecX& u, const VecX& udot,
                                                 const std::vector<std::string>& actuated) {
  if (!std::isfinite(t)) throw std::invalid_argument("inverse_dynamics: t is not finite");
  check_state(udot, model_.nv, "udot", "nv");
  const std::vector<int> speeds = speeds_of(actuated, "inverse_dynamics");
  at(q, u);
  const int m = constraints_.rows(), nv = model_.nv;
  const MatX& G = jacobian();
  if (m > 0) {
    // The motion must be one of the closed mechanism: Φ = 0, G u + Φ_t = 0, G u̇ = γ.
    VecX phi(m), phi_t(m), gamma(m);
    constraint_position(model_, constraints_, kin_, t, constraint_data_, phi);
    constraint_time_rate(model_, constraints_, t, phi_t);
    constraint_bias(model_, constraints_, kin_, t, constraint_data_, gamma);
    const VecX velocity = G * u + phi_t, acceleration = G * udot - gamma;
    const double tol = consistency_tolerance;
    const auto check = [&](const VecX& r, double scale, const char* level) {
      Eigen::Index row = 0;
      const double worst = r.cwiseAbs().maxCoeff(&row);
      if (worst > tol * scale)
        throw std::runtime_error("inverse_dynamics: the motion does not close the loops at " + std::string(level) +
                                 " level: residual " + short_number(worst) + " at " +
                                 row_owner(model_, constraints_.kept()[static_cast<std::size_t>(row)]) +
                                 " (tolerance " + short_number(tol * scale) +
                                 "); complete_motion gives a motion that does, from the independent joints' motion");
    };
    check(phi, 1.0, "position");
    check(velocity, velocity_scale(G, u), "velocity");
    check(acceleration, std::max({1.0, G.cwiseAbs().maxCoeff() * inf_norm(udot), inf_norm(gamma)}), "acceleration");
  }
  // b = M u̇ + C − Q, the RNEA with the applied forces.
  evaluate_forces(model_, kin_, t, q, u, forces_);
  VecX b(nv);
  rnea(model_, kin_, rnea_, udot, &forces_.f_body, b);
  b -= forces_.applied.tau;

  InverseDynamicsResult r;
  for (int s : speeds) r.names.push_back(model_.speed_names({s}));
  const MatX N = null_space(G);
  r.dof = static_cast<int>(N.cols());
  const MatX A = N(speeds, Eigen::all).transpose();  // Nᵀ B
  const VecX Ntb = N.transpose() * b;
  r.tau = VecX::Zero(A.cols());
  if (A.size() > 0) {
    const Eigen::CompleteOrthogonalDecomposition<MatX> cod(A);
    r.rank = static_cast<int>(cod.rank());
    r.tau = cod.solve(Ntb);
  }
  r.least_norm = static_cast<int>(speeds.size()) > r.rank;
  // A motion the actuators cannot produce leaves a residual of the order of the forces b; one
  // they can leaves the rounding of b and of the state's closure (consistency_tolerance, 1e-8,
  // times the conditioning): 1e-6 of the forces' scale separates the two.
  const double residual = (A * r.tau - Ntb).norm(), scale = 1.0 + b.norm();
  if (!(residual <= 1e-6 * scale)) {
    std::ostringstream s;
    s << "inverse_dynamics: under-actuated: the actuated joints drive " << r.rank << " of the mechanism's " << r.dof
      << " degrees of freedom, and this motion needs forces beyond them (residual " << short_number(residual)
      << " of the generalized forces' " << short_number(scale) << ")";
    throw std::runtime_error(s.str());
  }
  // λ from Gᵀ λ = B τ − b.
  VecX rhs = -b;
  for (std::size_t k = 0; k < speeds.size(); ++k) rhs(speeds[k]) += r.tau(static_cast<Eigen::Index>(k));
  r.multipliers = m > 0 ? VecX(G.transpose().completeOrthogonalDecomposition().solve(rhs)) : VecX();
  return r;
}

}  // namespace loopdyn
