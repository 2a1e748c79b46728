// Reproduces the numerical examples of papers 001 (Park, Yoo, Hwang 2000), 000 (Anderson,
// Critchley 2003) §4.1-4.3 and 002 (Jain 2012) §5 with loopdyn's formulations and prints them as
// the markdown tables of docs/results.md. Run it with bench/run_results.sh (Release build); every
// number in that file comes from here.
//
//   paper_results [--models DIR] [--repeats N] [--section 001|000|002]   (default: all three)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "loopdyn/core/errors.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/formulations/rcr.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "pendulums.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/formulations/registry.hpp"

namespace loopdyn {
namespace {

struct Problem {
  Model model;
  VecX q, u;  ///< assembled initial state (what `loopdyn simulate` starts from)
};

Problem load(const std::string& dir, const std::string& name) {
  Model m = Model::build(load_mechanism(dir + "/" + name + ".yaml"));
  VecX q = m.q0, u = m.u0;
  if (m.has_loops()) {
    const AssemblyResult a = assemble(m, m.loops().constraints, m.q0, m.u0);
    q = a.q;
    u = a.u;
  }
  return {std::move(m), q, u};
}

struct Run {
  Trajectory traj;
  double cpu_seconds = 0;  ///< per simulation: median over the batches
  std::vector<std::string> events;
};

// Shortest CPU time of one timing batch: long enough that the clock's resolution and a scheduler
// hiccup stay below a few per cent of it.
constexpr double kBatchSeconds = 0.2;

double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// Simulates once for the trajectory and events, then, for `batches` > 0, times batches of
// repeated simulations (fresh formulation each, at least kBatchSeconds of CPU per batch) and keeps the
// median time per simulation.
Run run(const Problem& p, const std::string& method, const FormulationSettings& fs, const SimulationSettings& ss,
        int batches = 0) {
  Run r;
  auto simulate = [&](std::vector<std::string>* events) {
    auto f = make_formulation(method, p.model, fs);
    if (events) f->set_event_sink([&](const FormulationEvent& e) { events->push_back(e.message); });
    Simulator sim(p.model, *f, ss);
    return sim.run(p.q, p.u);
  };
  r.traj = simulate(&r.events);
  std::vector<double> times;
  for (int b = 0; b < batches; ++b) {
    const double t0 = cpu_now();
    int n = 0;
    do {
      simulate(nullptr);
      ++n;
    } while (cpu_now() - t0 < kBatchSeconds);
    times.push_back((cpu_now() - t0) / n);
  }
  std::sort(times.begin(), times.end());
  if (!times.empty()) r.cpu_seconds = times[times.size() / 2];
  return r;
}

SimulationSettings adaptive(double tol, double t_end, double output_dt) {
  SimulationSettings s;
  s.integrator.kind = IntegratorKind::dopri5;
  s.integrator.rtol = s.integrator.atol = tol;
  s.t_end = t_end;
  s.output_dt = output_dt;
  return s;
}

// 001 §4.2 case I, Fig. 4 in numbers: y2 (link 2's mass centre) through the singular
// configuration y2 = 0, for the CS method (lagrange-dense, with and without Baumgarte terms),
// lagrange-on, gcp, embedding and nullspace. The error column is |y2 − y2(nullspace)|.
void singular_four_bar(const std::string& dir) {
  const Problem p = load(dir, "fourbar_park_singular");
  const double tol = 1e-8;
  const SimulationSettings ss = adaptive(tol, 5.0, 0.25);
  // The Lagrange methods would stop at y2 = 0 (FormulationSettings::on_singular); the figure
  // shows what they do when they go on.
  FormulationSettings through;
  through.on_singular = FormulationSettings::OnSingular::proceed;
  FormulationSettings cs_stab = through;
  cs_stab.baumgarte_alpha = cs_stab.baumgarte_beta = 5.0;
  struct Column {
    const char* label;
    const char* method;
    FormulationSettings fs;
  };
  const std::vector<Column> cols{{"CS (α = β = 0)", "lagrange-dense", through},
                                 {"CS (α = β = 5)", "lagrange-dense", cs_stab},
                                 {"lagrange-on", "lagrange-on", through},
                                 {"gcp", "gcp", {}},
                                 {"embedding", "embedding", {}},
                                 {"nullspace", "nullspace", {}}};
  std::vector<Run> runs;
  for (const Column& c : cols) runs.push_back(run(p, c.method, c.fs, ss));
  const Trajectory& ref = runs.back().traj;
  std::printf("### 001 Fig. 4 in numbers: y2 through the singular configuration (case I)\n\n");
  std::printf("`models/fourbar_park_singular.yaml`, dopri5, rtol = atol = %g, y2 = `link2_com.y` [m]; "
              "in brackets |y2 − y2(nullspace)|; last row: largest position residual max|Φ| over the run.\n\n",
              tol);
  std::printf("| t [s] |");
  for (const Column& c : cols) std::printf(" %s |", c.label);
  std::printf("\n|---:|");
  for (std::size_t k = 0; k < cols.size(); ++k) std::printf("---:|");
  std::printf("\n");
  for (std::size_t r = 0; r < ref.rows.size(); ++r) {
    std::printf("| %.2f |", ref.at(r, "t"));
    for (const Run& x : runs) {
      const double y = x.traj.at(r, "link2_com.y");
      std::printf(" %.6f (%.1e) |", y, std::abs(y - ref.at(r, "link2_com.y")));
    }
    std::printf("\n");
  }
  std::printf("| max\\|Φ\\| |");
  for (const Run& x : runs) {
    double worst = 0;
    for (std::size_t r = 0; r < x.traj.rows.size(); ++r) worst = std::max(worst, x.traj.at(r, "residual.position"));
    std::printf(" %.1e |", worst);
  }
  std::printf("\n\nEvents reported:\n\n");
  for (std::size_t k = 0; k < cols.size(); ++k) {
    std::printf("- %s: %zu", cols[k].label, runs[k].events.size());
    if (!runs[k].events.empty()) std::printf(", the first: \"%s\"", runs[k].events[0].c_str());
    std::printf("\n");
  }
  std::printf("\n");
}

// 001 Tables 1-3: function evaluations, average step and CPU time ratio (nullspace = 1) of the
// CS method (lagrange-dense with Baumgarte terms α = β = 5), gcp and nullspace.
void cost_table(const std::string& dir, int repeats) {
  struct Case {
    const char* title;
    const char* model;
    double t_end, tol_int, tol_pos;
  };
  const std::vector<Case> cases{
      {"double pendulum (001 §4.1, Table 1)", "double_pendulum", 5.0, 1e-6, 1e-10},
      {"double pendulum (001 §4.1, Table 1)", "double_pendulum", 10.0, 1e-6, 1e-10},
      {"double pendulum (001 §4.1, Table 1)", "double_pendulum", 50.0, 1e-6, 1e-10},
      {"planar four-bar case I (001 §4.2, Table 2)", "fourbar_park_singular", 10.0, 1e-6, 1e-10},
      {"planar four-bar case II (001 §4.2, Table 2)", "fourbar_park_regular", 10.0, 1e-6, 1e-10},
      {"spatial four-bar (001 §4.3, Table 3)", "fourbar_spatial_park", 10.0, 1e-5, 1e-3},
      {"spatial four-bar (001 §4.3, Table 3)", "fourbar_spatial_park", 10.0, 1e-3, 1e-3},
      {"spatial four-bar (001 §4.3, Table 3)", "fourbar_spatial_park", 10.0, 1e-3, 1e-5},
  };
  std::printf("### 001 Tables 1-3: cost of CS, GCP and the partial velocity matrix method\n\n");
  std::printf("dopri5 with rtol = atol = ε_int; gcp and nullspace with Newton tolerance ε_pos; CS = "
              "`lagrange-dense` with α = β = 5 and `--on-singular continue` (as 001's CS, it runs the singular example through y2 = 0). CPU time per simulation: median of %d batches of at least %g s (output every 1 s), ratio to "
              "`nullspace`. max\\|Φ\\|: largest position residual at the output times.\n\n",
              repeats, kBatchSeconds);
  std::printf("| example | t_end [s] | ε_int | ε_pos | method | CPU time ratio | function evaluations | "
              "average step [s] | max\\|Φ\\| |\n|---|---:|---:|---:|---|---:|---:|---:|---:|\n");
  // Warm-up, untimed: the first batches of a cold process run slow (clock ramp, caches), which
  // showed as a 30 % dip of the first row's ratios.
  run(load(dir, cases[0].model), "nullspace", {}, adaptive(cases[0].tol_int, cases[0].t_end, 1.0), 3);
  for (const Case& c : cases) {
    const Problem p = load(dir, c.model);
    FormulationSettings cs;
    cs.baumgarte_alpha = cs.baumgarte_beta = 5.0;
    // 001's CS runs the singular example through y2 = 0; loopdyn's refuses a run that can reach a
    // change point unless told to go on (001 Fig. 4 above shows where that leads).
    cs.on_singular = FormulationSettings::OnSingular::proceed;
    FormulationSettings partitioned;
    partitioned.position_tolerance = c.tol_pos;
    const SimulationSettings ss = adaptive(c.tol_int, c.t_end, 1.0);
    const Run ns = run(p, "nullspace", partitioned, ss, repeats);
    const Run gcp = run(p, "gcp", partitioned, ss, repeats);
    const Run dense = run(p, "lagrange-dense", cs, ss, repeats);
    for (const auto& [name, r] : {std::pair<const char*, const Run*>{"nullspace", &ns}, {"gcp", &gcp}, {"CS", &dense}}) {
      double worst = 0;
      if (p.model.has_loops())
        for (std::size_t k = 0; k < r->traj.rows.size(); ++k)
          worst = std::max(worst, r->traj.at(k, "residual.position"));
      const IntegrationStats& st = r->traj.stats;
      std::printf("| %s | %g | %g | %g | %s | %.2f | %ld | %.4f | %.1e |\n", c.title, c.t_end, c.tol_int, c.tol_pos,
                  name, r->cpu_seconds / ns.cpu_seconds, st.rhs_evaluations,
                  c.t_end / static_cast<double>(std::max(1L, st.steps_accepted)), worst);
    }
  }
  std::printf("\n");
}

// Least-squares slope of log y against log t over the rows with t >= 1 s (the growth exponent of
// a drift ~ t^p).
double growth_exponent(const std::vector<double>& t, const std::vector<double>& y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int n = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k] < 1.0 || !(y[k] > 0.0)) continue;
    const double x = std::log(t[k]), v = std::log(y[k]);
    sx += x;
    sy += v;
    sxx += x * x;
    sxy += x * v;
    ++n;
  }
  return n < 2 ? NAN : (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// 000 §4.1, Fig. 6 in numbers: constraint drift of the planar four-bar, RK4 with h = 0.01 s (no
// error control) for 10 s, for the traditional O(n) method (lagrange-on, acceleration-level
// constraints, no stabilization) without and with the post-step projection, for rcr (the paper's
// RCR: velocity constraints exact, positions integrated) and for nullspace (position and velocity
// analysis every step).
void drift_four_bar(const std::string& dir) {
  const Problem p = load(dir, "fourbar_anderson");
  SimulationSettings ss;
  ss.integrator.kind = IntegratorKind::rk4;
  ss.integrator.dt = 0.01;
  ss.t_end = 10.0;
  ss.output_dt = 1.0;
  // The drift itself is what is measured: the run watch, which stops a run whose closure or
  // energy balance leaves its accuracy, is off here; the watched run below says where it stops.
  SimulationSettings watched = ss;
  ss.watch.enabled = false;
  SimulationSettings projected = ss;
  projected.project = true;
  SimulationSettings longer = ss;
  longer.t_end = 40.0;
  const Run plain = run(p, "lagrange-on", {}, ss);
  const Run proj = run(p, "lagrange-on", {}, projected);
  const Run rcr = run(p, "rcr", {}, ss);
  const Run rcr_long = run(p, "rcr", {}, longer);
  const Run ns = run(p, "nullspace", {}, ss);
  std::string watch_stop = "`lagrange-on` completes the run";
  try {
    run(p, "lagrange-on", {}, watched);
  } catch (const RunWatchError& e) {
    watch_stop = std::string("it stops `lagrange-on`: \"") + e.what() + "\"";
  }
  std::printf("## Paper 000 (Anderson, Critchley 2003)\n\n");
  std::printf("### 000 Fig. 6: constraint drift of the planar four-bar (§4.1)\n\n");
  std::printf("`models/fourbar_anderson.yaml` released from rest, RK4 with h = 0.01 s, 10 s. \\|Φ\\| = "
              "max over the kept rows of the position error [m], \\|G u\\| the same for the velocity "
              "constraints [m/s], at the output times. `lagrange-on` is the paper's traditional O(n) "
              "method (constraints enforced at acceleration level only); `--project` adds the "
              "mass-orthogonal projection after every step (tolerance %g); `rcr` is the paper's RCR "
              "(velocity constraints solved at every evaluation, all coordinates integrated, nothing "
              "solved at position level); `nullspace` solves the position and velocity constraints at "
              "every step. These runs measure the drift itself and are not watched; with the run watch "
              "on (the default), %s.\n\n",
              projected.projection.position_tolerance, watch_stop.c_str());
  std::printf("| t [s] | `lagrange-on` \\|Φ\\| | \\|G u\\| | `lagrange-on --project` \\|Φ\\| | \\|G u\\| | "
              "`rcr` \\|Φ\\| | \\|G u\\| | `nullspace` \\|Φ\\| | \\|G u\\| |\n"
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::vector<double> t, drift, drift_rcr;
  for (std::size_t k = 0; k < plain.traj.rows.size(); ++k) {
    t.push_back(plain.traj.at(k, "t"));
    drift.push_back(plain.traj.at(k, "residual.position"));
    drift_rcr.push_back(rcr.traj.at(k, "residual.position"));
    std::printf("| %g | %.2e | %.2e | %.2e | %.2e | %.2e | %.2e | %.2e | %.2e |\n", t.back(), drift.back(),
                plain.traj.at(k, "residual.velocity"), proj.traj.at(k, "residual.position"),
                proj.traj.at(k, "residual.velocity"), drift_rcr.back(), rcr.traj.at(k, "residual.velocity"),
                ns.traj.at(k, "residual.position"), ns.traj.at(k, "residual.velocity"));
  }
  std::vector<double> t_long, drift_long;
  double gu_long = 0;
  for (std::size_t k = 0; k < rcr_long.traj.rows.size(); ++k) {
    t_long.push_back(rcr_long.traj.at(k, "t"));
    drift_long.push_back(rcr_long.traj.at(k, "residual.position"));
    gu_long = std::max(gu_long, rcr_long.traj.at(k, "residual.velocity"));
  }
  const ProjectionStats& st = proj.traj.projection;
  std::printf("\nGrowth of the drift (least squares on log-log, t = 1..10 s): `lagrange-on` \\|Φ\\| ∝ t^%.2f, "
              "`rcr` \\|Φ\\| ∝ t^%.2f. The same `rcr` run continued to 40 s: \\|Φ\\| = %.2e at 40 s, "
              "∝ t^%.2f on t = 1..40 s, \\|G u\\| at most %.1e. "
              "Projection: %ld of %ld steps moved q (%ld Newton iterations in all), %ld moved u; largest "
              "correction %.2e (q) and %.2e (u); residuals after projection at most %.1e (\\|Φ\\|) and "
              "%.1e (\\|G u\\|).\n\n",
              growth_exponent(t, drift), growth_exponent(t, drift_rcr), drift_long.back(),
              growth_exponent(t_long, drift_long), gu_long, st.position_projections, proj.traj.stats.steps_accepted,
              st.position_iterations, st.velocity_projections, st.max_position_correction,
              st.max_velocity_correction, st.max_position_residual, st.max_velocity_residual);
}

// 000 §4.2, Fig. 8 in numbers: the redundant parallel five-bar's independent coordinates (the
// joints of rcr's independent speeds) under rcr and lagrange-dense, dopri5 at rtol = atol = 1e-10.
void five_bar_manipulator(const std::string& dir) {
  const Problem p = load(dir, "fivebar_anderson");
  const SimulationSettings ss = adaptive(1e-10, 5.0, 0.5);
  const Run rcr = run(p, "rcr", {}, ss), dense = run(p, "lagrange-dense", {}, ss);
  Rcr chooser(p.model, {});
  VecX q = p.q, u = p.u;
  chooser.complete_state(0.0, q, u);
  const std::vector<std::string> names = p.model.coordinate_names();
  std::vector<std::string> cols, speeds;
  for (int k : chooser.independent_speeds()) {
    speeds.push_back(names[p.model.nq + k]);
    cols.push_back(std::string("q").append(speeds.back(), 1));  // u.<joint> -> q.<joint> (1-coordinate joints)
  }
  std::printf("### 000 Fig. 8: independent coordinates of the redundant five-bar manipulator (§4.2)\n\n");
  std::printf("`models/fivebar_anderson.yaml` (2 DOF, base joints marked independent), dopri5, rtol = atol = "
              "1e-10, 5 s. `rcr` chose the independent speeds");
  for (const std::string& n : speeds) std::printf(" `%s`", n.c_str());
  std::printf("; the table gives their joints' angles [rad] under `rcr` and `lagrange-dense` (the paper "
              "compares with AUTOLEV).\n\n| t [s] |");
  for (const std::string& c : cols) std::printf(" `%s` rcr | lagrange-dense |", c.c_str());
  std::printf("\n|---:|");
  for (std::size_t k = 0; k < cols.size(); ++k) std::printf("---:|---:|");
  std::printf("\n");
  double diff = 0, diff_all = 0;
  for (std::size_t r = 0; r < rcr.traj.rows.size(); ++r) {
    std::printf("| %.1f |", rcr.traj.at(r, "t"));
    for (const std::string& c : cols) {
      const double a = rcr.traj.at(r, c), b = dense.traj.at(r, c);
      std::printf(" %.9f | %.9f |", a, b);
      diff = std::max(diff, std::abs(a - b));
    }
    std::printf("\n");
    diff_all = std::max(diff_all, (rcr.traj.rows[r].segment(1, p.model.nq) - dense.traj.rows[r].segment(1, p.model.nq))
                                      .cwiseAbs()
                                      .maxCoeff());
  }
  double phi = 0;
  for (std::size_t r = 0; r < rcr.traj.rows.size(); ++r) phi = std::max(phi, rcr.traj.at(r, "residual.position"));
  std::printf("\nLargest difference rcr − lagrange-dense over the rows: %.1e rad in these angles, %.1e rad in "
              "any coordinate; rcr's largest \\|Φ\\| %.1e m.\n\n",
              diff, diff_all, phi);
}

// 000 §4.3, Fig. 10 in numbers: spatial ladders of L cells with masses making each equivalent to
// the L = 1 ladder (generators.hpp, LadderMasses::equivalent), under rcr, against the 2-dof
// pendulum integrated on its own (reference::SpatialLadderPendulum, dopri5 at 1e-12).
void equivalent_ladders() {
  const SimulationSettings ss = adaptive(1e-10, 5.0, 0.1);
  std::printf("### 000 Fig. 10: independent coordinates of equivalent spatial ladders (§4.3)\n\n");
  std::printf("`spatial_ladder_mechanism(L, LadderMasses::equivalent)` (posts × 2/(L+1), rungs × 1/L: the "
              "kinetic and potential energy of the L = 1 ladder at every L) from `spatial_ladder_state`, "
              "`rcr`, dopri5, rtol = atol = %g, 5 s, rows every %g s. Δα, Δβ: largest difference of post0_top's "
              "(α, β) (the paper's q1, q2) from the equivalent 2-dof spatial pendulum (the L = 1 ladder's "
              "closed-form Lagrange equations integrated separately, dopri5 at 1e-12; the paper uses AUTOLEV); "
              "residuals: largest over the rows.\n\n",
              ss.integrator.rtol, ss.output_dt);
  std::printf("| L | n | m | max \\|Δα\\| [rad] | max \\|Δβ\\| [rad] | max\\|Φ\\| | max\\|G u\\| | "
              "rhs evaluations |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int cells : {1, 2, 4, 8, 16, 64}) {
    Model m = Model::build(spatial_ladder_mechanism(cells, LadderMasses::equivalent));
    const SpatialLadderState s = spatial_ladder_state(m, cells);
    const Problem p{std::move(m), s.q, s.u};
    const Run r = run(p, "rcr", {}, ss);
    const std::vector<Eigen::Vector4d> ref = reference::SpatialLadderPendulum(1).solve(
        reference::SpatialLadderPendulum::state_of(p.model, p.q, p.u), output_times(ss.t_end, ss.output_dt));
    double da = 0, db = 0, phi = 0, gu = 0;
    for (std::size_t k = 0; k < r.traj.rows.size(); ++k) {
      da = std::max(da, std::abs(r.traj.at(k, "q.post0_top.0") - ref[k](0)));
      db = std::max(db, std::abs(r.traj.at(k, "q.post0_top.1") - ref[k](1)));
      phi = std::max(phi, r.traj.at(k, "residual.position"));
      gu = std::max(gu, r.traj.at(k, "residual.velocity"));
    }
    std::printf("| %d | %d | %d | %.1e | %.1e | %.1e | %.1e | %ld |\n", cells, p.model.nq, 4 * cells, da, db, phi, gu,
                r.traj.stats.rhs_evaluations);
  }
  std::printf("\n");
}

std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", x);
  return buf;
}

// 002 §5 models under `embedding` against `lagrange-dense` (both dopri5 at rtol = atol = 1e-10,
// 5 s, no projection): largest position difference at the output times, embedding's largest
// residuals, energy drift where the model is conservative; then the terminal and internal cut of
// the same four-bar (RK4 h = 1e-3, loops closed to 1e-13) against each other.
void embedding_models(const std::string& dir) {
  std::printf("### 002: constraint embedding on its four-bars (terminal and internal cut) and geared links, and on a double wishbone\n\n");
  std::printf("dopri5, rtol = atol = 1e-10, 5 s, output every 0.1 s, no projection. Δq: largest |q − q(lagrange-dense)| "
              "over the output rows; residuals: largest over the output rows of embedding's run; ΔE: largest "
              "|E(t) − E(0)| (conservative models only).\n\n");
  std::printf("| model | aggregated bodies (joint speeds / independent) | Δq | max\\|Φ\\| | max\\|G u\\| | ΔE embedding | "
              "ΔE lagrange-dense | partition changes |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
  const SimulationSettings ss = adaptive(1e-10, 5.0, 0.1);
  for (const char* name : {"fourbar_jain_terminal", "fourbar_jain_internal", "geared_chain", "double_wishbone",
                           "fourbar_spatial_park", "fivebar_malczyk", "doubleloop_malczyk"}) {
    const Problem p = load(dir, name);
    const Run e = run(p, "embedding", {}, ss), d = run(p, "lagrange-dense", {}, ss);
    const bool conservative = p.model.forces.empty();
    double dq = 0, phi = 0, gu = 0, de = 0, dd = 0;
    for (std::size_t r = 0; r < e.traj.rows.size(); ++r) {
      dq = std::max(dq, (e.traj.rows[r].segment(1, p.model.nq) - d.traj.rows[r].segment(1, p.model.nq)).cwiseAbs().maxCoeff());
      phi = std::max(phi, e.traj.at(r, "residual.position"));
      gu = std::max(gu, e.traj.at(r, "residual.velocity"));
      de = std::max(de, std::abs(e.traj.at(r, "energy") - e.traj.at(0, "energy")));
      dd = std::max(dd, std::abs(d.traj.at(r, "energy") - d.traj.at(0, "energy")));
    }
    const AggregatedTree& agg = p.model.loops().aggregation;
    const std::vector<int> free = p.model.loops().independent_speeds(p.model, p.q);
    std::string nodes;
    for (std::size_t n = 0; n < agg.nodes.size(); ++n)
      if (agg.nodes[n].aggregated())
        nodes.append(nodes.empty() ? "" : ", ").append(std::to_string(agg.nodes[n].nv)).append("/").append(std::to_string(free[n]));
    std::printf("| `%s` | %s | %.1e | %.1e | %.1e | %s | %s | %zu |\n", name, nodes.c_str(), dq, phi, gu,
                conservative ? sci(de).c_str() : "—", conservative ? sci(dd).c_str() : "—", e.events.size());
  }
  FormulationSettings tight;
  tight.position_tolerance = 1e-13;
  SimulationSettings rk4;
  rk4.integrator.kind = IntegratorKind::rk4;
  rk4.integrator.dt = 1e-3;
  rk4.t_end = 5.0;
  rk4.output_dt = 0.1;
  const Run a = run(load(dir, "fourbar_jain_terminal"), "embedding", tight, rk4);
  const Run b = run(load(dir, "fourbar_jain_internal"), "embedding", tight, rk4);
  double diff = 0;
  for (std::size_t r = 0; r < a.traj.rows.size(); ++r)
    for (const char* c : {"q.crank_pivot", "q.crank_pin", "u.crank_pivot", "u.crank_pin"})
      diff = std::max(diff, std::abs(a.traj.at(r, c) - b.traj.at(r, c)));
  std::printf("\nTerminal against internal cut (002 §5.2-5.3), RK4 h = 1e-3, loops closed to |Φ| <= 1e-13, 5 s: "
              "largest difference of the crank and coupler joints' q and u over the output rows %.1e.\n\n", diff);
}

}  // namespace
}  // namespace loopdyn

int main(int argc, char** argv) {
  std::string dir = LOOPDYN_MODELS_DIR;
  int repeats = 5;
  std::string section = "all";
  for (int k = 1; k + 1 < argc; k += 2) {
    const std::string a = argv[k];
    if (a == "--models") dir = argv[k + 1];
    else if (a == "--repeats") repeats = std::max(1, std::atoi(argv[k + 1]));
    else if (a == "--section") section = argv[k + 1];
    else {
      std::fprintf(stderr, "usage: paper_results [--models DIR] [--repeats N] [--section 001|000|002]\n");
      return 2;
    }
  }
  try {
    if (section == "all" || section == "001") {
      loopdyn::singular_four_bar(dir);
      loopdyn::cost_table(dir, repeats);
    }
    if (section == "all" || section == "000") {
      loopdyn::drift_four_bar(dir);
      loopdyn::five_bar_manipulator(dir);
      loopdyn::equivalent_ladders();
    }
    if (section == "all" || section == "002") loopdyn::embedding_models(dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "paper_results: %s\n", e.what());
    return 1;
  }
  return 0;
}
