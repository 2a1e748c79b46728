// loopdyn.Method (a formulation by name: accelerations, multipliers, reactions) and the run of a
// Simulator for Python. A run releases the GIL; at every output time it takes it back for a moment
// to let Python handle signals, so that Ctrl-C stops a long run with a KeyboardInterrupt.
#include <pybind11/stl.h>

#include <optional>

#include "arrays.hpp"
#include "bindings.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/run/run.hpp"
#include "loopdyn/formulations/registry.hpp"

namespace loopdyn::python {

namespace {

using FS = FormulationSettings;

// The FormulationSettings a method() or simulate() keyword sets, by the field's name.
const std::pair<const char*, double FS::*> kNumberOptions[] = {
    {"baumgarte_alpha", &FS::baumgarte_alpha},
    {"baumgarte_beta", &FS::baumgarte_beta},
    {"rank_tolerance", &FS::rank_tolerance},
    {"position_tolerance", &FS::position_tolerance},
    {"partition_condition_growth", &FS::partition_condition_growth},
    {"rcr_indicator_growth", &FS::rcr_indicator_growth},
    {"singular_condition", &FS::singular_condition},
    {"srm_alpha", &FS::srm_alpha},
    {"srm_min_stiffness", &FS::srm_min_stiffness},
    {"srm_max_work", &FS::srm_max_work},
    {"dca_alpha", &FS::dca_alpha},
    {"dca_mu", &FS::dca_mu},
    {"dca_omega", &FS::dca_omega},
    {"dca_position_tolerance", &FS::dca_position_tolerance},
    {"dca_velocity_tolerance", &FS::dca_velocity_tolerance},
    {"dca_acceleration_tolerance", &FS::dca_acceleration_tolerance},
};
const std::pair<const char*, int FS::*> kCountOptions[] = {
    {"max_position_iterations", &FS::max_position_iterations},
    {"srm_iterations", &FS::srm_iterations},
    {"dca_max_iterations", &FS::dca_max_iterations},
    {"threads", &FS::threads},
};

std::string known_options() {
  std::string s = "on_singular, srm_epsilon, dca_projections";
  for (const auto& [name, field] : kNumberOptions) s.append(", ").append(name);
  for (const auto& [name, field] : kCountOptions) s.append(", ").append(name);
  return s;
}

FS::OnSingular on_singular(const std::string& value) {
  if (value == "stop") return FS::OnSingular::stop;
  if (value == "continue") return FS::OnSingular::proceed;
  throw py::value_error("on_singular: expected 'stop' or 'continue', got '" + value + "'");
}

// The value of option `key` as a T; TypeError naming the option and the kind expected otherwise.
template <class T>
T option_value(const py::handle& value, const std::string& key, const char* kind) {
  try {
    return value.cast<T>();
  } catch (const py::cast_error&) {
    throw py::type_error("option '" + key + "' expects " + kind + ", got " +
                         std::string(py::str(value.get_type().attr("__name__"))));
  }
}

// One keyword into the settings; false when it is not a formulation option.
bool set_option(FS& s, const std::string& key, const py::handle& value) {
  for (const auto& [name, field] : kNumberOptions)
    if (key == name) {
      s.*field = option_value<double>(value, key, "a number");
      check_finite(s.*field, name);
      return true;
    }
  for (const auto& [name, field] : kCountOptions)
    if (key == name) {
      s.*field = option_value<int>(value, key, "an integer");
      return true;
    }
  if (key == "on_singular")
    s.on_singular = on_singular(option_value<std::string>(value, key, "'stop' or 'continue'"));
  else if (key == "dca_projections")
    s.dca_projections = option_value<bool>(value, key, "True or False");
  else if (key == "srm_epsilon")
    s.srm_epsilon = value.is_none() ? std::nullopt : std::optional(option_value<double>(value, key, "a number or None"));
  else
    return false;
  return true;
}

FS formulation_settings(const py::kwargs& options, const char* caller) {
  FS s;
  for (const auto& [key, value] : options) {
    const std::string name = key.cast<std::string>();
    if (!set_option(s, name, value))
      throw py::type_error(std::string(caller) + ": unknown option '" + name + "' (known: " + known_options() + ")");
  }
  return s;
}

// A formulation with the model it refers to kept alive, and the workspace of the calls from
// Python (sized once: a call copies q and u into it, and u̇ goes straight into the result array).
class Method {
 public:
  Method(std::shared_ptr<const Model> model, const std::string& name, const py::kwargs& options)
      : model_(std::move(model)),
        formulation_(make_formulation(name, *model_, formulation_settings(options, "method()"))),
        q_(model_->nq),
        u_(model_->nv),
        udot_(model_->nv) {}

