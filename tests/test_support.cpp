// Shared test helpers (test_support.hpp).
#include "test_support.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <Eigen/SVD>

namespace loopdyn::test {

::testing::AssertionResult near(const Eigen::Ref<const MatX>& a, const Eigen::Ref<const MatX>& b, double tol) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return ::testing::AssertionFailure() << "shape " << a.rows() << "x" << a.cols() << " vs " << b.rows() << "x"
                                         << b.cols();
  const double scale = std::max({1.0, a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff()});
  const double err = (a - b).cwiseAbs().maxCoeff();
  if (err <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max difference " << err << " > " << tol << " * " << scale << "\n a = "
                                       << a.transpose() << "\n b = " << b.transpose();
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

Vec3 random_vec(std::mt19937_64& rng, double r) { return Vec3(uniform(rng, -r, r), uniform(rng, -r, r), uniform(rng, -r, r)); }

Mat3 random_rotation(std::mt19937_64& rng) {
  Eigen::Vector4d c(uniform(rng, -1, 1), uniform(rng, -1, 1), uniform(rng, -1, 1), uniform(rng, -1, 1));
  return Quat(c(0), c(1), c(2), c(3)).normalized().toRotationMatrix();
}

Mat3 random_inertia(std::mt19937_64& rng) {
  const double a = uniform(rng, 0.05, 0.5), b = uniform(rng, 0.05, 0.5);
  const double c = uniform(rng, std::abs(a - b) + 0.01, a + b);
  const Mat3 R = random_rotation(rng);
  return R * Vec3(a, b, c).asDiagonal() * R.transpose();
}

std::string indexed(std::string prefix, int i) {
  prefix.append(std::to_string(i));
  return prefix;
}

Mechanism random_tree(std::uint64_t seed, int nbodies, int first_type) {
  std::mt19937_64 rng(seed);
  Mechanism m;
  m.name = indexed("random_tree_", static_cast<int>(seed));
  m.gravity = Vec3(0.3, -0.5, -9.81);
  for (int i = 0; i < nbodies; ++i) {
    const std::string name = indexed("b", i);
    m.add_body(name, uniform(rng, 0.5, 2.0), random_vec(rng, 0.3), random_inertia(rng));
    const int p = std::uniform_int_distribution<int>(-1, i - 1)(rng);
    const auto type = static_cast<JointType>((first_type + i) % 8);
    JointSpec& j = m.add_joint(indexed("j", i), type, p < 0 ? std::string("ground") : indexed("b", p), name,
                               Transform{random_rotation(rng), random_vec(rng, 0.5)},
                               i % 3 == 0 ? Transform{} : Transform{random_rotation(rng), random_vec(rng, 0.2)});
    j.axis = random_vec(rng, 1.0).normalized();
    j.axis2 = j.axis.unitOrthogonal();
  }
  return m;
}

VecX random_q(const Model& model, std::mt19937_64& rng) {
  VecX q(model.nq);
  for (int k = 0; k < model.nq; ++k) q(k) = uniform(rng, -1.0, 1.0);
  model.normalize(q);
  return q;
}

VecX random_vector(int n, std::mt19937_64& rng, double r) {
  VecX v(n);
  for (int k = 0; k < n; ++k) v(k) = uniform(rng, -r, r);
  return v;
}

VecX moved(const Model& model, const VecX& q, const VecX& du, double eps) {
  VecX qd(model.nq);
  model.qdot(q, du, qd);
  VecX out = q + eps * qd;
  model.normalize(out);
  return out;
}

MatX null_space(const MatX& G) {
  const Eigen::JacobiSVD<MatX> svd(G, Eigen::ComputeFullV);
  const int rank = static_cast<int>((svd.singularValues().array() > 1e-10 * svd.singularValues()(0)).count());
  return svd.matrixV().rightCols(G.cols() - rank);
}

SimulationSettings fixed_step_settings(double dt, double t_end, double output_dt,
                                       IntegratorKind kind) {
  SimulationSettings s;
  s.integrator.kind = kind;
  s.integrator.dt = dt;
  s.t_end = t_end;
  s.output_dt = output_dt;
  return s;
}

Model load_model(const std::string& file) {
  return Model::build(load_mechanism(std::string(LOOPDYN_SOURCE_DIR) + "/models/" + file + ".yaml"));
}

std::string bar_text() {
  std::ifstream in(std::string(LOOPDYN_SOURCE_DIR) + "/tests/models/bar.yaml");
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read tests/models/bar.yaml");
  return text.str();
}

Mechanism parallelogram_four_bar(bool pin_cut, double theta) {
  Mechanism m;
  m.name = "four_bar";
  const Mat3 rod = Vec3(1e-4, 1.0 / 12, 1.0 / 12).asDiagonal();
  for (const char* b : {"crank", "coupler", "rocker"}) m.add_body(b, 1.0, Vec3(0.5, 0, 0), rod);
  m.add_joint("A", JointType::revolute, "ground", "crank").q = {theta};
  m.add_joint("B", JointType::revolute, "crank", "coupler", Transform::translation(Vec3(1, 0, 0))).q = {-theta};
  m.add_joint("D", JointType::revolute, "ground", "rocker", Transform::translation(Vec3(1, 0, 0))).q = {theta};
  m.add_joint("C", JointType::revolute, "coupler", "rocker", Transform::translation(Vec3(1, 0, 0)),
              Transform::translation(Vec3(1, 0, 0)))
      .cut = pin_cut;
  return m;
}

ClosedCase closed_loops(std::uint64_t seed, int nbodies, int loops, int first_type) {
  ClosedCase c{random_tree(seed, nbodies, static_cast<int>(seed % 8)), {}, {}};
  const Model tree = Model::build(c.mechanism);
  std::mt19937_64 rng(seed + 77);
  const VecX q_tree = random_q(tree, rng);
  KinematicsData kin(tree);
  update_positions(tree, kin, q_tree);
  for (int k = 0; k < loops; ++k) {
    const int a = std::uniform_int_distribution<int>(-1, nbodies - 1)(rng);
    int b = std::uniform_int_distribution<int>(0, nbodies - 1)(rng);
    if (b == a) b = (b + 1) % nbodies;
    int type = (first_type + k) % 8;
    if (static_cast<JointType>(type) == JointType::free) type = (type + 1) % 8;
    JointSpec j;
    j.name = indexed("loop", k);
    j.type = static_cast<JointType>(type);
    j.parent = a < 0 ? std::string("ground") : tree.body_name[a];
    j.child = tree.body_name[b];
    j.cut = true;
    j.axis = random_vec(rng, 1.0).normalized();
    j.axis2 = j.axis.unitOrthogonal();
    j.parent_frame = Transform{random_rotation(rng), random_vec(rng, 0.3)};
    // Fc = Fp · Tj(qj) at q: child_frame = X_world[b]⁻¹ · X_world[a] · parent_frame · Tj(qj).
    Mechanism one;
    one.add_body("x", 1, Vec3::Zero(), Mat3::Identity());
    JointSpec& only = one.add_joint("j", j.type, "ground", "x");
    only.axis = j.axis;
    only.axis2 = j.axis2;
    const Model joint_model = Model::build(one);
    const VecX qj = random_q(joint_model, rng);
    KinematicsData jk(joint_model);
    update_positions(joint_model, jk, qj);
    const Transform Fp = (a < 0 ? Transform{} : kin.X_world[a]) * j.parent_frame;
    j.child_frame = kin.X_world[b].inverse() * Fp * jk.X_world[0];
    c.mechanism.joints.push_back(j);
  }
  // Tree coordinates are unchanged by adding cut joints: q is the tree state.
  const Model m = Model::build(c.mechanism);
  c.q = VecX(m.nq);
  for (int i = 0; i < m.nbodies; ++i) {
    const int ti = tree.joint_index(m.joints[i].name);
    c.q.segment(m.q_index[i], m.nq_joint[i]) = q_tree.segment(tree.q_index[ti], tree.nq_joint[ti]);
  }
  KinematicsData closed(m);
  update_positions(m, closed, c.q);
  const Constraints& cons = m.loops().unreduced;
  ConstraintData cd(m);
  MatX G(cons.rows(), m.nv);
  constraint_jacobian(m, cons, closed, cd, G);
  const MatX N = null_space(G);
  c.u = N * random_vector(static_cast<int>(N.cols()), rng, 2.0);
  return c;
}

namespace {
// Φ, G and γ of the rows `cons` at (q, u).
ConstraintValues rows_at(const Model& m, const Constraints& cons, const VecX& q, const VecX& u) {
  KinematicsData kin(m);
  update_positions(m, kin, q);
  update_velocities(m, kin, q, u);
  ConstraintData cd(m);
  ConstraintValues v{VecX(cons.rows()), MatX(cons.rows(), m.nv), VecX(cons.rows())};
  constraint_position(m, cons, kin, 0.0, cd, v.phi);
  constraint_jacobian(m, cons, kin, cd, v.G);
  constraint_bias(m, cons, kin, 0.0, cd, v.gamma);
  return v;
}
}  // namespace

ConstraintValues constraint_values(const Model& m, const VecX& q, const VecX& u) {
  return rows_at(m, m.loops().constraints, q, u);
}

VecX reference_accelerations(const Model& m, const VecX& q, const VecX& u) {
  const auto [phi, G, gamma] = rows_at(m, m.loops().unreduced, q, u);
  MatX M(m.nv, m.nv);
  CrbaData crba_data(m);
  crba(m, crba_data, q, M);
  VecX C(m.nv);
  RneaData rnea_data(m);
  rnea(m, rnea_data, q, u, VecX::Zero(m.nv), nullptr, C);
  const Eigen::JacobiSVD<MatX> svd(G, Eigen::ComputeFullU | Eigen::ComputeFullV);
  const int rank = static_cast<int>((svd.singularValues().array() > 1e-10 * svd.singularValues()(0)).count());
  const MatX N = svd.matrixV().rightCols(m.nv - rank);
  const VecX up = svd.matrixV().leftCols(rank) *
                  (svd.singularValues().head(rank).cwiseInverse().asDiagonal() *
                   (svd.matrixU().leftCols(rank).transpose() * gamma));
  const MatX Mr = N.transpose() * M * N;
  return up + N * Mr.llt().solve(N.transpose() * (-C - M * up));
}

LoopState file_state(const std::string& file) {
  Model m = load_model(file);
  const AssemblyResult a = assemble(m, m.loops().constraints, m.q0, m.u0);
  return {file, std::move(m), a.q, a.u};
}

LoopState assembled_state(const std::string& file, std::uint64_t seed) {
  LoopState s = file_state(file);
  const auto [phi, G, gamma] = constraint_values(s.model, s.q, s.u);
  std::mt19937_64 rng(seed);
  const MatX N = null_space(G);
  s.u = N * random_vector(static_cast<int>(N.cols()), rng, 2.0);
  return s;
}

Trajectory dopri5_run(const Model& model, Formulation& f, const VecX& q, const VecX& u, double t_end,
                             double output_dt, bool project) {
  SimulationSettings s;
  s.project = project;
  s.integrator.kind = IntegratorKind::dopri5;
  s.integrator.rtol = s.integrator.atol = 1e-10;
  s.t_end = t_end;
  s.output_dt = output_dt;
  Simulator sim(model, f, s);
  return sim.run(q, u);
}

VecX accelerations(const std::string& method, const LoopState& c) {
  auto f = make_formulation(method, c.model);
  VecX udot(c.model.nv);
  f->accelerations(0.0, c.q, c.u, udot);
  return udot;
}

LoopState random_loop_state(std::uint64_t seed, int loops) {
  const ClosedCase c = closed_loops(seed, 7, loops, static_cast<int>(seed));
  return {indexed("random loops seed ", static_cast<int>(seed)), Model::build(c.mechanism), c.q, c.u};
}

std::string fmt(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", x);
  return text;
}

}  // namespace loopdyn::test
