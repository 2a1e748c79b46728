// The _loopdyn extension: loopdyn's C++ library for Python (python/loopdyn/__init__.py wraps it).
// loopdyn's error kinds become one Python exception class each, with the library's message, the
// settings it names in Python's spelling (dca_alpha=1e5, method="dca": render_settings).
#include "bindings.hpp"
#include "loopdyn/formulations/formulation.hpp"
#include "loopdyn/core/mechanism.hpp"
#include "loopdyn/core/version.hpp"
#include "loopdyn/run/run_options.hpp"
#include "loopdyn/run/run_watch.hpp"

namespace {

namespace py = pybind11;

// The Python classes of loopdyn's errors (registered once, by the module).
py::exception<loopdyn::ModelError>* model_error = nullptr;
py::exception<loopdyn::SingularConfigurationError>* singular_error = nullptr;
py::exception<loopdyn::IntegrationError>* integration_error = nullptr;
py::exception<loopdyn::RunWatchError>* watch_error = nullptr;

std::string python_text(const std::exception& e) {
  return loopdyn::render_settings(e.what(), loopdyn::Spelling::python);
}

// Every library error as its Python class (std::invalid_argument: ValueError, std::runtime_error:
// RuntimeError), its message in Python's spelling; pybind11's own and Python's errors pass.
void translate(std::exception_ptr p) {
  using namespace loopdyn;
  try {
    if (p) std::rethrow_exception(p);
  } catch (const py::builtin_exception&) {
    throw;
  } catch (const py::error_already_set&) {
    throw;
  } catch (const ModelError& e) {
    (*model_error)(python_text(e).c_str());
  } catch (const SingularConfigurationError& e) {
    (*singular_error)(python_text(e).c_str());
  } catch (const IntegrationError& e) {
    (*integration_error)(python_text(e).c_str());
  } catch (const RunWatchError& e) {
    (*watch_error)(python_text(e).c_str());
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, python_text(e).c_str());
  } catch (const std::range_error&) {
    throw;
  } catch (const std::overflow_error&) {
    throw;
  } catch (const std::runtime_error& e) {
    PyErr_SetString(PyExc_RuntimeError, python_text(e).c_str());
  }
}

}  // namespace

PYBIND11_MODULE(_loopdyn, m) {
  namespace py = pybind11;
  using namespace loopdyn;
  m.doc() = "loopdyn: forward dynamics of multibody systems with closed kinematic loops";
  m.attr("__version__") = loopdyn::version;
  // ModelError is a std::invalid_argument in C++: a ValueError in Python too, so that code
  // catching bad input generically still catches it.
  model_error = &py::register_exception<ModelError>(m, "ModelError", PyExc_ValueError);
  singular_error =
      &py::register_exception<SingularConfigurationError>(m, "SingularConfigurationError", PyExc_RuntimeError);
  integration_error = &py::register_exception<IntegrationError>(m, "IntegrationError", PyExc_RuntimeError);
  watch_error = &py::register_exception<RunWatchError>(m, "RunWatchError", PyExc_RuntimeError);
  model_error->attr("__doc__") = "A model that cannot be built or read (a ValueError): the message names the file and "
                                 "line, or the script's line, and the problem.";
  singular_error->attr("__doc__") = "A run stopped at or near a singular configuration of the loops (a change point); "
                                    "`result` holds the rows before it. method='dca' crosses them.";
  integration_error->attr("__doc__") = "A run whose integrator failed (a step size collapsed, a value not finite); "
                                       "`result` holds the rows before it.";
  watch_error->attr("__doc__") = "A run the run watch stopped (a loop's closure or the energy balance left its "
                                 "bounds: the motion was lost); `result` holds the rows before it.";
  py::register_exception_translator(&translate);
  python::bind_model(m);
  python::bind_methods(m);
  python::bind_viewer(m);
  python::bind_analysis(m);
}
