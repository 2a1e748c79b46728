// Absolute-coordinate reference (absolute_coordinates.hpp has the equations).
#include "absolute_coordinates.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <variant>

namespace loopdyn::reference {

namespace {

using Eigen::Matrix3d;
using Eigen::MatrixXd;
using Eigen::Vector3d;
using Eigen::VectorXd;
using RowRef = Eigen::Ref<Eigen::RowVectorXd, 0, Eigen::InnerStride<>>;

// x = A⁺ b for symmetric positive semidefinite A: eigenvalues below 1e-12 of the largest are zero.
VectorXd psd_solve(const MatrixXd& A, const VectorXd& b) {
  Eigen::SelfAdjointEigenSolver<MatrixXd> eig(A);
  const VectorXd& d = eig.eigenvalues();
  const double cut = 1e-12 * std::max(d.cwiseAbs().maxCoeff(), 1e-300);
  VectorXd c = eig.eigenvectors().transpose() * b;
  for (Eigen::Index k = 0; k < c.size(); ++k) c(k) = d(k) > cut ? c(k) / d(k) : 0.0;
  return eig.eigenvectors() * c;
}

// Flat state: per body r (3), quaternion w x y z (4), v (3), ω (3); then the dampers' work.
constexpr int kBody = 13;

VectorXd flatten(const State& s) {
  VectorXd x(kBody * s.bodies.size() + 1);
  for (std::size_t i = 0; i < s.bodies.size(); ++i) {
    const BodyState& b = s.bodies[i];
    x.segment<3>(kBody * i) = b.r;
    x.segment<4>(kBody * i + 3) << b.p.w(), b.p.x(), b.p.y(), b.p.z();
    x.segment<3>(kBody * i + 7) = b.v;
    x.segment<3>(kBody * i + 10) = b.w;
  }
  x(x.size() - 1) = s.work;
  return x;
}

std::vector<BodyState> unflatten(const VectorXd& x) {
  std::vector<BodyState> s(x.size() / kBody);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto q = x.segment<4>(kBody * i + 3);
    s[i].r = x.segment<3>(kBody * i);
    s[i].p = Eigen::Quaterniond(q(0), q(1), q(2), q(3)).normalized();
    s[i].v = x.segment<3>(kBody * i + 7);
    s[i].w = x.segment<3>(kBody * i + 10);
  }
  return s;
}

VectorXd speeds(const std::vector<BodyState>& s) {
  VectorXd xd(6 * s.size());
  for (std::size_t i = 0; i < s.size(); ++i) xd.segment<6>(6 * i) << s[i].v, s[i].w;
  return xd;
}

// One end of a row: its body's rotation, centre of mass and speeds (identity and zero for the
// ground), the lever R ρ from the centre of mass to the row's point, and that point's velocity.
struct End {
  int body = -1;
  Matrix3d R = Matrix3d::Identity();
  Vector3d r = Vector3d::Zero(), w = Vector3d::Zero(), lever, point, velocity = Vector3d::Zero();
};

End end_of(const std::vector<BodyState>& s, int body, const Vector3d& rho) {
  End e;
  e.body = body;
  if (body >= 0) {
    e.R = s[body].p.toRotationMatrix();
    e.r = s[body].r;
    e.w = s[body].w;
  }
  e.lever = e.R * rho;
  e.point = e.r + e.lever;
  if (body >= 0) e.velocity = s[body].v + e.w.cross(e.lever);
  return e;
}

// Adds n·(velocity of the end's point) = n·v + ω·(lever × n) to a row over [v, ω] per body.
void add_point(RowRef row, const End& e, const Vector3d& n) {
  if (e.body < 0) return;
  row.segment<3>(6 * e.body) += n.transpose();
  row.segment<3>(6 * e.body + 3) += e.lever.cross(n).transpose();
}

// Adds n·ω of the end's body.
void add_turn(RowRef row, const End& e, const Vector3d& n) {
  if (e.body >= 0) row.segment<3>(6 * e.body + 3) += n.transpose();
}

// The offset row (R_a u)·(P_b − P_a): value, Jacobian row and −J̇ẋ.
double offset_row(const End& a, const End& b, const Vector3d& u_a, RowRef row, double* gamma) {
  const Vector3d A = a.R * u_a, d = b.point - a.point;
  add_turn(row, a, A.cross(d));
  add_point(row, b, A);
  add_point(row, a, -A);
  if (gamma) {
    const Vector3d Ad = a.w.cross(A), dd = b.velocity - a.velocity;
    *gamma = -(a.w.cross(Ad).dot(d) + 2.0 * Ad.dot(dd) +
               A.dot(b.w.cross(b.w.cross(b.lever)) - a.w.cross(a.w.cross(a.lever))));
  }
  return A.dot(d);
}

}  // namespace

