#include "loopdyn/formulations/lagrange.hpp"

#include <sstream>
#include <stdexcept>

#include "loopdyn/loops/loop_structure.hpp"

namespace loopdyn {

LagrangeFormulation::LagrangeFormulation(const Model& model, const FormulationSettings& settings)
    : Formulation(model), settings_(settings), rows_(model), cons_(rows_.constraints()), cons_data_(model), phi_(VecX::Zero(cons_.rows())), phi_t_(VecX::Zero(cons_.rows())),
      G_(MatX::Zero(cons_.rows(), model.nv)), gamma_(VecX::Zero(cons_.rows())), lambda_(VecX::Zero(cons_.rows())),
      solver_(cons_.rows(), settings.rank_tolerance) {}

void LagrangeFormulation::complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> /*u*/) {
  choose_rows_again(rows_, t, q);
}

void LagrangeFormulation::evaluate_constraints(double t, const KinematicsData& kin, const VecX& u) {
  constraint_position(model_, cons_, kin, t, cons_data_, phi_);
  constraint_jacobian(model_, cons_, kin, cons_data_, G_);
  constraint_bias(model_, cons_, kin, t, cons_data_, gamma_);
  // γ̄ = γ − 2α Φ̇ − β² Φ with Φ̇ = G u + Φ_t (001 eq 9; Φ_t of the drives).
  const double a = settings_.baumgarte_alpha, b = settings_.baumgarte_beta;
  if (a != 0.0) {
    constraint_time_rate(model_, cons_, t, phi_t_);
    phi_t_.noalias() += G_ * u;
    gamma_ -= 2.0 * a * phi_t_;
  }
  if (b != 0.0) gamma_ -= b * b * phi_;
}

void LagrangeFormulation::solve_multipliers(double t, const MatX& A, const VecX& rhs) {
  solver_.compute(A);
  solver_.solve(rhs, lambda_);
  // Hysteresis: a singular configuration is entered when rank is lost and left only when the
  // condition number is kLeaveMargin below the rank threshold, so that a trajectory grazing the
  // threshold (every stage of a step near a dead centre) reports one passage, not dozens.
  constexpr double kLeaveMargin = 100.0;
  const bool changed = singular_ ? solver_.rank() == cons_.rows() &&
                                       solver_.condition() * settings_.rank_tolerance * kLeaveMargin < 1.0
                                 : solver_.rank() < cons_.rows();
  if (!changed) return;
  singular_ = !singular_;
  std::ostringstream s;
  if (singular_ && settings_.on_singular == FormulationSettings::OnSingular::stop) {
    s << "t = " << t << ": " << name() << ": singular configuration (a change point of the loops "
      << null_space_loops() << "): constraint rank " << solver_.rank() << " of " << cons_.rows()
      << ", condition number " << solver_.condition()
      << ". A Lagrange-multiplier method integrates G u' = gamma only and cannot tell which branch the motion "
         "continues on; it would follow a wrong one without notice. Use `method = gcp`, `method = nullspace`, "
         "`method = embedding` (position analysis) or `method = rcr`; `on_singular = continue` goes on with minimum-norm multipliers at your own "
         "risk";
    throw SingularConfigurationError(s.str());
  }
  if (singular_)
    s << "singular configuration: constraint rank " << solver_.rank() << " of " << cons_.rows() << " (loops "
      << null_space_loops() << "), condition number " << solver_.condition() << "; multipliers are minimum-norm";
  else
    s << "left the singular configuration (condition number " << solver_.condition() << ")";
  report(t, s.str());
}

std::string LagrangeFormulation::change_point_refusal() const {
  if (settings_.on_singular != FormulationSettings::OnSingular::stop) return {};
  return std::string(name()) +
         " cannot cross: it integrates the constraints at acceleration level, which does not tell the "
         "continuing branch from the others there. Use gcp, nullspace, rcr, embedding or `method = auto` (they "
         "close the loops by position analysis), or `on_singular = continue` to run it anyway";
}

std::string LagrangeFormulation::null_space_loops() const {
  // Loops of the rows with the largest weight in the null-space eigenvectors.
  VecX weight = VecX::Zero(cons_.rows());
  for (int k = 0; k < cons_.rows() - solver_.rank(); ++k) weight += solver_.eigenvectors().col(k).cwiseAbs2();
  return dominant_loops(model_, cons_, weight);
}

}  // namespace loopdyn
