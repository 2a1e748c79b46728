// loopdyn command-line tool: simulate a mechanism, describe it, generate benchmark mechanisms.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "loopdyn/core/names.hpp"
#include "loopdyn/core/version.hpp"
#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/mechanisms/iftomm.hpp"
#include "loopdyn/io/csv.hpp"
#include "loopdyn/io/mjcf.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/io/model_info.hpp"
#include "loopdyn/io/urdf.hpp"
#include "loopdyn/viewer/viewer.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/loops/projection.hpp"
#include "loopdyn/run/run.hpp"
#include "loopdyn/run/start_state.hpp"
#include "loopdyn/run/simulator.hpp"
#include "loopdyn/mechanisms/square_nets.hpp"
#include "loopdyn/mechanisms/zoo.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/method_choice.hpp"
#include "loopdyn/run/run_options.hpp"

namespace {

using namespace loopdyn;

// A library message with the settings it names in the CLI's spelling (--dca-alpha 1e5).
std::string cli_text(std::string_view message) { return render_settings(message, Spelling::cli); }

// `simulate`'s own options (files and pages); the run's settings come from the library's option
// tables (run/run_options.hpp): `given` holds each flag as typed, in order, with its text.
struct SimulateOptions {
  std::string model, out = "trajectory.csv";
  bool no_assemble = false, view = false, quiet = false;
  std::vector<std::string> plots;  // --plot: columns of the --view page
  std::vector<std::pair<std::string, std::string>> given;
};

// The progress line on stderr, for runs that last: simulated time, rate and time left, drawn once
// the run has taken 2 s of wall time, at most 5 times a second, only when stderr is a terminal and
// --quiet is not given. Erased before any other line goes to stderr, and at the end.
class ProgressLine {
  using Clock = std::chrono::steady_clock;

 public:
  ProgressLine(double t_end, bool enabled) : t_end_(t_end), enabled_(enabled && isatty(STDERR_FILENO) != 0) {}
  void operator()(double t) {
    if (!enabled_) return;
    const Clock::time_point now = Clock::now();
    const double wall = std::chrono::duration<double>(now - start_).count();
    if ((!drawn_ && wall < kFirstDraw) || now - last_ < kRedraw || !(t > t0_)) return;
    last_ = now;
    drawn_ = true;
    const double rate = (t - t0_) / wall;  // simulated seconds per wall second
    std::fprintf(stderr, "\r  t = %.4g / %g s, %.3g simulated s per wall s, about %.0f s left\033[K", t, t_end_, rate,
                 (t_end_ - t) / rate);
  }
  /// Erases the line, if drawn.
  void clear() {
    if (drawn_) std::fprintf(stderr, "\r\033[K");
    drawn_ = false;
  }
  /// auto's hand-over, which goes on from t0 (0: starts again): rate and time left from now.
  void restart(double t0) {
    clear();
    start_ = Clock::now();
    t0_ = t0;
  }

