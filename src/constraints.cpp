// Loop-closure constraints: rows, Φ, G, γ and the structural redundancy check (constraints.hpp).
#include "loopdyn/constraints.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <random>

#include "loopdyn/linalg.hpp"

namespace loopdyn {

namespace {

using Kind = ConstraintRow::Kind;

// Rows of one loop-closing joint (see the table in constraints.hpp).
void joint_rows(const ModelJoint& lj, int loop, std::vector<ConstraintRow>& out) {
  const Vec3 ex = Vec3::UnitX(), ey = Vec3::UnitY(), ez = Vec3::UnitZ();
  auto along = [&](const Vec3& u, const char* name) { out.push_back({Kind::along, loop, u, u, lj.name + ".along." + name}); };
  auto dot = [&](const Vec3& u, const Vec3& w, const char* name) { out.push_back({Kind::dot, loop, u, w, lj.name + ".dot." + name}); };
  auto translation = [&] {
    along(ex, "x");
    along(ey, "y");
    along(ez, "z");
  };
  auto rotation_locked = [&] {
    dot(ey, ez, "yz");
    dot(ez, ex, "zx");
    dot(ex, ey, "xy");
  };
  // b1, b2: an orthonormal pair perpendicular to the axis a.
  auto axis_kept = [&](const Vec3& a) {
    dot(a.unitOrthogonal(), a, "b1");
    dot(a.cross(a.unitOrthogonal()), a, "b2");
  };
  auto off_axis = [&](const Vec3& a) {
    along(a.unitOrthogonal(), "b1");
    along(a.cross(a.unitOrthogonal()), "b2");
  };
  std::visit(
      [&](const auto& k) {
        using K = std::decay_t<decltype(k)>;
        if constexpr (std::is_same_v<K, Revolute>) {
          translation();
          axis_kept(k.axis);
        } else if constexpr (std::is_same_v<K, Prismatic>) {
          off_axis(k.axis);
          rotation_locked();
        } else if constexpr (std::is_same_v<K, Cylindrical>) {
          off_axis(k.axis);
          axis_kept(k.axis);
        } else if constexpr (std::is_same_v<K, Universal>) {
          translation();
          dot(k.axis, k.axis2, "axes");
        } else if constexpr (std::is_same_v<K, Spherical>) {
          translation();
        } else if constexpr (std::is_same_v<K, Planar>) {
          along(ez, "z");
          dot(ex, ez, "xz");
          dot(ey, ez, "yz");
        } else if constexpr (std::is_same_v<K, Fixed>) {
          translation();
          rotation_locked();
        }
      },
      lj.joint);
}

// World kinematics of a joint frame (pose `frame` on `body`, −1 = ground).
void frame_positions(const KinematicsData& kin, int body, const Transform& frame, ConstraintData::Frame& f) {
  const Transform W = body < 0 ? frame : kin.X_world[body] * frame;
  f.R = W.R;
  f.x = W.p;
}

void frame_motion(const KinematicsData& kin, const std::vector<Vec6>& a0, int body, ConstraintData::Frame& f) {
  if (body < 0) {
    f.w = f.v = f.dw0 = f.a0 = Vec3::Zero();
    return;
  }
  // World spatial velocity V = [ω; v_O] and acceleration A = [ω̇; a_O] about the world origin;
  // origin point: v = v_O + ω × x, a = a_O + ω̇ × x + ω × v.
  const Vec6 V = kin.X_world[body].act_motion(kin.v[body]);
  const Vec6 A = kin.X_world[body].act_motion(a0[body]);
  f.w = V.head<3>();
  f.v = V.tail<3>() + f.w.cross(f.x);
  f.dw0 = A.head<3>();
  f.a0 = A.tail<3>() + f.dw0.cross(f.x) + f.w.cross(f.v);
}

void update_loop_frames(const Model& model, const KinematicsData& kin, ConstraintData& d, int k) {
  const ModelJoint& lj = model.loop_joints[k];
  frame_positions(kin, lj.parent, lj.parent_frame, d.fp[k]);
  frame_positions(kin, lj.child, lj.child_frame, d.fc[k]);
}

void update_frames(const Model& model, const KinematicsData& kin, ConstraintData& d) {
  for (int k = 0; k < static_cast<int>(model.loop_joints.size()); ++k) update_loop_frames(model, kin, d, k);
}

// Φ = Σ c q − value of a coupling row.
double coupling_error(const ModelCoupling& c, const VecX& q) {
  double e = -c.value;
  for (const ModelCoupling::Term& t : c.terms) e += t.coefficient * q(t.q_index);
  return e;
}

double position_row(const Model& model, const ConstraintRow& row, const VecX& q, const ConstraintData& d) {
  if (row.kind == Kind::coupling) return coupling_error(model.couplings[row.loop], q);
  const auto &p = d.fp[row.loop], &c = d.fc[row.loop];
  // dot: (Rp u)·(Rc w); along: (Rp u)·(x_c − x_p).
  return row.kind == Kind::dot ? (p.R * row.u).dot(c.R * row.w) : (p.R * row.u).dot(c.x - p.x);
}

// Row r of G for a loop-joint row, on the tree path between the joint's two bodies only. A column
// of a common ancestor moves both frames rigidly: ω_c − ω_p = 0 and v_c − v_p = ω × d, so
// b·(ω × d) + (b × d)·ω = 0 and both row kinds vanish there (the row is sparse in the tree).
// A path column s = [ω; v_O] (world axes, about the world origin) with σ = +1 on the child side,
// −1 on the parent side gives
//   dot    Φ̇ = (a × b)·(ω_c − ω_p)             → σ (a × b)·ω;
//   along  Φ̇ = b·(v_c − v_p) + (b × d)·ω_p     → σ b·(v_O + ω × x_c)
// (on the parent side −b·(v_O + ω × x_p) + (b × d)·ω = −b·(v_O + ω × (x_p + d))).
// `first_column(body)` is the column of the body's first speed in G.
template <class FirstColumn>
void loop_row(const Model& model, const KinematicsData& kin, const ModelJoint& lj, const ConstraintRow& row,
              const ConstraintData::Frame& p, const ConstraintData::Frame& c, Eigen::Ref<MatX> G, int r,
              FirstColumn first_column) {
  const bool dot = row.kind == Kind::dot;
  const Vec3 b = p.R * row.u;
  const Vec3 n = dot ? Vec3((c.R * row.w).cross(b)) : b;
  // Walk both sides up to the common ancestor: parent[i] < i, so the larger index is never an
  // ancestor of the smaller one (ground is −1).
  for (int child = lj.child, parent = lj.parent; child != parent;) {
    const bool child_side = child > parent;
    int& body = child_side ? child : parent;
    const double sign = child_side ? 1.0 : -1.0;
    for (int k = 0, col = model.v_index[body], out = first_column(body); k < model.nv_joint[body]; ++k) {
      const Vec6 s = kin.X_world[body].act_motion(kin.S.col(col + k));
      const Vec3 w = s.head<3>();
      G(r, out + k) = sign * n.dot(dot ? w : Vec3(s.tail<3>() + w.cross(c.x)));
    }
    body = model.parent[body];
  }
}

// Row r of G for `row`, columns placed by first_column (see loop_row); G's row must be zero.
template <class FirstColumn>
void jacobian_row(const Model& model, const ConstraintRow& row, const KinematicsData& kin, const ConstraintData& d,
                  Eigen::Ref<MatX> G, int r, FirstColumn first_column) {
  if (row.kind == Kind::coupling) {
    for (const ModelCoupling::Term& t : model.couplings[row.loop].terms)
      G(r, first_column(t.joint) + t.v_index - model.v_index[t.joint]) += t.coefficient;
    return;
  }
  loop_row(model, kin, model.loop_joints[row.loop], row, d.fp[row.loop], d.fc[row.loop], G, r, first_column);
}

void jacobian_rows(const Model& model, const std::vector<ConstraintRow>& rows, const KinematicsData& kin,
                   const ConstraintData& d, Eigen::Ref<MatX> G) {
  G.setZero();
  const auto global = [&](int body) { return model.v_index[body]; };
  for (std::size_t r = 0; r < rows.size(); ++r) jacobian_row(model, rows[r], kin, d, G, static_cast<int>(r), global);
}

double bias_row(const ConstraintRow& row, const ConstraintData& d) {
  if (row.kind == Kind::coupling) return 0.0;  // constant G: γ = 0
  const auto &p = d.fp[row.loop], &c = d.fc[row.loop];
  const Vec3 b = p.R * row.u, bdot = p.w.cross(b);
  double bias;
  if (row.kind == Kind::dot) {
    // Φ̈ − G u̇ = ṅ·Δω + n·(ω̇0_c − ω̇0_p), n = a × b, ṅ = ȧ × b + a × ḃ.
    const Vec3 a = c.R * row.w, adot = c.w.cross(a);
    bias = (adot.cross(b) + a.cross(bdot)).dot(c.w - p.w) + a.cross(b).dot(c.dw0 - p.dw0);
  } else {
    // Φ̈ − G u̇ = (ω̇0_p × b + ω_p × ḃ)·d + 2 ḃ·ḋ + b·(a0_c − a0_p).
    const Vec3 dist = c.x - p.x, ddot = c.v - p.v;
    bias = (p.dw0.cross(b) + p.w.cross(bdot)).dot(dist) + 2.0 * bdot.dot(ddot) + b.dot(c.a0 - p.a0);
  }
  return -bias;
}

void update_loop_motion(const Model& model, const KinematicsData& kin, ConstraintData& d, int k) {
  frame_motion(kin, d.a0, model.loop_joints[k].parent, d.fp[k]);
  frame_motion(kin, d.a0, model.loop_joints[k].child, d.fc[k]);
}

// Random configuration for the redundancy check: angles and offsets in [-π, π], unit quaternions.
VecX random_configuration(const Model& model, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-M_PI, M_PI);
  VecX q(model.nq);
  for (int k = 0; k < model.nq; ++k) q(k) = dist(rng);
  model.normalize(q);
  return q;
}

}  // namespace

