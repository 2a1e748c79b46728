// The tree of a Model (Model::build's first part): validation of a Mechanism, spanning tree,
// depth-first numbering, coordinate layout; exact coordinate increments (integrate_q).
#include "loopdyn/core/model.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <deque>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "core/model_tree.hpp"
#include "loopdyn/core/names.hpp"

namespace loopdyn {

namespace {

// Unit quaternion exp(½ w) = [cos(θ/2), sin(θ/2) w/θ], θ = |w|; Taylor series of sin(θ/2)/θ near 0.
Quat quaternion_exp(const Vec3& w) {
  const double t = w.norm();
  const double s = t < 1e-4 ? 0.5 - t * t / 48.0 : std::sin(0.5 * t) / t;
  return Quat(std::cos(0.5 * t), s * w.x(), s * w.y(), s * w.z());
}

// q ← q ⊗ exp(½ w) on a stored quaternion [w, x, y, z], re-normalized against round-off.
void rotate_quaternion(double* q, const Vec3& w) {
  const Quat r = (Quat(q[0], q[1], q[2], q[3]) * quaternion_exp(w)).normalized();
  q[0] = r.w(); q[1] = r.x(); q[2] = r.y(); q[3] = r.z();
}

// V(ω) v of the SE(3) exponential: v + a ω×v + b ω×(ω×v), a = (1 − cos θ)/θ², b = (θ − sin θ)/θ³.
Vec3 se3_translation(const Vec3& w, const Vec3& v) {
  const double t = w.norm(), t2 = t * t;
  double a, b;
  if (t < 1e-2) {  // series; the first omitted terms are below 3e-17
    a = 0.5 - t2 / 24.0 + t2 * t2 / 720.0;
    b = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0;
  } else {
    const double h = std::sin(0.5 * t);
    a = 2.0 * h * h / t2;
    b = (t - std::sin(t)) / (t2 * t);
  }
  const Vec3 wv = w.cross(v);
  return v + a * wv + b * w.cross(wv);
}


std::string at(const std::string& where) { return where.empty() ? std::string() : where + ": "; }

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw ModelError(at(where) + what); }

bool finite(const Eigen::Ref<const MatX>& m) { return m.allFinite(); }

// Rotational inertia about the centre of mass must be symmetric positive semi-definite and its
// principal moments must satisfy the triangle inequality (equality allowed: point masses, rods).
// Tolerances are relative to the largest moment (round-off of user data given to ~15 digits).
void check_inertia(const BodySpec& b) {
  const std::string who = "body '" + b.name + "': ";
  if (!finite(b.inertia)) fail(b.where, who + "inertia has a non-finite entry");
  const double scale = std::max(b.inertia.cwiseAbs().maxCoeff(), 1e-300);
  const double tol = 1e-9 * scale;
  if ((b.inertia - b.inertia.transpose()).cwiseAbs().maxCoeff() > tol)
    fail(b.where, who + "inertia matrix is not symmetric");
  const Vec3 m = Eigen::SelfAdjointEigenSolver<Mat3>(b.inertia, Eigen::EigenvaluesOnly).eigenvalues();
  if (m.minCoeff() < -tol) {
    std::ostringstream s;
    s << who << "inertia is not positive semi-definite (principal moments " << m.transpose() << ")";
    fail(b.where, s.str());
  }
  for (int k = 0; k < 3; ++k) {
    if (m((k + 1) % 3) + m((k + 2) % 3) < m(k) - tol) {
      std::ostringstream s;
      s << who << "inertia violates the triangle inequality (principal moments " << m.transpose()
        << ": each must be at most the sum of the other two)";
      fail(b.where, s.str());
    }
  }
}

// A name heads CSV columns (q.<joint>, <marker>.x, ...): a comma or a line break in it made a
// header of other columns, which `loopdyn view` then refused, from a run that exited 0.
void check_name(const std::string& name, const std::string& kind, const std::string& where) {
  if (name.empty()) fail(where, kind + " with an empty name");
  const bool control = std::any_of(name.begin(), name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
  if (control || name.find(',') != std::string::npos)
    fail(where, kind + " '" + name + "': a name cannot hold a comma or a control character (a line break, a tab): " +
                    "it heads the columns of the CSV");
}

// A damper takes energy out; a negative coefficient feeds it in, and on a light joint the motion
// grew like e^(|c| t / I) (an MJCF damping="-1": 5e6 rad/s within 0.06 s, the run crawling). URDF
// refused it already. A negative stiffness is a physical element (snap-through) and stays.
void check_damping(double damping, const std::string& who, const std::string& where) {
  if (damping < 0.0)
    fail(where, who + ": damping must not be negative (a damper takes energy out; for an element that feeds it "
                      "in, use a joint_force with a profile or a force callback)");
}

void check_body(const BodySpec& b) {
  check_name(b.name, "body", b.where);
  if (b.name == ground_name) fail(b.where, "body 'ground' is reserved for the fixed world");
  if (!std::isfinite(b.mass) || b.mass <= 0.0) {
    std::ostringstream s;
    s << "body '" << b.name << "': mass must be positive, got " << b.mass;
    fail(b.where, s.str());
  }
  if (!b.com.allFinite()) fail(b.where, "body '" + b.name + "': centre of mass is not finite");
  check_inertia(b);
}

Vec3 unit_axis(const JointSpec& j, const Vec3& axis, const char* key) {
  // The norm through the largest component: [0, 1e300, 1e300] overflowed norm() to inf and was
  // called "zero or not finite".
  const double largest = axis.cwiseAbs().maxCoeff();
  const double n = largest > 0.0 && std::isfinite(largest) ? largest * (axis / largest).norm() : largest;
  if (!std::isfinite(n) || n < 1e-12) fail(j.where, "joint '" + j.name + "': " + key + " is zero or not finite");
  return (axis / largest).normalized();
}

bool is_identity(const Transform& T) { return T.p.isZero(0.0) && T.R.isIdentity(0.0); }

// ModelJoint::unit_axis: revolute and prismatic joints have a constant subspace, [axis; 0] and
// [0; axis]; it is e_k when the child frame is the joint frame and the axis a frame axis.
int unit_subspace_axis(const ModelJoint& mj) {
  if (!mj.child_frame_identity) return -1;
  Vec6 s;
  if (const auto* r = std::get_if<Revolute>(&mj.joint)) s << r->axis, Vec3::Zero();
  else if (const auto* p = std::get_if<Prismatic>(&mj.joint)) s << Vec3::Zero(), p->axis;
  else return -1;
  for (int k = 0; k < 6; ++k)
    if (s(k) == 1.0 && s.squaredNorm() == 1.0) return k;
  return -1;
}

void check_frame(const JointSpec& j, const Transform& T, const char* key) {
  if (!T.R.allFinite() || !T.p.allFinite()) fail(j.where, "joint '" + j.name + "': " + key + " is not finite");
  if (!(T.R.transpose() * T.R).isIdentity(1e-9) || T.R.determinant() < 0.0)
    fail(j.where, "joint '" + j.name + "': " + key + " rotation is not a proper rotation matrix");
}

Joint make_joint(const JointSpec& j) {
  switch (j.type) {
    case JointType::revolute: return Revolute{unit_axis(j, j.axis, "axis")};
    case JointType::prismatic: return Prismatic{unit_axis(j, j.axis, "axis")};
    case JointType::cylindrical: return Cylindrical{unit_axis(j, j.axis, "axis")};
    case JointType::universal: {
      const Vec3 a = unit_axis(j, j.axis, "axis"), b = unit_axis(j, j.axis2, "axis2");
      if (std::abs(a.dot(b)) > 1e-9)
        fail(j.where, "joint '" + j.name + "': universal joint axes 'axis' and 'axis2' must be perpendicular");
      return Universal{a, b};
    }
    case JointType::spherical: return Spherical{};
    case JointType::planar: return Planar{};
    case JointType::free: return Free{};
    case JointType::fixed: return Fixed{};
  }
  fail(j.where, "joint '" + j.name + "': unknown joint type");
}

// Initial coordinates of one joint: given values (quaternions checked for unit norm) or neutral.
void initial_state(const JointSpec& spec, const Joint& joint, double* q, double* u) {
  const int nq = joint_nq(joint), nv = joint_nv(joint);
  const std::string who = "joint '" + spec.name + "': ";
  std::visit([&](const auto& k) { k.neutral(q); }, joint);
  if (!spec.q.empty()) {
    if (static_cast<int>(spec.q.size()) != nq)
      fail(spec.where, who + "'q' must have " + std::to_string(nq) + " values for a " +
                           std::string(joint_type_name(joint)) + " joint, got " + std::to_string(spec.q.size()));
    for (int k = 0; k < nq; ++k) q[k] = spec.q[k];
    const int quat = spec.type == JointType::spherical ? 0 : spec.type == JointType::free ? 3 : -1;
    if (quat >= 0) {
      const double n = Eigen::Map<const Eigen::Vector4d>(q + quat).norm();
      if (std::abs(n - 1.0) > 1e-6)
        fail(spec.where, who + "quaternion in 'q' must have unit norm, got " + std::to_string(n));
      std::visit([&](const auto& k) { k.normalize(q); }, joint);
    }
  }
  for (int k = 0; k < nv; ++k) u[k] = spec.u.empty() ? 0.0 : spec.u[k];
  if (!spec.u.empty() && static_cast<int>(spec.u.size()) != nv)
    fail(spec.where, who + "'u' must have " + std::to_string(nv) + " values, got " + std::to_string(spec.u.size()));
  for (int k = 0; k < nq; ++k)
    if (!std::isfinite(q[k])) fail(spec.where, who + "'q' is not finite");
  for (int k = 0; k < nv; ++k)
    if (!std::isfinite(u[k])) fail(spec.where, who + "'u' is not finite");
}

// Spanning tree: breadth-first from ground along joints in their declared direction (parent to
// child), skipping joints pinned as cut. Returns, per mechanism body, the index of its tree joint
// (-1 if unreached). Breadth-first keeps paths from ground short.
// The non-cut joints leaving each body, at [body + 1] (the ground's at [0]), in file order: the
// walks below visit each joint once (O(n), not O(n²) for a 60,000-body file).
std::vector<std::vector<int>> joints_leaving(const Mechanism& mech, const std::vector<int>& parent_of,
                                            const std::vector<int>& child_of) {
  std::vector<std::vector<int>> leaving(mech.bodies.size() + 1);
  for (int j = 0; j < static_cast<int>(mech.joints.size()); ++j)
    if (!mech.joints[j].cut && child_of[j] >= 0 && parent_of[j] >= -1)
      leaving[static_cast<std::size_t>(parent_of[j] + 1)].push_back(j);
  return leaving;
}

std::vector<int> spanning_tree(const Mechanism& mech, const std::vector<std::vector<int>>& leaving,
                               const std::vector<int>& child_of) {
  const int nb = static_cast<int>(mech.bodies.size());
  std::vector<int> tree_joint(nb, -1);
  std::deque<int> queue{-1};
  while (!queue.empty()) {
    const int b = queue.front();
    queue.pop_front();
    for (const int j : leaving[static_cast<std::size_t>(b + 1)]) {
      const int c = child_of[j];
      if (tree_joint[c] >= 0) continue;
      tree_joint[c] = j;
      queue.push_back(c);
    }
  }
  return tree_joint;
}

}  // namespace

int Model::body_index(std::string_view n) const {
  if (n == ground_name) return -1;
  for (int i = 0; i < nbodies; ++i)
    if (body_name[i] == n) return i;
  throw ModelError("unknown body '" + std::string(n) + "'");
}

int Model::joint_index(std::string_view n) const {
  for (int i = 0; i < nbodies; ++i)
    if (joints[i].name == n) return i;
  for (const auto& lj : loop_joints)
    if (lj.name == n) throw ModelError("joint '" + std::string(n) + "' is a loop-closing joint, not a tree joint");
  throw ModelError("unknown joint '" + std::string(n) + "'");
}

VecX Model::neutral_q() const {
  VecX q(nq);
  for (int i = 0; i < nbodies; ++i) std::visit([&](const auto& k) { k.neutral(q.data() + q_index[i]); }, joints[i].joint);
  return q;
}

void Model::qdot(const VecX& q, const VecX& u, Eigen::Ref<VecX> qd) const {
  for (int i = 0; i < nbodies; ++i)
    std::visit([&](const auto& k) { k.qdot(q.data() + q_index[i], u.data() + v_index[i], qd.data() + q_index[i]); },
               joints[i].joint);
}

void Model::normalize(Eigen::Ref<VecX> q) const {
  for (int i = 0; i < nbodies; ++i) std::visit([&](const auto& k) { k.normalize(q.data() + q_index[i]); }, joints[i].joint);
}

std::string Model::speed_names(const std::vector<int>& speeds) const {
  std::string out;
  for (int k : speeds) out.append(out.empty() ? "u." : ", u.").append(speed_name(k));
  return out;
}

namespace {
// Coordinate k of a joint's n, named by the joint: "<joint>", or "<joint>.<k>" when it has several.
std::string joint_coordinate(const std::string& joint, int k, int n) {
  return n > 1 ? joint + "." + std::to_string(k) : joint;
}
}  // namespace

std::string Model::speed_name(int k) const {
  const int b = v_body[static_cast<std::size_t>(k)];
  return joint_coordinate(joints[b].name, k - v_index[b], nv_joint[b]);
}

std::string quoted_list(const std::vector<std::string>& names, std::size_t shown) {
  std::string out;
  for (std::size_t k = 0; k < names.size() && k < shown; ++k) out.append(k ? ", '" : "'").append(names[k]).append("'");
  if (names.size() > shown) out.append(" and ").append(std::to_string(names.size() - shown)).append(" more");
  return out;
}

std::vector<std::string> Model::coordinate_names() const {
  std::vector<std::string> names;
  for (const char* prefix : {"q.", "u."}) {
    for (int i = 0; i < nbodies; ++i) {
      const int n = prefix[0] == 'q' ? nq_joint[i] : nv_joint[i];
      for (int k = 0; k < n; ++k) names.push_back(std::string(prefix).append(joint_coordinate(joints[i].name, k, n)));
    }
  }
  return names;
}

Model detail::build_tree(const Mechanism& mech) {
  Model m;
  m.name = mech.name;
  if (!mech.gravity.allFinite()) throw ModelError("gravity is not finite");
  m.gravity = mech.gravity;
  const int nb = static_cast<int>(mech.bodies.size());
  if (nb == 0) throw ModelError("mechanism '" + mech.name + "' has no bodies");

  // Bodies: validate, index by name (-1 = ground).
  std::unordered_map<std::string, int> body_of;
  body_of.reserve(static_cast<std::size_t>(nb));
  for (int b = 0; b < nb; ++b) {
    const BodySpec& spec = mech.bodies[b];
    check_body(spec);
    if (!body_of.emplace(spec.name, b).second) fail(spec.where, "duplicate body name '" + spec.name + "'");
  }
  // `who()` begins the message that names an unknown body ("joint 'j': parent: ").
  auto find_body = [&](const std::string& n, const std::string& where, const auto& who) {
    if (n == ground_name) return -1;
    const auto it = body_of.find(n);
    if (it == body_of.end()) fail(where, who() + "unknown body '" + n + "'");
    return it->second;
  };

  // Joints: validate, resolve bodies.
  const int nj = static_cast<int>(mech.joints.size());
  std::vector<int> parent_of(nj), child_of(nj);
  std::vector<Joint> kernel(nj);
  std::unordered_map<std::string, int> joint_of;
  joint_of.reserve(static_cast<std::size_t>(nj));
  for (int j = 0; j < nj; ++j) {
    const JointSpec& s = mech.joints[j];
    check_name(s.name, "joint", s.where);
    if (!joint_of.emplace(s.name, j).second) fail(s.where, "duplicate joint name '" + s.name + "'");
    const auto who = [&] { return "joint '" + s.name + "': "; };  // built for a message only
    parent_of[j] = find_body(s.parent, s.where, [&] { return who() + "parent: "; });
    child_of[j] = find_body(s.child, s.where, [&] { return who() + "child: "; });
    if (parent_of[j] == child_of[j]) fail(s.where, who() + "parent and child are the same body '" + s.child + "'");
    if (!(s.effort > 0.0)) fail(s.where, who() + "effort must be > 0 (got " + short_number(s.effort) + ")");
    check_frame(s, s.parent_frame, "parent_frame");
    check_frame(s, s.child_frame, "child_frame");
    kernel[j] = make_joint(s);
    // The only reader of a joint's effort is a joint_pd, which acts on one coordinate: elsewhere
    // the limit was accepted and did nothing.
    if (std::isfinite(s.effort) && joint_nv(kernel[j]) != 1)
      fail(s.where, who() + "effort applies to joints of one coordinate (revolute, prismatic), whose joint_pd "
                            "controllers it limits");
  }

  // Spanning tree and depth-first numbering (children in declaration order).
  const std::vector<std::vector<int>> leaving = joints_leaving(mech, parent_of, child_of);
  const std::vector<int> tree_joint = spanning_tree(mech, leaving, child_of);
  for (int b = 0; b < nb; ++b) {
    if (tree_joint[b] >= 0) continue;
    fail(mech.bodies[b].where, "body '" + mech.bodies[b].name +
                                   "' is not connected to ground (no chain of non-cut joints from ground, "
                                   "each running parent to child, reaches it)");
  }
  std::vector<int> order;  // model index -> mechanism body
  std::vector<int> stack{-1};
  while (!stack.empty()) {
    const int b = stack.back();
    stack.pop_back();
    if (b >= 0) order.push_back(b);
    const std::vector<int>& out = leaving[static_cast<std::size_t>(b + 1)];
    for (auto j = out.rbegin(); j != out.rend(); ++j)  // reversed so that the first declared child is visited first
      if (tree_joint[child_of[*j]] == *j) stack.push_back(child_of[*j]);
  }
  std::vector<int> model_of(nb);
  for (int i = 0; i < nb; ++i) model_of[order[i]] = i;
  auto to_model = [&](int b) { return b < 0 ? -1 : model_of[b]; };

  m.nbodies = nb;
  m.q0.resize(0);
  std::vector<double> q0, u0;
  for (int i = 0; i < nb; ++i) {
    const BodySpec& bs = mech.bodies[order[i]];
    const int j = tree_joint[order[i]];
    const JointSpec& js = mech.joints[j];
    m.body_name.push_back(bs.name);
    m.mechanism_body.push_back(order[i]);
    m.parent.push_back(to_model(parent_of[j]));
    m.mass.push_back(bs.mass);
    m.com.push_back(bs.com);
    m.inertia.push_back(rigid_inertia(bs.mass, bs.com, bs.inertia));
    m.joints.push_back(ModelJoint{js.name, kernel[j], m.parent.back(), i, js.parent_frame, js.child_frame,
                                  is_identity(js.child_frame), js.parent_frame.R.isIdentity(0.0), js.where,
                                  js.independent});
    m.joints.back().unit_axis = unit_subspace_axis(m.joints.back());
    const int nq = joint_nq(kernel[j]), nv = joint_nv(kernel[j]);
    m.q_index.push_back(m.nq);
    m.v_index.push_back(m.nv);
    m.nq_joint.push_back(nq);
    m.nv_joint.push_back(nv);
    q0.resize(m.nq + nq);
    u0.resize(m.nv + nv);
    initial_state(js, kernel[j], q0.data() + m.nq, u0.data() + m.nv);
    m.nq += nq;
    m.nv += nv;
    for (int k = 0; k < nv; ++k) m.v_body.push_back(i);
  }
  m.q0 = Eigen::Map<VecX>(q0.data(), m.nq);
  m.u0 = Eigen::Map<VecX>(u0.data(), m.nv);
  m.subtree_size.assign(nb, 1);
  for (int i = nb - 1; i >= 0; --i)
    if (m.parent[i] >= 0) m.subtree_size[m.parent[i]] += m.subtree_size[i];

  // Loop-closing joints: every joint not in the tree. Their initial q/u are not used.
  m.dof_gruebler = 6 * nb;
  for (int j = 0; j < nj; ++j) {
    m.dof_gruebler -= 6 - joint_nv(kernel[j]);
    const bool in_tree = child_of[j] >= 0 && tree_joint[child_of[j]] == j;
    if (in_tree) continue;
    const JointSpec& js = mech.joints[j];
    if (js.independent)
      fail(js.where, "joint '" + js.name + "' closes a loop (it has no coordinates): 'independent: true' applies to tree joints only");
    if (std::isfinite(js.effort))
      fail(js.where, "joint '" + js.name + "' closes a loop (it has no coordinates): its effort would limit no "
                     "joint_pd controller (they act on tree joints); mark another joint of the loop `cut: true` "
                     "to keep this one in the tree");
    m.loop_joints.push_back(ModelJoint{js.name, kernel[j], to_model(parent_of[j]), to_model(child_of[j]),
                                       js.parent_frame, js.child_frame, is_identity(js.child_frame),
                                       js.parent_frame.R.isIdentity(0.0), js.where});
  }

  // Coordinate couplings: terms on one-coordinate tree joints (q = u integrates directly).
  for (const CouplingSpec& cs : mech.couplings) {
    const std::string who = "constraint '" + cs.name + "': ";
    if (cs.terms.empty()) fail(cs.where, who + "has no terms");
    if (!std::isfinite(cs.value)) fail(cs.where, who + "value is not finite");
    ModelCoupling c{cs.name, {}, TimeFunction::constant(cs.value)};
    for (const CouplingSpec::Term& t : cs.terms) {
      const auto it = joint_of.find(t.joint);
      if (it == joint_of.end()) fail(cs.where, who + "unknown joint '" + t.joint + "'");
      const int ch = child_of[it->second];
      if (ch < 0 || tree_joint[ch] != it->second)
        fail(cs.where, who + "joint '" + t.joint + "' is a loop-closing joint; couplings act on tree joints");
      const int b = model_of[ch];
      if (m.nq_joint[b] != 1 || m.nv_joint[b] != 1)
        fail(cs.where, who + "joint '" + t.joint + "' must have one coordinate");
      if (!std::isfinite(t.coefficient)) fail(cs.where, who + "coefficient is not finite");
      // A joint twice (a gear of a joint with itself) is one term whose coefficient the user did
      // not mean: with gear ratio 1 the row is zero, with another it pins the joint at 0.
      for (const ModelCoupling::Term& other : c.terms)
        if (other.joint == b)
          fail(cs.where, who + "joint '" + t.joint + "' appears twice (a coupling relates different joints)");
      c.terms.push_back({b, m.q_index[b], m.v_index[b], t.coefficient});
    }
    if (std::none_of(c.terms.begin(), c.terms.end(), [](const ModelCoupling::Term& t) { return t.coefficient != 0.0; }))
      fail(cs.where, who + "every coefficient is zero (it relates no coordinates)");
    m.dof_gruebler -= 1;
    m.couplings.push_back(std::move(c));
  }

  // Drives: q(joint) = motion(t), a coupling of one term whose value moves. Runs start at t = 0.
  for (const DriveSpec& d : mech.drives) {
    const std::string who = "drive on joint '" + d.joint + "': ";
    const auto it = joint_of.find(d.joint);
    if (it == joint_of.end()) fail(d.where, who + "unknown joint");
    const int ch = child_of[it->second];
    if (ch < 0 || tree_joint[ch] != it->second)
      fail(d.where, who + "it closes a loop and has no coordinate to prescribe; drive a tree joint of the loop "
                          "instead, or mark this one `cut: false` and another `cut: true`");
    const int b = model_of[ch];
    if (m.nq_joint[b] != 1 || m.nv_joint[b] != 1)
      fail(d.where, who + "only joints of one coordinate (revolute, prismatic) can be driven");
    for (const ModelCoupling& other : m.couplings)
      if (other.drive && other.terms[0].joint == b) fail(d.where, who + "the joint is driven twice");
    if (!(d.motion.first_time() <= 0.0))
      fail(d.where, who + "its motion starts at t = " + std::to_string(d.motion.first_time()) +
                        " s, after the run's start t = 0");
    try {
      (void)d.motion(0.0);
    } catch (const std::exception& e) {
      fail(d.where, who + e.what());
    }
    m.dof_gruebler -= 1;
    m.couplings.push_back({"drive." + d.joint, {{b, m.q_index[b], m.v_index[b], 1.0}}, d.motion, true});
  }

  // Markers.
  std::unordered_set<std::string> marker_names;
  for (const MarkerSpec& mk : mech.markers) {
    check_name(mk.name, "marker", mk.where);
    if (!marker_names.insert(mk.name).second) fail(mk.where, "duplicate marker name '" + mk.name + "'");
    if (!mk.point.allFinite()) fail(mk.where, "marker '" + mk.name + "': point is not finite");
    m.markers.push_back({mk.name, to_model(find_body(mk.body, mk.where, [&] { return "marker '" + mk.name + "': "; })), mk.point});
  }

  // Force elements, resolved to model indices.
  for (const ForceSpec& fs : mech.forces) {
    ModelForce f{};
    auto tree_joint_index = [&](const std::string& name, const char* what) {
      const auto it = joint_of.find(name);
      if (it == joint_of.end()) fail(fs.where, std::string(what) + ": unknown joint '" + name + "'");
      const int c = child_of[it->second];
      if (c < 0 || tree_joint[c] != it->second)
        fail(fs.where, std::string(what) + ": joint '" + name + "' is a loop-closing joint; this force acts on tree joints only");
      return model_of[c];
    };
    std::visit(
        [&](const auto& e) {
          using E = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<E, JointSpringDamperSpec>) {
            f.kind = ModelForce::Kind::joint_spring_damper;
            f.joint = tree_joint_index(e.joint, "joint_spring_damper");
            if (m.nv_joint[f.joint] != 1 || m.nq_joint[f.joint] != 1)
              fail(fs.where, "joint_spring_damper: joint '" + e.joint + "' must have one coordinate");
            f.stiffness = e.stiffness, f.damping = e.damping, f.rest = e.rest;
            check_damping(e.damping, "joint_spring_damper on '" + e.joint + "'", fs.where);
          } else if constexpr (std::is_same_v<E, PointSpringDamperSpec>) {
            f.kind = ModelForce::Kind::point_spring_damper;
            f.body1 = to_model(find_body(e.body1, fs.where, [] { return std::string("point_spring_damper: body1: "); }));
            f.body2 = to_model(find_body(e.body2, fs.where, [] { return std::string("point_spring_damper: body2: "); }));
            if (f.body1 == f.body2) fail(fs.where, "point_spring_damper: body1 and body2 are the same body");
            f.point1 = e.point1, f.point2 = e.point2;
            f.stiffness = e.stiffness, f.damping = e.damping, f.rest = e.rest_length;
            if (e.rest_length < 0.0) fail(fs.where, "point_spring_damper: rest_length must not be negative");
            check_damping(e.damping, "point_spring_damper", fs.where);
          } else if constexpr (std::is_same_v<E, JointForceSpec>) {
            f.kind = ModelForce::Kind::joint_force;
            f.joint = tree_joint_index(e.joint, "joint_force");
            if (static_cast<int>(e.value.size()) != m.nv_joint[f.joint])
              fail(fs.where, "joint_force: joint '" + e.joint + "' needs " + std::to_string(m.nv_joint[f.joint]) +
                                 " values, got " + std::to_string(e.value.size()));
            f.value = Eigen::Map<const VecX>(e.value.data(), static_cast<Eigen::Index>(e.value.size()));
          } else if constexpr (std::is_same_v<E, BodyForceSpec>) {
            f.kind = ModelForce::Kind::body_force;
            f.body1 = to_model(find_body(e.body, fs.where, [] { return std::string("body_force: "); }));
            if (f.body1 < 0) fail(fs.where, "body_force: cannot apply a force to ground");
            f.point1 = e.point, f.vector = e.force;
          } else if constexpr (std::is_same_v<E, BodyTorqueSpec>) {
            f.kind = ModelForce::Kind::body_torque;
            f.body1 = to_model(find_body(e.body, fs.where, [] { return std::string("body_torque: "); }));
            if (f.body1 < 0) fail(fs.where, "body_torque: cannot apply a torque to ground");
            f.vector = e.torque;
          } else {
            f.kind = ModelForce::Kind::joint_pd;
            f.joint = tree_joint_index(e.joint, "joint_pd");
            if (m.nv_joint[f.joint] != 1 || m.nq_joint[f.joint] != 1)
              fail(fs.where, "joint_pd: joint '" + e.joint + "' must have one coordinate");
            if (!(e.stiffness >= 0.0) || !(e.damping >= 0.0))
              fail(fs.where, "joint_pd on '" + e.joint + "': stiffness and damping must not be negative");
            f.stiffness = e.stiffness, f.damping = e.damping;
            f.effort = e.effort.value_or(mech.joints[joint_of.at(e.joint)].effort);
            if (!(f.effort > 0.0))
              fail(fs.where, "joint_pd on '" + e.joint + "': effort must be > 0 (got " + short_number(f.effort) + ")");
            if (!(e.target.first_time() <= 0.0))
              fail(fs.where, "joint_pd on '" + e.joint + "': its target starts at t = " +
                                 std::to_string(e.target.first_time()) + " s, after the run's start t = 0");
            f.profile = e.target;
          }
        },
        fs.element);
    const bool ok = std::isfinite(f.stiffness) && std::isfinite(f.damping) && std::isfinite(f.rest) &&
                    f.point1.allFinite() && f.point2.allFinite() && f.vector.allFinite() && f.value.allFinite();
    if (!ok) fail(fs.where, "force element has a non-finite value");
    static const char* const kind_names[] = {"joint_spring_damper", "point_spring_damper", "joint_force", "body_force",
                                             "body_torque", "joint_pd"};
    const std::string kind = kind_names[static_cast<int>(f.kind)];
    const int body = f.body1 >= 0 ? f.body1 : f.body2;  // a point spring-damper may hang from the ground
    f.label = "force #" + std::to_string(m.forces.size() + 1) + " (" + kind + " on '" +
              (f.joint >= 0 ? m.joints[f.joint].name : body >= 0 ? m.body_name[body] : std::string(ground_name)) + "')";
    if (fs.profile && f.kind == ModelForce::Kind::joint_pd)
      fail(fs.where, kind + ": give its time dependence as `target`, not `profile`");
    if (fs.profile) {
      if (f.kind == ModelForce::Kind::joint_spring_damper || f.kind == ModelForce::Kind::point_spring_damper)
        fail(fs.where, kind + ": a spring-damper has no profile (profiles scale joint_force, body_force, body_torque)");
      if (!(fs.profile->first_time() <= 0.0))
        fail(fs.where, f.label + ": its profile starts at t = " + std::to_string(fs.profile->first_time()) +
                           " s, after the run's start t = 0");
      f.profile = fs.profile;
    }
    m.forces.push_back(std::move(f));
  }
  m.callbacks = mech.callbacks;
  return m;
}