 private:
  static constexpr double kFirstDraw = 2.0;
  static constexpr std::chrono::milliseconds kRedraw{200};
  double t_end_, t0_ = 0.0;
  bool enabled_, drawn_ = false;
  Clock::time_point start_ = Clock::now(), last_{};
};

// The summary line of the initial state (start_state.hpp), empty for a model without loops.
std::string initial_state_line(const Model& model, const StartState& s) {
  char line[256];
  if (s.checked) {
    std::snprintf(line, sizeof line, "initial     as given (--no-assemble), residuals within %g\n", s.check_tolerance);
    return line;
  }
  if (!s.assembly) return {};
  const AssemblyResult& a = *s.assembly;
  // The first kShownSpeeds named, the others counted (a 1365-square chain has 1366).
  constexpr std::size_t kShownSpeeds = 8;
  std::string independent;
  for (std::size_t k = 0; k < a.independent_speeds.size() && k < kShownSpeeds; ++k)
    independent.append(k ? ", " : "").append(model.speed_name(a.independent_speeds[k]));
  if (a.independent_speeds.size() > kShownSpeeds)
    independent.append(" and ").append(std::to_string(a.independent_speeds.size() - kShownSpeeds)).append(" more");
  std::snprintf(line, sizeof line, "assembled   %s, position residual %.3g, velocity residual %.3g; ",
                counted(static_cast<std::size_t>(a.iterations), "iteration", "iterations").c_str(), a.position_residual,
                a.velocity_residual);
  return std::string(line).append("independent speeds: ")
      .append(independent.empty() ? "none (no free motion: the loops and drives fix every speed here)" : independent)
      .append("\n");
}

// The survey's change points and the crossings of the run (change_points.hpp), the first ten listed;
// `watch`: the guard applied to this run's method and settings (it may still be too large for it);
// `handover`: the first that went on from the guarded method's state, if any, and `stops` their count.
void print_change_points(const Model& model, const Trajectory& traj, bool watch, const Handover* handover, int stops) {
  const ChangePointSurvey& s = traj.change_points;
  if (!model.has_loops()) return;
  if (!s.walked) {
    std::printf("change pts  not surveyed: %s\n", s.why_not.c_str());
    if (traj.guarded && handover)
      std::printf("guard       singular configurations watched at every step of %s: sigma ratio at least %.3g of the "
                  "start's (the guard stops below %g); %s crossed them from t = %.9g (%s)\n",
                  handover->from.c_str(), traj.guard_smallest, kGuardNear, handover->to.c_str(), handover->t,
                  counted(static_cast<std::size_t>(stops), "hand-over", "hand-overs").c_str());
    else if (traj.guarded)
      std::printf("guard       singular configurations watched at every step: sigma ratio at least %.3g of the "
                  "start's (the guard stops below %g)\n",
                  traj.guard_smallest, kGuardNear);
    else if (watch && model.loops().constraints.rows() > kGuardLargestRows)
      std::printf("guard       not watched: %d kept rows, more than the guard's %d where their G G^T is not sparse; a "
                  "singular configuration met during the run is not detected (--method dca crosses them)\n",
                  model.loops().constraints.rows(), kGuardLargestRows);
    return;
  }
  if (s.constant_rows) {
    std::printf("change pts  none: the loops are couplings, whose rows are the same at every configuration\n");
    return;
  }
  const std::string found = s.points.empty() ? "none" : std::to_string(s.points.size());
  const std::string steps = counted(static_cast<std::size_t>(s.steps), "step", "steps");
  if (s.closed || s.bounded)
    std::printf("change pts  %s on the configuration curve, walked %s (%s); %zu crossed\n", found.c_str(),
                s.closed ? "all the way round" : "as far as the motion's energy reaches", steps.c_str(),
                traj.crossings.size());
  else
    std::printf("change pts  %s found in the %s walked along the configuration curve, which did not come round in them "
                "(change points farther along are not known); %zu crossed\n",
                found.c_str(), steps.c_str(), traj.crossings.size());
  constexpr std::size_t kListed = 10;
  for (std::size_t k = 0; k < std::min(kListed, traj.crossings.size()); ++k) {
    const ChangePointCrossing& c = traj.crossings[k];
    std::printf("  crossed   t = %.6f: loops %s, rank %d -> %d\n", c.t, c.loops.c_str(), c.rank_regular, c.rank_at_point);
  }
  if (traj.crossings.size() > kListed) std::printf("  ...       and %zu more\n", traj.crossings.size() - kListed);
}

// Summary of the projections of a run.
void print_projection(const ProjectionStats& p, const ProjectionSettings& s, long steps) {
  std::printf("projection  %ld of %ld steps moved q (%ld Newton iterations), %ld moved u; largest correction %.3g "
              "(q, speed units) and %.3g (u)\n",
              p.position_projections, steps, p.position_iterations, p.velocity_projections, p.max_position_correction,
              p.max_velocity_correction);
  std::printf("            residuals after projection <= %.3g (|Phi|), %.3g (|G u|); tolerances %g (|Phi|), "
              "%g * max(1, max|G| |u|) (|G u|)\n",
              p.max_position_residual, p.max_velocity_residual, s.position_tolerance, s.velocity_tolerance);
}

// A model file (YAML, URDF or MJCF) through load_mechanism; what an importer left out without
// changing the dynamics (MJCF contacts, joint limits, URDF elements not read, ...) goes to stderr,
// one note a line.
// What an importer left out (load_mechanism's notes), on stderr.
void print_notes(const std::vector<std::string>& notes) {
  for (const std::string& n : notes) std::fprintf(stderr, "loopdyn: note: %s\n", n.c_str());
}

Mechanism load_model(const std::string& path) {
  std::vector<std::string> notes;
  Mechanism m = load_mechanism(path, &notes);
  print_notes(notes);
  return m;
}

// The library's run settings from the flags as given: the library parses and checks each value
// (run_options.hpp owns the rules: integrator, auto, watch).
RunSettings run_settings(const SimulateOptions& o) {
  RunSettings rs;
  const OptionTable<RunSettings> table = all_run_options();
  for (const auto& [flag, text] : o.given) set_option_text(table, rs, flag, text);
  return rs;
}

// A second Ctrl-C does not wait for the run to notice the first (the rows so far are on disk already).
volatile std::sig_atomic_t interrupted = 0;
extern "C" void on_interrupt(int) {
  interrupted = 1;
  std::signal(SIGINT, SIG_DFL);
}

// The run of the options' method: its rows streamed to `csv`, its events and hand-overs on stderr
// as they happen, progress on stderr unless `quiet`. Ctrl-C stops it within about 20 ms of run time
// (RunCallbacks::cancelled), with the rows up to the last output time.
RunResult run_model(const RunSettings& settings, const Model& model, const VecX& q0, const VecX& u0, CsvStream& csv,
                    bool quiet) {
  RunCallbacks cb;
  ProgressLine progress(settings.simulation.t_end, !quiet);
  cb.progress = std::ref(progress);
  cb.rows = [&csv](const Trajectory& traj) { csv.write(traj); };
  cb.event = [&progress](const FormulationEvent& e) {
    progress.clear();
    std::fprintf(stderr, "loopdyn: t = %.9g: %s\n", e.t, cli_text(e.message).c_str());
  };
  // The first hand-over at a guard's stop and the first hand-back are printed; later ones of the
  // same kinds only counted in the summary (a chaotic ladder makes dozens a second).
  cb.handover = [&progress, printed = 0](const Handover& h) mutable {
    progress.restart(h.t);
    if (h.t > 0.0 && printed++ >= 2) return;
    if (h.clear) {
      std::fprintf(stderr, "loopdyn: auto: %s goes on from %s's state at %s; later hand-overs between them are "
                           "counted in the summary\n", h.to.c_str(), h.from.c_str(), h.reason.c_str());
      return;
    }
    std::fprintf(stderr, "loopdyn: auto: %s stopped: %s\n", h.from.c_str(), cli_text(h.reason).c_str());
    if (h.t > 0.0)
      std::fprintf(stderr, "loopdyn: auto: %s goes on from %s's state at t = %.9g, where its guard stopped it (the rows "
                           "before are kept); %s crosses singular configurations\n",
                   h.to.c_str(), h.from.c_str(), h.t, h.to.c_str());
    else
      std::fprintf(stderr, "loopdyn: auto: starting again with %s, which crosses singular configurations\n", h.to.c_str());
  };
  cb.cancelled = [] { return interrupted != 0; };
  interrupted = 0;
  std::signal(SIGINT, on_interrupt);
  RunResult r;
  try {
    r = run(model, q0, u0, settings, cb);
  } catch (...) {
    std::signal(SIGINT, SIG_DFL);
    progress.clear();
    throw;
  }
  std::signal(SIGINT, SIG_DFL);
  progress.clear();
  return r;
}

// The CSV's last line: how the run ended.
std::string run_ending(const RunResult& r) {
  const double t_last = r.trajectory.rows.empty() ? 0.0 : r.trajectory.rows.back()(0);
  char at[64];
  std::snprintf(at, sizeof at, "%.9g", t_last);
  if (r.completed()) return std::string("completed at t = ") + at + " (" + r.method + ")";
  return std::string("stopped after t = ") + at + " (" + r.method + "): " + cli_text(r.stop.message);
}

// The run watch's line of the summary (run_watch.hpp).
void print_watch(const Model& model, const WatchSummary& w, bool enabled) {
  if (!enabled) {
    std::printf("watch       off (--no-watch): closure and energy balance not checked\n");
    return;
  }
  if (!w.watched) {  // it said "off (--no-watch)" without the flag
    std::printf("watch       not started: the run stopped before its first step\n");
    return;
  }
  std::printf("watch       energy balance off by at most %.3g J (scale %.3g J)", w.worst_balance, w.balance_scale);
  if (model.has_loops())
    std::printf(", closure of every row off by at most %.3g (position), %.3g (velocity), completed steps moved q by "
                "at most %.3g",
                w.worst_position, w.worst_velocity, w.worst_completion);
  std::printf("; accuracy %.3g over %ld steps (docs/methods.md, \"The run\")\n", w.accuracy, w.steps);
}

// The viewer's page of a run of the model file `model` (mesh paths start from its folder), written
// to `page`; the page's notes (meshes drawn as wire cubes) go to stderr too, one a line.
void write_page(const std::string& page, const std::string& model, const Mechanism& mechanism, const Model& built,
                const Trajectory& run, const std::string& run_source, const std::vector<std::string>& plots) {
  ViewerOptions v;
  v.plots = plots;
  v.run_source = run_source;
  v.model_dir = std::filesystem::path(model).parent_path().string();  // "" for the current folder
  std::vector<std::string> notes;
  v.notes = &notes;
  write_viewer_page(page, mechanism, built, run, v);
  for (const std::string& n : notes) std::fprintf(stderr, "loopdyn: note: %s\n", n.c_str());
}

// The page's path for a CSV: the same stem, .html.
std::string page_path(const std::string& csv) { return std::filesystem::path(csv).replace_extension(".html").string(); }

struct ViewOptions {
  std::string run, model, out;
  std::vector<std::string> plots;
};

// `view`: the page of a CSV written by `simulate` (any method), for the model file it ran.
int view(const ViewOptions& o) {
  const Mechanism mechanism = load_model(o.model);
  const Model model = Model::build(mechanism);
  const std::string out = o.out.empty() ? page_path(o.run) : o.out;
  for (const std::string& input : {o.model, o.run}) refuse_overwriting(input, out, "the page");
  write_page(out, o.model, mechanism, model, read_csv(o.run), o.run, o.plots);
  std::printf("wrote       %s (%.1f MB)\n", out.c_str(), static_cast<double>(std::filesystem::file_size(out)) / 1e6);
  return 0;
}

// Wall time of simulate's phases (s): what the run's own time ("simulated ... s wall", its last
// method's) leaves out. At c46b317 the start state of the 64-cell spatial ladder took 0.8 s for a
// run of 0.07 s, and the summary did not show it.
struct PhaseTimes {
  double load = 0.0, build = 0.0, start = 0.0, run = 0.0;
};

// `simulate`'s summary on stdout.
void print_summary(const SimulateOptions& o, const RunSettings& settings, const Model& model,
                   const std::string& initial, const RunResult& r, const PhaseTimes& times) {
  const Trajectory& traj = r.trajectory;
  std::printf("model       %s\n", model_headline(model).c_str());
  std::fputs(initial.c_str(), stdout);
  std::printf("method      %s, integrator %s", r.method.c_str(), std::string(to_string(r.integrator)).c_str());
  const IntegratorSettings& is = settings.simulation.integrator;
  if (error_controlled(r.integrator)) std::printf(" (rtol %g, atol %g)", is.rtol, is.atol);
  else std::printf(" (dt %g)", is.dt);
  if (r.handovers.size() > 1)
    std::printf(" (auto: %zu hand-overs between %s and %s, the first at t = %.9g)", r.handovers.size(),
                r.handovers[0].from.c_str(), r.handovers[0].to.c_str(), r.handovers[0].t);
  else if (!r.handovers.empty() && r.handovers[0].t > 0.0)
    std::printf(" (auto: %s until t = %.9g, see above)", r.handovers[0].from.c_str(), r.handovers[0].t);
  else if (!r.handovers.empty())
    std::printf(" (auto: %s stopped, see above)", r.handovers[0].from.c_str());
  std::printf("\n");
  if (const std::string s = r.formulation->summary(); !s.empty()) std::printf("%-11s %s\n", r.method.c_str(), s.c_str());
  const double t_last = traj.rows.empty() ? 0.0 : traj.rows.back()(0);
  std::printf("simulated   %g s in %.3f s wall: %s (%ld rejected), %s\n", t_last, r.wall_seconds,
              counted(static_cast<std::size_t>(traj.stats.steps_accepted), "step", "steps").c_str(),
              traj.stats.steps_rejected,
              counted(static_cast<std::size_t>(traj.stats.rhs_evaluations), "evaluation", "evaluations").c_str());
  std::printf("time        %.3f s in all: model file %.3f s, Model::build %.3f s, start state %.3f s, run %.3f s "
              "(the CSV and, under auto, its choice and any stopped attempt included)\n",
              times.load + times.build + times.start + times.run, times.load, times.build, times.start, times.run);
  if (!traj.rows.empty()) {
    const double e0 = traj.at(0, "energy"), e1 = traj.at(traj.rows.size() - 1, "energy");
    // The change against the run watch's energy scale (kinetic + |potential change| + |work|, the
    // largest so far): against the start energy it was meaningless where that is near 0
    // ("relative -2.26e+289" on a mechanism starting at rest at zero potential).
    const double scale = traj.watch.watched ? traj.watch.balance_scale : std::abs(e0);
    std::printf("energy      %.9g J -> %.9g J (change %.3g", e0, e1, e1 - e0);
    if (scale > 0.0) std::printf(", %.3g of the energy scale %.3g J", (e1 - e0) / scale, scale);
    std::printf(")\n");
    if (const auto w = std::find(traj.columns.begin(), traj.columns.end(), "work"); w != traj.columns.end()) {
      const double work = traj.rows.back()(w - traj.columns.begin());
      std::printf("work        %.9g J by the non-conservative forces (dampers, joint and body forces, drives); energy - work "
                  "changed by %.3g J\n", work, e1 - e0 - work);
    }
  }
  print_watch(model, traj.watch, settings.simulation.watch.enabled);
  if (settings.simulation.project) print_projection(traj.projection, settings.simulation.projection, traj.stats.steps_accepted);
  // The singularity guard (not the run watch) follows on_singular, as run() sets it.
  const Handover* went_on = !r.handovers.empty() && r.handovers[0].t > 0.0 ? &r.handovers[0] : nullptr;
  const auto stops = std::count_if(r.handovers.begin(), r.handovers.end(), [](const Handover& h) { return !h.clear; });
  print_change_points(model, traj, settings.formulation.on_singular == FormulationSettings::OnSingular::stop &&
                                       !r.formulation->crosses_singular_configurations(),
                      went_on, static_cast<int>(stops));
  std::printf("wrote       %s (%zu rows x %zu columns)%s\n", o.out.c_str(), traj.rows.size(), traj.columns.size(),
              r.completed() ? "" : ", up to the stop");
}

int simulate(const SimulateOptions& o) {
  if (!o.plots.empty() && !o.view) throw std::invalid_argument("--plot is for the --view page: add --view");
  refuse_overwriting(o.model, o.out, "--out");
  if (o.view) refuse_overwriting(o.model, page_path(o.out), "the --view page");
  PhaseTimes times;
  auto clock = std::chrono::steady_clock::now();
  const auto lap = [&clock](double& phase) {
    const auto now = std::chrono::steady_clock::now();
    phase = std::chrono::duration<double>(now - clock).count();
    clock = now;
  };
  const Mechanism mechanism = load_model(o.model);
  lap(times.load);
  const Model model = Model::build(mechanism);
  lap(times.build);
  const StartState start = start_state(model, model.q0, model.u0, !o.no_assemble);
  lap(times.start);
  const std::string initial = initial_state_line(model, start);
  const RunSettings settings = run_settings(o);
  CsvStream csv(o.out);  // now: a file that cannot be written fails before the run
  RunResult r;
  try {
    r = run_model(settings, model, start.q, start.u, csv, o.quiet);
  } catch (const std::exception& e) {
    csv.finish(std::string("error: ") + cli_text(e.what()));
    throw;
  }
  // The file is the run's trajectory: where `auto` started again and the second method stopped
  // before its first row, the first one's rows were left in the file ("wrote (0 rows)" beside a
  // file of one).
  csv.write(r.trajectory);
  csv.finish(run_ending(r));
  lap(times.run);
  const Trajectory& traj = r.trajectory;
  if (!o.quiet) print_summary(o, settings, model, initial, r, times);
  if (o.view && !traj.rows.empty()) {
    const std::string page = page_path(o.out);
    write_page(page, o.model, mechanism, model, traj, o.out, o.plots);
    if (!o.quiet)
      std::printf("wrote       %s (viewer, %.1f MB)\n", page.c_str(),
                  static_cast<double>(std::filesystem::file_size(page)) / 1e6);
  }
  if (r.completed()) return 0;
  std::fprintf(stderr, "loopdyn: error: %s\n", cli_text(r.stop.message).c_str());
  return r.stop.kind == RunStopKind::cancelled ? 130 : 1;
}

int info(const std::string& path, bool as_json) {
  const Model model = Model::build(load_model(path));
  const ModelSummary d = summarize(model);
  if (as_json) {
    std::cout << describe(d).dump(2) << '\n';
    return 0;
  }
  const auto list = [](const auto& names) { return nlohmann::json(names).dump(); };
  std::cout << "model " << d.name << "\n  bodies (" << d.bodies.size() << "):\n";
  for (const auto& j : d.tree_joints)
    std::cout << "    " << j.child << " <- " << j.parent << " by " << j.type << " joint '" << j.name << "' (nq " << j.nq
              << ", nv " << j.nv << ")\n";
  std::cout << "  loop-closing joints (" << d.loop_joints.size() << "):\n";
  for (const auto& j : d.loop_joints) {
    std::cout << "    '" << j.name << "' " << j.type << " between " << j.parent << " and " << j.child << " ("
              << counted(static_cast<std::size_t>(j.constraint_rows), "constraint row", "constraint rows") << ", "
              << j.redundant_rows.size() << " redundant";
    if (!j.redundant_rows.empty()) std::cout << ": " << list(j.redundant_rows);
    if (!j.alternate_rows.empty())
      std::cout << "; geometrically, so " << list(j.alternate_rows) << " may replace a kept row along the motion";
    std::cout << ")\n";
  }
  if (!d.drives.empty()) std::cout << "  drives (" << d.drives.size() << "):\n";
  for (const auto& j : d.drives) std::cout << "    '" << j.joint << "': q = " << j.motion << " (column " << j.name << ")\n";
  std::cout << "  nq = " << d.nq << ", nv = " << d.nv << "\n";
  std::cout << "  DOF (nv - rank of loop Jacobian at the initial state) = " << d.dof_rank << " (rank "
            << d.loop_jacobian_rank << " of " << counted(d.constraints, "kept row", "kept rows") << "; "
            << counted(d.redundant_rows, "redundant row", "redundant rows") << " dropped)\n";
  // The count over joint types alone: 6 per body minus each joint's (and coupling's) constraints,
  // nv - rows. It knows nothing of geometry: the rank's DOF exceeds it by the rows that are
  // redundant (a planar loop's 3 out-of-plane rows), never falls below it.
  std::cout << "  DOF (Gruebler-Kutzbach, spatial count: 6 per body minus each joint's constraints) = " << d.dof_gruebler;
  if (d.dof_gruebler != d.dof_rank)
    std::cout << "; the count ignores geometry: "
              << counted(static_cast<std::size_t>(d.dof_rank - d.dof_gruebler), "row", "rows")
              << " of the loops are redundant here (planar loops, parallel or intersecting axes)";
  std::cout << "\n";
  std::cout << "  aggregated bodies (constraint embedding, paper 002 section 4.2): " << d.aggregated.size() << "\n";
  for (const auto& a : d.aggregated)
    std::cout << "    " << list(a.bodies) << " on " << a.parent << ": "
              << counted(static_cast<std::size_t>(a.joint_speeds), "joint speed", "joint speeds") << ", "
              << a.independent_speeds << " independent; embeds loop joints " << list(a.loop_joints)
              << (a.couplings.empty() ? "" : " and couplings " + list(a.couplings)) << "\n";
  std::cout << "  default method (--method auto): " << d.default_method.method << "; " << d.default_method.reason << "\n";
  if (d.default_method_fixed_step.method != d.default_method.method)
    std::cout << "  default method with --integrator rk4 (a fixed step): " << d.default_method_fixed_step.method << "; "
              << d.default_method_fixed_step.reason << "\n";
  for (const auto& m : d.methods)
    if (!m.problem.empty()) std::cout << "  method " << m.method << " does not cover it: " << cli_text(m.problem) << "\n";
  return 0;
}

struct AssembleOptions {
  std::string model, out;
  std::vector<std::string> fix;  // tree joints whose speeds stay independent
  double tolerance = 1e-12;
  int max_iterations = 50;
};

// Values of a joint's coordinates as "[a, b, c]" with round-trip precision.
std::string bracketed(const Eigen::Ref<const VecX>& v) {
  std::string s = "[";
  for (Eigen::Index k = 0; k < v.size(); ++k) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.17g", k ? ", " : "", v(k) + 0.0);  // + 0.0: no "-0"
    s += buf;
  }
  return s + "]";
}

