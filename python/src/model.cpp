// loopdyn.Model from Python: built from a model file, from model-file text (the Python Mechanism
// builder writes it, so code-built mechanisms get the reader's checks and messages), or by a
// generator at its benchmark state; its description (`loopdyn info --json`'s keys) as a dict;
// assembly of the initial state.
#include <optional>
#include <string>

#include <pybind11/stl.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "loopdyn/loops/assembly.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/mechanisms/generators.hpp"
#include "loopdyn/mechanisms/iftomm.hpp"
#include "loopdyn/io/model_file.hpp"
#include "loopdyn/io/model_info.hpp"
#include "loopdyn/loops/loop_structure.hpp"
#include "loopdyn/loops/projection.hpp"
#include "loopdyn/mechanisms/square_nets.hpp"
#include "loopdyn/run/method_choice.hpp"
#include "loopdyn/run/start_state.hpp"

namespace loopdyn::python {

namespace {

std::shared_ptr<Model> build(const Mechanism& mechanism) { return std::make_shared<Model>(Model::build(mechanism)); }

// A generated mechanism's model started at its benchmark state (what `loopdyn generate` writes):
// built again from the mechanism holding the state, whose loop structure is decided there.
template <class State>
std::shared_ptr<Model> at_state(Mechanism mechanism, const State& state) {
  const Model model = Model::build(mechanism);
  const auto s = state(model);
  set_initial_state(mechanism, model, s.q, s.u);
  return build(mechanism);
}

LadderLayout ladder_layout(const std::string& name) {
  if (name == "serial") return LadderLayout::serial;
  if (name == "comb") return LadderLayout::comb;
  if (name == "comb-parents-first") return LadderLayout::comb_parents_first;
  throw py::value_error("unknown ladder layout '" + name + "' (known: serial, comb, comb-parents-first)");
}

LadderMasses ladder_masses(const std::string& name) {
  if (name == "uniform") return LadderMasses::uniform;
  if (name == "equivalent") return LadderMasses::equivalent;
  throw py::value_error("unknown masses '" + name + "' (known: uniform, equivalent)");
}

py::dict choice_entry(const MethodChoice& c) {
  py::dict d;
  d["method"] = c.method;
  d["reason"] = c.reason;
  return d;
}

// `loopdyn info --json`'s description, the same function's, as Python objects.
py::object info(const Model& model) { return py::module_::import("json").attr("loads")(describe(model).dump()); }

// independent_speeds by name, as the CLI prints them (`<joint>`, `<joint>.<i>` for a joint of
// several speeds), and by index into u.
py::dict assembly_dict(const Model& model, const AssemblyResult& r) {
  py::dict d;
  d["q"] = to_numpy(r.q);
  d["u"] = to_numpy(r.u);
  d["iterations"] = r.iterations;
  d["position_residual"] = r.position_residual;
  d["velocity_residual"] = r.velocity_residual;
  std::vector<std::string> speeds;
  for (int k : r.independent_speeds) speeds.push_back(model.speed_name(k));
  d["independent_speeds"] = speeds;
  d["independent_speed_indices"] = r.independent_speeds;
  return d;
}

// loopdyn::assemble from (q, u), the model's initial state by default.
py::dict assemble_state(const Model& model, const OptionalArrayLike& q, const OptionalArrayLike& u, double tolerance,
                        int max_iterations) {
  VecX q0 = model.q0, u0 = model.u0;
  if (!q.is_none()) read_vector(q, "q", "nq", q0);
  if (!u.is_none()) read_vector(u, "u", "nv", u0);
  AssemblySettings settings;
  settings.tolerance = tolerance;
  settings.max_iterations = max_iterations;
  return assembly_dict(model, assemble(model, model.loops().constraints, q0, u0, settings));
}

// loopdyn::start_state: (q, u, the assembly as assemble() returns it, or None).
py::tuple start(const Model& model, const OptionalArrayLike& q, const OptionalArrayLike& u, bool assemble) {
  VecX q0 = model.q0, u0 = model.u0;
  if (!q.is_none()) read_vector(q, "q0", "nq", q0);  // simulate()'s keywords
  if (!u.is_none()) read_vector(u, "u0", "nv", u0);
  const StartState s = start_state(model, q0, u0, assemble);
  return py::make_tuple(to_numpy(s.q), to_numpy(s.u), s.assembly ? assembly_dict(model, *s.assembly) : py::object(py::none()));
}

// A model file through load_mechanism; its import notes (io/mjcf.hpp) as Python warnings, the
// CLI's stderr notes.
std::shared_ptr<Model> load(const std::string& path) {
  std::vector<std::string> notes;
  const Mechanism mechanism = load_mechanism(path, &notes);
  warn(notes);
  return build(mechanism);
}

}  // namespace

void warn(const std::vector<std::string>& notes) {
  for (const std::string& n : notes)
    if (PyErr_WarnEx(PyExc_UserWarning, n.c_str(), 1) < 0) throw py::error_already_set();  // warnings as errors
}

std::shared_ptr<const Model> required(std::shared_ptr<const Model> model, const char* where) {
  if (!model)
    throw py::type_error(std::string(where) +
                         ": model must be a loopdyn.Model (loopdyn.load(path), Mechanism.build(), loopdyn.ladder(...)), "
                         "got None");
  return model;
}

IntegratorKind integrator_kind(const std::string& name) {
  const auto kind = parse_integrator(name);
  if (!kind) throw py::value_error("unknown integrator '" + name + "' (known: rk2, rk4, dopri5, bdf)");
  return *kind;
}

void bind_model(py::module_& m) {
  py::class_<Model, std::shared_ptr<Model>>(m, "Model", "A mechanism built and checked once (loopdyn::Model).")
      .def_static("load", load, py::arg("path"),
                  "Reads a model file: YAML, URDF (.urdf) or MJCF (.xml/.mjcf) (docs/model-format.md); what an "
                  "importer left out without changing the dynamics (MJCF contacts, URDF elements not read, ...) "
                  "is a UserWarning per note.")
      .def_static("parse", [](const std::string& text, const std::string& source) { return build(parse_mechanism(text, source)); },
                  py::arg("text"), py::arg("source") = "<text>", "Parses model-file text; `source` names it in messages.")
      .def_readonly("name", &Model::name, "the mechanism's name")
      .def_readonly("nq", &Model::nq, "number of joint coordinates (q)")
      .def_readonly("nv", &Model::nv, "number of joint speeds (u)")
      .def_readonly("nbodies", &Model::nbodies, "number of bodies, ground not counted")
      .def_property_readonly("q0", [](const Model& mo) { return to_numpy(mo.q0); }, "the initial q of the model file (a copy)")
      .def_property_readonly("u0", [](const Model& mo) { return to_numpy(mo.u0); }, "the initial u of the model file (a copy)")
      .def_property_readonly("has_loops", &Model::has_loops, "whether loop-closing joints or couplings close loops")
      .def_readonly("body_names", &Model::body_name, "the bodies' names, in the order of their joints")
      .def_property_readonly("coordinate_names", &Model::coordinate_names,
                             "q.<joint>[.i] then u.<joint>[.i]: the CSV's column names of q and u")
      .def("info", &info, "bodies, joints, loops, nq, nv, DOF, aggregated bodies, default method and why (a dict)")
      .def("assemble", &assemble_state, py::arg("q") = py::none(), py::arg("u") = py::none(),
           py::arg("tolerance") = AssemblySettings{}.tolerance, py::arg("max_iterations") = AssemblySettings{}.max_iterations,
           "Closes the loops from (q, u) (default: the model's q0, u0).")
      .def("_start_state", &start, py::arg("q"), py::arg("u"), py::arg("assemble"),
           "(q, u, assembly or None) a run starts from, as `loopdyn simulate` makes it (run/start_state.hpp).")
      .def(
          "check_consistent",
          [](const Model& mo, const ArrayLike& q, const ArrayLike& u, double tolerance) {
            VecX q0 = mo.q0, u0 = mo.u0;
            read_vector(q, "q", "nq", q0);
            read_vector(u, "u", "nv", u0);
            check_consistent(mo, mo.loops().constraints, q0, u0, tolerance);
          },
          py::arg("q"), py::arg("u"), py::arg("tolerance") = consistency_tolerance,
          "Raises when (q, u) does not satisfy the loops within `tolerance` (a start as given).")
      .def(
          "default_method",
          [](const Model& mo, const OptionalArrayLike& q, const std::string& integrator) {
            VecX q0 = mo.q0;
            if (!q.is_none()) read_vector(q, "q", "nq", q0);
            return choice_entry(default_method(mo, q0, integrator_kind(integrator)));
          },
          py::arg("q") = py::none(), py::arg("integrator") = "dopri5", "The method `auto` picks at q, and why.")
      .def("__repr__", [](const Model& mo) {
        return "<loopdyn.Model " + model_headline(mo) + ">";
      });

  m.def("_convert", [](const std::string& path, const std::optional<std::string>& out) {
    std::vector<std::string> notes;
    std::string text = convert_model_file(path, out.value_or(""), &notes);
    warn(notes);
    return text;
  }, py::arg("path"), py::arg("out") = py::none(),
     "loopdyn.convert's C++ side.");
  m.def("normalized_yaml", [](const std::string& text, const std::string& source) {
    return write_mechanism(parse_mechanism(text, source));
  }, py::arg("text"), py::arg("source") = "<text>", "Model-file text as loopdyn writes it (loopdyn generate).");

  // Generators, at their benchmark state (as `loopdyn generate`).
  m.def("ladder", [](int cells, const std::string& layout) {
    require_count(cells, "cells");
    return at_state(ladder_mechanism(cells, ladder_layout(layout)), [&](const Model& mo) { return ladder_state(mo, cells); });
  }, py::arg("cells"), py::arg("layout") = "serial",
     "The planar ladder of `cells` cells at its benchmark state (`loopdyn generate ladder`); layout: serial, comb.");
  m.def("spatial_ladder", [](int cells, const std::string& masses) {
    require_count(cells, "cells");
    return at_state(spatial_ladder_mechanism(cells, ladder_masses(masses)),
                    [&](const Model& mo) { return spatial_ladder_state(mo, cells); });
  }, py::arg("cells"), py::arg("masses") = "uniform",
     "The spatial ladder of paper 000 §4.3 (2 x cells + 1 bodies on Hooke joints, 2 DOF) at its benchmark state "
     "(`loopdyn generate spatial-ladder`).");
  m.def("chain", [](int bodies) {
    require_count(bodies, "bodies");
    return at_state(chain_mechanism(bodies), [&](const Model&) { return chain_state(bodies); });
  }, py::arg("bodies"), "The revolute chain of `bodies` bodies at its benchmark state (`loopdyn generate chain`).");
  m.def("nfourbar", [](int n) { require_count(n, "n"); return build(nfourbar_mechanism(n)); }, py::arg("n"),
        "IFToMM A02: n four-bars in a row, one loop each (`loopdyn generate nfourbar`).");
  m.def("square_chain", [](int squares) { require_count(squares, "squares"); return build(square_chain_mechanism(squares)); },
        py::arg("squares"), "Paper 003's chain of `squares` squares of unit bars (`loopdyn generate square-chain`).");
  m.def("square_net", [](int rows, int cols, double tilt) {
    require_count(rows, "rows");
    require_count(cols, "cols");
    require_count(static_cast<long long>(rows) * cols, "rows x cols");
    return build(square_net_mechanism(rows, cols, tilt));
  }, py::arg("rows"), py::arg("cols"), py::arg("tilt") = 0.5,
     "Paper 003's net of rows x cols squares of unit bars, tilted by `tilt` rad (`loopdyn generate square-net`).");
}

}  // namespace loopdyn::python
