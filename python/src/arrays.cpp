#include "arrays.hpp"

#include <cmath>

namespace loopdyn::python {

namespace {

std::string shape_of(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t k = 0; k < a.ndim(); ++k) s += (k ? ", " : "") + std::to_string(a.shape(k));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

std::string expected(Eigen::Index size, const char* name, const char* size_name) {
  return std::string(name) + ": expected a 1-D array of " + size_name + " = " + std::to_string(size) + " numbers";
}

}  // namespace

py::array_t<double, py::array::c_style> vector_arg(const py::handle& value, Eigen::Index size, const char* name,
                                                   const char* size_name) {
  using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
  if (value.is_none()) throw py::value_error(expected(size, name, size_name) + ", got None");
  // Complex values would be cast to their real parts with only numpy's ComplexWarning: refused.
  if (const py::array raw = py::array::ensure(value); raw && raw.dtype().kind() == 'c')
    throw py::value_error(expected(size, name, size_name) + ", got complex values (dtype " +
                          std::string(py::str(raw.dtype())) + "): they must be real");
  Array a = Array::ensure(value);
  if (!a) throw py::value_error(expected(size, name, size_name) + ", got " + std::string(py::str(value.get_type().attr("__name__"))));
  if (a.ndim() != 1 || a.shape(0) != size)
    throw py::value_error(expected(size, name, size_name) + ", got shape " + shape_of(a));
  const double* x = a.data();
  for (Eigen::Index k = 0; k < size; ++k)
    if (!std::isfinite(x[k]))
      throw py::value_error(std::string(name) + "[" + std::to_string(k) + "] is " + std::to_string(x[k]) +
                            ": every value must be finite");
  return a;
}

void read_vector(const py::handle& value, const char* name, const char* size_name, VecX& out) {
  const auto a = vector_arg(value, out.size(), name, size_name);
  out = Eigen::Map<const VecX>(a.data(), out.size());
}

py::array_t<double> to_numpy(const Eigen::Ref<const VecX>& v) {
  py::array_t<double> a(v.size());
  Eigen::Map<VecX>(a.mutable_data(), v.size()) = v;
  return a;
}

void check_finite(double value, const char* name) {
  if (!std::isfinite(value)) throw py::value_error(std::string(name) + " is " + std::to_string(value) + ": it must be finite");
}

}  // namespace loopdyn::python