AbsoluteCoordinates::AbsoluteCoordinates(const Mechanism& m) : gravity_(m.gravity) {
  for (const BodySpec& b : m.bodies) {
    names_.push_back(b.name);
    mass_.push_back(b.mass);
    com_.push_back(b.com);
    inertia_.push_back(b.inertia);
  }
  if (!m.couplings.empty() || !m.callbacks.empty())
    throw std::invalid_argument("reference: couplings and force callbacks are not supported");
  for (const JointSpec& j : m.joints) add_joint(j);
  for (const ForceSpec& f : m.forces) add_spring(m, f);
}

AbsoluteCoordinates::Row AbsoluteCoordinates::row(Kind kind, const JointSpec& j, const Vector3d& u,
                                                  const Vector3d& w) const {
  Row r;
  r.kind = kind;
  r.a = j.parent == ground_name ? -1 : body(j.parent);
  r.b = j.child == ground_name ? -1 : body(j.child);
  r.rho_a = j.parent_frame.p - (r.a < 0 ? Vector3d::Zero() : com_[r.a]);
  r.rho_b = j.child_frame.p - (r.b < 0 ? Vector3d::Zero() : com_[r.b]);
  r.u_a = j.parent_frame.R * u;
  r.w_b = j.child_frame.R * w;
  return r;
}

void AbsoluteCoordinates::add_joint(const JointSpec& j) {
  // The joint frame's z (the axis) and n1, n2 ⟂ z, z × n1 = n2.
  const Vector3d z = j.axis.normalized(), n1 = z.unitOrthogonal(), n2 = z.cross(n1), none = Vector3d::Zero();
  auto add = [&](Kind kind, const Vector3d& u, const Vector3d& w) { rows_.push_back(row(kind, j, u, w)); };
  switch (j.type) {
    case JointType::revolute:
      add(Kind::point, none, none);
      add(Kind::perpendicular, n1, z);
      add(Kind::perpendicular, n2, z);
      return;
    case JointType::prismatic:
      add(Kind::perpendicular, n1, n2);
      [[fallthrough]];
    case JointType::cylindrical:
      add(Kind::perpendicular, n1, z);
      add(Kind::perpendicular, n2, z);
      add(Kind::offset, n1, none);
      add(Kind::offset, n2, none);
      return;
    case JointType::universal:
      add(Kind::point, none, none);
      add(Kind::perpendicular, z, j.axis2.normalized());
      return;
    case JointType::spherical: add(Kind::point, none, none); return;
    default:
      throw std::invalid_argument("reference: joint '" + j.name + "' is " + std::string(to_string(j.type)) +
                                  ", not revolute, prismatic, cylindrical, universal or spherical");
  }
}

void AbsoluteCoordinates::add_spring(const Mechanism& m, const ForceSpec& f) {
  Spring s;
  if (const auto* e = std::get_if<JointSpringDamperSpec>(&f.element)) {
    const auto j = std::find_if(m.joints.begin(), m.joints.end(), [&](const JointSpec& k) { return k.name == e->joint; });
    if (j == m.joints.end()) throw std::invalid_argument("reference: no joint '" + e->joint + "'");
    const Vector3d z = j->axis.normalized(), n1 = z.unitOrthogonal();
    if (j->type == JointType::revolute) {
      s.coordinate = Coordinate::angle;
      s.row = row(Kind::perpendicular, *j, z, n1);
      s.n1_a = j->parent_frame.R * n1;
      s.q0 = j->q.empty() ? 0.0 : j->q[0];
    } else if (j->type == JointType::prismatic) {
      s.coordinate = Coordinate::offset;
      s.row = row(Kind::offset, *j, z, Vector3d::Zero());
    } else {
      throw std::invalid_argument("reference: joint spring on '" + j->name + "', neither revolute nor prismatic");
    }
    s.stiffness = e->stiffness, s.damping = e->damping, s.rest = e->rest;
  } else if (const auto* p = std::get_if<PointSpringDamperSpec>(&f.element)) {
    s.coordinate = Coordinate::distance;
    s.row.kind = Kind::point;
    s.row.a = p->body1 == ground_name ? -1 : body(p->body1);
    s.row.b = p->body2 == ground_name ? -1 : body(p->body2);
    s.row.rho_a = p->point1 - (s.row.a < 0 ? Vector3d::Zero() : com_[s.row.a]);
    s.row.rho_b = p->point2 - (s.row.b < 0 ? Vector3d::Zero() : com_[s.row.b]);
    s.stiffness = p->stiffness, s.damping = p->damping, s.rest = p->rest_length;
  } else {
    throw std::invalid_argument("reference: only joint and point spring-dampers are supported");
  }
  springs_.push_back(s);
}