std::vector<ConstraintRow> Constraints::all_rows(const Model& model) {
  std::vector<ConstraintRow> rows;
  for (std::size_t k = 0; k < model.loop_joints.size(); ++k) joint_rows(model.loop_joints[k], static_cast<int>(k), rows);
  for (std::size_t k = 0; k < model.couplings.size(); ++k)
    rows.push_back({Kind::coupling, static_cast<int>(k), Vec3::Zero(), Vec3::Zero(), model.couplings[k].name});
  return rows;
}

Constraints Constraints::unreduced(const Model& model) {
  Constraints c;
  c.rows_ = all_rows(model);
  return c;
}

// Structural redundancy: rank and independent rows of G at three random configurations (not
// assembled: rows that are dependent there are dependent everywhere generically). The sample of
// highest rank picks the kept rows by column-pivoted QR of Gᵀ.
Constraints::Constraints(const Model& model) {
  const std::vector<ConstraintRow> all = all_rows(model);
  if (all.empty()) return;
  ConstraintData d(model, *this);
  KinematicsData kin(model);
  MatX G(all.size(), model.nv);
  std::mt19937_64 rng(20261123);
  int best_rank = -1;
  std::vector<int> best;
  for (int sample = 0; sample < 3; ++sample) {
    update_positions(model, kin, random_configuration(model, rng));
    update_frames(model, kin, d);
    jacobian_rows(model, all, kin, d, G);
    Eigen::ColPivHouseholderQR<MatX> qr(G.transpose());
    // Pivots count when above 1e-10 · max(1, max |G|): absolute near G ≡ 0, where a threshold
    // relative to the largest pivot would count round-off as rank.
    const double scale = std::max(1.0, G.cwiseAbs().maxCoeff());
    if (qr.maxPivot() > 0.0) qr.setThreshold(std::min(1.0, 1e-10 * scale / qr.maxPivot()));
    if (qr.maxPivot() <= 1e-10 * scale) continue;
    if (static_cast<int>(qr.rank()) <= best_rank) continue;
    best_rank = static_cast<int>(qr.rank());
    best.assign(qr.colsPermutation().indices().data(), qr.colsPermutation().indices().data() + best_rank);
  }
  std::sort(best.begin(), best.end());
  for (int r = 0, next = 0; r < static_cast<int>(all.size()); ++r) {
    const bool keep = next < static_cast<int>(best.size()) && best[next] == r;
    (keep ? rows_ : dropped_).push_back(all[r]);
    next += keep;
  }
}