  std::string name() const { return std::string(formulation_->name()); }

  // u̇ at (t, q, u) into `out` (a new array when None).
  py::array_t<double> accelerations(double t, const py::handle& q, const py::handle& u, const py::object& out) {
    read_state(t, q, u);
    py::array_t<double, py::array::c_style> result =
        out.is_none() ? py::array_t<double, py::array::c_style>(model_->nv) : writable_output(out);
    Eigen::Map<VecX> udot(result.mutable_data(), model_->nv);
    formulation_->accelerations(t, q_, u_, udot);
    return result;
  }

  py::array_t<double> multipliers() const { return to_numpy(formulation_->multipliers()); }

  // {joint: [fx, fy, fz, tx, ty, tz]} for every tree joint, then every loop joint, in its child
  // joint frame (reactions.hpp), from the accelerations and multipliers at (t, q, u).
  py::dict reactions(double t, const py::handle& q, const py::handle& u) {
    read_state(t, q, u);
    formulation_->accelerations(t, q_, u_, udot_);
    if (!reactions_) reactions_.emplace(*model_, formulation_->constraints());
    reactions_->compute(t, q_, u_, udot_, formulation_->multipliers());
    VecX columns(6 * (model_->nbodies + model_->loop_joints.size()));
    reactions_->write_columns(columns);
    py::dict d;
    for (int i = 0; i < model_->nbodies; ++i) d[py::str(model_->joints[i].name)] = to_numpy(columns.segment(6 * i, 6));
    for (std::size_t k = 0; k < model_->loop_joints.size(); ++k)
      d[py::str(model_->loop_joints[k].name)] = to_numpy(columns.segment(6 * (model_->nbodies + k), 6));
    return d;
  }

 private:
  void read_state(double t, const py::handle& q, const py::handle& u) {
    check_finite(t, "t");
    read_vector(q, "q", "nq", q_);
    read_vector(u, "u", "nv", u_);
  }

