#include "loopdyn/formulations/gcp.hpp"

#include <sstream>
#include <stdexcept>
#include <string>

namespace loopdyn {

namespace {
// Eq 15 is eq 10 with γ̄ = γ: the analyses hold Φ and Φ̇, Baumgarte terms would only add noise.
// The dense solve keeps on_singular: gcp stops where its multiplier system loses rank too. Going on
// there with minimum-norm multipliers took it to the wrong branch on A02 with N = 4, 2 m off at
// the end (docs/results.md); stopping is the honest answer until the change points are handled.
FormulationSettings dense_settings(FormulationSettings s) {
  s.baumgarte_alpha = s.baumgarte_beta = 0.0;
  return s;
}
}  // namespace

Gcp::Gcp(const Model& model, const FormulationSettings& settings)
    : Formulation(model), dense_(model, dense_settings(settings)), kin_(model),
      partition_(model, dense_.constraints(), kin_, settings,
                 [this](double t, std::string message) { report(t, message.insert(0, "gcp: ")); }) {
  dense_.set_event_sink([this](const FormulationEvent& e) { report(e.t, std::string("gcp: ").append(e.message)); });
}

void Gcp::complete_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) { partition_.complete(t, q, u, false); }

void Gcp::complete_accepted_state(double t, Eigen::Ref<VecX> q, Eigen::Ref<VecX> u) {
  if (choose_rows_again(dense_.row_choice(), t, q)) partition_.forget();  // other rows: a new analysis
  partition_.complete(t, q, u, true);
}

void Gcp::accelerations(double t, const VecX& q, const VecX& u, Eigen::Ref<VecX> udot) {
  partition_.prepare(t, q, u);  // eqs 12-14
  try {
    dense_.accelerations(t, partition_.state_q(), partition_.state_u(), udot);  // eq 15
  } catch (const SingularConfigurationError&) {
    // The survey's change points are crossed with placed steps whose stages keep away from them
    // (change_points.hpp); a stage this close means steps shorter than the loops' conditioning
    // there allows, or a singular configuration no survey listed.
    std::ostringstream s;
    s << "t = " << t << ": gcp stops at a singular configuration (a change point of the loops "
      << dense_.null_space_loops() << "): constraint rank " << dense_.rank() << " of "
      << dense_.constraints().rows() << ", condition number " << dense_.condition()
      << ", so its multiplier solve (001 eq 15) has no unique answer; steps this close to a change point are "
         "shorter than the loops' conditioning there allows. "
      << kChangePointToleranceAdvice;
    throw SingularConfigurationError(s.str());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("gcp, in the dense solve of 001 eq 15: ") + e.what());
  }
}

}  // namespace loopdyn
