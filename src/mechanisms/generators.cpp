// Benchmark mechanisms and states (generators.hpp, where each is defined).
#include "loopdyn/mechanisms/generators.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "mechanisms/rods.hpp"

namespace loopdyn {

void require_count(long long n, const std::string& what) {
  if (n < 1) throw std::invalid_argument(what + " must be at least 1, got " + std::to_string(n));
  if (n > kMostGenerated)
    throw std::invalid_argument(what + " must be at most " + std::to_string(kMostGenerated) + ", got " +
                                std::to_string(n) + " (a larger mechanism takes minutes and gigabytes to build)");
}

namespace {

// Body data shared by chain-N and branched-N: 1 kg, com (0, 0, 0.5), diag(0.1, 0.1, 0.01).
void add_chain_body(Mechanism& m, const std::string& name) {
  m.add_body(name, 1.0, Vec3(0.0, 0.0, 0.5), Vec3(0.1, 0.1, 0.01).asDiagonal());
}

// Joint axis of body i in chain-N and branched-N: unit vector of index 2 − (i mod 3) (z, y, x).
Vec3 cycled_axis(int i) { return Vec3::Unit(2 - i % 3); }

std::string link(int i) { return "link" + std::to_string(i); }

// Fills q, u, τ, q̈ (each n draws in [−1, 1], in that order); draw k goes to coordinate slot[k].
ChainState draw_tree_state(std::uint64_t seed, const std::vector<int>& slot) {
  const int n = static_cast<int>(slot.size());
  SplitMix64 rng(seed);
  ChainState s{VecX(n), VecX(n), VecX(n), VecX(n)};
  for (VecX* v : {&s.q, &s.u, &s.tau, &s.qdd})
    for (int k = 0; k < n; ++k) (*v)(slot[k]) = rng.uniform(-1.0, 1.0);
  return s;
}

// Ladder body names and the absolute angle of a body at the benchmark state.
std::string lp(int k) { return "lp" + std::to_string(k); }
std::string rp(int k) { return "rp" + std::to_string(k); }
std::string rung(int k) { return k < 0 ? std::string(ground_name) : "rung" + std::to_string(k); }

// Spatial ladder (paper 000 §4.3): names, and the inertia about the centre of a uniform slender rod
// of 1 m, 1 kg along unit axis e: (1/12)(I₃ − e eᵀ) plus a small axial inertia 10⁻³ e eᵀ.
std::string post(int k) { return "post" + std::to_string(k); }
using detail::kRodAxialInertia;  // ε
Mat3 slender_rod(const Vec3& e) {
  return (Mat3::Identity() - e * e.transpose()) / 12.0 + kRodAxialInertia * e * e.transpose();
}

// Mass (and inertia) factors of the posts and the rungs: (1, 1), or (2/(L + 1), 1/L) for the
// ladder equivalent to L = 1 (generators.hpp, LadderMasses).
struct LadderScale {
  double post, rung;
};
LadderScale ladder_scale(int cells, LadderMasses masses) {
  if (masses == LadderMasses::uniform) return {1.0, 1.0};
  return {2.0 / (cells + 1), 1.0 / cells};
}

// A universal joint with the given axes (first in the parent joint frame, second in the child's).
void add_hooke(Mechanism& m, const std::string& name, const std::string& parent, const std::string& child,
               const Vec3& at, const Vec3& axis, const Vec3& axis2) {
  JointSpec& j = m.add_joint(name, JointType::universal, parent, child, Transform::translation(at));
  j.axis = axis;
  j.axis2 = axis2;
}

}  // namespace

Mechanism chain_mechanism(int n) {
  require_count(n, "chain_mechanism: number of bodies");
  Mechanism m;
  m.name = "chain-" + std::to_string(n);
  m.gravity = Vec3(0.0, 0.0, -9.81);
  for (int i = 0; i < n; ++i) {
    add_chain_body(m, link(i));
    // Joint of body i at (0, 0, 1) in link i−1 (world origin for i = 0), frames parallel.
    const Transform at = i == 0 ? Transform{} : Transform::translation(Vec3(0.0, 0.0, 1.0));
    m.add_joint("joint" + std::to_string(i), JointType::revolute, i == 0 ? std::string(ground_name) : link(i - 1),
                link(i), at)
        .axis = cycled_axis(i);
  }
  return m;
}

ChainState chain_state(int n) {
  require_count(n, "chain_state: number of bodies");
  // The chain's depth-first model order is its listing order: draw k is coordinate k.
  std::vector<int> slot(n);
  for (int k = 0; k < n; ++k) slot[k] = k;
  return draw_tree_state(12345u + static_cast<std::uint64_t>(n), slot);
}

Mechanism branched_tree_mechanism(int n) {
  require_count(n, "branched_tree_mechanism: number of bodies");
  Mechanism m;
  m.name = "branched-" + std::to_string(n);
  m.gravity = Vec3(0.0, 0.0, -9.81);
  for (int i = 0; i < n; ++i) {
    add_chain_body(m, link(i));
    // Binary tree: parent (i − 1) / 2; first child on top (0, 0, 1), second beside it (0, 0.5, 1).
    const int p = i == 0 ? -1 : (i - 1) / 2;
    const Vec3 offset = i == 0 ? Vec3::Zero() : i % 2 == 1 ? Vec3(0.0, 0.0, 1.0) : Vec3(0.0, 0.5, 1.0);
    m.add_joint("joint" + std::to_string(i), JointType::revolute, p < 0 ? std::string(ground_name) : link(p), link(i),
                Transform::translation(offset))
        .axis = cycled_axis(i);
  }
  return m;
}

ChainState branched_tree_state(const Model& model) {
  const int n = model.nbodies;
  if (model.nv != n || model.nq != n)
    throw std::invalid_argument("branched_tree_state: expected a model of branched_tree_mechanism (one revolute "
                                "joint per body), got nbodies = " + std::to_string(n) + ", nq = " +
                                std::to_string(model.nq) + ", nv = " + std::to_string(model.nv));
  std::vector<int> slot(n);
  for (int k = 0; k < n; ++k) slot[k] = model.v_index[model.joint_index("joint" + std::to_string(k))];
  return draw_tree_state(54321u + static_cast<std::uint64_t>(n), slot);
}

Mechanism ladder_mechanism(int cells, LadderLayout layout) {
  require_count(cells, "ladder_mechanism: number of cells");
  Mechanism m;
  const char* layout_name = layout == LadderLayout::serial ? "serial"
                            : layout == LadderLayout::comb ? "comb"
                                                           : "comb-parents-first";
  m.name = "ladder-" + std::string(layout_name) + "-" + std::to_string(cells);
  m.gravity = Vec3(0.0, -9.81, 0.0);
  const Mat3 inertia = Mat3::Identity() / 12.0;
  const Vec3 up(0.0, 1.0, 0.0), right(1.0, 0.0, 0.0);
  auto at = [](const Vec3& p) { return Transform::translation(p); };
  // A revolute joint about z (the Mechanism default axis).
  auto pin = [&](const std::string& name, const std::string& parent, const std::string& child, const Vec3& in_parent,
                 const Vec3& in_child, bool cut) {
    m.add_joint(name, JointType::revolute, parent, child, at(in_parent), at(in_child)).cut = cut;
  };
  // Rung k−1's frame is at its left end (its joint to lp_{k−1}); ground's frame is the world, and
  // cell k's bottom-left corner is (0, k) at q = 0, so in either case the bottom pins of cell k are
  // at (0, 0, 0) and (1, 0, 0) of the bottom body.
  for (int k = 0; k < cells; ++k) {
    const std::string bottom = rung(k - 1);
    const std::string tag = std::to_string(k);
    switch (layout) {
      case LadderLayout::serial:
        // lp_k from its bottom; rung_k from its left end; rp_k from its top, hanging down.
        m.add_body(lp(k), 1.0, 0.5 * up, inertia);
        m.add_body(rung(k), 1.0, 0.5 * right, inertia);
        m.add_body(rp(k), 1.0, -0.5 * up, inertia);
        pin("lp" + tag + "_bottom", bottom, lp(k), Vec3::Zero(), Vec3::Zero(), false);
        pin("lp" + tag + "_top", lp(k), rung(k), up, Vec3::Zero(), false);
        pin("rp" + tag + "_top", rung(k), rp(k), right, Vec3::Zero(), false);
        // Cut: bottom of rp_k (−up in its frame) on the right end of the bottom rung.
        pin("rp" + tag + "_bottom", bottom, rp(k), right, -up, true);
        break;
      case LadderLayout::comb:
      case LadderLayout::comb_parents_first:
        // Both posts from their bottoms on the bottom rung; rung_k from its left end on lp_k.
        if (layout == LadderLayout::comb) {
          m.add_body(rp(k), 1.0, 0.5 * up, inertia);
          m.add_body(lp(k), 1.0, 0.5 * up, inertia);
          pin("rp" + tag + "_bottom", bottom, rp(k), right, Vec3::Zero(), false);
          pin("lp" + tag + "_bottom", bottom, lp(k), Vec3::Zero(), Vec3::Zero(), false);
        } else {
          m.add_body(lp(k), 1.0, 0.5 * up, inertia);
          m.add_body(rp(k), 1.0, 0.5 * up, inertia);
          pin("lp" + tag + "_bottom", bottom, lp(k), Vec3::Zero(), Vec3::Zero(), false);
          pin("rp" + tag + "_bottom", bottom, rp(k), right, Vec3::Zero(), false);
        }
        m.add_body(rung(k), 1.0, 0.5 * right, inertia);
        pin("lp" + tag + "_top", lp(k), rung(k), up, Vec3::Zero(), false);
        // Cut: right end of rung_k with the top of rp_k.
        pin("rp" + tag + "_top", rung(k), rp(k), right, up, true);
        break;
    }
  }
  return m;
}

LadderState ladder_state(const Model& model, int cells) {
  require_count(cells, "ladder_state: number of cells");
  if (model.nbodies != 3 * cells || model.nv != 3 * cells || model.nq != 3 * cells)
    throw std::invalid_argument("ladder_state: expected a model of ladder_mechanism(" + std::to_string(cells) +
                                ") with " + std::to_string(3 * cells) + " bodies and coordinates, got " +
                                std::to_string(model.nbodies) + " bodies, nq = " + std::to_string(model.nq));
  // Absolute angle and rate of every model body: posts of cell k (φ_k, φ̇_k), rungs (0, 0).
  std::vector<double> angle(model.nbodies, 0.0), rate(model.nbodies, 0.0);
  for (int k = 0; k < cells; ++k) {
    const double phi = 0.3 + 0.2 * std::sin(static_cast<double>(k));
    const double phid = 0.5 * std::cos(static_cast<double>(k));
    for (const std::string& post : {lp(k), rp(k)}) {
      const int b = model.body_index(post);
      angle[b] = phi;
      rate[b] = phid;
    }
  }
  // Tree joint i (child body i): coordinate = child angle − parent angle (ground 0).
  LadderState s{VecX(model.nq), VecX(model.nv)};
  for (int i = 0; i < model.nbodies; ++i) {
    const int p = model.parent[i];
    s.q(model.q_index[i]) = angle[i] - (p < 0 ? 0.0 : angle[p]);
    s.u(model.v_index[i]) = rate[i] - (p < 0 ? 0.0 : rate[p]);
  }
  return s;
}

Mechanism spatial_ladder_mechanism(int cells, LadderMasses masses) {
  require_count(cells, "spatial_ladder_mechanism: number of cells");
  Mechanism m;
  m.name = masses == LadderMasses::uniform ? "spatial-ladder-" : "spatial-ladder-equivalent-";
  m.name.append(std::to_string(cells));
  m.gravity = Vec3(0.0, 0.0, -9.81);
  const LadderScale s = ladder_scale(cells, masses);
  const Vec3 x = Vec3::UnitX(), y = Vec3::UnitY(), z = Vec3::UnitZ();
  for (int k = 0; k <= cells; ++k) {
    // Post k hangs 1 m along −z from a Hooke joint at (k, 0, 0): x in ground, then y in the post.
    m.add_body(post(k), s.post, -0.5 * z, s.post * slender_rod(z));
    add_hooke(m, post(k) + "_top", std::string(ground_name), post(k), Vec3(k, 0.0, 0.0), x, y);
    if (k == 0) continue;
    // Rung k runs 1 m along +x from the lower end of post k−1 (Hooke: y in the post, then z in the
    // rung); its right end closes the cell on the lower end of post k by a revolute about y.
    m.add_body(rung(k), s.rung, 0.5 * x, s.rung * slender_rod(x));
    add_hooke(m, rung(k) + "_left", post(k - 1), rung(k), -z, y, z);
    JointSpec& pin = m.add_joint(rung(k) + "_right", JointType::revolute, rung(k), post(k),
                                 Transform::translation(x), Transform::translation(-z));
    pin.axis = y;
    pin.cut = true;
  }
  return m;
}

SpatialLadderState spatial_ladder_state(const Model& model, int cells) {
  require_count(cells, "spatial_ladder_state: number of cells");
  if (model.nbodies != 2 * cells + 1 || model.nv != 4 * cells + 2 || model.nq != 4 * cells + 2)
    throw std::invalid_argument("spatial_ladder_state: expected a model of spatial_ladder_mechanism(" +
                                std::to_string(cells) + ") with " + std::to_string(2 * cells + 1) + " bodies and " +
                                std::to_string(4 * cells + 2) + " coordinates, got " + std::to_string(model.nbodies) +
                                " bodies, nq = " + std::to_string(model.nq));
  // The 2-dof pendulum (§4.3): posts at Rot(x, α) Rot(y, β), rungs at Rot(x, α) = Rot(x, α) Rot(y, β) Rot(y, −β).
  const double alpha = 0.4, beta = -0.25, alpha_dot = 0.6, beta_dot = 0.35;
  SpatialLadderState s{VecX(model.nq), VecX(model.nv)};
  auto set = [&](const std::string& joint, double q0, double q1, double u0, double u1) {
    const int i = model.joint_index(joint);
    s.q.segment<2>(model.q_index[i]) << q0, q1;
    s.u.segment<2>(model.v_index[i]) << u0, u1;
  };
  for (int k = 0; k <= cells; ++k) set(post(k) + "_top", alpha, beta, alpha_dot, beta_dot);
  for (int k = 1; k <= cells; ++k) set(rung(k) + "_left", -beta, 0.0, -beta_dot, 0.0);
  return s;
}

Eigen::Vector2d spatial_ladder_pendulum_accelerations(double alpha, double beta, double alpha_dot, double beta_dot,
                                                      int cells, LadderMasses masses) {
  require_count(cells, "spatial_ladder_pendulum_accelerations: number of cells");
  const LadderScale s = ladder_scale(cells, masses);
  const double posts = s.post * (cells + 1), rungs = s.rung * cells;  // total masses
  const double g = 9.81, eps = kRodAxialInertia, a = posts / 3.0 + rungs, c = 0.5 * posts + rungs;
  const double sb = std::sin(beta), cb = std::cos(beta);
  const double M11 = a * cb * cb + eps * (posts * sb * sb + rungs);
  const double dM11 = 2.0 * sb * cb * (eps * posts - a);  // ∂M₁₁/∂β
  return {-(dM11 * alpha_dot * beta_dot + g * c * std::sin(alpha) * cb) / M11,
          (0.5 * dM11 * alpha_dot * alpha_dot - g * c * std::cos(alpha) * sb) / a};
}

void set_initial_state(Mechanism& m, const Model& model, const VecX& q, const VecX& u) {
  for (JointSpec& spec : m.joints) {
    const auto it = std::find_if(model.joints.begin(), model.joints.end(),
                                 [&](const ModelJoint& j) { return j.name == spec.name; });
    if (it == model.joints.end()) continue;
    const int i = static_cast<int>(it - model.joints.begin());
    spec.q.assign(q.data() + model.q_index[i], q.data() + model.q_index[i] + model.nq_joint[i]);
    spec.u.assign(u.data() + model.v_index[i], u.data() + model.v_index[i] + model.nv_joint[i]);
  }
}

}  // namespace loopdyn
