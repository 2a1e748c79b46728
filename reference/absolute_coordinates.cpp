// Absolute-coordinate reference (absolute_coordinates.hpp has the equations).
#include "absolute_coordinates.hpp"

#include <Eigen/Eigenvalues>
#include <stdexcept>

namespace loopdyn::reference {

namespace {

using Eigen::MatrixXd;
using Eigen::Vector3d;
using Eigen::VectorXd;

Eigen::Matrix3d skew(const Vector3d& a) {
  Eigen::Matrix3d s;
  s << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return s;
}

// x = A⁺ b for symmetric positive semidefinite A: eigenvalues below 1e-12 of the largest are zero.
VectorXd psd_solve(const MatrixXd& A, const VectorXd& b) {
  Eigen::SelfAdjointEigenSolver<MatrixXd> eig(A);
  const VectorXd& d = eig.eigenvalues();
  const double cut = 1e-12 * std::max(d.cwiseAbs().maxCoeff(), 1e-300);
  VectorXd c = eig.eigenvectors().transpose() * b;
  for (Eigen::Index k = 0; k < c.size(); ++k) c(k) = d(k) > cut ? c(k) / d(k) : 0.0;
  return eig.eigenvectors() * c;
}

// Flat state: per body r (3), quaternion w x y z (4), v (3), ω (3).
constexpr int kBody = 13;

VectorXd flatten(const std::vector<BodyState>& s) {
  VectorXd x(kBody * s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    x.segment<3>(kBody * i) = s[i].r;
    x.segment<4>(kBody * i + 3) << s[i].p.w(), s[i].p.x(), s[i].p.y(), s[i].p.z();
    x.segment<3>(kBody * i + 7) = s[i].v;
    x.segment<3>(kBody * i + 10) = s[i].w;
  }
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

}  // namespace

AbsoluteCoordinates::AbsoluteCoordinates(const Mechanism& m) : gravity_(m.gravity) {
  for (const BodySpec& b : m.bodies) {
    names_.push_back(b.name);
    mass_.push_back(b.mass);
    com_.push_back(b.com);
    inertia_.push_back(b.inertia);
  }
  for (const JointSpec& j : m.joints) {
    if (j.type != JointType::revolute)
      throw std::invalid_argument("reference: joint '" + j.name + "' is not revolute");
    Pin pin;
    pin.a = j.parent == ground_name ? -1 : body(j.parent);
    pin.b = j.child == ground_name ? -1 : body(j.child);
    const Vector3d com_a = pin.a < 0 ? Vector3d::Zero() : com_[pin.a];
    const Vector3d com_b = pin.b < 0 ? Vector3d::Zero() : com_[pin.b];
    pin.rho_a = j.parent_frame.p - com_a;
    pin.rho_b = j.child_frame.p - com_b;
    const Vector3d z_a = (j.parent_frame.R * j.axis).normalized();
    pin.z_b = (j.child_frame.R * j.axis).normalized();
    pin.n1_a = z_a.unitOrthogonal();
    pin.n2_a = z_a.cross(pin.n1_a);
    pins_.push_back(pin);
  }
}

int AbsoluteCoordinates::body(const std::string& name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int>(i);
  throw std::invalid_argument("reference: no body '" + name + "'");
}

Vector3d AbsoluteCoordinates::point(const std::vector<BodyState>& s, int b, const Vector3d& in_body) const {
  return s[b].r + s[b].p.toRotationMatrix() * (in_body - com_[b]);
}

// Φ (5 per pin) and J (5 per pin x 6 per body: [v, ω]).
void AbsoluteCoordinates::position_rows(const std::vector<BodyState>& s, VectorXd& phi, MatrixXd& J) const {
  const int m = 5 * static_cast<int>(pins_.size()), n = 6 * static_cast<int>(s.size());
  phi.setZero(m);
  J.setZero(m, n);
  for (std::size_t k = 0; k < pins_.size(); ++k) {
    const Pin& pin = pins_[k];
    const int row = 5 * static_cast<int>(k);
    auto rot = [&](int b) { return b < 0 ? Eigen::Matrix3d::Identity() : s[b].p.toRotationMatrix(); };
    auto pos = [&](int b) { return b < 0 ? Vector3d::Zero() : s[b].r; };
    const Vector3d ra = rot(pin.a) * pin.rho_a, rb = rot(pin.b) * pin.rho_b;
    phi.segment<3>(row) = pos(pin.a) + ra - pos(pin.b) - rb;
    const Vector3d B = rot(pin.b) * pin.z_b;
    const Vector3d A[2] = {rot(pin.a) * pin.n1_a, rot(pin.a) * pin.n2_a};
    if (pin.a >= 0) {
      J.block<3, 3>(row, 6 * pin.a).setIdentity();
      J.block<3, 3>(row, 6 * pin.a + 3) = -skew(ra);
    }
    if (pin.b >= 0) {
      J.block<3, 3>(row, 6 * pin.b) = -Eigen::Matrix3d::Identity();
      J.block<3, 3>(row, 6 * pin.b + 3) = skew(rb);
    }
    for (int r = 0; r < 2; ++r) {
      phi(row + 3 + r) = A[r].dot(B);
      if (pin.a >= 0) J.block<1, 3>(row + 3 + r, 6 * pin.a + 3) = A[r].cross(B).transpose();
      if (pin.b >= 0) J.block<1, 3>(row + 3 + r, 6 * pin.b + 3) = B.cross(A[r]).transpose();
    }
  }
}

void AbsoluteCoordinates::accelerations(const std::vector<BodyState>& s, VectorXd& xdd) const {
  const int nb = static_cast<int>(s.size()), n = 6 * nb;
  VectorXd phi;
  MatrixXd J;
  position_rows(s, phi, J);
  // γ = −(J̇ ẋ) per row (absolute_coordinates.hpp).
  VectorXd gamma(J.rows());
  for (std::size_t k = 0; k < pins_.size(); ++k) {
    const Pin& pin = pins_[k];
    const int row = 5 * static_cast<int>(k);
    auto rot = [&](int b) { return b < 0 ? Eigen::Matrix3d::Identity() : s[b].p.toRotationMatrix(); };
    auto omega = [&](int b) { return b < 0 ? Vector3d::Zero() : s[b].w; };
    const Vector3d wa = omega(pin.a), wb = omega(pin.b);
    const Vector3d ra = rot(pin.a) * pin.rho_a, rb = rot(pin.b) * pin.rho_b;
    gamma.segment<3>(row) = -wa.cross(wa.cross(ra)) + wb.cross(wb.cross(rb));
    const Vector3d B = rot(pin.b) * pin.z_b, Bd = wb.cross(B);
    for (int r = 0; r < 2; ++r) {
      const Vector3d A = rot(pin.a) * (r == 0 ? pin.n1_a : pin.n2_a), Ad = wa.cross(A);
      gamma(row + 3 + r) = -(wa.dot(Ad.cross(B) + A.cross(Bd)) + wb.dot(Bd.cross(A) + B.cross(Ad)));
    }
  }
  // M⁻¹ (block diagonal) and f.
  MatrixXd Minv = MatrixXd::Zero(n, n);
  VectorXd f(n);
  for (int i = 0; i < nb; ++i) {
    const Eigen::Matrix3d R = s[i].p.toRotationMatrix();
    const Eigen::Matrix3d Jw = R * inertia_[i] * R.transpose();
    Minv.block<3, 3>(6 * i, 6 * i) = Eigen::Matrix3d::Identity() / mass_[i];
    Minv.block<3, 3>(6 * i + 3, 6 * i + 3) = Jw.inverse();
    f.segment<3>(6 * i) = mass_[i] * gravity_;
    f.segment<3>(6 * i + 3) = -s[i].w.cross(Jw * s[i].w);
  }
  const MatrixXd MJt = Minv * J.transpose();
  const VectorXd lambda = psd_solve(J * MJt, J * (Minv * f) - gamma);
  xdd = Minv * f - MJt * lambda;
}

void AbsoluteCoordinates::project(std::vector<BodyState>& s) const {
  const int nb = static_cast<int>(s.size()), n = 6 * nb;
  VectorXd phi;
  MatrixXd J, Minv = MatrixXd::Zero(n, n);
  for (int i = 0; i < nb; ++i) {
    const Eigen::Matrix3d R = s[i].p.toRotationMatrix();
    Minv.block<3, 3>(6 * i, 6 * i) = Eigen::Matrix3d::Identity() / mass_[i];
    Minv.block<3, 3>(6 * i + 3, 6 * i + 3) = (R * inertia_[i] * R.transpose()).inverse();
  }
  // Positions: Newton steps of least kinetic-energy norm onto Φ = 0.
  for (int it = 0; it < 20; ++it) {
    position_rows(s, phi, J);
    if (phi.cwiseAbs().maxCoeff() < 1e-14) break;
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
  position_rows(s, phi, J);
  VectorXd xd(n);
  for (int i = 0; i < nb; ++i) xd.segment<6>(6 * i) << s[i].v, s[i].w;
  const MatrixXd MJt = Minv * J.transpose();
  xd -= MJt * psd_solve(J * MJt, J * xd);
  for (int i = 0; i < nb; ++i) {
    s[i].v = xd.segment<3>(6 * i);
    s[i].w = xd.segment<3>(6 * i + 3);
  }
}

void AbsoluteCoordinates::advance(std::vector<BodyState>& s, double t0, double t, double h) const {
  auto rhs = [&](const VectorXd& x) {
    const std::vector<BodyState> b = unflatten(x);
    VectorXd xdd, dx(x.size());
    accelerations(b, xdd);
    for (std::size_t i = 0; i < b.size(); ++i) {
      const Eigen::Quaterniond w(0.0, b[i].w.x(), b[i].w.y(), b[i].w.z());
      const Eigen::Quaterniond pd = w * b[i].p;  // ṗ = ½ (0, ω) ⊗ p
      dx.segment<3>(kBody * i) = b[i].v;
      dx.segment<4>(kBody * i + 3) << 0.5 * pd.w(), 0.5 * pd.x(), 0.5 * pd.y(), 0.5 * pd.z();
      dx.segment<6>(kBody * i + 7) = xdd.segment<6>(6 * i);
    }
    return dx;
  };
  while (t0 < t) {
    const double dt = std::min(h, t - t0);
    const VectorXd x = flatten(s);
    const VectorXd k1 = rhs(x), k2 = rhs(x + 0.5 * dt * k1), k3 = rhs(x + 0.5 * dt * k2), k4 = rhs(x + dt * k3);
    s = unflatten(x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4));
    project(s);
    t0 = (t - t0 <= h) ? t : t0 + dt;
  }
}

double AbsoluteCoordinates::energy(const std::vector<BodyState>& s) const {
  double e = 0.0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const Eigen::Matrix3d R = s[i].p.toRotationMatrix();
    e += 0.5 * mass_[i] * s[i].v.squaredNorm() + 0.5 * s[i].w.dot(R * inertia_[i] * R.transpose() * s[i].w) -
         mass_[i] * gravity_.dot(s[i].r);
  }
  return e;
}

std::pair<double, double> AbsoluteCoordinates::residuals(const std::vector<BodyState>& s) const {
  VectorXd phi, xd(6 * s.size());
  MatrixXd J;
  position_rows(s, phi, J);
  for (std::size_t i = 0; i < s.size(); ++i) xd.segment<6>(6 * i) << s[i].v, s[i].w;
  return {phi.cwiseAbs().maxCoeff(), (J * xd).cwiseAbs().maxCoeff()};
}

}  // namespace loopdyn::reference