// `assemble`: closes the loops of the file's initial state (loopdyn::assemble), prints q and u per
// tree joint, and with --out writes the model file again with the tree joints' q and u replaced
// (yaml-cpp round trip: the content is kept, comments and key order within flow maps may not be).
int assemble_model(const AssembleOptions& o) {
  if (!o.out.empty() && (is_mjcf_path(o.model) || is_urdf_path(o.model)))
    throw std::invalid_argument("assemble --out rewrites YAML model files only; write '" + o.model +
                                "' as YAML first (loopdyn convert " + o.model + " --out FILE.yaml)");
  const Model model = Model::build(load_model(o.model));
  const Constraints& cons = model.loops().constraints;
  AssemblySettings settings;
  settings.tolerance = o.tolerance;
  settings.max_iterations = o.max_iterations;
  if (!o.fix.empty()) {
    settings.fixed_speeds = marked_independent_speeds(model);  // the file's marks, then --fix
    settings.fixed_speeds.resize(model.nv, false);
    for (const std::string& name : o.fix) {
      const int j = model.joint_index(name);
      for (int k = 0; k < model.nv_joint[j]; ++k) settings.fixed_speeds[model.v_index[j] + k] = true;
    }
  }
  const AssemblyResult r = assemble(model, cons, model.q0, model.u0, settings);
  std::vector<bool> independent(model.nv, false);
  for (int k : r.independent_speeds) independent[k] = true;
  std::printf("model       %s, %s\n", model_headline(model).c_str(),
              counted(static_cast<std::size_t>(cons.rows()), "constraint row", "constraint rows").c_str());
  std::printf("assembled   %s, position residual %.3g, velocity residual %.3g, %s\n",
              counted(static_cast<std::size_t>(r.iterations), "iteration", "iterations").c_str(), r.position_residual,
              r.velocity_residual, counted(r.independent_speeds.size(), "independent speed", "independent speeds").c_str());
  for (int i = 0; i < model.nbodies; ++i) {
    std::string speeds;  // "i" independent (kept), "d" dependent (solved for), per speed
    for (int k = 0; k < model.nv_joint[i]; ++k) speeds += independent[model.v_index[i] + k] ? 'i' : 'd';
    std::printf("  %-16s %-11s %-4s q = %s  u = %s\n", model.joints[i].name.c_str(),
                std::string(joint_type_name(model.joints[i].joint)).c_str(), speeds.c_str(),
                bracketed(r.q.segment(model.q_index[i], model.nq_joint[i])).c_str(),
                bracketed(r.u.segment(model.v_index[i], model.nv_joint[i])).c_str());
  }
  std::printf("            (i = independent speed, kept as given; d = dependent, solved for)\n");
  for (const std::string& name : o.fix) {
    const int j = model.joint_index(name);
    for (int k = 0; k < model.nv_joint[j]; ++k)
      if (!independent[model.v_index[j] + k]) {
        std::printf("note        --fix %s: not every speed of this joint can stay independent\n", name.c_str());
        break;
      }
  }
  if (o.out.empty()) return 0;

  YAML::Node doc = YAML::LoadFile(o.model);
  for (YAML::Node joint : doc["joints"]) {
    const std::string name = joint["name"].as<std::string>();
    const auto it = std::find_if(model.joints.begin(), model.joints.end(), [&](const ModelJoint& j) { return j.name == name; });
    if (it == model.joints.end()) continue;  // loop-closing joint: its q and u are not used
    const int i = static_cast<int>(it - model.joints.begin());
    auto sequence = [](const Eigen::Ref<const VecX>& v) {
      YAML::Node seq(YAML::NodeType::Sequence);
      for (Eigen::Index k = 0; k < v.size(); ++k) seq.push_back(v(k) + 0.0);
      seq.SetStyle(YAML::EmitterStyle::Flow);
      return seq;
    };
    if (model.nq_joint[i] == 0) continue;
    joint["q"] = sequence(r.q.segment(model.q_index[i], model.nq_joint[i]));
    joint["u"] = sequence(r.u.segment(model.v_index[i], model.nv_joint[i]));
  }
  YAML::Emitter emitter;
  emitter.SetDoublePrecision(17);
  emitter << doc;
  std::ofstream file(o.out);
  file << "# " << o.model << " assembled by `loopdyn assemble` (position residual " << r.position_residual
       << ", velocity residual " << r.velocity_residual << ")\n"
       << emitter.c_str() << '\n';
  if (!file) throw std::runtime_error("cannot write '" + o.out + "'");
  std::printf("wrote       %s\n", o.out.c_str());
  return 0;
}

