// loopdyn.Method (a formulation by name: accelerations, multipliers, reactions) and the run of a
// Simulator for Python. A run releases the GIL; at every output time it takes it back for a moment
// to let Python handle signals, so that Ctrl-C stops a long run with a KeyboardInterrupt.
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "arrays.hpp"
#include "loopdyn/core/errors.hpp"
#include "bindings.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/run/run.hpp"
#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/run_options.hpp"
#include "loopdyn/run/simulation.hpp"

namespace loopdyn::python {

namespace {

// The keyword `key` of a Python call as the value of option o: None (unset), a number, an
// integer, True/False, a word; TypeError naming the option and what it expects otherwise, and
// ValueError for a number that is not finite. The option's rules (choices, unset) are the
// library's (set_option).
template <class S>
OptionValue option_value(const Option<S>& o, const std::string& key, const py::handle& value) {
  if (value.is_none()) return std::monostate{};
  const char* expects = "a name";
  try {
    switch (o.kind) {
      case OptionKind::real: {
        expects = o.optional ? "a number or None" : "a number";
        const double d = value.cast<double>();
        check_finite(d, key.c_str());
        return d;
      }
      case OptionKind::integer: expects = "an integer"; return value.cast<int>();
      case OptionKind::flag: expects = "True or False"; return value.cast<bool>();
      case OptionKind::choice: expects = "a word"; return value.cast<std::string>();
      case OptionKind::text: return value.cast<std::string>();
    }
  } catch (const py::cast_error&) {
    throw py::type_error("option '" + key + "' expects " + expects + ", got " +
                         std::string(py::str(value.get_type().attr("__name__"))));
  }
  return std::monostate{};
}

// Settings S from the keywords of a call to `caller`, through the option table; TypeError for a
// keyword the table does not have, listing those it has.
template <class S>
S settings_from(const OptionTable<S>& table, const py::kwargs& options, const char* caller) {
  S s;
  for (const auto& [key, value] : options) {
    const std::string name = key.template cast<std::string>();
    const Option<S>* o = find_option(table, name);
    if (!o || name.find('-') != std::string::npos)
      throw py::type_error(std::string(caller) + ": unknown option '" + name + "' (known: " + option_names(table) + ")");
    set_option(table, s, name, option_value(*o, name, value));
  }
  return s;
}

FormulationSettings formulation_settings(const py::kwargs& options, const char* caller) {
  return settings_from(formulation_options(), options, caller);
}

// An option's value as Python's: None, a float, an int, a bool, a str.
py::object python_value(const OptionValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return py::float_(*d);
  if (const auto* i = std::get_if<int>(&v)) return py::int_(*i);
  if (const auto* b = std::get_if<bool>(&v)) return py::bool_(*b);
  if (const auto* w = std::get_if<std::string>(&v)) return py::str(*w);
  return py::none();
}

// The options of a table as dicts (name, kind, default, unit, help, choices): loopdyn.options().
template <class S>
py::list option_list(const OptionTable<S>& table) {
  py::list out;
  const char* kinds[] = {"real", "integer", "flag", "choice", "text"};
  for (const Option<S>& o : table) {
    py::dict d;
    d["name"] = std::string(o.name);
    d["kind"] = kinds[static_cast<int>(o.kind)];
    d["default"] = python_value(o.default_value());
    d["unit"] = std::string(o.unit);
    d["help"] = render_settings(o.help, Spelling::python);
    py::list choices;
    for (std::string_view c : o.choices) choices.append(std::string(c));
    d["choices"] = choices;
    out.append(d);
  }
  return out;
}

// A formulation with the model it refers to kept alive, and the workspace of the calls from
// Python (sized once: a call copies q and u into it, and u̇ goes straight into the result array).
class Method {
 public:
  Method(std::shared_ptr<const Model> model, const std::string& name, const py::kwargs& options)
      : model_(required(std::move(model), "Method()")),
        formulation_(make_formulation(name, *model_, formulation_settings(options, "method()"))),
        q_(model_->nq),
        u_(model_->nv),
        udot_(model_->nv) {}

  std::string name() const { return std::string(formulation_->name()); }
  std::string repr() const { return "<loopdyn.Method " + name() + " of '" + model_->name + "'>"; }

  // u̇ at (t, q, u) into `out` (a new array when None).
  py::array_t<double> accelerations(double t, const ArrayLike& q, const ArrayLike& u, const py::object& out) {
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
  py::dict reactions(double t, const ArrayLike& q, const ArrayLike& u) {
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
    case RunStopKind::input: return "input";
    case RunStopKind::failure: return "failure";
    case RunStopKind::cancelled: return "cancelled";
  }
  return "failure";
}

std::string type_of(const py::handle& value) { return "a " + std::string(py::str(value.get_type().attr("__name__"))); }

// A Python function f(t, q, u) -> generalized forces (nv numbers) as a force callback of the
// model: called at every evaluation of the run with the GIL taken for the call. q and u are
// read-only numpy arrays over buffers of its own, refreshed at each call (no allocation): valid
// during the call, to be copied to be kept. A result of another shape, a value that is not finite
// or an exception raised by f stops the run with an InputError naming the time and the value (the
// rows before it are kept); the exception itself is kept for the Python side to chain.
class PythonForces {
 public:
  PythonForces(py::function f, const Model& model) : s_(std::make_shared<State>()) {
    s_->f = std::move(f);
    s_->q = read_only(model.nq);
    s_->u = read_only(model.nv);
    s_->names = model.coordinate_names();
    s_->nq = model.nq;
  }

