// loopdyn.Analysis: the C++ Analysis (loops/analysis.hpp) with numpy arrays, the same names.
// Poses are 4x4 homogeneous matrices (rotation, origin), the usual form in Python robotics code.
#include <pybind11/stl.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "loopdyn/loops/analysis.hpp"

namespace loopdyn::python {

namespace {

// An Analysis with the model it refers to kept alive.
class PyAnalysis {
 public:
  explicit PyAnalysis(std::shared_ptr<const Model> model)
      : model_(required(std::move(model), "Analysis()")), analysis_(*model_) {}

  const Model& model() const { return *model_; }
  Analysis& get() { return analysis_; }

  VecX q(const py::handle& value, const char* name = "q") const {
    VecX out(model_->nq);
    read_vector(value, name, "nq", out);
    return out;
  }
  VecX v(const py::handle& value, const char* name) const {
    VecX out(model_->nv);
    read_vector(value, name, "nv", out);
    return out;
  }

 private:
  std::shared_ptr<const Model> model_;
  Analysis analysis_;
};

py::array_t<double> matrix(const MatX& m) {
  py::array_t<double> a({m.rows(), m.cols()});
  Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(a.mutable_data(), m.rows(), m.cols()) = m;
  return a;
}

py::array_t<double> homogeneous(const Transform& X) {
  Eigen::Matrix4d h = Eigen::Matrix4d::Identity();
  h.topLeftCorner<3, 3>() = X.R;
  h.topRightCorner<3, 1>() = X.p;
  return matrix(h);
}

// A 4x4 homogeneous matrix (None: identity) as a Transform; ValueError otherwise.
Transform transform_arg(const py::object& value) {
  if (value.is_none()) return Transform();
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(value);
  if (!a || a.ndim() != 2 || a.shape(0) != 4 || a.shape(1) != 4)
    throw py::value_error("frame: expected a 4x4 homogeneous matrix (rotation, origin) or None");
  const Eigen::Map<const Eigen::Matrix<double, 4, 4, Eigen::RowMajor>> h(a.data());
  if (!h.allFinite()) throw py::value_error("frame: not finite");
  const Mat3 R = h.topLeftCorner<3, 3>();
  if (!(R.transpose() * R - Mat3::Identity()).isZero(1e-9) || R.determinant() < 0.0)
    throw py::value_error("frame: its top-left 3x3 block is not a rotation matrix");
  return Transform{R, h.topRightCorner<3, 1>()};
}

Axes axes_arg(const std::string& name) {
  if (name == "local") return Axes::local;
  if (name == "world") return Axes::world;
  throw py::value_error("axes: 'local' or 'world', got '" + name + "'");
}

VecX given(const py::handle& value, Eigen::Index size, const char* name, const char* size_name) {
  VecX out(size);
  read_vector(value, name, size_name, out);
  return out;
}

}  // namespace

void bind_analysis(py::module_& m) {
  py::class_<InverseDynamicsResult>(m, "InverseDynamics", "Analysis.inverse_dynamics's result (docs/python.md).")
      .def_readonly("names", &InverseDynamicsResult::names, "the actuated speeds, u.<joint>[.<i>]")
      .def_property_readonly("tau", [](const InverseDynamicsResult& r) { return to_numpy(r.tau); },
                             "their forces or torques")
      .def_property_readonly("multipliers", [](const InverseDynamicsResult& r) { return to_numpy(r.multipliers); },
                             "the kept loop rows' multipliers (-G^T lambda the loops' generalized force)")
      .def_readonly("dof", &InverseDynamicsResult::dof, "degrees of freedom of the mechanism at q")
      .def_readonly("rank", &InverseDynamicsResult::rank, "degrees of freedom the actuators drive")
      .def_readonly("least_norm", &InverseDynamicsResult::least_norm,
                    "over-actuated: tau is the least-norm of the forces that produce the motion")
      .def("__getitem__",
           [](const InverseDynamicsResult& r, const std::string& name) {
             for (std::size_t k = 0; k < r.names.size(); ++k)
               if (r.names[k] == name || r.names[k] == "u." + name) return r.tau(static_cast<Eigen::Index>(k));
             throw py::key_error("no actuated speed '" + name + "'");
           })
      .def("__repr__", [](const InverseDynamicsResult& r) {
        std::string s = "<loopdyn.InverseDynamics:";
        for (std::size_t k = 0; k < r.names.size(); ++k)
          s += " " + r.names[k] + " = " + std::to_string(r.tau(static_cast<Eigen::Index>(k)));
        return s + (r.least_norm ? " (least norm)>" : ">");
      });

  py::class_<PyAnalysis>(m, "Analysis",
                         "Kinematics, mass matrix, loop Jacobian and inverse dynamics of a model at a state "
                         "(loopdyn::Analysis, docs/python.md).")
      .def(py::init<std::shared_ptr<const Model>>(), py::arg("model"))
      .def("__repr__", [](const PyAnalysis& a) { return "<loopdyn.Analysis of '" + a.model().name + "'>"; })
      .def("body_pose", [](PyAnalysis& a, const ArrayLike& q, const std::string& body) {
        return homogeneous(a.get().body_pose(a.q(q), body));
      }, py::arg("q"), py::arg("body"), "the body frame's pose in the world, a 4x4 homogeneous matrix")
      .def("marker_position", [](PyAnalysis& a, const ArrayLike& q, const std::string& marker) {
        return to_numpy(a.get().marker_position(a.q(q), marker));
      }, py::arg("q"), py::arg("marker"), "the marker's world position (3,)")
      .def("marker_velocity", [](PyAnalysis& a, const ArrayLike& q, const ArrayLike& u, const std::string& marker) {
        return to_numpy(a.get().marker_velocity(a.q(q), a.v(u, "u"), marker));
      }, py::arg("q"), py::arg("u"), py::arg("marker"), "the marker's world velocity (3,)")
      .def("frame_jacobian", [](PyAnalysis& a, const ArrayLike& q, const std::string& body, const py::object& frame,
                                const std::string& axes) {
        return matrix(a.get().frame_jacobian(a.q(q), body, transform_arg(frame), axes_arg(axes)));
      }, py::arg("q"), py::arg("body"), py::arg("frame") = py::none(), py::arg("axes") = "local",
         "(6, nv): [omega; v of the frame's origin] = J u, in the frame's axes ('local') or the world's ('world'); "
         "frame: a 4x4 pose in the body frame, None for the body frame")
      .def("marker_jacobian", [](PyAnalysis& a, const ArrayLike& q, const std::string& marker) {
        return matrix(a.get().marker_jacobian(a.q(q), marker));
      }, py::arg("q"), py::arg("marker"), "(3, nv): the marker's world velocity = J u")
      .def("mass_matrix", [](PyAnalysis& a, const ArrayLike& q) { return matrix(a.get().mass_matrix(a.q(q))); },
           py::arg("q"), "M(q) (nv, nv), the joint-space inertia matrix (CRBA)")
      .def("loop_jacobian", [](PyAnalysis& a, const ArrayLike& q) { return matrix(a.get().loop_jacobian(a.q(q))); },
           py::arg("q"), "G (m, nv) of the kept loop rows")
      .def("loop_null_space", [](PyAnalysis& a, const ArrayLike& q) { return matrix(a.get().loop_null_space(a.q(q))); },
           py::arg("q"), "an orthonormal basis (nv, dof) of the speeds the loops allow")
      .def("complete_motion", [](PyAnalysis& a, double t, const std::vector<std::string>& joints, const ArrayLike& q,
                                 const ArrayLike& u, const ArrayLike& udot, const OptionalArrayLike& q_guess) {
        check_finite(t, "t");
        const Model& mo = a.model();
        Eigen::Index nq = 0, nv = 0;
        for (const std::string& j : joints) {
          const int i = mo.joint_index(j);
          nq += mo.nq_joint[i];
          nv += mo.nv_joint[i];
        }
        const VecX guess = q_guess.is_none() ? mo.q0 : a.q(q_guess, "q_guess");
        const ClosedMotion c = a.get().complete_motion(t, guess, joints, given(q, nq, "q", "the joints' coordinates"),
                                                       given(u, nv, "u", "the joints' speeds"),
                                                       given(udot, nv, "udot", "the joints' speeds"));
        return py::make_tuple(to_numpy(c.q), to_numpy(c.u), to_numpy(c.udot));
      }, py::arg("t"), py::arg("joints"), py::arg("q"), py::arg("u"), py::arg("udot"), py::arg("q_guess") = py::none(),
         "(q, u, udot) of the whole mechanism from those of `joints` (independent, fixing every degree of freedom); "
         "the others from q_guess (default: the model's q0) by assembly")
      .def("inverse_dynamics", [](PyAnalysis& a, double t, const ArrayLike& q, const ArrayLike& u,
                                  const ArrayLike& udot, const std::vector<std::string>& actuated) {
        check_finite(t, "t");
        return a.get().inverse_dynamics(t, a.q(q), a.v(u, "u"), a.v(udot, "udot"), actuated);
      }, py::arg("t"), py::arg("q"), py::arg("u"), py::arg("udot"), py::arg("actuated"),
         "the forces of the actuated joints that make the closed mechanism move with (q, u, udot); least-norm "
         "when over-actuated (result.least_norm)");
}

}  // namespace loopdyn::python