struct GenerateOptions {
  std::string layout = "serial", masses = "uniform", out;
  int cells = 0, bodies = 0, fourbars = 0, squares = 0, rows = 0, cols = 0;
  double tilt = 0.5;
  std::uint64_t seed = 0;
  int count = 1, first = 0;
};

// The model file of a generated mechanism, to `out` or to stdout when `out` is empty.
int write_generated(const Mechanism& m, const std::string& out) {
  if (out.empty()) {
    std::cout << write_mechanism(m);
    return 0;
  }
  save_mechanism(m, out);
  std::printf("wrote       %s (%s)\n", out.c_str(), m.name.c_str());
  return 0;
}

// `convert`: any model file the reader takes, checked, as loopdyn's YAML (io/model_file.hpp).
int convert(const std::string& path, const std::string& out) {
  std::vector<std::string> notes;
  const std::string text = convert_model_file(path, out, &notes);
  print_notes(notes);
  if (out.empty())
    std::cout << text;
  else
    std::printf("wrote       %s\n", out.c_str());
  return 0;
}

// Writes generated mechanism m starting at state(model) (anything with q and u in the coordinates
// of the model built from m): the code path of every `generate` subcommand.
template <class StateOf>
int generate_at_state(Mechanism m, const StateOf& state, const std::string& out) {
  const Model model = Model::build(m);
  const auto s = state(model);
  set_initial_state(m, model, s.q, s.u);
  return write_generated(m, out);
}

