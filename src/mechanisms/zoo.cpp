// The randomized mechanism zoo (zoo.hpp).
#include "loopdyn/mechanisms/zoo.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numbers>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "mechanisms/rods.hpp"

namespace loopdyn {

namespace {

using detail::add_pin;
constexpr double kPi = std::numbers::pi;

// Draws are rejected until they land in a class with this margin on the Grashof sum, relative to
// the longest link: a four-bar 1e-3 from a change point moves like a change-point one, and would
// blur the classes the zoo counts.
constexpr double kGrashofMargin = 0.1;
// Initial configurations keep the two links that close the loop (coupler and rocker; the two
// couplers of a five-bar) this far (relative to the shorter) from folded or stretched out: there
// the loop of a change-point four-bar loses rank, and every class's input loses control of them.
constexpr double kFoldMargin = 0.1;
constexpr int kMaxDraws = 10000;

int pick(SplitMix64& rng, int n) { return std::min(n - 1, static_cast<int>(rng.uniform(0.0, n))); }
double sign(SplitMix64& rng) { return rng.uniform(0.0, 1.0) < 0.5 ? -1.0 : 1.0; }
Vec3 planar(double angle, double length = 1.0) { return length * Vec3(std::cos(angle), std::sin(angle), 0.0); }
double angle_of(const Vec3& v) { return std::atan2(v.y(), v.x()); }

// A rotation uniform over SO(3): a point uniform in the unit 4-ball, normalized.
Mat3 random_rotation(SplitMix64& rng) {
  for (;;) {
    const Eigen::Vector4d v(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1));
    const double n = v.norm();
    if (n > 0.1 && n <= 1.0) return Eigen::Quaterniond(v(0), v(1), v(2), v(3)).normalized().toRotationMatrix();
  }
}

// A link of `length` along x of its frame (origin at its start): 1 to 4 kg per metre, centre of
// mass between 30 % and 70 % along the bar and up to 10 % of it off the bar, principal moments
// m L² (2e-3..2e-2, 4e-2..1.2e-1, and a third strictly inside the triangle inequality) about axes
// turned at random: products of inertia out of the plane load the joints, not the motion.
void add_link(Mechanism& m, SplitMix64& rng, const std::string& name, double length) {
  const double mass = length * rng.uniform(1.0, 4.0), scale = mass * length * length;
  const Vec3 com(length * rng.uniform(0.3, 0.7), length * rng.uniform(-0.1, 0.1), 0.0);
  const double i1 = scale * rng.uniform(2e-3, 2e-2), i2 = scale * rng.uniform(4e-2, 1.2e-1);
  const double i3 = std::abs(i1 - i2) + 2.0 * std::min(i1, i2) * rng.uniform(0.05, 0.95);  // in (|i1 − i2|, i1 + i2)
  const Mat3 R = random_rotation(rng);
  m.add_body(name, mass, com, R * Vec3(i1, i2, i3).asDiagonal() * R.transpose());
}

// The apex of the triangle with the base from `from` to `to` and sides a (at `from`) and b, on
// side σ of the base (σ = ±1 counter-clockwise or clockwise), or nothing when the base is within
// kFoldMargin · min(a, b) of |a − b| or a + b (folded or stretched out).
std::optional<Vec3> apex(const Vec3& from, const Vec3& to, double a, double b, double sigma) {
  const double d = (to - from).norm(), margin = kFoldMargin * std::min(a, b);
  if (d < std::abs(a - b) + margin || d > a + b - margin) return std::nullopt;
  const double angle = std::acos((a * a + d * d - b * b) / (2.0 * a * d));
  return from + planar(angle_of(to - from) + sigma * angle, a);
}

std::array<double, 4> sorted(std::array<double, 4> l) {
  std::sort(l.begin(), l.end());
  return l;
}

// s + l − p − q of the Grashof condition.
double grashof_sum(const std::array<double, 4>& lengths) {
  const auto l = sorted(lengths);
  return l[0] + l[3] - l[1] - l[2];
}

// Four lengths (ground, crank, coupler, rocker) in [0.25, 1.25] m of class `kind`. A change-point
// four-bar gets one length from the others so that two opposite pairs (one of the three pairings,
// drawn) have equal sums; the others are drawn until they land in the class with kGrashofMargin.
std::array<double, 4> draw_four_bar_lengths(SplitMix64& rng, std::string_view kind) {
  for (int draw = 0; draw < kMaxDraws; ++draw) {
    std::array<double, 4> l;
    for (double& x : l) x = rng.uniform(0.25, 1.25);
    if (kind == "change-point") {
      // Pairing k puts link 3 with link k; link 3 takes the other pair's sum less its partner.
      const int k = pick(rng, 3);
      double other = 0.0;
      for (int i = 0; i < 3; ++i) other += i == k ? 0.0 : l[i];
      l[3] = other - l[k];
      if (l[3] < 0.25 || l[3] > 1.25) continue;
    } else if (std::abs(grashof_sum(l)) < kGrashofMargin * sorted(l)[3]) {
      continue;
    }
    if (grashof_class(l[0], l[1], l[2], l[3]) == kind) return l;
  }
  throw std::logic_error("zoo: no four-bar of class " + std::string(kind) + " drawn");
}

std::string fixed(double x) {
  std::ostringstream s;
  s.precision(3);
  s << std::fixed << x;
  return s.str();
}

// Closes the speeds: the drawn speeds of the input joints stay, assemble() solves the others (and
// leaves the closed positions at round-off).
void close_speeds(Mechanism& m, const std::vector<std::string>& inputs) {
  const Model model = Model::build(m);
  AssemblySettings settings;
  settings.fixed_speeds.assign(model.nv, false);
  for (const std::string& joint : inputs) settings.fixed_speeds[model.v_index[model.joint_index(joint)]] = true;
  const AssemblyResult r = assemble(model, model.loops().constraints, model.q0, model.u0, settings);
  set_initial_state(m, model, r.q, r.u);
}

ZooCase four_bar(SplitMix64& rng, std::string_view kind) {
  // Crank angles are drawn until the coupler and rocker close with kFoldMargin; some four-bars
  // (triple-rockers) close so only over a narrow range of angles, and are drawn again.
  std::array<double, 4> l;
  double tilt = 0.0, sigma = 1.0, theta = 0.0;
  std::optional<Vec3> B;
  for (int draw = 0; !B; ++draw) {
    if (draw == kMaxDraws) throw std::logic_error("zoo: no closed configuration of a " + std::string(kind));
    l = draw_four_bar_lengths(rng, kind);
    tilt = rng.uniform(-kPi, kPi);
    sigma = sign(rng);
    for (int k = 0; k < 100 && !B; ++k) {
      theta = rng.uniform(-kPi, kPi);
      B = apex(planar(theta, l[1]), planar(tilt, l[0]), l[2], l[3], sigma);
    }
  }
  const double g = l[0], a = l[1], b = l[2], c = l[3];
  const Vec3 O = Vec3::Zero(), C = planar(tilt, g);
  const Vec3 A = planar(theta, a);
  const double coupler = angle_of(*B - A), rocker = angle_of(*B - C);
  const double speed = sign(rng) * rng.uniform(0.5, 3.0);
  const bool serial = rng.uniform(0.0, 1.0) < 0.5;

  ZooCase z{std::string(kind), "", {g, a, b, c}, {}};
  Mechanism& m = z.mechanism;
  m.gravity = Vec3(0.0, -9.81, 0.0);
  add_link(m, rng, "crank", a);
  add_link(m, rng, "coupler", b);
  add_link(m, rng, "rocker", c);  // from C to B
  const std::string ground(ground_name);
  add_pin(m, "crank_pivot", ground, "crank", O, Vec3::Zero(), theta, speed);
  add_pin(m, "crank_pin", "crank", "coupler", Vec3(a, 0, 0), Vec3::Zero(), coupler - theta, 0.0);
  if (serial) {
    add_pin(m, "rocker_pin", "coupler", "rocker", Vec3(b, 0, 0), Vec3(c, 0, 0), rocker - coupler, 0.0);
    add_pin(m, "rocker_pivot", "rocker", ground, Vec3::Zero(), C, 0.0, 0.0).cut = true;
  } else {
    add_pin(m, "rocker_pivot", ground, "rocker", C, Vec3::Zero(), rocker, 0.0);
    add_pin(m, "rocker_pin", "coupler", "rocker", Vec3(b, 0, 0), Vec3(c, 0, 0), 0.0, 0.0).cut = true;
  }
  const Vec3 coupler_point(b * rng.uniform(0.2, 0.8), b * rng.uniform(-0.5, 0.5), 0.0);
  m.markers.push_back({"A", "crank", Vec3(a, 0, 0), ""});
  m.markers.push_back({"B", "rocker", Vec3(c, 0, 0), ""});
  m.markers.push_back({"P", "coupler", coupler_point, ""});
  close_speeds(m, {"crank_pivot"});
  z.description = std::string(kind) + " four-bar: ground " + fixed(g) + ", crank " + fixed(a) + ", coupler " +
                  fixed(b) + ", rocker " + fixed(c) + " m; crank at " + fixed(theta) + " rad, " + fixed(speed) +
                  " rad/s; " + (serial ? "serial" : "two-branch") + " tree";
  return z;
}

ZooCase five_bar(SplitMix64& rng) {
  const double g = rng.uniform(0.3, 1.0), a1 = rng.uniform(0.3, 1.0), a2 = rng.uniform(0.3, 1.0);
  const double b1 = rng.uniform(0.5, 1.3), b2 = rng.uniform(0.5, 1.3);
  const double tilt = rng.uniform(-kPi, kPi), sigma = sign(rng);
  const Vec3 O2 = planar(tilt, g);
  // Crank angles are drawn until the couplers close with kFoldMargin.
  double theta1 = 0.0, theta2 = 0.0;
  std::optional<Vec3> P;
  for (int draw = 0; !P; ++draw) {
    if (draw == kMaxDraws) throw std::logic_error("zoo: no closed configuration of a five-bar");
    theta1 = rng.uniform(-kPi, kPi);
    theta2 = rng.uniform(-kPi, kPi);
    P = apex(planar(theta1, a1), O2 + planar(theta2, a2), b1, b2, sigma);
  }
  const double phi1 = angle_of(*P - planar(theta1, a1)), phi2 = angle_of(*P - O2 - planar(theta2, a2));
  const double speed1 = sign(rng) * rng.uniform(0.5, 3.0), speed2 = sign(rng) * rng.uniform(0.5, 3.0);

  ZooCase z{"five-bar", "", {g, a1, b1, b2, a2}, {}};
  Mechanism& m = z.mechanism;
  m.gravity = Vec3(0.0, -9.81, 0.0);
  add_link(m, rng, "crank1", a1);
  add_link(m, rng, "coupler1", b1);
  add_link(m, rng, "crank2", a2);
  add_link(m, rng, "coupler2", b2);
  const std::string ground(ground_name);
  add_pin(m, "crank1_pivot", ground, "crank1", Vec3::Zero(), Vec3::Zero(), theta1, speed1);
  add_pin(m, "crank1_pin", "crank1", "coupler1", Vec3(a1, 0, 0), Vec3::Zero(), phi1 - theta1, 0.0);
  add_pin(m, "crank2_pivot", ground, "crank2", O2, Vec3::Zero(), theta2, speed2);
  add_pin(m, "crank2_pin", "crank2", "coupler2", Vec3(a2, 0, 0), Vec3::Zero(), phi2 - theta2, 0.0);
  add_pin(m, "apex", "coupler1", "coupler2", Vec3(b1, 0, 0), Vec3(b2, 0, 0), 0.0, 0.0).cut = true;
  m.markers.push_back({"A", "crank1", Vec3(a1, 0, 0), ""});
  m.markers.push_back({"B", "crank2", Vec3(a2, 0, 0), ""});
  m.markers.push_back({"P", "coupler2", Vec3(b2, 0, 0), ""});
  close_speeds(m, {"crank1_pivot", "crank2_pivot"});
  z.description = "five-bar: ground " + fixed(g) + ", cranks " + fixed(a1) + ", " + fixed(a2) + ", couplers " +
                  fixed(b1) + ", " + fixed(b2) + " m; cranks at " + fixed(theta1) + ", " + fixed(theta2) + " rad, " +
                  fixed(speed1) + ", " + fixed(speed2) + " rad/s";
  return z;
}

// DH link transform: along x by a, then turned by α about x (the next joint's axis is z).
Transform dh_link(double a, double alpha) {
  return {Eigen::AngleAxisd(alpha, Vec3::UnitX()).toRotationMatrix(), Vec3(a, 0.0, 0.0)};
}

ZooCase bennett(SplitMix64& rng) {
  // Bennett's conditions: opposite links equal (a1, α1), (a2, α2) and a1 / sin α1 = a2 / sin α2.
  double alpha1 = 0.0, alpha2 = 0.0, a1 = 0.0, a2 = 0.0;
  for (int draw = 0; !(a2 >= 0.2 && a2 <= 1.5 && std::abs(alpha2 - alpha1) >= 0.3); ++draw) {
    if (draw == kMaxDraws) throw std::logic_error("zoo: no Bennett linkage drawn");
    alpha1 = rng.uniform(0.4, 2.7);
    alpha2 = rng.uniform(0.4, 2.7);
    a1 = rng.uniform(0.4, 1.0);
    a2 = a1 * std::sin(alpha2) / std::sin(alpha1);
  }
  // Closure (Bennett 1903, DH angles θ1..θ4 of the loop Rz(θ1) X1 Rz(θ2) X2 Rz(θ3) X1 Rz(θ4) X2 = I):
  // θ3 = −θ1, θ4 = −θ2, tan(θ1/2) tan(θ2/2) = sin((α2 + α1)/2) / sin((α2 − α1)/2). θ1 stays 0.3 rad
  // from 0 and ±π, where θ2 reaches ±π and the loop folds onto itself.
  const double theta1 = sign(rng) * rng.uniform(0.3, kPi - 0.3);
  const double theta2 =
      2.0 * std::atan(std::sin(0.5 * (alpha2 + alpha1)) / (std::sin(0.5 * (alpha2 - alpha1)) * std::tan(0.5 * theta1)));
  const double speed = sign(rng) * rng.uniform(0.5, 3.0);
  const Transform base = Transform::rotation(random_rotation(rng));  // joint 1's frame in the world

  ZooCase z{"bennett", "", {a1, a2, a1, a2}, {}};
  Mechanism& m = z.mechanism;
  m.gravity = Vec3(0.0, -9.81, 0.0);
  add_link(m, rng, "link1", a1);
  add_link(m, rng, "link2", a2);
  add_link(m, rng, "link3", a1);
  const std::string ground(ground_name);
  auto revolute = [&](const std::string& name, const std::string& parent, const std::string& child,
                      const Transform& in_parent, const Transform& in_child, double q, double u) -> JointSpec& {
    JointSpec& j = m.add_joint(name, JointType::revolute, parent, child, in_parent, in_child);
    j.q = {q};
    j.u = {u};
    return j;
  };
  revolute("joint1", ground, "link1", base, {}, theta1, speed);
  revolute("joint2", "link1", "link2", dh_link(a1, alpha1), {}, theta2, 0.0);
  revolute("joint3", "link2", "link3", dh_link(a2, alpha2), {}, -theta1, 0.0);
  // Joint 4 closes the loop: in the ground it sits where X2⁻¹ leads back from joint 1's frame.
  revolute("joint4", "link3", ground, dh_link(a1, alpha1), base * dh_link(a2, alpha2).inverse(), 0.0, 0.0).cut = true;
  m.markers.push_back({"A", "link1", Vec3(a1, 0, 0), ""});
  m.markers.push_back({"B", "link2", Vec3(a2, 0, 0), ""});
  m.markers.push_back({"P", "link2", Vec3(a2 * rng.uniform(0.2, 0.8), a2 * rng.uniform(-0.5, 0.5), 0.0), ""});
  close_speeds(m, {"joint1"});
  z.description = "bennett: links " + fixed(a1) + ", " + fixed(a2) + " m, twists " + fixed(alpha1) + ", " +
                  fixed(alpha2) + " rad; joint1 at " + fixed(theta1) + " rad, " + fixed(speed) + " rad/s";
  return z;
}

// The spatial classes and the slider-cranks are laid out in their initial configuration: every
// body's frame and every joint's frame is placed in the world with the joints at their neutral q
// (zero; the spherical's identity quaternion), so the loops close by construction and the link
// lengths follow from the drawn pose.
class Layout {
 public:
  explicit Layout(Mechanism& m) : m_(m) { pose_[std::string(ground_name)] = Transform{}; }

