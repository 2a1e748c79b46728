// Evaluation of the loop-closure constraints: Φ, G and γ of whole sets and of blocks (constraints.hpp).
#include "loopdyn/loops/constraints.hpp"

#include <algorithm>
#include <stdexcept>

#include "loops/constraint_rows.hpp"
#include "loops/sparse_qr.hpp"
#include "loopdyn/core/errors.hpp"
#include "loopdyn/core/linalg.hpp"

namespace loopdyn {

namespace {

using Kind = ConstraintRow::Kind;

// World kinematics of a joint frame (pose `frame` on `body`, −1 = ground).
void frame_positions(const KinematicsData& kin, int body, const Transform& frame, ConstraintData::Frame& f) {
  const Transform W = body < 0 ? frame : kin.X_world[body] * frame;
  f.R = W.R;
  f.x = W.p;
}

// World spatial velocity V = [ω; v_O] about the world origin; origin point: v = v_O + ω × x.
void frame_velocity(const KinematicsData& kin, int body, ConstraintData::Frame& f) {
  if (body < 0) {
    f.w = f.v = Vec3::Zero();
    return;
  }
  const Vec6 V = kin.X_world[body].act_motion(kin.v[body]);
  f.w = V.head<3>();
  f.v = V.tail<3>() + f.w.cross(f.x);
}

void frame_motion(const KinematicsData& kin, const std::vector<Vec6>& a0, int body, ConstraintData::Frame& f) {
  frame_velocity(kin, body, f);
  if (body < 0) {
    f.dw0 = f.a0 = Vec3::Zero();
    return;
  }
  // World spatial acceleration A = [ω̇; a_O] about the world origin; origin point:
  // a = a_O + ω̇ × x + ω × v.
  const Vec6 A = kin.X_world[body].act_motion(a0[body]);
  f.dw0 = A.head<3>();
  f.a0 = A.tail<3>() + f.dw0.cross(f.x) + f.w.cross(f.v);
}

void update_loop_frames(const Model& model, const KinematicsData& kin, ConstraintData& d, int k) {
  const ModelJoint& lj = model.loop_joints[k];
  frame_positions(kin, lj.parent, lj.parent_frame, d.fp[k]);
  frame_positions(kin, lj.child, lj.child_frame, d.fc[k]);
}

// The right-hand side of a coupling at t; a drive's motion that fails there (a table that ends, a
// value that is not finite) names the drive.
TimeValue coupling_value(const ModelCoupling& c, double t) {
  try {
    return c.value(t);
  } catch (const std::runtime_error& e) {
    throw InputError("drive '" + c.name + "': " + e.what());
  }
}

// Φ = Σ c q − value(t) of a coupling row.
double coupling_error(const ModelCoupling& c, const VecX& q, double t) {
  double e = -coupling_value(c, t).value;
  for (const ModelCoupling::Term& t : c.terms) e += t.coefficient * q(t.q_index);
  return e;
}

// Calls f(body, sign) for every body on the tree path between a loop joint's two bodies, below
// their common ancestor: sign +1 on the child side, −1 on the parent side. parent[i] < i, so the
// larger index is never an ancestor of the smaller one (ground is −1).
template <class F>
void for_path_bodies(const Model& model, const ModelJoint& lj, F f) {
  for (int child = lj.child, parent = lj.parent; child != parent;) {
    const bool child_side = child > parent;
    int& body = child_side ? child : parent;
    f(body, child_side ? 1.0 : -1.0);
    body = model.parent[body];
  }
}

// A loop-joint row's entries of G, on the tree path between the joint's two bodies only. A column
// of a common ancestor moves both frames rigidly: ω_c − ω_p = 0 and v_c − v_p = ω × d, so
// b·(ω × d) + (b × d)·ω = 0 and both row kinds vanish there (the row is sparse in the tree).
// A path column s = [ω; v_O] (world axes, about the world origin) with σ = +1 on the child side,
// −1 on the parent side gives
//   dot    Φ̇ = (a × b)·(ω_c − ω_p)             → σ (a × b)·ω;
//   along  Φ̇ = b·(v_c − v_p) + (b × d)·ω_p     → σ b·(v_O + ω × x_c)
// (on the parent side −b·(v_O + ω × x_p) + (b × d)·ω = −b·(v_O + ω × (x_p + d))).
// loop_row_normal gives the row's n (a × b or b); loop_row_entry the entry for one column.
Vec3 loop_row_normal(const ConstraintRow& row, const ConstraintData::Frame& p, const ConstraintData::Frame& c) {
  const Vec3 b = p.R * row.u;
  return row.kind == Kind::dot ? Vec3((c.R * row.w).cross(b)) : b;
}

// The column is read where it lies (a column of ConstraintData::S_world): copied into a Vec6 first,
// its tail was loaded across the two 16-byte stores of the copy, a failed store forwarding that
// held a third of block_position_jacobian's time (perf annotate on the ladder cells).
template <class Column>
double loop_row_entry(const ConstraintRow& row, const Vec3& n, const ConstraintData::Frame& c, const Column& s) {
  const Vec3 w = s.template head<3>();
  return n.dot(row.kind == Kind::dot ? w : Vec3(s.template tail<3>() + w.cross(c.x)));
}

// Row r of G for a loop-joint row; `first_column(body)` is the column of the body's first speed
// in G, `motion(speed)` the world motion column of a (global) speed.
template <class FirstColumn, class Motion>
void loop_row(const Model& model, const ModelJoint& lj, const ConstraintRow& row, const ConstraintData::Frame& p,
              const ConstraintData::Frame& c, Eigen::Ref<MatX> G, int r, FirstColumn first_column, Motion motion) {
  const Vec3 n = loop_row_normal(row, p, c);
  for_path_bodies(model, lj, [&](int body, double sign) {
    for (int k = 0, col = model.v_index[body], out = first_column(body); k < model.nv_joint[body]; ++k)
      G(r, out + k) = sign * loop_row_entry(row, n, c, motion(col + k));
  });
}

// The world motion column of a speed, X_world S, formed where a row asks for it.
auto formed_motion(const Model& model, const KinematicsData& kin) {
  return [&model, &kin](int speed) { return kin.X_world[model.v_body[speed]].act_motion(kin.S.col(speed)); };
}

// Row r of G for `row`, columns placed by first_column, motion columns from `motion` (see
// loop_row); G's row must be zero.
template <class FirstColumn, class Motion>
void place_jacobian_row(const Model& model, const ConstraintRow& row, const ConstraintData& d, Eigen::Ref<MatX> G,
                        int r, FirstColumn first_column, Motion motion) {
  if (row.kind == Kind::coupling) {
    for (const ModelCoupling::Term& t : model.couplings[row.loop].terms)
      G(r, first_column(t.joint) + t.v_index - model.v_index[t.joint]) += t.coefficient;
    return;
  }
  loop_row(model, model.loop_joints[row.loop], row, d.fp[row.loop], d.fc[row.loop], G, r, first_column, motion);
}

double bias_row(const Model& model, const ConstraintRow& row, double t, const ConstraintData& d) {
  // Constant G: Φ̈ = G u̇ − f̈, so γ = f̈ (0 but for a drive).
  if (row.kind == Kind::coupling) return coupling_value(model.couplings[row.loop], t).acceleration;
  return detail::frame_bias_row(row, d.fp[row.loop], d.fc[row.loop]);
}

// Φ̇ of one row from the world velocities of its two frames (constraints.hpp), u for coupling rows.
double velocity_row(const Model& model, const ConstraintRow& row, const Eigen::Ref<const VecX>& u,
                    const ConstraintData& d) {
  if (row.kind == Kind::coupling) {
    double e = 0.0;
    for (const ModelCoupling::Term& t : model.couplings[row.loop].terms) e += t.coefficient * u(t.v_index);
    return e;
  }
  return detail::frame_velocity_row(row, d.fp[row.loop], d.fc[row.loop]);
}

void update_loop_motion(const Model& model, const KinematicsData& kin, ConstraintData& d, int k) {
  frame_motion(kin, d.a0, model.loop_joints[k].parent, d.fp[k]);
  frame_motion(kin, d.a0, model.loop_joints[k].child, d.fc[k]);
}

}  // namespace

namespace detail {

void update_frames(const Model& model, const KinematicsData& kin, ConstraintData& d) {
  for (int k = 0; k < static_cast<int>(model.loop_joints.size()); ++k) update_loop_frames(model, kin, d, k);
}

double position_row(const Model& model, const ConstraintRow& row, const VecX& q, double t, const ConstraintData& d) {
  if (row.kind == Kind::coupling) return coupling_error(model.couplings[row.loop], q, t);
  return frame_position_row(row, d.fp[row.loop], d.fc[row.loop]);
}

double frame_position_row(const ConstraintRow& row, const ConstraintData::Frame& p, const ConstraintData::Frame& c) {
  // dot: (Rp u)·(Rc w); along: (Rp u)·(x_c − x_p).
  return row.kind == Kind::dot ? (p.R * row.u).dot(c.R * row.w) : (p.R * row.u).dot(c.x - p.x);
}

double frame_velocity_row(const ConstraintRow& row, const ConstraintData::Frame& p, const ConstraintData::Frame& c) {
  const Vec3 b = p.R * row.u;
  if (row.kind == Kind::dot) return (c.R * row.w).cross(b).dot(c.w - p.w);
  return b.dot(c.v - p.v) + b.cross(c.x - p.x).dot(p.w);
}

double frame_bias_row(const ConstraintRow& row, const ConstraintData::Frame& p, const ConstraintData::Frame& c) {
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

void jacobian_row(const Model& model, const ConstraintRow& row, const KinematicsData& kin, const ConstraintData& d,
                  Eigen::Ref<MatX> G, int r) {
  place_jacobian_row(model, row, d, G, r, [&](int body) { return model.v_index[body]; }, formed_motion(model, kin));
}

void update_motion_columns(const Model& model, const KinematicsData& kin, const std::vector<int>& speeds,
                           ConstraintData& d) {
  const auto motion = formed_motion(model, kin);
  for (int k : speeds) d.S_world.col(k) = motion(k);
}

std::vector<int> path_speeds(const std::vector<std::vector<int>>& row_speeds) {
  std::vector<int> out;
  for (const std::vector<int>& s : row_speeds) out.insert(out.end(), s.begin(), s.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void jacobian_row_on_path(const Model& model, const ConstraintRow& row, const ConstraintData& d,
                          const std::vector<int>& speeds, Eigen::Ref<MatX> out, int r) {
  const auto place = [&](int speed) {
    return static_cast<int>(std::lower_bound(speeds.begin(), speeds.end(), speed) - speeds.begin());
  };
  if (row.kind == Kind::coupling) {  // its speeds are its terms', not whole joints'
    for (const ModelCoupling::Term& t : model.couplings[row.loop].terms) out(r, place(t.v_index)) += t.coefficient;
    return;
  }
  place_jacobian_row(model, row, d, out, r, [&](int body) { return place(model.v_index[body]); },
                     [&d](int speed) { return d.S_world.col(speed); });
}

void jacobian_rows(const Model& model, const std::vector<ConstraintRow>& rows, const KinematicsData& kin,
                   const ConstraintData& d, Eigen::Ref<MatX> G) {
  G.setZero();
  const auto global = [&](int body) { return model.v_index[body]; };
  for (std::size_t r = 0; r < rows.size(); ++r)
    place_jacobian_row(model, rows[r], d, G, static_cast<int>(r), global, formed_motion(model, kin));
}

double time_rate_row(const Model& model, const ConstraintRow& row, double t) {
  if (row.kind != Kind::coupling || !model.couplings[row.loop].drive) return 0.0;
  return -coupling_value(model.couplings[row.loop], t).rate;
}

std::vector<int> row_speeds(const Model& model, const ConstraintRow& row) {
  std::vector<int> speeds;
  if (row.kind == Kind::coupling) {
    for (const ModelCoupling::Term& t : model.couplings[row.loop].terms) speeds.push_back(t.v_index);
  } else {
    for_path_bodies(model, model.loop_joints[row.loop], [&](int body, double) { model.append_speeds(body, speeds); });
  }
  std::sort(speeds.begin(), speeds.end());
  speeds.erase(std::unique(speeds.begin(), speeds.end()), speeds.end());
  return speeds;
}

}  // namespace detail

using detail::jacobian_rows;
using detail::position_row;
using detail::update_frames;

ConstraintData::ConstraintData(const Model& model)
    : fp(model.loop_joints.size()),
      fc(model.loop_joints.size()),
      a0(model.nbodies, Vec6::Zero()),
      S_world(Mat6X::Zero(6, model.nv)),
      point_world(Eigen::Matrix3Xd::Zero(3, model.nv)) {}

void constraint_position(const Model& model, const Constraints& cons, const KinematicsData& kin, double t,
                         ConstraintData& d, Eigen::Ref<VecX> phi) {
  update_frames(model, kin, d);
  for (int r = 0; r < cons.rows(); ++r) phi(r) = position_row(model, cons.kept()[r], kin.q, t, d);
}

void constraint_jacobian(const Model& model, const Constraints& cons, const KinematicsData& kin, ConstraintData& d,
                         Eigen::Ref<MatX> G) {
  update_frames(model, kin, d);
  jacobian_rows(model, cons.kept(), kin, d, G);
}

void constraint_velocity(const Model& model, const Constraints& cons, const KinematicsData& kin, ConstraintData& d,
                         const Eigen::Ref<const VecX>& u, Eigen::Ref<VecX> phidot) {
  update_frames(model, kin, d);
  for (int k = 0; k < static_cast<int>(model.loop_joints.size()); ++k) {
    frame_velocity(kin, model.loop_joints[k].parent, d.fp[k]);
    frame_velocity(kin, model.loop_joints[k].child, d.fc[k]);
  }
  for (int r = 0; r < cons.rows(); ++r) phidot(r) = velocity_row(model, cons.kept()[r], u, d);
}

void constraint_forces(const Model& model, const Constraints& cons, const KinematicsData& kin,
                       const ConstraintData& d, const VecX& lambda, Mat6X& loop_wrench, Mat6X& fext, VecX* tau) {
  loop_wrench.setZero();
  for (int r = 0; r < cons.rows(); ++r) {
    const ConstraintRow& row = cons.kept()[r];
    if (row.kind == Kind::coupling) {  // −c λ on the coupled speeds
      if (tau)
        for (const ModelCoupling::Term& t : model.couplings[row.loop].terms) (*tau)(t.v_index) -= t.coefficient * lambda(r);
      continue;
    }
    const auto &p = d.fp[row.loop], &c = d.fc[row.loop];
    const Vec3 b = p.R * row.u;
    if (row.kind == Kind::dot)
      loop_wrench.col(row.loop).head<3>() -= lambda(r) * (c.R * row.w).cross(b);  // moment −λ a × b
    else
      loop_wrench.col(row.loop).tail<3>() -= lambda(r) * b;  // force −λ b at x_c
  }
  for (std::size_t k = 0; k < model.loop_joints.size(); ++k) {
    const ModelJoint& lj = model.loop_joints[k];
    Vec6 about_origin = loop_wrench.col(k);  // moment about the world origin
    about_origin.head<3>() += d.fc[k].x.cross(about_origin.tail<3>());
    // Child side w, parent side −w, both at x_c.
    if (lj.child >= 0) fext.col(lj.child) += kin.X_world[lj.child].inv_act_force(about_origin);
    if (lj.parent >= 0) fext.col(lj.parent) -= kin.X_world[lj.parent].inv_act_force(about_origin);
  }
}

void constraint_time_rate(const Model& model, const Constraints& cons, double t, Eigen::Ref<VecX> phi_t) {
  for (int r = 0; r < cons.rows(); ++r) phi_t(r) = detail::time_rate_row(model, cons.kept()[r], t);
}

void constraint_bias(const Model& model, const Constraints& cons, const KinematicsData& kin, double t,
                     ConstraintData& d, Eigen::Ref<VecX> gamma) {
  update_frames(model, kin, d);
  // Body accelerations at u̇ = 0: a0_i = X⁻¹ a0_parent + c_i.
  for (int i = 0; i < model.nbodies; ++i) {
    const int p = model.parent[i];
    d.a0[i] = kin.c[i];
    if (p >= 0) d.a0[i] += kin.X_parent[i].inv_act_motion(d.a0[p]);
  }
  for (int k = 0; k < static_cast<int>(model.loop_joints.size()); ++k) update_loop_motion(model, kin, d, k);
  for (int r = 0; r < cons.rows(); ++r) gamma(r) = bias_row(model, cons.kept()[r], t, d);
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
  b.find_paths(model, cons);
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
  b.find_paths(model, cons);
  return b;
}

void ConstraintBlock::find_paths(const Model& model, const Constraints& cons) {
  for (int r : rows) {
    const ConstraintRow& row = cons.kept()[r];
    row_loop.push_back(row.kind == Kind::coupling
                           ? -1
                           : static_cast<int>(std::lower_bound(loops.begin(), loops.end(), row.loop) - loops.begin()));
  }
  std::vector<bool> on_path(bodies.size(), false);
  for (int k : loops) {
    std::vector<PathBody>& path = paths.emplace_back();
    for_path_bodies(model, model.loop_joints[k], [&](int body, double sign) {
      const auto at = std::lower_bound(bodies.begin(), bodies.end(), body);
      if (at == bodies.end() || *at != body)
        throw std::logic_error("constraint block: loop joint '" + model.loop_joints[k].name +
                               "' passes through body '" + model.body_name[body] + "', which is not in the block");
      const int j = static_cast<int>(at - bodies.begin());
      path.push_back({j, sign});
      on_path[j] = true;
    });
  }
  for (std::size_t j = 0; j < bodies.size(); ++j)
    if (on_path[j]) path_bodies.push_back(static_cast<int>(j));
}

int ConstraintBlock::column_of(int body) const {
  return first_column[std::lower_bound(bodies.begin(), bodies.end(), body) - bodies.begin()];
}

std::vector<int> ConstraintBlock::speeds(const Model& model) const {
  std::vector<int> out;
  for (int body : bodies) model.append_speeds(body, out);
  return out;
}

void block_position_jacobian(const Model& model, const Constraints& cons, const ConstraintBlock& block,
                             const KinematicsData& kin, double t, ConstraintData& d, Eigen::Ref<VecX> phi,
                             Eigen::Ref<MatX> G) {
  for (int k : block.loops) update_loop_frames(model, kin, d, k);
  // Each path speed's world motion column once, for all the rows it appears in.
  for (int j : block.path_bodies) {
    const int body = block.bodies[j];
    for (int k = 0; k < model.nv_joint[body]; ++k)
      d.S_world.col(block.first_column[j] + k) = kin.X_world[body].act_motion(kin.S.col(model.v_index[body] + k));
  }
  G.setZero();
  int pointed = -1;  // the loop whose x_c point_world holds
  for (std::size_t r = 0; r < block.rows.size(); ++r) {
    const ConstraintRow& row = cons.kept()[block.rows[r]];
    const int slot = block.row_loop[r];
    if (slot < 0) {
      phi(r) = position_row(model, row, kin.q, t, d);
      place_jacobian_row(model, row, d, G, static_cast<int>(r), [&](int body) { return block.column_of(body); },
                         formed_motion(model, kin));
      continue;
    }
    const ConstraintData::Frame &p = d.fp[row.loop], &c = d.fc[row.loop];
    const auto for_path_columns = [&](const auto& f) {  // f(column, sign) for each speed on the loop's path
      for (const ConstraintBlock::PathBody& pb : block.paths[slot])
        for (int k = 0, col = block.first_column[pb.body]; k < model.nv_joint[block.bodies[pb.body]]; ++k)
          f(col + k, pb.sign);
    };
    const auto entries = [&](const Vec3& n, const auto& column) {
      for_path_columns([&](int col, double sign) { G(static_cast<Eigen::Index>(r), col) = sign * n.dot(column(col)); });
    };
    // Φ (frame_position_row) and the row's normal (loop_row_normal) from one b = Rp u.
    const Vec3 b = p.R * row.u;
    if (row.kind == Kind::dot) {
      const Vec3 a = c.R * row.w;
      phi(r) = b.dot(a);
      entries(Vec3(a.cross(b)), [&](int col) { return d.S_world.col(col).head<3>(); });
      continue;
    }
    phi(r) = b.dot(c.x - p.x);
    // The velocity of x_c along each path column, v_O + ω × x_c, once for the loop's along rows
    // (its 1 to 3 rows each took a cross product per column; with Φ's b shared and no search for
    // the row's loop, 87.7 M -> 74.5 M instructions over a 1 s rcr run of the 64-cell spatial
    // ladder, the same G bit for bit).
    if (pointed != slot) {
      for_path_columns([&](int col, double) {
        const auto s = d.S_world.col(col);
        d.point_world.col(col) = s.tail<3>() + Vec3(s.head<3>()).cross(c.x);
      });
      pointed = slot;
    }
    entries(b, [&](int col) { return d.point_world.col(col); });
  }
}

void block_bias(const Model& model, const Constraints& cons, const ConstraintBlock& block, const KinematicsData& kin,
                double t, ConstraintData& d, Eigen::Ref<VecX> gamma) {
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
  for (std::size_t r = 0; r < block.rows.size(); ++r) gamma(r) = bias_row(model, cons.kept()[block.rows[r]], t, d);
}

RankInfo constraint_rank(const Model& model, const Constraints& cons, const VecX& q) {
  RankInfo info;
  info.dof = model.nv;
  if (cons.rows() == 0) return info;
  KinematicsData kin(model);
  update_positions(model, kin, q);
  ConstraintData d(model);
  MatX G(cons.rows(), model.nv);
  constraint_jacobian(model, cons, kin, d, G);
  const NumericalRank r = detail::jacobian_rank(G);
  info.rank = r.rank;
  info.tolerance = r.tolerance;
  info.dof = model.nv - info.rank;
  return info;
}

std::string dominant_loops(const Model& model, const Constraints& cons, const VecX& weight) {
  std::vector<bool> named_joint(model.loop_joints.size(), false), named_coupling(model.couplings.size(), false);
  std::vector<std::string> names;
  for (int r = 0; r < cons.rows(); ++r) {
    const ConstraintRow& row = cons.kept()[r];
    const bool coupling = row.kind == ConstraintRow::Kind::coupling;
    auto named = coupling ? named_coupling.begin() + row.loop : named_joint.begin() + row.loop;
    if (weight(r) < 0.1 * weight.maxCoeff() || *named) continue;
    *named = true;
    names.push_back(coupling ? model.couplings[row.loop].name : model.loop_joints[row.loop].name);
  }
  return quoted_list(names);
}

double velocity_scale(const MatX& G, const Eigen::Ref<const VecX>& u) {
  const double g = G.size() ? G.cwiseAbs().maxCoeff() : 0.0;
  const double v = u.size() ? u.cwiseAbs().maxCoeff() : 0.0;
  return std::max(1.0, g * v);
}

}  // namespace loopdyn
