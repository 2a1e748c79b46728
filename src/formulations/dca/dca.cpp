// dca as a Formulation (formulations/dca.hpp): the constructor's steps, the accelerations (applied
// forces, then the augmented-Lagrangian refinement), the state maps and the step hooks.
#include "loopdyn/formulations/dca.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "formulations/dca/engine.hpp"
#include "loopdyn/core/kinematics.hpp"
#include "loopdyn/loops/loop_structure.hpp"

namespace loopdyn {

namespace dca {

// The constructor's steps, each from the previous one's result: the parameters (checked,
// parameters_of), the constraints and rows (constraint_set), the assembly tree on them
// (assembly_tree), the solver's storage for that tree (Solver), then the workspaces of the bodies,
// the rows and the joint-state maps.
Engine::Engine(const Model& model_in, const Parameters& p)
    : model(model_in), parameters(p), layout(model_in.nbodies),
      parallel(p.threads),
      set(constraint_set(model_in)), tree(assembly_tree(model_in, set)), solver(model_in, set, tree, parallel, p),
      kin_(model_in), forces_(model_in), reference_(model_in.q0),
      kept_solver_(model_in.loops().constraints.rows(), p.rank_tolerance), joint_rows_(model_in) {
  size_bodies();
  size_rows();
  size_joint_maps();
}

void Engine::size_bodies() {
  const int nb = model.nbodies;
  for (int i = 0; i < nb; ++i)
    Jc_.push_back(model.inertia[i].topLeftCorner<3, 3>() - model.mass[i] * skew(model.com[i]) * skew(model.com[i]).transpose());
  R_.assign(nb, Mat3::Identity());
  r_.assign(nb, Vec3::Zero());
  w_.assign(nb, Vec3::Zero());
  v_.assign(nb, Vec3::Zero());
  r_star_.assign(nb, Vec3::Zero());
  R_star_.assign(nb, Mat3::Identity());
  inertia_.assign(nb, Mat3::Identity());
  loaded_inertia_.assign(nb, Mat3::Identity());
  for (VecX* v : {&Q_, &rhs_, &out_, &prev_, &res_, &acc_}) v->setZero(BodyVector::size(nb));
  stage_.setZero(layout.size());
}

void Engine::size_rows() {
  const int m = set.size();
  for (VecX* v : {&phi_, &phidot_, &gamma_, &nu_, &lambda_, &c_, &warm_lambda_}) v->setZero(m);
  Gblk_.setZero(6, set.first_block[m]);
  fp_.resize(set.constraints.size());
  fc_.resize(set.constraints.size());
  coupling_q_ = set.coupling_q0;
}

void Engine::size_joint_maps() {
  const int nb = model.nbodies;
  has_forces_ = !model.forces.empty() || !model.callbacks.empty();
  qf_.setZero(model.nq);
  uf_.setZero(model.nv);
  state_.pose.resize(nb);
  state_.velocity.resize(nb);
  q_joint_.setZero(model.nq);
  u_joint_.setZero(model.nv);
  x_joint_.setZero(layout.size());
  a_joint_.setZero(BodyVector::size(nb));
  body_acc_.assign(nb, Vec6::Zero());
  const LoopStructure& loops = model.loops();
  kept_lambda_.setZero(loops.constraints.rows());
  G_all_.setZero(loops.unreduced.rows(), model.nv);
  G_kept_.setZero(loops.constraints.rows(), model.nv);
  generalized_.setZero(model.nv);
  kept_rhs_.setZero(loops.constraints.rows());
  kept_normal_.setZero(loops.constraints.rows(), loops.constraints.rows());
}

void Engine::applied_forces(double t, const Eigen::Ref<const VecX>& x) {
  const int nb = model.nbodies;
  // Wrenches [moment about the world origin; force], world axes, then about each centre of mass.
  Q_.setZero();
  if (has_forces_) {
    joint_state_of(x, reference_);
    qf_ = q_joint_;
    uf_ = u_joint_;
    update_positions(model, kin_, qf_);
    update_velocities(model, kin_, qf_, uf_);
    evaluate_forces(model, kin_, t, qf_, uf_, forces_);
    for (int i = 0; i < nb; ++i) {
      BodyVector::body(Q_, i) += forces_.applied.f_world.col(i);
      // Joint forces τ as the wrench F = S (SᵀS)⁻¹ τ on the child, −F on the parent (Sᵀ F = τ).
      const int nv = model.nv_joint[i];
      if (nv == 0) continue;
      const auto S = kin_.S.middleCols(model.v_index[i], nv);
      const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6> StS = S.transpose() * S;
      const Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> tau = forces_.applied.tau.segment(model.v_index[i], nv);
      const Vec6 F = kin_.X_world[i].act_force(S * StS.ldlt().solve(tau));
      BodyVector::body(Q_, i) += F;
      if (model.parent[i] >= 0) BodyVector::body(Q_, model.parent[i]) -= F;
    }
  }
  parallel.for_each(nb, [&](int i) {
    auto q = BodyVector::body(Q_, i);
    const Vec3 f = q.tail<3>() + model.mass[i] * model.gravity;
    const Mat3 J = R_[i] * Jc_[i] * R_[i].transpose();
    q.head<3>() = q.head<3>() - r_[i].cross(q.tail<3>()) - w_[i].cross(J * w_[i]);
    q.tail<3>() = f;
  });
}

void Engine::body_accelerations(double t, const VecX& x, Eigen::Ref<VecX> a) {
  load_bodies(x, true);
  applied_forces(t, x);
  const Factorization at_x = factor(update_rows(true));
  start_accelerations();
  out_.setZero();
  finish_accelerations(solver.refine(at_x, Q_, nu_, parameters.eps_a, out_, lambda_), out_, a);
}

void Engine::stage_accelerations(double t, Eigen::Ref<VecX> x, Eigen::Ref<VecX> a) {
  load_bodies(x, true);
  const Factorization at_stage = factor(update_rows(false));  // at the stage's positions q*
  project_stage(at_stage, x);
  update_rows(true);
  applied_forces(t, x);
  start_accelerations();
  finish_accelerations(refine_at_loaded(at_stage), acc_, a);
}

void Engine::start_accelerations() {
  // ν = −γ + 2μΩ Φ̇ + Ω² Φ (004 eq 6, with G a = γ).
  const double mu = parameters.mu, omega = parameters.omega;
  nu_ = -gamma_ + 2.0 * mu * omega * phidot_ + omega * omega * phi_;
  lambda_ = warm_lambda_;
}

void Engine::finish_accelerations(int iterations, const VecX& acc, Eigen::Ref<VecX> a) {
  diagnostics_.acceleration_iterations = iterations;
  if (refresh_warm_) warm_lambda_ = lambda_;
  refresh_warm_ = false;
  constraint_residual(acc, nu_);
  diagnostics_.acceleration_residual = max_abs(c_);
  a = acc;
}

int Engine::refine_at_loaded(const Factorization& f) {
  const int nb = model.nbodies;
  parallel.for_each(nb, [&](int i) { loaded_inertia_[i] = R_[i] * Jc_[i] * R_[i].transpose(); });
  acc_.setZero();
  int k = 0;
  while (k < parameters.max_iterations) {
    // Residuals Q − M a − Gᵀλ and G a + ν at the loaded state; the solve's own (x, λ null) are none.
    parallel.for_each(nb, [&](int i) {
      BodyVector::body(res_, i) =
          BodyVector::body(Q_, i) - mass_times(loaded_inertia_[i], model.mass[i], BodyVector::body(acc_, i));
      subtract_constraint_forces(i);
    });
    constraint_residual(acc_, nu_);
    solver.solve(f, res_, nullptr, nullptr, c_, out_);
    acc_ += out_;
    lambda_ += solver.dlambda();
    ++k;
    if (out_.cwiseAbs().maxCoeff() < floor_of(parameters.eps_a, acc_.cwiseAbs().maxCoeff())) break;
  }
  return k;
}

void Engine::joint_state_of(const Eigen::Ref<const VecX>& x, const VecX& near) const {
  const int nb = model.nbodies;
  for (int i = 0; i < nb; ++i) {
    const Mat3 R = layout.rotation(x, i);
    const Vec3 c = R * model.com[i];
    state_.pose[i] = {R, Vec3(layout.r(x, i)) - c};
    const Vec3 w = layout.w(x, i), v = layout.v(x, i);
    state_.velocity[i] << R.transpose() * w, R.transpose() * (v - w.cross(c));
  }
  joint_state(model, state_, near, q_joint_, u_joint_);
}

}  // namespace dca

Dca::Dca(const Model& model, const FormulationSettings& settings)
    : Formulation(model), e_(std::make_unique<dca::Engine>(model, dca::parameters_of(settings))) {}

Dca::~Dca() = default;

void Dca::start(const StepPlan& /*plan*/, const VecX& q0, const VecX& /*u0*/) {
  e_->warm_lambda_.setZero();
  e_->refresh_warm_ = true;
  e_->reference_ = q0;
}

int Dca::state_size() const { return e_->layout.size(); }

std::string Dca::summary() const {
  const TreeShape shape = tree_shape();
  char line[200];
  std::snprintf(line, sizeof line, "α = %.3g, %d constraint rows; assembly tree of %d nodes, depth %d, at most %d handles; "
                "%d thread%s", alpha(), shape.rows, shape.nodes, shape.depth, shape.max_handles, threads(),
                threads() > 1 ? "s" : "");
  return line;
}

Dca::TreeShape Dca::tree_shape() const { return dca::tree_shape(e_->tree, e_->set); }
int Dca::threads() const { return e_->parallel.threads(); }
double Dca::alpha() const { return e_->parameters.alpha; }
const Dca::Diagnostics& Dca::diagnostics() const { return e_->diagnostics_; }

void Dca::body_accelerations(double t, const VecX& x, Eigen::Ref<VecX> a) { e_->body_accelerations(t, x, a); }

void Dca::project(Eigen::Ref<VecX> x) { e_->project(x); }

void Dca::derivative(double t, const VecX& x, Eigen::Ref<VecX> dx) {
  dca::Engine& e = *e_;
  const dca::StateLayout& s = e.layout;
  // The accelerations, and below the positions' rates, at the stage projected onto the constraints
  // (formulations/dca.hpp, "Stages"), or at the stage itself without projections.
  const VecX* at = &x;
  if (e.parameters.projections) {
    e.stage_ = x;
    e.stage_accelerations(t, e.stage_, s.velocities(dx));
    at = &e.stage_;
  } else {
    e.body_accelerations(t, x, s.velocities(dx));
  }
  e.parallel.for_each(model_.nbodies, [&](int i) {
    s.r(dx, i) = s.v(*at, i);
    const auto p = s.p(*at, i);
    const Vec3 w = s.w(*at, i);
    // ṗ = ½ (0, ω) ⊗ p, ω in world axes.
    auto dp = s.p(dx, i);
    dp(0) = -0.5 * w.dot(p.tail<3>());
    dp.tail<3>() = 0.5 * (p(0) * w + w.cross(p.tail<3>()));
  });
}

void Dca::accept(double /*t*/, Eigen::Ref<VecX> x) {
  dca::Engine& e = *e_;
  for (int i = 0; i < model_.nbodies; ++i) e.layout.p(x, i).normalize();
  e.refresh_warm_ = true;
  if (e.parameters.projections) {
    e.project(x);
  } else {
    e.load_bodies(x, true);
    e.update_rows(true);
    e.diagnostics_.position_iterations = e.diagnostics_.velocity_iterations = 0;
    e.diagnostics_.position_residual = e.max_abs(e.phi_);
    e.diagnostics_.velocity_residual = e.max_abs(e.phidot_);
  }
  // x's joint coordinates become the reference of the next to_joint, so that output stays continuous.
  e.joint_state_of(x, e.reference_);
  e.reference_ = e.q_joint_;
}

void Dca::complete(double t, Eigen::Ref<VecX> x) {
  // An output row's state, projected as an accepted one, leaves the run as it was: the diagnostics
  // stay the step's, and the warm start of the next evaluation stays the accepted state's (rows are
  // written after the accepted state's first evaluation).
  const Diagnostics step = e_->diagnostics_;
  const bool refresh = e_->refresh_warm_;
  accept(t, x);
  e_->diagnostics_ = step;
  e_->refresh_warm_ = refresh;
}

std::vector<std::string> Dca::diagnostic_names() const {
  return {"dca.iterations.acceleration", "dca.iterations.position", "dca.iterations.velocity",
          "dca.residual.position",       "dca.residual.velocity",   "dca.residual.acceleration"};
}

void Dca::diagnostic_values(Eigen::Ref<VecX> out) const {
  const Diagnostics& d = e_->diagnostics_;
  out << d.acceleration_iterations, d.position_iterations, d.velocity_iterations, d.position_residual,
      d.velocity_residual, d.acceleration_residual;
}

void Dca::to_state(const VecX& q, const VecX& u, Eigen::Ref<VecX> x) const {
  const dca::StateLayout& s = e_->layout;
  BodyState b;
  body_state(model_, q, u, b);
  for (int i = 0; i < model_.nbodies; ++i) {
    const Transform& X = b.pose[i];
    const Vec3 c = X.R * model_.com[i];
    const Quat p(X.R);
    s.r(x, i) = X.p + c;
    auto xp = s.p(x, i);
    xp(0) = p.w();
    xp.tail<3>() = p.vec();
    // Body-frame spatial velocity [ω; v of the body frame origin] to world ω and ṙ of the centre.
    const Vec3 w = X.R * b.velocity[i].head<3>();
    s.w(x, i) = w;
    s.v(x, i) = X.R * b.velocity[i].tail<3>() + w.cross(c);
  }
}

void Dca::to_joint(const VecX& x, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) const {
  const dca::Engine& e = *e_;
  e.joint_state_of(x, e.reference_);
  q = e.q_joint_;
  u = e.u_joint_;
}

void Dca::accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) {
  dca::Engine& e = *e_;
  const dca::StateLayout& s = e.layout;
  VecX& x = e.x_joint_;
  to_state(q, u, x);
  e.reference_ = q;  // (q, u)'s own branch for the applied forces' joint state
  e.body_accelerations(t, x, e.a_joint_);
  // a_i (body frame) = X⁻¹ a_parent + S u̇ + c (kinematics.hpp): u̇ by least squares on S.
  update_positions(model_, e.kin_, q);
  update_velocities(model_, e.kin_, q, u);
  for (int i = 0; i < model_.nbodies; ++i) {
    const Vec3 dw = dca::BodyVector::angular(e.a_joint_, i), ddr = dca::BodyVector::linear(e.a_joint_, i);
    const Vec3 w = s.w(x, i), v = s.v(x, i);
    const Vec3 rc = s.r(x, i);
    Vec6 A;  // world spatial acceleration about the world origin
    A << dw, ddr - dw.cross(rc) - w.cross(v);
    e.body_acc_[i] = e.kin_.X_world[i].inv_act_motion(A);
    Vec6 rel = e.body_acc_[i] - e.kin_.c[i];
    if (model_.parent[i] >= 0) rel -= e.kin_.X_parent[i].inv_act_motion(e.body_acc_[model_.parent[i]]);
    const int nv = model_.nv_joint[i];
    if (nv == 0) continue;
    const auto S = e.kin_.S.middleCols(model_.v_index[i], nv);
    const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6> StS = S.transpose() * S;
    const Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> Str = S.transpose() * rel;
    udot.segment(model_.v_index[i], nv) = StS.ldlt().solve(Str);
  }
  e.kept_stale_ = true;  // multipliers() maps λ on demand, at this (q, u)
}

const VecX& Dca::multipliers() const {
  // λ on the kept rows: G_keptᵀ λ_kept = G_allᵀ λ_all in the least-squares sense, by the normal
  // equations G_k G_kᵀ λ_kept = G_k G_allᵀ λ_all (minimum norm where G_k loses rank).
  const dca::Engine& e = *e_;
  const LoopStructure& loops = model_.loops();
  if (!e.kept_stale_ || loops.constraints.rows() == 0) return e.kept_lambda_;
  e.kept_stale_ = false;
  constraint_jacobian(model_, loops.unreduced, e.kin_, e.joint_rows_, e.G_all_);
  constraint_jacobian(model_, loops.constraints, e.kin_, e.joint_rows_, e.G_kept_);
  e.generalized_.noalias() = e.G_all_.transpose() * e.lambda_.tail(e.set.loop_rows);
  e.kept_rhs_.noalias() = e.G_kept_ * e.generalized_;
  e.kept_normal_.noalias() = e.G_kept_ * e.G_kept_.transpose();
  e.kept_solver_.compute(e.kept_normal_);
  e.kept_solver_.solve(e.kept_rhs_, e.kept_lambda_);
  return e.kept_lambda_;
}

}  // namespace loopdyn