  // A link (add_link) from world point p to e: its frame at p, x along e − p, turned about x at random.
  void link(SplitMix64& rng, const std::string& name, const Vec3& p, const Vec3& e) {
    const Vec3 x = (e - p).normalized(), y0 = x.unitOrthogonal(), y = Eigen::AngleAxisd(rng.uniform(-kPi, kPi), x) * y0;
    Mat3 R;
    R << x, y, x.cross(y);
    pose_[name] = {R, p};
    add_link(m_, rng, name, (e - p).norm());
  }

  // A joint at world point x, its frame's z along the world direction `axis` (a universal's first
  // axis; its second is the frame's y).
  JointSpec& joint(const std::string& name, JointType type, const std::string& parent, const std::string& child,
                   const Vec3& x, const Vec3& axis) {
    const Transform frame{Eigen::Quaterniond::FromTwoVectors(Vec3::UnitZ(), axis).toRotationMatrix(), x};
    return m_.add_joint(name, type, parent, child, pose_.at(parent).inverse() * frame,
                        pose_.at(child).inverse() * frame);
  }

  // A marker at world point x on body `body`.
  void marker(const std::string& name, const std::string& body, const Vec3& x) {
    m_.markers.push_back({name, body, pose_.at(body).inverse().apply(x), ""});
  }

