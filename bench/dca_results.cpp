// Paper 004's examples (Malczyk and Frączek: the five-bar of §4.2 and the double loop of §4.3)
// under `dca`, with and without its projections, beside every other loop method on the same runs,
// as the markdown tables of docs/results.md ("Paper 004"), and the time series behind its
// figures (Figs 5-7 and 9-11: motion, constraint errors, energy) as CSV files for
// bench/plot_004.py. Run it with bench/run_results.sh (Release build).
//
// Every run: the model file's initial state, assembled; dopri5 with rtol = atol = 1e-6 (004 §4.1:
// Matlab's ode45 at 1e-6), 10 s, rows every 0.01 s. The reference is lagrange-dense at dopri5
// 1e-12; "max |q − q_ref|" is over the rows and the joint coordinates. The constraint errors of
// dca are those of its own absolute coordinates (every joint's rows: what 004 plots); the other
// methods' are those of their kept loop rows (their tree joints hold exactly).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "problem.hpp"
#include "loopdyn/formulations/dca.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/core/kinematics.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/formulations/registry.hpp"

namespace loopdyn {
namespace {

using bench::Problem;
using bench::from_file;

SimulationSettings dopri5(double tol) {
  SimulationSettings s;
  s.integrator.kind = IntegratorKind::dopri5;
  s.integrator.rtol = s.integrator.atol = tol;
  s.t_end = 10.0;
  s.output_dt = 0.01;
  s.diagnostics = true;
  return s;
}

struct Run {
  std::string label;
  Trajectory traj;
  double wall = 0.0;
};

Run run(const Problem& p, const std::string& method, const FormulationSettings& fs, double tol, std::string label) {
  auto f = make_formulation(method, p.model, fs);
  Simulator sim(p.model, *f, dopri5(tol));
  Run r{std::move(label), {}, 0.0};
  r.traj = sim.run(p.q, p.u);
  return r;
}

// Kinetic and potential (gravity) energy of every row.
std::vector<Energy> energies(const Problem& p, const Trajectory& t) {
  KinematicsData kin(p.model);
  std::vector<Energy> out;
  for (const VecX& row : t.rows) {
    const VecX q = row.segment(1, p.model.nq), u = row.segment(1 + p.model.nq, p.model.nv);
    update_positions(p.model, kin, q);
    update_velocities(p.model, kin, q, u);
    out.push_back(energy(p.model, kin, q));
  }
  return out;
}

double column_max(const Trajectory& t, const std::string& name) {
  double m = 0.0;
  const int c = t.column(name);
  for (const VecX& row : t.rows) m = std::max(m, std::abs(row(c)));
  return m;
}

// Sign changes of sin(q) of the loops' relative joint angles between rows: adjacent bars passing
// collinear (stretched or folded), where a choice of dependent coordinates can break.
int collinear_passes(const Problem& p, const Trajectory& t) {
  int passes = 0;
  for (int j = 0; j < p.model.nbodies; ++j) {
    if (p.model.parent[j] < 0) continue;  // a ground joint's angle is not between two bars
    const int c = 1 + p.model.q_index[j];
    for (std::size_t k = 1; k < t.rows.size(); ++k)
      if (std::sin(t.rows[k - 1](c)) * std::sin(t.rows[k](c)) < 0.0) ++passes;
  }
  return passes;
}

void write_series(const std::string& path, const Problem& p, const Run& r) {
  std::ofstream out(path);
  const bool dca = r.label.rfind("dca", 0) == 0;
  out << "t";
  for (int k = 0; k < p.model.nq; ++k) out << "," << r.traj.columns[1 + k];
  out << ",kinetic,potential,total,position_error,velocity_error" << (dca ? ",acceleration_error" : "") << "\n";
  const std::vector<Energy> e = energies(p, r.traj);
  const int cp = r.traj.column(dca ? "dca.residual.position" : "residual.position");
  const int cv = r.traj.column(dca ? "dca.residual.velocity" : "residual.velocity");
  char buf[160];
  for (std::size_t k = 0; k < r.traj.rows.size(); ++k) {
    const VecX& row = r.traj.rows[k];
    out << row(0);
    for (int j = 0; j < p.model.nq; ++j) {
      std::snprintf(buf, sizeof buf, ",%.10g", row(1 + j));
      out << buf;
    }
    std::snprintf(buf, sizeof buf, ",%.10g,%.10g,%.10g,%.4g,%.4g", e[k].kinetic, e[k].gravity, e[k].total(), row(cp),
                  row(cv));
    out << buf;
    if (dca) {
      std::snprintf(buf, sizeof buf, ",%.4g", row(r.traj.column("dca.residual.acceleration")));
      out << buf;
    }
    out << "\n";
  }
}

void report(const std::string& dir, const std::string& series_dir, const std::string& name, const char* title) {
  const Problem p = from_file(dir, name);
  const Run reference = run(p, "lagrange-dense", {}, 1e-12, "reference");
  std::vector<Run> runs;
  runs.push_back(run(p, "dca", {}, 1e-6, "dca"));
  FormulationSettings bare;
  bare.dca.projections = false;
  runs.push_back(run(p, "dca", bare, 1e-6, "dca, no projections"));
  std::vector<std::string> skipped;
  for (const std::string& m : loop_methods()) {
    if (m == "dca") continue;
    if (method_info(m).fixed_step || !method_info(m).scope_problem(p.model, p.q).empty()) skipped.push_back(m);
    else runs.push_back(run(p, m, {}, 1e-6, m));
  }

  std::printf("### 004 %s: `%s`\n\n", title, name.c_str());
  std::printf("%d bodies, %zu loop-closing joints; dca's %d constraint rows (every joint's), rank %d on %d "
              "velocities. dopri5 at 1e-6, 10 s; reference lagrange-dense at 1e-12.\n\n",
              p.model.nbodies, p.model.loop_joints.size(), Dca(p.model, {}).tree_shape().rows,
              6 * p.model.nbodies - (p.model.nv - p.model.loops().constraints.rows()), 6 * p.model.nbodies);
  std::printf("| method | steps | max constraint error, position | velocity | acceleration | max |E − E0| [J] | "
              "max |q − q_ref| [rad] |\n|---|---|---|---|---|---|---|\n");
  const std::vector<Energy> e_ref = energies(p, reference.traj);
  for (const Run& r : runs) {
    const bool dca = r.label.rfind("dca", 0) == 0;
    const std::vector<Energy> e = energies(p, r.traj);
    double drift = 0.0, dq = 0.0;
    for (std::size_t k = 0; k < r.traj.rows.size(); ++k) {
      drift = std::max(drift, std::abs(e[k].total() - e[0].total()));
      dq = std::max(dq, (r.traj.rows[k].segment(1, p.model.nq) - reference.traj.rows[k].segment(1, p.model.nq))
                            .cwiseAbs()
                            .maxCoeff());
    }
    const std::string acc = dca ? [&] {
      char b[32];
      std::snprintf(b, sizeof b, "%.1e", column_max(r.traj, "dca.residual.acceleration"));
      return std::string(b);
    }()
                                : std::string("—");
    std::printf("| %s | %ld | %.1e | %.1e | %s | %.1e | %.1e |\n", r.label.c_str(), r.traj.stats.steps_accepted,
                column_max(r.traj, dca ? "dca.residual.position" : "residual.position"),
                column_max(r.traj, dca ? "dca.residual.velocity" : "residual.velocity"), acc.c_str(), drift, dq);
    std::string file = r.label;
    for (char& ch : file)
      if (ch == ' ' || ch == ',') ch = '_';
    write_series(series_dir + "/" + name + "." + file + ".csv", p, r);
  }
  std::printf("\nAdjacent bars of the reference pass collinear %d times in 10 s (sign changes of sin q of "
              "the joints between two bars).",
              collinear_passes(p, reference.traj));
  for (const std::string& m : skipped)
    std::printf(" Not run: `%s` (%s).", m.c_str(),
                method_info(m).fixed_step ? "fixed-step integrators only" : "out of its scope");
  std::printf("\n\n");
}

}  // namespace
}  // namespace loopdyn

int main(int argc, char** argv) {
  std::string models = LOOPDYN_MODELS_DIR, series = ".";
  for (int k = 1; k + 1 < argc; k += 2) {
    const std::string a = argv[k];
    if (a == "--models") models = argv[k + 1];
    else if (a == "--series") series = argv[k + 1];
  }
  loopdyn::report(models, series, "fivebar_malczyk", "§4.2, Figs 5-7: the five-bar");
  loopdyn::report(models, series, "doubleloop_malczyk", "§4.3, Figs 9-11: the double loop");
  return 0;
}