  void operator()(double t, const Model&, const KinematicsData&, const VecX& q, const VecX& u, AppliedForces& out) const {
    py::gil_scoped_acquire gil;
    State& s = *s_;
    std::copy(q.data(), q.data() + q.size(), const_cast<double*>(s.q.data()));
    std::copy(u.data(), u.data() + u.size(), const_cast<double*>(s.u.data()));
    py::object result;
    try {
      result = s.f(t, s.q, s.u);
    } catch (py::error_already_set& e) {
      s.raised = e.value();
      fail(t, "raised " + std::string(py::str(e.type().attr("__name__"))) + ": " + py::str(e.value()).cast<std::string>());
    }
    const std::string expected = ", expected an array of nv = " + std::to_string(u.size()) + " generalized forces";
    if (result.is_none()) fail(t, "returned None" + expected);  // numpy would make it a 0-d nan
    // Complex values would be cast to their real parts with only numpy's ComplexWarning.
    if (const py::array raw = py::array::ensure(result); raw && raw.dtype().kind() == 'c')
      fail(t, "returned complex values (dtype " + std::string(py::str(raw.dtype())) + ")" + expected + ", real");
    const auto tau = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(result);
    if (!tau || tau.ndim() != 1 || tau.shape(0) != u.size())
      fail(t, "returned " + (tau ? "shape " + std::string(py::str(tau.attr("shape"))) : type_of(result)) + expected);
    for (Eigen::Index k = 0; k < u.size(); ++k) {
      const double x = tau.at(k);
      if (!std::isfinite(x))
        fail(t, "returned " + std::to_string(x) + " for " + s.names[static_cast<std::size_t>(s.nq + k)] + " (entry " +
                    std::to_string(k) + ")");
      out.tau(k) += x;
    }
  }

  /// The exception f raised, or None.
  py::object raised() const { return s_->raised; }

 private:
  struct State {
    py::function f;
    py::array_t<double> q, u;
    std::vector<std::string> names;
    Eigen::Index nq = 0;
    py::object raised = py::none();
  };

  static py::array_t<double> read_only(Eigen::Index n) {
    py::array_t<double> a(n);
    std::fill(a.mutable_data(), a.mutable_data() + n, 0.0);
    a.attr("flags").attr("writeable") = false;
    return a;
  }

  [[noreturn]] static void fail(double t, const std::string& what) {
    char at[48];
    std::snprintf(at, sizeof at, "forces callback at t = %.9g: ", t);
    throw InputError(at + what);
  }

  std::shared_ptr<State> s_;  // shared by the copies std::function makes, which touch no reference count
};

// loopdyn::run (run.hpp) of `method` from (q0, u0), the settings as `loopdyn simulate`'s options,
// without the GIL. At every output time the GIL is taken back for a moment so that Python runs its
// signal handlers: Ctrl-C cancels the run, and the KeyboardInterrupt is raised after it. Returns
// (columns, data, stats, events, method, handovers, stop kind, stop message, the exception `forces`
// raised or None): the Python side raises the stop's typed exception with the rows computed before
// it. `forces`: a function f(t, q, u) -> generalized forces added to the model's (PythonForces).
py::tuple simulate(std::shared_ptr<const Model> model, const ArrayLike& q, const ArrayLike& u, const py::object& forces,
                   const py::kwargs& options) {
  model = required(std::move(model), "simulate()");
  RunSettings rs = settings_from(all_run_options(), options, "simulate()");
  // forces: the model with one more force callback (a copy: the Model is immutable and shared).
  std::optional<PythonForces> python_forces;
  if (!forces.is_none()) {
    if (!PyCallable_Check(forces.ptr()))
      throw py::type_error("forces: expected a function f(t, q, u) -> generalized forces, got " + type_of(forces));
    auto with = std::make_shared<Model>(*model);
    python_forces.emplace(forces.cast<py::function>(), *with);
    with->callbacks.push_back(*python_forces);
    model = std::move(with);
  }
  VecX q0(model->nq), u0(model->nv);
  read_vector(q, "q0", "nq", q0);
  read_vector(u, "u0", "nv", u0);
  std::vector<std::pair<double, std::string>> events;  // collected without the GIL, handed over after
  RunCallbacks cb;
  cb.event = [&](const FormulationEvent& e) { events.emplace_back(e.t, render_settings(e.message, Spelling::python)); };
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
  for (const Handover& h : r.handovers)
    handovers.append(py::make_tuple(h.from, h.to, render_settings(h.reason, Spelling::python), h.t));
  return py::make_tuple(r.trajectory.columns, table(r.trajectory), stats(r.trajectory), events, r.method, handovers,
                        stop_name(r.stop.kind), render_settings(r.stop.message, Spelling::python),
                        python_forces ? python_forces->raised() : py::object(py::none()));
}

// loopdyn.Simulation's C++ side: a Simulation (simulation.hpp) with its model kept alive, the
// settings as simulate()'s keywords. The Python class adds the start state and the Result.
class PySimulation {
 public:
  PySimulation(std::shared_ptr<const Model> model, const ArrayLike& q, const ArrayLike& u, const py::kwargs& options)
      : model_(required(std::move(model), "Simulation()")), tau_(VecX::Zero(model_->nv)) {
    const RunSettings rs = settings_from(all_run_options(), options, "Simulation()");
    VecX q0(model_->nq), u0(model_->nv);
    read_vector(q, "q0", "nq", q0);
    read_vector(u, "u0", "nv", u0);
    simulation_ = std::make_unique<Simulation>(*model_, rs, q0, u0);
  }