int AbsoluteCoordinates::body(const std::string& name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int>(i);
  throw std::invalid_argument("reference: no body '" + name + "'");
}

Vector3d AbsoluteCoordinates::point(const std::vector<BodyState>& s, int b, const Vector3d& in_body) const {
  return s[b].r + s[b].p.toRotationMatrix() * (in_body - com_[b]);
}

int AbsoluteCoordinates::rows_count() const {
  int m = 0;
  for (const Row& r : rows_) m += r.kind == Kind::point ? 3 : 1;
  return m;
}

// Φ, J (rows x 6 per body: [v, ω]) and, when asked, γ = −J̇ẋ (absolute_coordinates.hpp).
void AbsoluteCoordinates::rows(const std::vector<BodyState>& s, VectorXd& phi, MatrixXd& J, VectorXd* gamma) const {
  const int m = rows_count();
  phi.setZero(m);
  J.setZero(m, 6 * static_cast<int>(s.size()));
  if (gamma) gamma->setZero(m);
  int k = 0;
  for (const Row& r : rows_) {
    const End a = end_of(s, r.a, r.rho_a), b = end_of(s, r.b, r.rho_b);
    switch (r.kind) {
      case Kind::point:
        phi.segment<3>(k) = a.point - b.point;
        for (int i = 0; i < 3; ++i) {
          add_point(J.row(k + i), a, Vector3d::Unit(i));
          add_point(J.row(k + i), b, -Vector3d::Unit(i));
        }
        if (gamma) gamma->segment<3>(k) = -a.w.cross(a.w.cross(a.lever)) + b.w.cross(b.w.cross(b.lever));
        k += 3;
        break;
      case Kind::perpendicular: {
        const Vector3d A = a.R * r.u_a, B = b.R * r.w_b, Ad = a.w.cross(A), Bd = b.w.cross(B);
        phi(k) = A.dot(B);
        add_turn(J.row(k), a, A.cross(B));
        add_turn(J.row(k), b, B.cross(A));
        if (gamma) (*gamma)(k) = -(a.w.dot(Ad.cross(B) + A.cross(Bd)) + b.w.dot(Bd.cross(A) + B.cross(Ad)));
        ++k;
        break;
      }
      case Kind::offset:
        phi(k) = offset_row(a, b, r.u_a, J.row(k), gamma ? &(*gamma)(k) : nullptr);
        ++k;
        break;
    }
  }
}

void AbsoluteCoordinates::spring_coordinates(const std::vector<BodyState>& s, const std::vector<double>& angles,
                                             VectorXd& q, MatrixXd& S) const {
  q.setZero(static_cast<Eigen::Index>(springs_.size()));
  S.setZero(q.size(), 6 * static_cast<Eigen::Index>(s.size()));
  for (std::size_t k = 0; k < springs_.size(); ++k) {
    const Spring& sp = springs_[k];
    const End a = end_of(s, sp.row.a, sp.row.rho_a), b = end_of(s, sp.row.b, sp.row.rho_b);
    switch (sp.coordinate) {
      case Coordinate::angle: {
        // The turn from n1_a to n1_b about z, within ±π of the last known angle.
        const Vector3d z = a.R * sp.row.u_a, na = a.R * sp.n1_a, nb = b.R * sp.row.w_b;
        const double turn = std::atan2(na.cross(nb).dot(z), na.dot(nb));
        q(k) = angles[k] + std::remainder(turn - angles[k], 2.0 * std::numbers::pi);
        add_turn(S.row(k), a, -z);
        add_turn(S.row(k), b, z);
        break;
      }
      case Coordinate::offset: q(k) = offset_row(a, b, sp.row.u_a, S.row(k), nullptr); break;
      case Coordinate::distance: {
        const Vector3d d = b.point - a.point;
        q(k) = d.norm();
        if (q(k) < 1e-12) break;  // no direction, no force (as loopdyn's point springs)
        add_point(S.row(k), b, d / q(k));
        add_point(S.row(k), a, -d / q(k));
        break;
      }
    }
  }
}