ConstraintData::ConstraintData(const Model& model, const Constraints&)
    : fp(model.loop_joints.size()), fc(model.loop_joints.size()), a0(model.nbodies, Vec6::Zero()) {}

void constraint_position(const Model& model, const Constraints& cons, const KinematicsData& kin, ConstraintData& d,
                         Eigen::Ref<VecX> phi) {
  update_frames(model, kin, d);
  for (int r = 0; r < cons.rows(); ++r) phi(r) = position_row(model, cons.kept()[r], kin.q, d);
}

void constraint_jacobian(const Model& model, const Constraints& cons, const KinematicsData& kin, ConstraintData& d,
                         Eigen::Ref<MatX> G) {
  update_frames(model, kin, d);
  jacobian_rows(model, cons.kept(), kin, d, G);
}

void constraint_bias(const Model& model, const Constraints& cons, const KinematicsData& kin, ConstraintData& d,
                     Eigen::Ref<VecX> gamma) {
  update_frames(model, kin, d);
  // Body accelerations at u̇ = 0: a0_i = X⁻¹ a0_parent + c_i.
  for (int i = 0; i < model.nbodies; ++i) {
    const int p = model.parent[i];
    d.a0[i] = kin.c[i];
    if (p >= 0) d.a0[i] += kin.X_parent[i].inv_act_motion(d.a0[p]);
  }
  for (int k = 0; k < static_cast<int>(model.loop_joints.size()); ++k) update_loop_motion(model, kin, d, k);
  for (int r = 0; r < cons.rows(); ++r) gamma(r) = bias_row(cons.kept()[r], d);
}