  // On half the cases (drawn): a spring-damper on the tree revolute `joint` (at q = 0 now) with its
  // rest angle within 1 rad, k = W L (0.2..2) N m/rad, and one between a ground point and world
  // point x of `body`, its rest length 0.6..1.4 times the drawn one, k = W / L (1..10) N/m; W the
  // total weight, L the mechanism's length scale, and dampers c = k (0.01..0.1 s): the springs move
  // the motion as much as gravity does and the dampers take a part of its energy.
  void maybe_springs(SplitMix64& rng, const std::string& joint, const std::string& body, const Vec3& x, double L,
                     std::string& description) {
    if (rng.uniform(0.0, 1.0) < 0.5) return;
    double W = 0.0;
    for (const BodySpec& b : m_.bodies) W += b.mass * m_.gravity.norm();
    const double k_joint = W * L * rng.uniform(0.2, 2.0), rest = rng.uniform(-1.0, 1.0);
    m_.forces.push_back({JointSpringDamperSpec{joint, k_joint, k_joint * rng.uniform(0.01, 0.1), rest}, ""});
    const Vec3 anchor = x + L * rng.uniform(0.5, 1.0) * random_rotation(rng).col(0);
    const double k_point = W / L * rng.uniform(1.0, 10.0), length = (x - anchor).norm() * rng.uniform(0.6, 1.4);
    m_.forces.push_back({PointSpringDamperSpec{std::string(ground_name), body, anchor,
                                               pose_.at(body).inverse().apply(x), k_point,
                                               k_point * rng.uniform(0.01, 0.1), length},
                         ""});
    description += "; springs on " + joint + " (" + fixed(k_joint) + " N m/rad) and " + body + " (" + fixed(k_point) +
                   " N/m)";
  }