MatrixXd AbsoluteCoordinates::inverse_mass(const std::vector<BodyState>& s) const {
  const int nb = static_cast<int>(s.size());
  MatrixXd Minv = MatrixXd::Zero(6 * nb, 6 * nb);
  for (int i = 0; i < nb; ++i) {
    const Matrix3d R = s[i].p.toRotationMatrix();
    Minv.block<3, 3>(6 * i, 6 * i) = Matrix3d::Identity() / mass_[i];
    Minv.block<3, 3>(6 * i + 3, 6 * i + 3) = (R * inertia_[i] * R.transpose()).inverse();
  }
  return Minv;
}

double AbsoluteCoordinates::accelerations(const std::vector<BodyState>& s, const std::vector<double>& angles,
                                          VectorXd& xdd) const {
  const int nb = static_cast<int>(s.size());
  VectorXd phi, gamma, q;
  MatrixXd J, S;
  rows(s, phi, J, &gamma);
  const MatrixXd Minv = inverse_mass(s);
  VectorXd f(6 * nb);
  for (int i = 0; i < nb; ++i) {
    const Matrix3d R = s[i].p.toRotationMatrix();
    f.segment<3>(6 * i) = mass_[i] * gravity_;
    f.segment<3>(6 * i + 3) = -s[i].w.cross(R * inertia_[i] * R.transpose() * s[i].w);
  }
  // Spring-dampers: τ = k (rest − q) − c q̇ along each coordinate, Sᵀτ on the bodies.
  spring_coordinates(s, angles, q, S);
  const VectorXd qd = S * speeds(s);
  double power = 0.0;
  for (std::size_t k = 0; k < springs_.size(); ++k) {
    const Spring& sp = springs_[k];
    f += S.row(k).transpose() * (sp.stiffness * (sp.rest - q(k)) - sp.damping * qd(k));
    power -= sp.damping * qd(k) * qd(k);
  }
  const MatrixXd MJt = Minv * J.transpose();
  const VectorXd lambda = psd_solve(J * MJt, J * (Minv * f) - gamma);
  xdd = Minv * f - MJt * lambda;
  return power;
}

void AbsoluteCoordinates::project(std::vector<BodyState>& s) const {
  const int nb = static_cast<int>(s.size());
  VectorXd phi;
  MatrixXd J;
  const MatrixXd Minv = inverse_mass(s);
  // Positions: Newton steps of least kinetic-energy norm onto Φ = 0.
  for (int it = 0; it < 20; ++it) {
    rows(s, phi, J, nullptr);
    if (phi.size() == 0 || phi.cwiseAbs().maxCoeff() < 1e-14) break;
    const MatrixXd MJt = Minv * J.transpose();
    const VectorXd dx = -MJt * psd_solve(J * MJt, phi);
    for (int i = 0; i < nb; ++i) {
      s[i].r += dx.segment<3>(6 * i);
      const Vector3d dth = dx.segment<3>(6 * i + 3);
      const double angle = dth.norm();
      if (angle > 0) s[i].p = (Eigen::Quaterniond(Eigen::AngleAxisd(angle, dth / angle)) * s[i].p).normalized();
    }
  }
  // Velocities: M-orthogonal projection onto J ẋ = 0.
  rows(s, phi, J, nullptr);
  VectorXd xd = speeds(s);
  const MatrixXd MJt = Minv * J.transpose();
  xd -= MJt * psd_solve(J * MJt, J * xd);
  for (int i = 0; i < nb; ++i) {
    s[i].v = xd.segment<3>(6 * i);
    s[i].w = xd.segment<3>(6 * i + 3);
  }
}

