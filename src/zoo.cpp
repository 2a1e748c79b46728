// The randomized mechanism zoo (zoo.hpp).
#include "loopdyn/zoo.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "loopdyn/assembly.hpp"
#include "loopdyn/generators.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/loop_structure.hpp"
#include "rods.hpp"

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

}  // namespace

const std::vector<std::string>& zoo_classes() {
  static const std::vector<std::string> classes{"crank-rocker", "double-crank", "double-rocker",
                                                "triple-rocker", "change-point", "five-bar", "bennett"};
  return classes;
}

ZooCase zoo_case(std::uint64_t seed, int index) {
  if (index < 0) throw std::invalid_argument("zoo_case: index must be >= 0, got " + std::to_string(index));
  // Case k's stream is seeded by output k of the zoo's: streams of neighbouring cases do not overlap.
  SplitMix64 seeds(seed);
  for (int k = 0; k < index; ++k) seeds.next();
  SplitMix64 rng(seeds.next());
  const std::string& kind = zoo_classes()[index % zoo_classes().size()];
  ZooCase z = kind == "five-bar" ? five_bar(rng) : kind == "bennett" ? bennett(rng) : four_bar(rng, kind);
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