  void step(double dt, const OptionalArrayLike& tau) {
    if (tau.is_none()) tau_.setZero();
    else read_vector(tau, "tau", "nv", tau_);
    simulation_->step(dt, tau_);
  }

  double time() const { return simulation_->time(); }
  py::array_t<double> q() const { return to_numpy(simulation_->q()); }
  py::array_t<double> u() const { return to_numpy(simulation_->u()); }
  std::string method() const { return simulation_->method(); }
  /// (columns, data, stats) of the rows so far.
  py::tuple rows() const {
    const Trajectory& t = simulation_->trajectory();
    return py::make_tuple(t.columns, table(t), stats(t));
  }

 private:
  std::shared_ptr<const Model> model_;
  VecX tau_;
  std::unique_ptr<Simulation> simulation_;
};

}  // namespace

void bind_methods(py::module_& m) {
  py::class_<PySimulation>(m, "_Simulation", "loopdyn.Simulation's C++ side.")
      .def(py::init<std::shared_ptr<const Model>, const ArrayLike&, const ArrayLike&, const py::kwargs&>(),
           py::arg("model"), py::arg("q0"), py::arg("u0"))
      .def("step", &PySimulation::step, py::arg("dt"), py::arg("tau") = py::none())
      .def_property_readonly("t", &PySimulation::time)
      .def_property_readonly("q", &PySimulation::q)
      .def_property_readonly("u", &PySimulation::u)
      .def_property_readonly("method", &PySimulation::method)
      .def("rows", &PySimulation::rows);
  py::class_<Method>(m, "Method", "A formulation of loopdyn (docs/methods.md) for one model.")
      .def(py::init<std::shared_ptr<const Model>, const std::string&, const py::kwargs&>(), py::arg("model"),
           py::arg("name"))
      .def_property_readonly("name", &Method::name, "the method's name, as in loopdyn.method_names()")
      .def("accelerations", &Method::accelerations, py::arg("t"), py::arg("q"), py::arg("u"), py::arg("out") = py::none(),
           "u̇ (nv) at (t, q, u), into `out` when given")
      .def_property_readonly("multipliers", &Method::multipliers, "loop multipliers of the last call (a copy)")
      .def("reactions", &Method::reactions, py::arg("t"), py::arg("q"), py::arg("u"),
           "Every joint's reaction at (t, q, u): a dict from joint name (tree and loop-closing joints) to the 6 numbers "
           "fx, fy, fz, tx, ty, tz of the CSV's reaction.<joint> columns: force and moment of the parent side on the "
           "child, in the child joint frame (N, N m; docs/methods.md, \"Reaction forces\"). Needs a method with "
           "multipliers.")
      .def("__repr__", &Method::repr);
  m.def("_simulate", &simulate, py::arg("model"), py::arg("q0"), py::arg("u0"), py::arg("forces"));
  m.def(
      "options",
      [](const std::string& kind) {
        if (kind == "run") return option_list(all_run_options());
        if (kind == "method") return option_list(formulation_options());
        throw py::value_error("options: kind is 'run' (simulate()) or 'method' (method()), got '" + kind + "'");
      },
      py::arg("kind") = "run",
      "The settings simulate() (kind 'run') or method() (kind 'method') take as keywords: name, kind, default, "
      "unit, help, choices (docs/methods.md, \"Options\")");
  m.def(
      "_check_options",
      [](const py::kwargs& options) { check_run_settings(settings_from(all_run_options(), options, "settings")); },
      "Checks run settings as simulate() takes them, without a run (check_run_settings): a study's, when it is loaded");
  m.def("method_names", [] {
    std::vector<std::string> names;
    for (const MethodInfo& mi : methods())
      if (mi.implemented()) names.emplace_back(mi.name);
    return names;
  }, "the implemented methods, in the order of docs/methods.md");
}

}  // namespace loopdyn::python
