// Andrews' squeezing mechanism in Hairer & Wanner's formulation (andrews.hpp has the equations).
#include "andrews.hpp"

#include <cmath>

namespace loopdyn::reference::andrews {

namespace {

using Mat7 = Eigen::Matrix<double, 7, 7>;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat67 = Eigen::Matrix<double, 6, 7>;
using Kkt = Eigen::Matrix<double, 13, 13>;
using Vec13 = Eigen::Matrix<double, 13, 1>;

// Hairer & Wanner §VII.7 (the test set's andrews.f), SI units.
constexpr double m1 = .04325, m2 = .00365, m3 = .02373, m4 = .00706, m5 = .07050, m6 = .00706, m7 = .05498;
constexpr double i1 = 2.194e-6, i2 = 4.410e-7, i3 = 5.255e-6, i4 = 5.667e-7, i5 = 1.169e-5, i6 = 5.667e-7,
                 i7 = 1.912e-5;
constexpr double xa = -.06934, ya = -.00227, xb = -.03635, yb = .03273, xc = .014, yc = .072;
constexpr double d = 28e-3, da = 115e-4, e = 2e-2, ea = 1421e-5, rr = 7e-3, ra = 92e-5, ss = 35e-3, sa = 1874e-5,
                 sb = 1043e-5, sc = 18e-3, sd = 2e-2, ta = 2308e-5, tb = 916e-5, u = 4e-2, ua = 1228e-5,
                 ub = 449e-5, zf = 2e-2, zt = 4e-2, fa = 1421e-5;
constexpr double c0 = 4530.0, l0 = 7785e-5, mom = 33e-3;

// Sines and cosines of the seven angles and of the three absolute angles β+Θ, Φ+δ, Ω+ε.
struct Trig {
  explicit Trig(const Angles& q) {
    for (int k = 0; k < 7; ++k) {
      s[k] = std::sin(q(k));
      c[k] = std::cos(q(k));
    }
    sbeth = std::sin(q(0) + q(1)), cbeth = std::cos(q(0) + q(1));
    sphde = std::sin(q(3) + q(4)), cphde = std::cos(q(3) + q(4));
    somep = std::sin(q(5) + q(6)), comep = std::cos(q(5) + q(6));
  }
  double s[7], c[7];
  double sbeth, cbeth, sphde, cphde, somep, comep;
};
enum { be, th, ga, ph, de, om, ep };

Mat7 mass_matrix(const Trig& t) {
  Mat7 m = Mat7::Zero();
  m(0, 0) = m1 * ra * ra + m2 * (rr * rr - 2 * da * rr * t.c[th] + da * da) + i1 + i2;
  m(1, 0) = m(0, 1) = m2 * (da * da - da * rr * t.c[th]) + i2;
  m(1, 1) = m2 * da * da + i2;
  m(2, 2) = m3 * (sa * sa + sb * sb) + i3;
  m(3, 3) = m4 * (e - ea) * (e - ea) + i4;
  m(4, 3) = m(3, 4) = m4 * ((e - ea) * (e - ea) + zt * (e - ea) * t.s[ph]) + i4;
  m(4, 4) = m4 * (zt * zt + 2 * zt * (e - ea) * t.s[ph] + (e - ea) * (e - ea)) + m5 * (ta * ta + tb * tb) + i4 + i5;
  m(5, 5) = m6 * (zf - fa) * (zf - fa) + i6;
  m(6, 5) = m(5, 6) = m6 * ((zf - fa) * (zf - fa) - u * (zf - fa) * t.s[om]) + i6;
  m(6, 6) = m6 * ((zf - fa) * (zf - fa) - 2 * u * (zf - fa) * t.s[om] + u * u) + m7 * (ua * ua + ub * ub) + i6 + i7;
  return m;
}

// D, the spring's point on body 3, relative to B.
Eigen::Vector2d d_from_b(const Trig& t) {
  return {sd * t.c[ga] + sc * t.s[ga], sd * t.s[ga] - sc * t.c[ga]};
}

// f(q, q̇): the torque, the spring and the velocity-product terms of M(q).
Angles forces(const Trig& t, const Angles& v) {
  const Eigen::Vector2d cd = d_from_b(t) + Eigen::Vector2d(xb - xc, yb - yc);  // D − C
  const double L = cd.norm();
  const Eigen::Vector2d F = -c0 * (L - l0) / L * cd;  // spring force on D
  Angles f;
  f(0) = mom - m2 * da * rr * v(th) * (v(th) + 2 * v(be)) * t.s[th];
  f(1) = m2 * da * rr * v(be) * v(be) * t.s[th];
  f(2) = F.x() * (sc * t.c[ga] - sd * t.s[ga]) + F.y() * (sd * t.c[ga] + sc * t.s[ga]);
  f(3) = m4 * zt * (e - ea) * v(de) * v(de) * t.c[ph];
  f(4) = -m4 * zt * (e - ea) * v(ph) * (v(ph) + 2 * v(de)) * t.c[ph];
  f(5) = -m6 * u * (zf - fa) * v(ep) * v(ep) * t.c[om];
  f(6) = m6 * u * (zf - fa) * v(om) * (v(om) + 2 * v(ep)) * t.c[om];
  return f;
}

Vec6 closure(const Trig& t) {
  Vec6 g;
  g(0) = rr * t.c[be] - d * t.cbeth - ss * t.s[ga] - xb;
  g(1) = rr * t.s[be] - d * t.sbeth + ss * t.c[ga] - yb;
  g(2) = rr * t.c[be] - d * t.cbeth - e * t.sphde - zt * t.c[de] - xa;
  g(3) = rr * t.s[be] - d * t.sbeth + e * t.cphde - zt * t.s[de] - ya;
  g(4) = rr * t.c[be] - d * t.cbeth - zf * t.comep - u * t.s[ep] - xa;
  g(5) = rr * t.s[be] - d * t.sbeth - zf * t.somep + u * t.c[ep] - ya;
  return g;
}

// G = ∂g/∂q.
Mat67 jacobian(const Trig& t) {
  Mat67 G = Mat67::Zero();
  for (int r : {0, 2, 4}) {  // x rows: the crank and link 2 reach E alike in all three loops
    G(r, be) = -rr * t.s[be] + d * t.sbeth;
    G(r, th) = d * t.sbeth;
    G(r + 1, be) = rr * t.c[be] - d * t.cbeth;
    G(r + 1, th) = -d * t.cbeth;
  }
  G(0, ga) = -ss * t.c[ga];
  G(1, ga) = -ss * t.s[ga];
  G(2, ph) = -e * t.cphde;
  G(2, de) = -e * t.cphde + zt * t.s[de];
  G(3, ph) = -e * t.sphde;
  G(3, de) = -e * t.sphde - zt * t.c[de];
  G(4, om) = zf * t.somep;
  G(4, ep) = zf * t.somep - u * t.c[ep];
  G(5, om) = -zf * t.comep;
  G(5, ep) = -zf * t.comep - u * t.s[ep];
  return G;
}

// g_qq(q)(q̇, q̇) = d²g/dt² − G q̈: every term a·cos φ (a·sin φ) of g gives −a·cos φ·φ̇² (−a·sin φ·φ̇²).
Vec6 curvature(const Trig& t, const Angles& v) {
  const double wbe = v(be) * v(be), wbeth = (v(be) + v(th)) * (v(be) + v(th));
  const double cx = -rr * t.c[be] * wbe + d * t.cbeth * wbeth, cy = -rr * t.s[be] * wbe + d * t.sbeth * wbeth;
  const double wga = v(ga) * v(ga), wde = v(de) * v(de), wep = v(ep) * v(ep);
  const double wphde = (v(ph) + v(de)) * (v(ph) + v(de)), womep = (v(om) + v(ep)) * (v(om) + v(ep));
  Vec6 k;
  k(0) = cx + ss * t.s[ga] * wga;
  k(1) = cy - ss * t.c[ga] * wga;
  k(2) = cx + e * t.sphde * wphde + zt * t.c[de] * wde;
  k(3) = cy - e * t.cphde * wphde + zt * t.s[de] * wde;
  k(4) = cx + zf * t.comep * womep + u * t.s[ep] * wep;
  k(5) = cy + zf * t.somep * womep - u * t.c[ep] * wep;
  return k;
}

// [M Gᵀ; G 0], factored.
Eigen::PartialPivLU<Kkt> kkt(const Trig& t) {
  const Mat67 G = jacobian(t);
  Kkt K = Kkt::Zero();
  K.topLeftCorner<7, 7>() = mass_matrix(t);
  K.topRightCorner<7, 6>() = G.transpose();
  K.bottomLeftCorner<6, 7>() = G;
  return Eigen::PartialPivLU<Kkt>(K);
}

// q̈ of the index-1 system.
Angles accelerations(const Angles& q, const Angles& v) {
  const Trig t(q);
  Vec13 rhs;
  rhs << forces(t, v), -curvature(t, v);
  return kkt(t).solve(rhs).head<7>();
}

// M-orthogonal projection: Newton on g(q) = 0, then q̇ onto G q̇ = 0; each correction Δ solves
// M Δ + Gᵀμ = 0, G Δ = −residual.
void project(State& s) {
  for (int it = 0; it < 5; ++it) {
    const Trig t(s.q);
    const Vec6 g = closure(t);
    if (g.cwiseAbs().maxCoeff() < 1e-16) break;
    Vec13 rhs;
    rhs << Angles::Zero(), -g;
    s.q += kkt(t).solve(rhs).head<7>();
  }
  const Trig t(s.q);
  Vec13 rhs;
  rhs << Angles::Zero(), -jacobian(t) * s.v;
  s.v += kkt(t).solve(rhs).head<7>();
}

void rk4_step(State& s, double h) {
  const Angles k1q = s.v, k1v = accelerations(s.q, s.v);
  const Angles k2q = s.v + 0.5 * h * k1v, k2v = accelerations(s.q + 0.5 * h * k1q, k2q);
  const Angles k3q = s.v + 0.5 * h * k2v, k3v = accelerations(s.q + 0.5 * h * k2q, k3q);
  const Angles k4q = s.v + h * k3v, k4v = accelerations(s.q + h * k3q, k4q);
  s.q += h / 6 * (k1q + 2 * k2q + 2 * k3q + k4q);
  s.v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
}

}  // namespace

State initial_state() {
  State s;
  s.q << -0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
      0.222668390165885884674473185609, 0.487364979543842550225598953530, -0.222668390165885884674473185609,
      1.23054744454982119249735015568;
  return s;
}

Angles published_angles_at_003() {
  Angles q;
  q << 0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1, -0.5347301163226948,
      0.5244099658805304, 0.5347301163226948, 0.1048080741042263e+1;
  return q;
}

void advance(State& s, double t0, double t, double h) {
  const int n = static_cast<int>(std::ceil((t - t0) / h - 1e-9));
  for (int k = 0; k < n; ++k) {
    rk4_step(s, (t - t0) / n);
    project(s);
  }
}

Eigen::Matrix<double, 6, 1> constraints(const Angles& q) { return closure(Trig(q)); }

double energy(const State& s) {
  const Trig t(s.q);
  const double L = (d_from_b(t) + Eigen::Vector2d(xb - xc, yb - yc)).norm();
  return 0.5 * s.v.dot(mass_matrix(t) * s.v) + 0.5 * c0 * (L - l0) * (L - l0);
}

double crank_torque() { return mom; }

Eigen::Vector3d crank_tip(const Angles& q) { return {rr * std::cos(q(be)), rr * std::sin(q(be)), 0.0}; }

Eigen::Vector3d point_e(const Angles& q) {
  return crank_tip(q) - d * Eigen::Vector3d(std::cos(q(be) + q(th)), std::sin(q(be) + q(th)), 0.0);
}

Eigen::Vector3d point_d(const Angles& q) {
  const Eigen::Vector2d p = Eigen::Vector2d(xb, yb) + d_from_b(Trig(q));
  return {p.x(), p.y(), 0.0};
}

}  // namespace loopdyn::reference::andrews
