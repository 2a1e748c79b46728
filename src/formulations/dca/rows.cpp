// The bodies' positions and velocities of a state, and the constraint rows there: Φ, Φ̇, γ and
// G's 6-blocks on the bodies' velocities [ω; ṙ] (formulations/dca.hpp, "Coordinates").
#include <stdexcept>

#include "loops/constraint_rows.hpp"
#include "formulations/dca/engine.hpp"

namespace loopdyn::dca {

using Kind = ConstraintRow::Kind;

void Engine::load_bodies(const Eigen::Ref<const VecX>& x, bool velocities) {
  const int nb = model.nbodies;
  parallel.for_each(nb, [&](int i) {
    r_[i] = layout.r(x, i);
    R_[i] = layout.rotation(x, i);
    if (velocities) {
      w_[i] = layout.w(x, i);
      v_[i] = layout.v(x, i);
    }
  });
}

RowsEvaluated Engine::update_rows(bool velocities) {
  if (solver.factor_pending()) throw std::logic_error("dca: update_rows between factor() and the solve that factors");
  // Frames: pose, velocity and acceleration at zero body accelerations (ω̇ = 0, r̈ = 0).
  auto frame = [&](int body, const Transform& X, ConstraintData::Frame& f) {
    if (body < 0) {
      f.R = X.R;
      f.x = X.p;
      f.w = f.v = f.dw0 = f.a0 = Vec3::Zero();
      return;
    }
    const Vec3 s = R_[body] * (X.p - model.com[body]);  // frame origin − centre of mass
    f.R = R_[body] * X.R;
    f.x = r_[body] + s;
    if (!velocities) return;
    f.w = w_[body];
    f.v = v_[body] + f.w.cross(s);
    f.dw0.setZero();
    f.a0 = f.w.cross(f.w.cross(s));
  };
  parallel.for_each(static_cast<int>(set.constraints.size()), [&](int k) {
    const Constraint& c = set.constraints[k];
    if (c.source == Constraint::Source::coupling) return;
    frame(c.joint->parent, c.joint->parent_frame, fp_[k]);
    frame(c.joint->child, c.joint->child_frame, fc_[k]);
  });
  parallel.for_each(set.size(), [&](int r) {
    const ConstraintRow& row = set.rows[r];
    const Constraint& c = set.constraints[row.loop];
    Gblk_.middleCols(set.first_block[r], c.nbodies).setZero();
    auto block = [&](int body) { return Gblk_.block<6, 1>(0, set.first_block[r] + c.slot(body)); };
    if (row.kind != Kind::coupling) {
      const ConstraintData::Frame &p = fp_[row.loop], &ch = fc_[row.loop];
      phi_(r) = detail::frame_position_row(row, p, ch);
      if (velocities) {
        phidot_(r) = detail::frame_velocity_row(row, p, ch);
        gamma_(r) = detail::frame_bias_row(row, p, ch);
      }
      // dot: Φ̇ = n·(ω_c − ω_p), n = a × b. along: Φ̇ = b·(v_fc − v_fp) + (b × d)·ω_p, which on the
      // velocities [ω; ṙ] of body k (centre r_k, σ = +1 child, −1 parent) is σ [(x_c − r_k) × b; b].
      const Vec3 b = p.R * row.u;
      for (int side : {c.joint->child, c.joint->parent}) {
        if (side < 0) continue;
        const double sigma = side == c.joint->child ? 1.0 : -1.0;
        Vec6 g;
        if (row.kind == Kind::dot) g << (ch.R * row.w).cross(b), Vec3::Zero();
        else g << (ch.x - r_[side]).cross(b), b;
        block(side) += sigma * g;
      }
      return;
    }
    // Coupling Φ = Σ c_k q_k − value over one-coordinate joints: a revolute joint's q̇ = b·(ω_c − ω_p),
    // b the axis in the world, a prismatic joint's the `along` rate of its axis.
    const ModelCoupling& mc = model.couplings[c.index];
    double e = -mc.value(kWithoutDrives).value, edot = 0.0, bias = 0.0;  // dca takes no drives
    for (std::size_t t = 0; t < mc.terms.size(); ++t) {
      const ModelCoupling::Term& term = mc.terms[t];
      const ModelJoint& mj = model.joints[term.joint];
      ConstraintData::Frame p, ch;
      frame(mj.parent, mj.parent_frame, p);
      frame(mj.child, mj.child_frame, ch);
      double& q = coupling_q_[c.first_term + t];
      joint_coordinates(mj.joint, Transform{p.R, p.x}.inverse() * Transform{ch.R, ch.x}, &q, &q);
      e += term.coefficient * q;
      const bool revolute = std::holds_alternative<Revolute>(mj.joint);
      const Vec3 axis = revolute ? std::get<Revolute>(mj.joint).axis : std::get<Prismatic>(mj.joint).axis;
      const ConstraintRow along{Kind::along, 0, axis, axis, {}};
      const Vec3 b = p.R * axis;
      if (velocities) {
        edot += term.coefficient * (revolute ? b.dot(ch.w - p.w) : detail::frame_velocity_row(along, p, ch));
        bias += term.coefficient * (revolute ? -p.w.cross(b).dot(ch.w - p.w) : detail::frame_bias_row(along, p, ch));
      }
      for (int side : {mj.child, mj.parent}) {
        if (side < 0) continue;
        const double sigma = side == mj.child ? 1.0 : -1.0;
        Vec6 g;
        if (revolute) g << b, Vec3::Zero();
        else g << (ch.x - r_[side]).cross(b), b;
        block(side) += sigma * term.coefficient * g;
      }
    }
    phi_(r) = e;
    if (velocities) {
      phidot_(r) = edot;
      gamma_(r) = bias;
    }
  });
  return RowsEvaluated();
}

Factorization Engine::factor(const RowsEvaluated& /*rows*/) {
  parallel.for_each(model.nbodies, [&](int i) { inertia_[i] = R_[i] * Jc_[i] * R_[i].transpose(); });
  // The nodes are factored by the next solve, each just before its upward step, so that the tree's
  // memory is streamed through once for both (Solver::factor_node copies G's blocks then).
  return solver.factor(inertia_, Gblk_);
}

void Engine::constraint_residual(const VecX& x, const VecX& nu) {
  parallel.for_each(set.size(), [&](int r) {
    double c = nu(r);
    for (int b = set.first_block[r]; b < set.first_block[r + 1]; ++b)
      c += Gblk_.col(b).dot(BodyVector::body(x, set.block_body[b]));
    c_(r) = c;
  });
}

void Engine::subtract_constraint_forces(int i) {
  for (int k = set.body_first[i]; k < set.body_first[i + 1]; ++k)
    BodyVector::body(res_, i) -= lambda_(set.body_blocks[k].first) * Gblk_.col(set.body_blocks[k].second);
}

}  // namespace loopdyn::dca