// `generate ladder`: the planar ladder of the benchmarks (docs/performance.md) at its benchmark state.
int generate_ladder(const GenerateOptions& o) {
  require_count(o.cells, "--cells");
  const std::pair<std::string_view, LadderLayout> layouts[] = {{"serial", LadderLayout::serial},
                                                               {"comb", LadderLayout::comb},
                                                               {"comb-parents-first", LadderLayout::comb_parents_first}};
  const auto* layout =
      std::find_if(std::begin(layouts), std::end(layouts), [&](const auto& l) { return l.first == o.layout; });
  if (layout == std::end(layouts))
    throw std::invalid_argument("unknown ladder layout '" + o.layout + "' (known: serial, comb, comb-parents-first)");
  return generate_at_state(ladder_mechanism(o.cells, layout->second),
                           [&](const Model& model) { return ladder_state(model, o.cells); }, o.out);
}

// `generate spatial-ladder`: the spatial ladder of paper 000 §4.3 at its benchmark state.
int generate_spatial_ladder(const GenerateOptions& o) {
  require_count(o.cells, "--cells");
  if (o.masses != "uniform" && o.masses != "equivalent")
    throw std::invalid_argument("unknown --masses '" + o.masses + "' (known: uniform, equivalent)");
  const LadderMasses masses = o.masses == "equivalent" ? LadderMasses::equivalent : LadderMasses::uniform;
  return generate_at_state(spatial_ladder_mechanism(o.cells, masses),
                           [&](const Model& model) { return spatial_ladder_state(model, o.cells); }, o.out);
}