void integrate_q(const Model& model, Eigen::Ref<VecX> q, const VecX& du) {
  if (q.size() != model.nq || du.size() != model.nv)
    throw std::invalid_argument("integrate_q: expected q (" + std::to_string(model.nq) + ") and du (" +
                                std::to_string(model.nv) + "), got " + std::to_string(q.size()) + " and " +
                                std::to_string(du.size()));
  for (int i = 0; i < model.nbodies; ++i) integrate_joint_q(model, q, i, du.data() + model.v_index[i]);
}

void integrate_joint_q(const Model& model, Eigen::Ref<VecX> q, int i, const double* d) {
  double* qi = q.data() + model.q_index[i];
  std::visit(
      [&](const auto& k) {
        using K = std::decay_t<decltype(k)>;
        if constexpr (std::is_same_v<K, Spherical>) {
          rotate_quaternion(qi, Vec3(d[0], d[1], d[2]));  // R ← R Rot(du)
        } else if constexpr (std::is_same_v<K, Free>) {
          const Vec3 v(d[0], d[1], d[2]), w(d[3], d[4], d[5]);
          const Vec3 dp = detail::quaternion_matrix(qi + 3) * se3_translation(w, v);  // p ← p + R V(ω) v
          for (int c = 0; c < 3; ++c) qi[c] += dp(c);
          rotate_quaternion(qi + 3, w);
        } else {
          static_assert(K::nq == K::nv, "joint with nq != nv needs its own increment");
          for (int c = 0; c < K::nv; ++c) qi[c] += d[c];  // u = q̇
        }
      },
      model.joints[i].joint);
}

}  // namespace loopdyn