 private:
  Mechanism& m_;
  std::map<std::string, Transform> pose_;
};

// One joint of a single-loop layout: name, type, world point and axis.
struct Pivot {
  std::string name;
  JointType type;
  Vec3 x, axis;
};

// The loop ground → crank → coupler → output → ground of the slider-cranks and the spatial
// four-bars: the crank's ground pivot turns at `speed`; serial (drawn): the tree runs through the
// coupler to the output and the output's ground joint is cut; two-branch: the output hangs from
// the ground and the coupler-output joint is cut. Returns whether the tree is serial.
bool crank_loop(SplitMix64& rng, Layout& l, const std::array<std::string, 3>& bodies, const std::array<Pivot, 4>& joints,
                double speed) {
  const std::string ground(ground_name);
  const bool serial = rng.uniform(0.0, 1.0) < 0.5;
  const auto& [pivot, at_a, at_b, output] = joints;
  l.joint(pivot.name, pivot.type, ground, bodies[0], pivot.x, pivot.axis).u = {speed};
  l.joint(at_a.name, at_a.type, bodies[0], bodies[1], at_a.x, at_a.axis);
  l.joint(at_b.name, at_b.type, bodies[1], bodies[2], at_b.x, at_b.axis).cut = !serial;
  l.joint(output.name, output.type, ground, bodies[2], output.x, output.axis).cut = serial;
  return serial;
}

// Slider-crank in the x-y plane: crank O→A (pivot O at the origin), rod A→B, slider at B on a
// line at offset e from O along the drawn direction d. Offset: b >= a + |e| + 0.1 m, so the crank
// turns fully; isosceles: e = 0, b = a, B = 2a cos θ along d, through the singular point B = O
// (crank and rod folded, θ = ±π/2) that the zoo does not avoid, as users do not. Trees
// (crank_loop): serial (the prismatic joint cut) or two-branch (the rod-slider pin cut).
ZooCase slider_crank(SplitMix64& rng, bool isosceles) {
  const double a = rng.uniform(0.2, 0.6), e = isosceles ? 0.0 : sign(rng) * rng.uniform(0.05, 0.4);
  const double b = isosceles ? a : a + std::abs(e) + rng.uniform(0.1, 1.0);
  const double tilt = rng.uniform(-kPi, kPi);
  // θ stays 0.3 rad from the isosceles' singular points at the start.
  double theta = rng.uniform(-kPi, kPi);
  while (isosceles && std::abs(std::cos(theta)) < std::sin(0.3)) theta = rng.uniform(-kPi, kPi);
  const Vec3 d = planar(tilt), n = planar(tilt + kPi / 2), O = Vec3::Zero();
  const Vec3 A = a * (std::cos(theta) * d + std::sin(theta) * n);
  const double side = isosceles ? (std::cos(theta) > 0 ? 1.0 : -1.0) : sign(rng);
  const double along = A.dot(d) + side * std::sqrt(b * b - (e - A.dot(n)) * (e - A.dot(n)));
  const Vec3 B = along * d + e * n;
  const double speed = sign(rng) * rng.uniform(0.5, 3.0);

  const std::string kind = isosceles ? "slider-crank-isosceles" : "slider-crank-offset";
  ZooCase z{kind, "", {a, b, e}, {}};
  Mechanism& m = z.mechanism;
  m.gravity = Vec3(0.0, -9.81, 0.0);
  Layout l(m);
  l.link(rng, "crank", O, A);
  l.link(rng, "rod", A, B);
  l.link(rng, "slider", B, B + 0.2 * d);
  const Vec3 z_axis = Vec3::UnitZ();
  const bool serial = crank_loop(rng, l, {"crank", "rod", "slider"},
                                 {Pivot{"crank_pivot", JointType::revolute, O, z_axis},
                                  {"crank_pin", JointType::revolute, A, z_axis},
                                  {"rod_pin", JointType::revolute, B, z_axis},
                                  {"slide", JointType::prismatic, B, d}},
                                 speed);
  l.marker("A", "crank", A);
  l.marker("B", "slider", B);
  l.marker("P", "rod", A + (B - A) * rng.uniform(0.2, 0.8) + n * b * rng.uniform(-0.3, 0.3));
  z.description = kind + ": crank " + fixed(a) + ", rod " + fixed(b) + ", offset " + fixed(e) + " m; crank at " +
                  fixed(theta) + " rad, " + fixed(speed) + " rad/s; " + (serial ? "serial" : "two-branch") + " tree";
  l.maybe_springs(rng, "crank_pivot", "slider", B + 0.1 * d, a + b, z.description);
  close_speeds(m, {"crank_pivot"});
  return z;
}

// A unit vector at least `margin` rad from ±u.
Vec3 away_from(SplitMix64& rng, const Vec3& u, double margin) {
  for (;;) {
    const Vec3 v = random_rotation(rng).col(0);
    if (std::abs(v.dot(u)) < std::cos(margin)) return v;
  }
}

// A point at distance r from O, perpendicular to `axis`, at a random angle about it.
Vec3 on_circle(SplitMix64& rng, const Vec3& O, const Vec3& axis, double r) {
  return O + r * (Eigen::AngleAxisd(rng.uniform(-kPi, kPi), axis) * axis.unitOrthogonal());
}

// Spatial four-bar: crank about axis1 through O1 (the origin), rocker about axis2 through O2, the
// axes 0.3 rad or more from parallel; coupler A→B. rssr: spherical joints at A and B, so the
// coupler spins freely about AB: users build it so (a rod between two ball joints), and its spin
// is a second degree of freedom kept regular by its inertia about AB (add_link's, turned at
// random, never zero). rscr: spherical at A, cylindrical at B along a direction w on the rocker
// 0.3 rad or more from AB (1 degree of freedom). Trees (crank_loop): serial (the rocker pivot cut)
// or two-branch (the joint at B cut).
ZooCase spatial_four_bar(SplitMix64& rng, bool cylindrical) {
  const Vec3 axis1 = random_rotation(rng).col(0), axis2 = away_from(rng, axis1, 0.3);
  const Vec3 O1 = Vec3::Zero(), O2 = rng.uniform(0.5, 1.2) * random_rotation(rng).col(0);
  const double a = rng.uniform(0.2, 0.5), c = rng.uniform(0.4, 1.0);
  Vec3 A, B;
  do {
    A = on_circle(rng, O1, axis1, a);
    B = on_circle(rng, O2, axis2, c);
  } while ((B - A).norm() < 0.3);
  const Vec3 w = away_from(rng, (B - A).normalized(), 0.3);
  const double speed = sign(rng) * rng.uniform(0.5, 3.0);

  const std::string kind = cylindrical ? "rscr" : "rssr";
  ZooCase z{kind, "", {O2.norm(), a, (B - A).norm(), c}, {}};
  Mechanism& m = z.mechanism;
  m.gravity = Vec3(0.0, -9.81, 0.0);
  Layout l(m);
  l.link(rng, "crank", O1, A);
  l.link(rng, "coupler", A, B);
  l.link(rng, "rocker", O2, B);
  const bool serial = crank_loop(rng, l, {"crank", "coupler", "rocker"},
                                 {Pivot{"crank_pivot", JointType::revolute, O1, axis1},
                                  {"crank_ball", JointType::spherical, A, axis1},
                                  {"rocker_joint", cylindrical ? JointType::cylindrical : JointType::spherical, B, w},
                                  {"rocker_pivot", JointType::revolute, O2, axis2}},
                                 speed);
  l.marker("A", "crank", A);
  l.marker("B", "rocker", B);
  l.marker("P", "coupler", A + (B - A) * rng.uniform(0.2, 0.8) + 0.2 * (B - A).norm() * axis1.cross(B - A).normalized());
  z.description = kind + ": pivots " + fixed(O2.norm()) + " m apart, axes " +
                  fixed(std::acos(std::abs(axis1.dot(axis2)))) + " rad from parallel, crank " + fixed(a) + ", coupler " +
                  fixed((B - A).norm()) + ", rocker " + fixed(c) + " m; " + fixed(speed) + " rad/s; " +
                  (serial ? "serial" : "two-branch") + " tree";
  l.maybe_springs(rng, "crank_pivot", "coupler", 0.5 * (A + B), (B - A).norm(), z.description);
  close_speeds(m, {"crank_pivot"});
  return z;
}

// Bricard 6R on the geometry of IFToMM A04 (models/iftomm_a04_bricard.yaml): pivots on six
// corners of a cube of edge L, axes along its edges, a loop of six revolutes with one degree of
// freedom where a generic 6R loop has none (its 30 rows have rank 29 along the motion), scaled
// and turned at random, the cut at a joint drawn among the six (the joints on either side
// declared away from the ground).
ZooCase bricard(SplitMix64& rng) {
  const double L = rng.uniform(0.5, 1.2);
  const Mat3 R = random_rotation(rng);
  const std::array<Vec3, 7> corner{Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(1, -1, 0), Vec3(1, -1, 1),
                                   Vec3(0, -1, 1), Vec3(0, 0, 1), Vec3(0, 0, 0)};
  const std::array<Vec3, 6> axis{Vec3::UnitY(), Vec3::UnitZ(), Vec3::UnitX(), Vec3::UnitY(), Vec3::UnitZ(),
                                 Vec3::UnitX()};
  const int cut = pick(rng, 6);  // joint k + 1 joins rod k and rod k + 1 (rods 0 and 6: the ground)
  const double speed = sign(rng) * rng.uniform(0.5, 3.0);

  ZooCase z{"bricard", "", {L}, {}};
  Mechanism& m = z.mechanism;
  m.gravity = Vec3(0.0, -9.81, 0.0);
  Layout l(m);
  auto rod = [](int k) { return k == 0 || k == 6 ? std::string(ground_name) : detail::indexed("rod", k); };
  for (int k = 1; k <= 5; ++k) l.link(rng, rod(k), L * R * corner[k - 1], L * R * corner[k]);
  for (int k = 0; k < 6; ++k) {
    const bool forward = k <= cut;  // joints before the cut from rod k to k + 1, after it back
    JointSpec& j = l.joint(detail::indexed("J", k + 1), JointType::revolute, rod(forward ? k : k + 1),
                           rod(forward ? k + 1 : k), L * R * corner[k], R * axis[k]);
    j.cut = k == cut;
  }
  const std::string input = cut == 0 ? "J6" : "J1";
  for (JointSpec& j : m.joints)
    if (j.name == input) j.u = {speed};
  l.marker("A", "rod1", L * R * corner[1]);
  l.marker("B", "rod3", L * R * corner[3]);
  l.marker("P", "rod2", L * R * corner[2]);
  z.description = "bricard (A04 geometry): edge " + fixed(L) + " m, cut at J" + std::to_string(cut + 1) + "; " +
                  input + " at " + fixed(speed) + " rad/s";
  close_speeds(m, {input});
  return z;
}

// 3-RPS platform (a Stewart–Gough-type parallel platform with three legs; six UPS legs make 13
// bodies, too slow for the reference in the tests): base pivots b_i on a circle of radius rb, their
// revolute axes tangent to it, platform pivots p_i on a circle of radius rp at height h above the
// same angles φ_i (so each leg stays perpendicular to its pivot's axis), each leg a lower and an
// upper tube on a prismatic joint with a spring-damper (k = W / h (5..20) N/m, rest within 5 cm of
// the drawn length: a passive platform settles on its legs), a spherical joint at the platform:
// 3 degrees of freedom, the leg speeds drawn. Tree: ground → leg 0 → platform, the other two
// spherical joints cut. The base turned at random.
ZooCase stewart(SplitMix64& rng) {
  const double rb = rng.uniform(0.4, 0.8), rp = rng.uniform(0.2, 0.6), h = rng.uniform(0.4, 1.0);
  const Mat3 R = random_rotation(rng);
  ZooCase z{"stewart", "", {rb, rp, h}, {}};
  Mechanism& m = z.mechanism;
  m.gravity = Vec3(0.0, -9.81, 0.0);
  Layout l(m);
  std::array<Vec3, 3> b, p, t;
  for (int i = 0; i < 3; ++i) {
    const double phi = 2.0 * kPi * i / 3.0 + rng.uniform(-0.2, 0.2);
    b[i] = R * Vec3(rb * std::cos(phi), rb * std::sin(phi), 0.0);
    p[i] = R * Vec3(rp * std::cos(phi), rp * std::sin(phi), h);
    t[i] = R * Vec3(-std::sin(phi), std::cos(phi), 0.0);
  }
  const Vec3 centre = (p[0] + p[1] + p[2]) / 3.0;
  for (int i = 0; i < 3; ++i) {
    const Vec3 mid = 0.5 * (b[i] + p[i]);
    l.link(rng, detail::indexed("lower", i), b[i], mid);
    l.link(rng, detail::indexed("upper", i), mid, p[i]);
  }
  l.link(rng, "platform", centre, p[0]);
  const std::string ground(ground_name);
  double W = 0.0;
  for (const BodySpec& body : m.bodies) W += body.mass * m.gravity.norm();
  std::vector<std::string> legs;
  std::string speeds;
  for (int i = 0; i < 3; ++i) {
    const std::string lower = detail::indexed("lower", i), upper = detail::indexed("upper", i);
    l.joint(detail::indexed("base", i), JointType::revolute, ground, lower, b[i], t[i]);
    const double speed = rng.uniform(-0.3, 0.3), k = W / h * rng.uniform(5.0, 20.0);
    legs.push_back(detail::indexed("leg", i));
    l.joint(legs.back(), JointType::prismatic, lower, upper, 0.5 * (b[i] + p[i]), p[i] - b[i]).u = {speed};
    m.forces.push_back({JointSpringDamperSpec{legs.back(), k, k * rng.uniform(0.01, 0.1), rng.uniform(-0.05, 0.05)}, ""});
    l.joint(detail::indexed("top", i), JointType::spherical, upper, "platform", p[i], t[i]).cut = i > 0;
    speeds += (i ? ", " : "") + fixed(speed);
  }
  l.marker("A", "platform", p[0]);
  l.marker("B", "platform", p[1]);
  l.marker("P", "platform", centre);
  z.description = "stewart 3-RPS: base " + fixed(rb) + ", platform " + fixed(rp) + ", height " + fixed(h) +
                  " m; legs at " + speeds + " m/s";
  close_speeds(m, legs);
  return z;
}

}  // namespace