// `generate chain`: the revolute chain of the benchmarks (docs/performance.md) at its benchmark state (q and u).
int generate_chain(const GenerateOptions& o) {
  require_count(o.bodies, "--bodies");
  return generate_at_state(chain_mechanism(o.bodies), [&](const Model&) { return chain_state(o.bodies); }, o.out);
}

// `generate nfourbar`: IFToMM benchmark A02 (iftomm.hpp), at its initial state.
int generate_nfourbar(const GenerateOptions& o) {
  require_count(o.fourbars, "--n");
  return write_generated(nfourbar_mechanism(o.fourbars), o.out);
}

// `generate square-chain`: paper 003's Ex 4.1 (square_nets.hpp), at rest.
int generate_square_chain(const GenerateOptions& o) {
  require_count(o.squares, "--squares");
  return write_generated(square_chain_mechanism(o.squares), o.out);
}

// `generate square-net`: paper 003's Ex 4.2 (square_nets.hpp), at rest, turned by --tilt.
int generate_square_net(const GenerateOptions& o) {
  require_count(o.rows, "--rows");
  require_count(o.cols, "--cols");
  require_count(static_cast<long long>(o.rows) * o.cols, "--rows x --cols");
  return write_generated(square_net_mechanism(o.rows, o.cols, o.tilt), o.out);
}

// Writes text to a file; throws naming the file when it cannot.
void write_text(const std::string& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  if (!file) throw std::runtime_error("cannot write '" + path + "'");
}

// `generate zoo`: cases first .. first + count − 1 of the randomized mechanism zoo of `seed`
// (zoo.hpp): one to stdout or to a file, several into a folder, one file each.
int generate_zoo(const GenerateOptions& o) {
  require_count(o.count, "--count");
  if (o.first < 0) throw std::invalid_argument("--first must be at least 0, got " + std::to_string(o.first));
  if (o.count == 1 && (o.out.empty() || std::filesystem::path(o.out).extension() == ".yaml")) {
    const std::string text = zoo_model_file(zoo_case(o.seed, o.first), o.seed, o.first);
    if (o.out.empty()) std::cout << text;
    else write_text(o.out, text);
    return 0;
  }
  if (o.out.empty())
    throw std::invalid_argument("generate zoo --count " + std::to_string(o.count) +
                                " writes one file per case: give --out FOLDER");
  std::filesystem::create_directories(o.out);
  for (int k = o.first; k < o.first + o.count; ++k) {
    const ZooCase c = zoo_case(o.seed, k);
    const std::string name = "zoo_" + std::to_string(o.seed) + "_" + std::to_string(k) + "_" + c.kind + ".yaml";
    const std::string file = (std::filesystem::path(o.out) / name).string();
    write_text(file, zoo_model_file(c, o.seed, k));
    std::printf("wrote       %s: %s\n", file.c_str(), c.description.c_str());
  }
  return 0;
}

// `methods`: the registry (formulations/registry.hpp) with each method's options, as text or as
// the docs' Markdown tables (methods; options).
int list_methods(bool markdown, bool options) {
  if (markdown) std::cout << methods_markdown();
  if (options) std::cout << (markdown ? "\n" : "") << options_markdown();
  if (!markdown && !options) std::cout << cli_text(methods_text());
  return 0;
}

}  // namespace

// What `model` arguments take (load_mechanism's dispatch), in every command's help alike.
constexpr const char* kModelFormats = "YAML, URDF (.urdf) or MJCF (.xml/.mjcf)";