ConstraintBlock ConstraintBlock::whole(const Model& model, const Constraints& cons) {
  ConstraintBlock b;
  for (int r = 0; r < cons.rows(); ++r) b.rows.push_back(r);
  for (int k = 0; k < static_cast<int>(model.loop_joints.size()); ++k) b.loops.push_back(k);
  for (int i = 0; i < model.nbodies; ++i) {
    b.bodies.push_back(i);
    b.first_column.push_back(model.v_index[i]);
  }
  b.columns = model.nv;
  return b;
}

ConstraintBlock ConstraintBlock::of(const Model& model, const Constraints& cons, std::vector<int> bodies,
                                    const std::vector<int>& loop_joints, const std::vector<int>& couplings) {
  ConstraintBlock b;
  b.bodies = std::move(bodies);
  for (int body : b.bodies) {
    b.first_column.push_back(b.columns);
    b.columns += model.nv_joint[body];
  }
  for (int r = 0; r < cons.rows(); ++r) {
    const ConstraintRow& row = cons.kept()[r];
    const std::vector<int>& owners = row.kind == Kind::coupling ? couplings : loop_joints;
    if (std::find(owners.begin(), owners.end(), row.loop) != owners.end()) b.rows.push_back(r);
  }
  b.loops = loop_joints;
  std::sort(b.loops.begin(), b.loops.end());
  return b;
}

int ConstraintBlock::column_of(int body) const {
  return first_column[std::lower_bound(bodies.begin(), bodies.end(), body) - bodies.begin()];
}

std::vector<int> ConstraintBlock::speeds(const Model& model) const {
  std::vector<int> out;
  for (int body : bodies)
    for (int k = 0; k < model.nv_joint[body]; ++k) out.push_back(model.v_index[body] + k);
  return out;
}

void block_position_jacobian(const Model& model, const Constraints& cons, const ConstraintBlock& block,
                             const KinematicsData& kin, ConstraintData& d, Eigen::Ref<VecX> phi,
                             Eigen::Ref<MatX> G) {
  for (int k : block.loops) update_loop_frames(model, kin, d, k);
  G.setZero();
  const auto local = [&](int body) { return block.column_of(body); };
  for (std::size_t r = 0; r < block.rows.size(); ++r) {
    const ConstraintRow& row = cons.kept()[block.rows[r]];
    phi(r) = position_row(model, row, kin.q, d);
    jacobian_row(model, row, kin, d, G, static_cast<int>(r), local);
  }
}

void block_bias(const Model& model, const Constraints& cons, const ConstraintBlock& block, const KinematicsData& kin,
                ConstraintData& d, Eigen::Ref<VecX> gamma) {
  for (int k : block.loops) update_loop_frames(model, kin, d, k);
  // a0 = X⁻¹ a0_parent + c inside the block, zero on the bodies it hangs from.
  for (int i : block.bodies) {
    const int p = model.parent[i];
    if (p >= 0 && !std::binary_search(block.bodies.begin(), block.bodies.end(), p)) d.a0[p].setZero();
  }
  for (int i : block.bodies) {
    const int p = model.parent[i];
    d.a0[i] = kin.c[i];
    if (p >= 0) d.a0[i] += kin.X_parent[i].inv_act_motion(d.a0[p]);
  }
  for (int k : block.loops) update_loop_motion(model, kin, d, k);
  for (std::size_t r = 0; r < block.rows.size(); ++r) gamma(r) = bias_row(cons.kept()[block.rows[r]], d);
}

RankInfo constraint_rank(const Model& model, const Constraints& cons, const VecX& q) {
  RankInfo info;
  info.dof = model.nv;
  if (cons.rows() == 0) return info;
  KinematicsData kin(model);
  update_positions(model, kin, q);
  ConstraintData d(model, cons);
  MatX G(cons.rows(), model.nv);
  constraint_jacobian(model, cons, kin, d, G);
  const NumericalRank r = numerical_rank(G);
  info.rank = r.rank;
  info.tolerance = r.tolerance;
  info.dof = model.nv - info.rank;
  return info;
}

std::string row_owner(const Model& model, const ConstraintRow& row) {
  std::string s;
  if (row.kind == ConstraintRow::Kind::coupling)
    s.append("constraint '").append(model.couplings[row.loop].name).append("'");
  else
    s.append("loop joint '").append(model.loop_joints[row.loop].name).append("' (row ").append(row.label).append(")");
  return s;
}

double velocity_scale(const MatX& G, const Eigen::Ref<const VecX>& u) {
  const double g = G.size() ? G.cwiseAbs().maxCoeff() : 0.0;
  const double v = u.size() ? u.cwiseAbs().maxCoeff() : 0.0;
  return std::max(1.0, g * v);
}

}  // namespace loopdyn