const std::vector<std::string>& zoo_classes() {
  static const std::vector<std::string> classes{
      "crank-rocker",         "double-crank", "double-rocker", "triple-rocker", "change-point", "five-bar", "bennett",
      "slider-crank-offset", "slider-crank-isosceles", "rssr", "rscr", "bricard", "stewart"};
  return classes;
}

ZooCase zoo_case(std::uint64_t seed, int index) {
  if (index < 0) throw std::invalid_argument("zoo_case: index must be >= 0, got " + std::to_string(index));
  // Case k's stream is seeded by output k of the zoo's: streams of neighbouring cases do not overlap.
  SplitMix64 seeds(seed);
  for (int k = 0; k < index; ++k) seeds.next();
  SplitMix64 rng(seeds.next());
  const std::string& kind = zoo_classes()[index % zoo_classes().size()];
  ZooCase z = kind == "five-bar"                 ? five_bar(rng)
              : kind == "bennett"                ? bennett(rng)
              : kind == "slider-crank-offset"    ? slider_crank(rng, false)
              : kind == "slider-crank-isosceles" ? slider_crank(rng, true)
              : kind == "rssr"                   ? spatial_four_bar(rng, false)
              : kind == "rscr"                   ? spatial_four_bar(rng, true)
              : kind == "bricard"                ? bricard(rng)
              : kind == "stewart"                ? stewart(rng)
                                                 : four_bar(rng, kind);
  z.mechanism.name = "zoo-" + std::to_string(seed) + "-" + std::to_string(index) + "-" + kind;
  return z;
}

std::vector<ZooCase> zoo(std::uint64_t seed, int count) {
  if (count < 0) throw std::invalid_argument("zoo: count must be >= 0, got " + std::to_string(count));
  std::vector<ZooCase> out;
  for (int k = 0; k < count; ++k) out.push_back(zoo_case(seed, k));
  return out;
}

std::string_view grashof_class(double ground, double crank, double coupler, double rocker) {
  const std::array<double, 4> l{ground, crank, coupler, rocker};
  const double sum = grashof_sum(l), longest = sorted(l)[3];
  if (std::abs(sum) <= 1e-9 * longest) return "change-point";
  if (sum > 0.0) return "triple-rocker";
  static constexpr std::array<std::string_view, 4> by_shortest{"double-crank", "crank-rocker", "double-rocker",
                                                               "rocker-crank"};
  return by_shortest[std::min_element(l.begin(), l.end()) - l.begin()];
}

std::string zoo_model_file(const ZooCase& c, std::uint64_t seed, int index) {
  return "# loopdyn zoo, seed " + std::to_string(seed) + ", case " + std::to_string(index) + " (" + c.kind +
         "): " + c.description + "\n" + write_mechanism(c.mechanism);
}

}  // namespace loopdyn