  py::array_t<double, py::array::c_style> writable_output(const py::object& out) const {
    auto a = py::array_t<double, py::array::c_style>::ensure(out);
    if (!a || !out.is(a) || a.ndim() != 1 || a.shape(0) != model_->nv || !a.writeable())
      throw py::value_error("out: expected a writable C-contiguous 1-D float64 array of nv = " +
                            std::to_string(model_->nv) + " values");
    return a;
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<Formulation> formulation_;
  VecX q_, u_, udot_;
  std::optional<Reactions> reactions_;
};

// The rows of a trajectory as one (rows x columns) array: a result's columns are views into it.
py::array_t<double> table(const Trajectory& traj) {
  const auto rows = static_cast<py::ssize_t>(traj.rows.size()), cols = static_cast<py::ssize_t>(traj.columns.size());
  py::array_t<double, py::array::c_style> data({rows, cols});
  for (py::ssize_t r = 0; r < rows; ++r)
    Eigen::Map<VecX>(data.mutable_data(r, 0), cols) = traj.rows[static_cast<std::size_t>(r)];
  return data;
}

py::dict stats(const Trajectory& traj) {
  py::dict d;
  d["rhs_evaluations"] = traj.stats.rhs_evaluations;
  d["steps_accepted"] = traj.stats.steps_accepted;
  d["steps_rejected"] = traj.stats.steps_rejected;
  d["change_points_crossed"] = traj.crossings.size();
  d["projections"] = traj.projection.position_projections;
  const WatchSummary& w = traj.watch;
  if (w.watched) {
    d["watch_accuracy"] = w.accuracy;
    d["watch_worst_balance"] = w.worst_balance;
    d["watch_balance_scale"] = w.balance_scale;
    d["watch_worst_position"] = w.worst_position;
    d["watch_worst_velocity"] = w.worst_velocity;
    d["watch_worst_completion"] = w.worst_completion;
  }
  return d;
}

const char* stop_name(RunStopKind kind) {
  switch (kind) {
    case RunStopKind::none: return "";
    case RunStopKind::singular_configuration: return "singular_configuration";
    case RunStopKind::watch: return "watch";
    case RunStopKind::integration: return "integration";
    case RunStopKind::failure: return "failure";
    case RunStopKind::cancelled: return "cancelled";
  }
  return "failure";
}

// loopdyn::run (run.hpp) of `method` from (q0, u0), the settings as `loopdyn simulate`'s options,
// without the GIL. At every output time the GIL is taken back for a moment so that Python runs its
// signal handlers: Ctrl-C cancels the run, and the KeyboardInterrupt is raised after it. Returns
// (columns, data, stats, events, method, handovers, stop kind, stop message): the Python side
// raises the stop's typed exception with the rows computed before it.
py::tuple simulate(std::shared_ptr<const Model> model, const std::string& method, const py::handle& q,
                   const py::handle& u, const std::optional<std::string>& integrator, double t_end, double dt,
                   double rtol, double atol, double output_dt, bool project, double project_tolerance, bool reactions,
                   bool diagnostics, bool watch, const py::kwargs& options) {
  RunSettings rs;
  rs.method = method;
  rs.formulation = formulation_settings(options, "simulate()");
  if (integrator) rs.integrator = integrator_kind(*integrator);
  VecX q0(model->nq), u0(model->nv);
  read_vector(q, "q0", "nq", q0);
  read_vector(u, "u0", "nv", u0);
  for (const auto& [value, arg] : {std::pair{t_end, "t_end"}, {dt, "dt"}, {rtol, "rtol"}, {atol, "atol"}, {output_dt, "output_dt"}})
    check_finite(value, arg);
  SimulationSettings& settings = rs.simulation;
  settings.integrator.dt = dt;
  settings.integrator.rtol = rtol;
  settings.integrator.atol = atol;
  settings.t_end = t_end;
  settings.output_dt = output_dt;
  settings.project = project;
  settings.projection.position_tolerance = settings.projection.velocity_tolerance = project_tolerance;
  settings.reactions = reactions;
  settings.diagnostics = diagnostics;
  settings.watch.enabled = watch;
  std::vector<std::pair<double, std::string>> events;  // collected without the GIL, handed over after
  RunCallbacks cb;
  cb.event = [&](const FormulationEvent& e) { events.emplace_back(e.t, e.message); };
  bool signalled = false;
  cb.cancelled = [&] {
    py::gil_scoped_acquire gil;
    signalled = PyErr_CheckSignals() != 0;
    return signalled;
  };
  RunResult r;
  {
    py::gil_scoped_release release;
    r = run(*model, q0, u0, rs, cb);
  }
  if (signalled) throw py::error_already_set();
  py::list handovers;
  for (const Handover& h : r.handovers) handovers.append(py::make_tuple(h.from, h.to, h.reason));
  return py::make_tuple(r.trajectory.columns, table(r.trajectory), stats(r.trajectory), events, r.method, handovers,
                        stop_name(r.stop.kind), r.stop.message);
}

}  // namespace

void bind_methods(py::module_& m) {
  py::class_<Method>(m, "Method", "A formulation of loopdyn (docs/methods.md) for one model.")
      .def(py::init<std::shared_ptr<const Model>, const std::string&, const py::kwargs&>(), py::arg("model"),
           py::arg("name"))
      .def_property_readonly("name", &Method::name)
      .def("accelerations", &Method::accelerations, py::arg("t"), py::arg("q"), py::arg("u"), py::arg("out") = py::none(),
           "u̇ (nv) at (t, q, u), into `out` when given")
      .def_property_readonly("multipliers", &Method::multipliers, "loop multipliers of the last call (a copy)")
      .def("reactions", &Method::reactions, py::arg("t"), py::arg("q"), py::arg("u"));
  m.def("_simulate", &simulate, py::arg("model"), py::arg("method"), py::arg("q0"), py::arg("u0"), py::arg("integrator"),
        py::arg("t_end"), py::arg("dt"), py::arg("rtol"), py::arg("atol"), py::arg("output_dt"), py::arg("project"),
        py::arg("project_tolerance"), py::arg("reactions"), py::arg("diagnostics"), py::arg("watch"));
  m.attr("default_project_tolerance") = ProjectionSettings{}.position_tolerance;
  m.def("method_names", [] {
    std::vector<std::string> names;
    for (const MethodInfo& mi : methods())
      if (mi.implemented()) names.emplace_back(mi.name);
    return names;
  }, "the implemented methods, in the order of docs/methods.md");
}

}  // namespace loopdyn::python