// `loopdyn sweep ARGS`: the parameter studies run on Dask distributed, from Python (the package's
// loopdyn.sweeps, docs/sweeps.md): this process becomes Python running loopdyn.sweeps.main(ARGS), with the
// package found beside this binary (the build tree's python/, or the install's site directory)
// put first on PYTHONPATH. Returns only when that cannot be done.
int sweep(const std::vector<std::string>& args) {
#if defined(LOOPDYN_PYTHON_EXECUTABLE)
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path here = fs::read_symlink("/proc/self/exe", error).parent_path();
  for (const fs::path& dir : {here / "python", here / ".." / LOOPDYN_PYTHON_INSTALL_DIR}) {
    if (!fs::exists(dir / "loopdyn" / "sweeps.py", error)) continue;
    const char* old = std::getenv("PYTHONPATH");
    const std::string path = fs::weakly_canonical(dir, error).string() + (old && *old ? std::string(":") + old : "");
    ::setenv("PYTHONPATH", path.c_str(), 1);
    break;
  }
  // -c, not -m: the package imports loopdyn.sweeps itself, and Dask's spawned workers have no
  // main module to run again.
  std::vector<std::string> words = {LOOPDYN_PYTHON_EXECUTABLE, "-c",
                                    "import sys, loopdyn.sweeps; sys.exit(loopdyn.sweeps.main())"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execv(argv[0], argv.data());
  std::fprintf(stderr, "loopdyn: error: cannot run %s for `loopdyn sweep`: %s\n", argv[0], std::strerror(errno));
#else
  // Help is still help: it says what the command is and why this build cannot run it.
  constexpr const char* kLeftOut = "`loopdyn sweep` runs on Dask from loopdyn's Python package, which this build "
                                   "leaves out (configured with -DLOOPDYN_PYTHON=OFF)";
  if (!args.empty() && (args.front() == "--help" || args.front() == "-h")) {
    std::printf("Usage: loopdyn sweep STUDY [OPTIONS]\n\nRuns a parameter study (docs/sweeps.md) on Dask "
                "distributed.\n%s: rebuild with -DLOOPDYN_PYTHON=ON to use it.\n", kLeftOut);
    return 0;
  }
  std::fprintf(stderr, "loopdyn: error: %s\n", kLeftOut);
#endif
  return 1;
}

// After a command line CLI11 refused: the subcommand or option a misspelt one probably meant
// (`simulat` -> simulate, `--tend` -> --t-end), on stderr. Follows the words as CLI11 does: a
// subcommand's name moves into it; an option is looked up in the (sub)command reached so far.
void suggest(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  for (int k = 1; k < argc; ++k) {
    const std::string word = argv[k];
    std::vector<std::string> candidates;
    if (word.rfind("--", 0) == 0) {
      const std::string name = word.substr(0, word.find('='));
      if (at->get_option_no_throw(name) || name == "--") continue;
      for (const CLI::Option* o : at->get_options())
        for (const std::string& l : o->get_lnames()) candidates.push_back("--" + l);
      for (const std::string& near : near_names(name, candidates)) {
        std::fprintf(stderr, "loopdyn: '%s' is not an option of '%s'; did you mean '%s'?\n", name.c_str(),
                     at->get_name().empty() ? "loopdyn" : at->get_name().c_str(), near.c_str());
        return;
      }
      continue;
    }
    if (word.empty() || word[0] == '-') continue;
    const std::vector<const CLI::App*> subs = at->get_subcommands({});
    if (subs.empty()) continue;  // a positional or an option's value
    const auto named = std::find_if(subs.begin(), subs.end(), [&](const CLI::App* s) { return s->get_name() == word; });
    if (named != subs.end()) {
      at = *named;
      continue;
    }
    for (const CLI::App* sub : subs) candidates.push_back(sub->get_name());
    const std::vector<std::string> near = near_names(word, candidates);
    if (!near.empty())
      std::fprintf(stderr, "loopdyn: '%s' is not a command; did you mean '%s'?\n", word.c_str(), near.front().c_str());
    return;
  }
}

// CLI11's refusal of a command line in loopdyn's one-line form: "loopdyn: error: " and the
// problem, with a value of the wrong kind said as such (CLI11: "Could not convert: --rows = abc").
std::string parse_failure(const CLI::App*, const CLI::Error& e) {
  std::string what = e.what();
  const std::string converting = "Could not convert: ";
  if (const std::size_t eq = what.find(" = "); what.rfind(converting, 0) == 0 && eq != std::string::npos)
    what = what.substr(converting.size(), eq - converting.size()) + ": expected a number, got '" + what.substr(eq + 3) + "'";
  return "loopdyn: error: " + what + " (--help lists the options)\n";
}

int main(int argc, char** argv) {
  CLI::App app{"loopdyn: forward dynamics of multibody systems with closed kinematic loops"};
  app.set_version_flag("--version", std::string("loopdyn ") + loopdyn::version);
  app.require_subcommand(1);
  app.failure_message(parse_failure);
  const std::string model_file = std::string("model file: ") + kModelFormats;

  SimulateOptions sim;
  CLI::App* cmd_sim = app.add_subcommand("simulate", "integrate a mechanism and write its trajectory as CSV");
  cmd_sim->add_option("model", sim.model, model_file)->required();
  // Every option of a run from the library's tables (run/run_options.hpp): the flag is the name
  // with dashes, the help, default and kind are the table's; the values are set by the library
  // after the command line is read, in the order given.
  const OptionTable<RunSettings> run_table = all_run_options();
  std::string methods_list;
  for (const MethodInfo& m : loopdyn::methods())
    methods_list.append(methods_list.empty() ? "" : ", ").append(m.name).append(m.implemented() ? "" : " (planned)");
  for (const Option<RunSettings>& o : run_table) {
    std::string help = render_settings(o.help, Spelling::cli);
    if (o.name == "method") help += ": auto (" + auto_rule() + "), " + methods_list;
    if (!o.unit.empty()) help += " [" + std::string(o.unit) + "]";
    if (o.kind == OptionKind::flag) {
      const std::string spelling = cli_spelling(o);
      if (spelling != cli_flag(o.name)) help = "turns this off: " + help;  // --no-watch
      cmd_sim->add_flag_callback(spelling, [&sim, spelling] { sim.given.emplace_back(spelling, ""); }, help);
      continue;
    }
    std::string names = cli_flag(o.name);
    if (!o.alias.empty()) names += "," + cli_flag(o.alias);
    const std::string name(o.name);
    CLI::Option* opt = cmd_sim->add_option_function<std::string>(
        names, [&sim, name](const std::string& text) { sim.given.emplace_back(name, text); }, help);
    if (const std::string def = format_option_value(o.default_value()); !def.empty()) opt->default_str(def);
    std::string type = o.kind == OptionKind::real ? "REAL" : o.kind == OptionKind::integer ? "INT" : "TEXT";
    if (o.kind == OptionKind::choice) {
      type = "{";
      for (std::string_view c : o.choices) type.append(type.size() > 1 ? "," : "").append(c);
      type += "}";
    }
    opt->type_name(type);
  }
  cmd_sim->add_option("--out", sim.out, "trajectory CSV file")->capture_default_str();
  cmd_sim->add_flag("--no-assemble", sim.no_assemble,
                    "start from the model's q and u as given (an error if they violate the loop constraints by more "
                    "than 1e-8) instead of assembling them first");
  cmd_sim->add_flag("--quiet,-q", sim.quiet,
                    "print nothing on stdout and no progress line (errors and notes still go to stderr)");
  cmd_sim->add_flag("--view", sim.view,
                    "also write the viewer page (docs/viewer.md) beside the CSV: same name, .html");
  cmd_sim->add_option("--plot", sim.plots, "columns plotted in the --view page besides energy and residuals")
      ->delimiter(',');

  std::string info_model;
  bool info_json = false;
  bool methods_markdown = false, options_md = false;
  CLI::App* cmd_methods =
      app.add_subcommand("methods", "list the formulations: paper, cost, coordinates, status, options");
  cmd_methods->add_flag("--markdown", methods_markdown, "as the Markdown table of README and docs/methods.md");
  cmd_methods->add_flag("--options-markdown", options_md,
                        "the options of the run and of each method as the Markdown tables of docs/methods.md");
  CLI::App* cmd_info = app.add_subcommand("info", "describe a mechanism: bodies, joints, loops, DOF");
  cmd_info->add_option("model", info_model, model_file)->required();
  cmd_info->add_flag("--json", info_json, "print JSON");

  std::string convert_model, convert_out;
  CLI::App* cmd_convert = app.add_subcommand("convert", "write a model file as loopdyn's YAML (docs/model-format.md)");
  cmd_convert->add_option("model", convert_model, model_file)->required();
  cmd_convert->add_option("--out", convert_out, "YAML file to write (default: print it)");

  ViewOptions view_opts;
  CLI::App* cmd_view = app.add_subcommand(
      "view", "write a self-contained HTML page that animates a run in the browser (docs/viewer.md)");
  cmd_view->add_option("run", view_opts.run, "trajectory CSV written by `loopdyn simulate`")->required();
  cmd_view->add_option("--model", view_opts.model, std::string("the model file that was simulated: ") + kModelFormats)
      ->required();
  cmd_view->add_option("--out", view_opts.out, "HTML file to write (default: the CSV's name with .html)");
  cmd_view->add_option("--plot", view_opts.plots, "columns plotted besides energy and residuals, comma-separated")
      ->delimiter(',');

  AssembleOptions asm_opts;
  CLI::App* cmd_asm =
      app.add_subcommand("assemble", "close the loops of the initial state (positions and speeds) and print it");
  cmd_asm->add_option("model", asm_opts.model, model_file)->required();
  cmd_asm->add_option("--out", asm_opts.out, "write the model file with the assembled q and u");
  cmd_asm->add_option("--fix", asm_opts.fix, "tree joint whose speeds stay independent (repeatable; adds to the joints marked independent: true)")
      ->allow_extra_args(false);
  cmd_asm->add_option("--tolerance", asm_opts.tolerance, "position residual tolerance")->capture_default_str();
  cmd_asm->add_option("--max-iterations", asm_opts.max_iterations, "Newton iterations")->capture_default_str();

  GenerateOptions gen;
  CLI::App* cmd_gen = app.add_subcommand("generate", "write a benchmark mechanism or a paper's example as a model file (docs/performance.md)");
  cmd_gen->require_subcommand(1);
  CLI::App* cmd_ladder = cmd_gen->add_subcommand(
      "ladder", "planar ladder of L parallelogram cells, one loop each, at its benchmark state");
  cmd_ladder->add_option("--cells", gen.cells, "number of cells L")->required();
  cmd_ladder->add_option("--layout", gen.layout, "spanning tree: serial, comb or comb-parents-first")
      ->capture_default_str();
  cmd_ladder->add_option("--out", gen.out, "model file to write (default: print it)");
  CLI::App* cmd_spatial = cmd_gen->add_subcommand(
      "spatial-ladder", "spatial ladder of paper 000 4.3 (L cells, 2L+1 bodies on Hooke joints, 2 DOF) at its benchmark state");
  cmd_spatial->add_option("--cells", gen.cells, "number of cells L")->required();
  cmd_spatial->add_option("--masses", gen.masses,
                          "uniform (1 kg rods: the benchmark) or equivalent (scaled so that every L moves like the "
                          "L = 1 ladder, 000 Fig. 10)")
      ->capture_default_str();
  cmd_spatial->add_option("--out", gen.out, "model file to write (default: print it)");
  CLI::App* cmd_chain = cmd_gen->add_subcommand("chain", "revolute chain of N bodies at its benchmark state");
  cmd_chain->add_option("--bodies", gen.bodies, "number of bodies N")->required();
  cmd_chain->add_option("--out", gen.out, "model file to write (default: print it)");

  CLI::App* cmd_nfourbar = cmd_gen->add_subcommand(
      "nfourbar", "IFToMM benchmark A02: N four-bars side by side (2N+1 rods), cranks vertical, B0 at 1 m/s");
  cmd_nfourbar->add_option("--n", gen.fourbars, "number of four-bars N (the benchmark: 40)")->required();
  cmd_nfourbar->add_option("--out", gen.out, "model file to write (default: print it)");

  CLI::App* cmd_square_chain = cmd_gen->add_subcommand(
      "square-chain", "paper 003 Ex 4.1: K squares of unit bars side by side (3K+1 bars, K loops), joint 0 fixed, at rest");
  cmd_square_chain->add_option("--squares", gen.squares, "number of squares K")->required();
  cmd_square_chain->add_option("--out", gen.out, "model file to write (default: print it)");

  CLI::App* cmd_square_net = cmd_gen->add_subcommand(
      "square-net", "paper 003 Ex 4.2: R rows of C squares of unit bars (RC loops), hanging from joint 0, released at "
                    "an angle from the vertical");
  cmd_square_net->add_option("--rows", gen.rows, "rows of squares R")->required();
  cmd_square_net->add_option("--cols", gen.cols, "squares per row C")->required();
  cmd_square_net->add_option("--tilt", gen.tilt, "initial turn of the net about joint 0, rad (the paper's is lost)")
      ->capture_default_str();
  cmd_square_net->add_option("--out", gen.out, "model file to write (default: print it)");

  CLI::App* cmd_zoo = cmd_gen->add_subcommand(
      "zoo", "randomized mechanisms users build (four-bars of every Grashof class, five-bars, Bennett linkages, "
             "offset and isosceles slider-cranks, RSSR, RSCR, Bricard linkages, 3-RPS platforms; springs and dampers "
             "on some), seeded: the differential test's cases (docs/results.md, \"Mechanism zoo\")");
  // Checked as text: as an unsigned integer, -1 was read as 2^64 - 1.
  cmd_zoo->add_option("--seed", gen.seed, "seed of the zoo")->capture_default_str()->check([](const std::string& s) {
    return s.find('-') == std::string::npos ? std::string() : "the seed must be >= 0, got " + s;
  });
  cmd_zoo->add_option("--count", gen.count, "number of cases")->capture_default_str();
  cmd_zoo->add_option("--first", gen.first, "index of the first case")->capture_default_str();
  cmd_zoo->add_option("--out", gen.out, "model file to write (one case), or folder (several; default: print one)");

  CLI::App* cmd_sweep = app.add_subcommand(
      "sweep", "run a parameter study (a grid or random draws of model parameters and settings) on Dask "
               "distributed, one CSV row per run (docs/sweeps.md; `loopdyn sweep --help` lists its options)");
  cmd_sweep->prefix_command();       // every word after `sweep` goes to Python's argument parser,
  cmd_sweep->set_help_flag();        // --help included
  cmd_sweep->allow_extras();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    if (status != 0) suggest(app, argc, argv);
    return status;
  }
  try {
    if (cmd_sim->parsed()) return simulate(sim);
    if (cmd_sweep->parsed()) return sweep(cmd_sweep->remaining());
    if (cmd_info->parsed()) return info(info_model, info_json);
    if (cmd_methods->parsed()) return list_methods(methods_markdown, options_md);
    if (cmd_convert->parsed()) return convert(convert_model, convert_out);
    if (cmd_view->parsed()) return view(view_opts);
    if (cmd_asm->parsed()) return assemble_model(asm_opts);
    if (cmd_ladder->parsed()) return generate_ladder(gen);
    if (cmd_spatial->parsed()) return generate_spatial_ladder(gen);
    if (cmd_chain->parsed()) return generate_chain(gen);
    if (cmd_nfourbar->parsed()) return generate_nfourbar(gen);
    if (cmd_square_chain->parsed()) return generate_square_chain(gen);
    if (cmd_square_net->parsed()) return generate_square_net(gen);
    if (cmd_zoo->parsed()) return generate_zoo(gen);
  } catch (const std::exception& e) {
    std::cerr << "loopdyn: error: " << cli_text(e.what()) << '\n';
    return 1;
  }
  return 0;
}