State AbsoluteCoordinates::start(std::vector<BodyState> bodies) const {
  std::vector<double> q0;
  for (const Spring& sp : springs_) q0.push_back(sp.q0);
  VectorXd q;
  MatrixXd S;
  spring_coordinates(bodies, q0, q, S);
  State s{std::move(bodies), 0.0, q0};
  for (std::size_t k = 0; k < springs_.size(); ++k)
    if (springs_[k].coordinate == Coordinate::angle) s.angles[k] = q(k);
  return s;
}

void AbsoluteCoordinates::advance(State& s, double t0, double t, double h) const {
  auto rhs = [&](const VectorXd& x) {
    const std::vector<BodyState> b = unflatten(x);
    VectorXd xdd, dx(x.size());
    dx(x.size() - 1) = accelerations(b, s.angles, xdd);
    for (std::size_t i = 0; i < b.size(); ++i) {
      const Eigen::Quaterniond w(0.0, b[i].w.x(), b[i].w.y(), b[i].w.z());
      const Eigen::Quaterniond pd = w * b[i].p;  // ṗ = ½ (0, ω) ⊗ p
      dx.segment<3>(kBody * i) = b[i].v;
      dx.segment<4>(kBody * i + 3) << 0.5 * pd.w(), 0.5 * pd.x(), 0.5 * pd.y(), 0.5 * pd.z();
      dx.segment<6>(kBody * i + 7) = xdd.segment<6>(6 * i);
    }
    return dx;
  };
  VectorXd q;
  MatrixXd S;
  while (t0 < t) {
    const double dt = std::min(h, t - t0);
    const VectorXd x = flatten(s);
    const VectorXd k1 = rhs(x), k2 = rhs(x + 0.5 * dt * k1), k3 = rhs(x + 0.5 * dt * k2), k4 = rhs(x + dt * k3);
    const VectorXd next = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    s.bodies = unflatten(next);
    s.work = next(next.size() - 1);
    project(s.bodies);
    // A step turns a joint by far less than π: the angles unwrap from the step before.
    spring_coordinates(s.bodies, s.angles, q, S);
    for (std::size_t k = 0; k < springs_.size(); ++k)
      if (springs_[k].coordinate == Coordinate::angle) s.angles[k] = q(k);
    t0 = (t - t0 <= h) ? t : t0 + dt;
  }
}

void AbsoluteCoordinates::advance(std::vector<BodyState>& s, double t0, double t, double h) const {
  if (!springs_.empty()) throw std::invalid_argument("reference: a mechanism with spring-dampers advances a State");
  State state = start(std::move(s));
  advance(state, t0, t, h);
  s = std::move(state.bodies);
}

double AbsoluteCoordinates::kinetic(const std::vector<BodyState>& s) const {
  double e = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const Matrix3d R = s[i].p.toRotationMatrix();
    e += 0.5 * mass_[i] * s[i].v.squaredNorm() + 0.5 * s[i].w.dot(R * inertia_[i] * R.transpose() * s[i].w);
  }
  return e;
}

double AbsoluteCoordinates::energy(const State& s) const {
  double e = kinetic(s.bodies);
  for (std::size_t i = 0; i < s.bodies.size(); ++i) e -= mass_[i] * gravity_.dot(s.bodies[i].r);
  VectorXd q;
  MatrixXd S;
  spring_coordinates(s.bodies, s.angles, q, S);
  for (std::size_t k = 0; k < springs_.size(); ++k)
    e += 0.5 * springs_[k].stiffness * (q(k) - springs_[k].rest) * (q(k) - springs_[k].rest);
  return e;
}

double AbsoluteCoordinates::energy(const std::vector<BodyState>& s) const { return energy(start(s)); }

std::pair<double, double> AbsoluteCoordinates::residuals(const std::vector<BodyState>& s) const {
  VectorXd phi;
  MatrixXd J;
  rows(s, phi, J, nullptr);
  if (phi.size() == 0) return {0.0, 0.0};
  return {phi.cwiseAbs().maxCoeff(), (J * speeds(s)).cwiseAbs().maxCoeff()};
}

}  // namespace loopdyn::reference
