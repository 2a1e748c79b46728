// The description of a model that `loopdyn info` prints and Python's Model.info() returns:
// bodies, tree and loop-closing joints (with their redundant rows), nq, nv, the loop Jacobian's
// rank and the DOF, the aggregated bodies of 002 §4.2, the default method and why, and which
// methods cover the model. summarize() gathers it; describe() gives it as JSON (`info --json`'s
// keys); the CLI's text prints the summary itself, so that a 60,000-body model's `info` builds no
// JSON document.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "loopdyn/core/model.hpp"
#include "loopdyn/run/method_choice.hpp"

namespace loopdyn {

/// What `info` says about a model. Names are views into the Model's strings: valid while it lives.
struct ModelSummary {
  struct Body {
    std::string_view name;
    double mass;
    std::string_view parent;  ///< "ground" for a root body
  };
  struct Joint {
    std::string_view name, type, parent, child;
    int nq, nv;
  };
  struct LoopJoint {
    std::string_view name, type, parent, child;
    int constraint_rows;
    std::vector<std::string> redundant_rows;  ///< labels of rows dropped as redundant at the initial state
    std::vector<std::string> alternate_rows;  ///< rows that may replace a kept one along the motion
  };
  struct Drive {
    std::string_view name, joint;
    std::string motion;
  };
  /// An aggregated body of 002 §4.2 (two or more bodies).
  struct Aggregated {
    std::vector<std::string_view> bodies, loop_joints, couplings;
    std::string_view parent;
    int joint_speeds, independent_speeds;  ///< independent: at the initial state
  };
  struct Scope {
    std::string_view method;
    /// Empty when the method covers the model: its scope at the initial configuration, and, where
    /// the motion from the assembled initial state can reach a change point, the refusal its run
    /// would make there with default settings (the same text).
    std::string problem;
  };

  std::string_view name;
  std::vector<Body> bodies;
  std::vector<Joint> tree_joints;
  std::vector<LoopJoint> loop_joints;
  std::vector<Drive> drives;
  int nq, nv;
  std::size_t constraints;     ///< kept loop-constraint rows
  std::size_t redundant_rows;  ///< dropped as redundant
  int loop_jacobian_rank;
  int dof_gruebler;  ///< 6 per body minus each joint's constraints: a count that ignores geometry
  int dof_rank;      ///< nv minus the rank: the mobility at the initial state
  std::vector<Aggregated> aggregated;
  MethodChoice default_method, default_method_fixed_step;  ///< dopri5's, and a fixed step's (rk4)
  std::vector<Scope> methods;                              ///< every implemented method
  std::size_t markers, force_elements;
};

ModelSummary summarize(const Model& model);
/// The summary as `info --json` prints it.
nlohmann::json describe(const ModelSummary& summary);
nlohmann::json describe(const Model& model);

/// "fourbar (3 bodies, nq = 3, nv = 3, 1 loop-closing joint)": the model in one line, as the CLI's
/// summaries and Python's repr give it.
std::string model_headline(const Model& model);

}  // namespace loopdyn
