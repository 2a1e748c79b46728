// The option tables (core/options.hpp, run/run_options.hpp) and the settings named in the
// library's messages: one table per settings struct, from which the CLI's flags, Python's keywords
// and the docs' table come; every message names settings in the neutral spelling, which each front
// end renders in its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "loopdyn/formulations/registry.hpp"
#include "loopdyn/run/run_options.hpp"
#include "test_support.hpp"

namespace loopdyn {
namespace {

using namespace loopdyn::test;

TEST(Options, NamesAreSnakeCaseAndTheirFlagsUnique) {
  std::set<std::string> spellings;
  const std::regex snake("[a-z][a-z0-9_]*");
  for (const Option<RunSettings>& o : all_run_options()) {
    EXPECT_TRUE(std::regex_match(std::string(o.name), snake)) << o.name;
    EXPECT_FALSE(o.help.empty()) << o.name;
    for (std::string_view n : {o.name, o.alias, o.negation})
      if (!n.empty()) {
        EXPECT_TRUE(spellings.insert(cli_flag(n)).second) << "two options spelled " << cli_flag(n);
      }
    if (o.kind == OptionKind::choice) {
      EXPECT_FALSE(o.choices.empty()) << o.name;
    }
  }
  EXPECT_EQ(cli_flag("dca_alpha"), "--dca-alpha");
  EXPECT_EQ(option_name("--dca-alpha"), "dca_alpha");
}

// Each option writes the member it names and reads it back; the defaults are the structs'.
TEST(Options, EveryOptionSetsItsMember) {
  const OptionTable<RunSettings> table = all_run_options();
  RunSettings s;
  ASSERT_TRUE(set_option_text(table, s, "--dca-alpha", "1e5"));
  EXPECT_EQ(s.formulation.dca.alpha, 1e5);
  ASSERT_TRUE(set_option_text(table, s, "--dca-iterations", "7"));  // the older spelling
  EXPECT_EQ(s.formulation.dca.max_iterations, 7);
  ASSERT_TRUE(set_option_text(table, s, "--dca-no-projections", ""));
  EXPECT_FALSE(s.formulation.dca.projections);
  ASSERT_TRUE(set_option_text(table, s, "--no-watch", ""));
  EXPECT_FALSE(s.simulation.watch.enabled);
  ASSERT_TRUE(set_option_text(table, s, "--on-singular", "continue"));
  EXPECT_EQ(s.formulation.on_singular, FormulationSettings::OnSingular::proceed);
  ASSERT_TRUE(set_option_text(table, s, "--integrator", "rk2"));
  EXPECT_EQ(s.integrator, IntegratorKind::rk2);
  ASSERT_TRUE(set_option(table, s, "srm_epsilon", OptionValue(2e-3)));
  EXPECT_EQ(s.formulation.srm.epsilon, 2e-3);
  ASSERT_TRUE(set_option(table, s, "srm_epsilon", OptionValue()));
  EXPECT_FALSE(s.formulation.srm.epsilon);
  ASSERT_TRUE(set_option_text(table, s, "--project-tolerance", "1e-9"));
  EXPECT_EQ(s.simulation.projection.velocity_tolerance, 1e-9);
  EXPECT_FALSE(set_option_text(table, s, "--dca-alfa", "1"));
  const RunSettings defaults;
  for (const Option<RunSettings>& o : table) EXPECT_EQ(o.get(defaults), o.default_value()) << o.name;
  EXPECT_EQ(std::get<double>(find_option(table, "srm_alpha")->default_value()), SrmSettings{}.alpha);
}

TEST(Options, ValuesAreCheckedWithTheOptionsName) {
  const OptionTable<RunSettings> table = all_run_options();
  RunSettings s;
  const auto message = [&](std::string_view name, std::string_view text) {
    return message_of([&] { set_option_text(table, s, name, text); });
  };
  EXPECT_EQ(message("on_singular", "maybe"), "on_singular: expected 'stop' or 'continue', got 'maybe'");
  EXPECT_EQ(message("integrator", "euler"), "integrator: expected 'rk2', 'rk4', 'dopri5' or 'bdf', got 'euler'");
  EXPECT_EQ(message("dca_max_iterations", "2.5"), "dca_max_iterations: expected an integer, got '2.5'");
  EXPECT_EQ(message("t_end", "soon"), "t_end: expected a number, got 'soon'");
  EXPECT_THROW(set_option(table, s, "t_end", OptionValue()), OptionError);  // only optional ones are unset
}

// Settings named in messages: neutral in what(), the CLI's and Python's spellings by render_settings.
TEST(Options, MessagesRenderTheirSettingsInEachFrontEndsSpelling) {
  const std::string m = "Use `method = dca`, a smaller `dt`, `dca_alpha = 1e5`, `watch = false` or "
                        "`on_singular = continue`; see `loopdyn assemble` and `nothing_of_ours = 1`";
  EXPECT_EQ(render_settings(m, Spelling::neutral), m);
  EXPECT_EQ(render_settings(m, Spelling::cli),
            "Use --method dca, a smaller --dt, --dca-alpha 1e5, --no-watch or --on-singular continue; see "
            "`loopdyn assemble` and `nothing_of_ours = 1`");
  EXPECT_EQ(render_settings(m, Spelling::python),
            "Use method=\"dca\", a smaller dt, dca_alpha=1e5, watch=False or on_singular=\"continue\"; see "
            "`loopdyn assemble` and `nothing_of_ours = 1`");
  const std::vector<Remedy> r = remedies(m);
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].setting, "method");
  EXPECT_EQ(r[0].value, "dca");
  EXPECT_EQ(r[1].setting, "dt");
  EXPECT_EQ(r[1].value, "");
}

// A settings error of a method names the setting in the neutral spelling, and every setting a
// message names is an option of the tables.
TEST(Options, SettingsErrorsNameTheSetting) {
  const LoopState c = file_state("fourbar_park_regular");
  FormulationSettings fs;
  fs.dca.alpha = -1.0;
  const std::string what = message_of([&] { make_formulation("dca", c.model, fs); });
  EXPECT_NE(what.find("`dca_alpha`"), std::string::npos) << what;
  EXPECT_NE(render_settings(what, Spelling::cli).find("(--dca-alpha)"), std::string::npos);
  EXPECT_NE(render_settings(what, Spelling::python).find("(dca_alpha)"), std::string::npos);
}

// docs/methods.md carries `loopdyn methods --options-markdown` verbatim.
TEST(Options, TheDocsCarryTheTables) {
  std::ifstream in(std::string(LOOPDYN_SOURCE_DIR) + "/docs/methods.md");
  std::stringstream doc;
  doc << in.rdbuf();
  EXPECT_NE(doc.str().find(options_markdown()), std::string::npos)
      << "docs/methods.md has not the option tables; paste `loopdyn methods --options-markdown`:\n" << options_markdown();
}

// String literals of the library's code outside comments, with the file and line of each.
std::vector<std::pair<std::string, std::string>> string_literals(const std::filesystem::path& file) {
  std::vector<std::pair<std::string, std::string>> out;
  std::ifstream in(file);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    bool in_string = false;
    std::string literal;
    for (std::size_t k = 0; k < line.size(); ++k) {
      const char ch = line[k];
      if (!in_string && ch == '/' && k + 1 < line.size() && line[k + 1] == '/') break;
      if (!in_string && ch == '\'' && k + 2 < line.size()) {  // '"' is a character, not a string
        k += line[k + 1] == '\\' ? 3 : 2;
        continue;
      }
      if (in_string && ch == '\\') {
        literal += line[++k];
        continue;
      }
      if (ch == '"') {
        if (in_string) out.emplace_back(file.string() + ":" + std::to_string(number), literal);
        in_string = !in_string;
        literal.clear();
      } else if (in_string) {
        literal += ch;
      }
    }
  }
  return out;
}

// The library speaks no front end's language: no string literal of src/ or include/ spells a CLI
// flag; messages name settings between backticks and the front ends render them.
TEST(Options, NoLibraryStringSpellsACliFlag) {
  const std::regex flag("(^|[^-a-z0-9])--[a-z]");
  for (const char* folder : {"src", "include"})
    for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(LOOPDYN_SOURCE_DIR) + "/" + folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp") continue;
      for (const auto& [where, literal] : string_literals(entry.path()))
        EXPECT_FALSE(std::regex_search(literal, flag)) << where << ": \"" << literal << "\"";
    }
}

// Every setting a library message names between backticks is an option (its front ends' spellings
// exist): the backticked identifiers of the library's string literals.
TEST(Options, EverySettingAMessageNamesIsAnOption) {
  const OptionTable<RunSettings> table = all_run_options();
  for (const char* folder : {"src", "include"})
    for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(LOOPDYN_SOURCE_DIR) + "/" + folder)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp") continue;
      for (const auto& [where, literal] : string_literals(entry.path()))
        for (const Remedy& r : remedies(literal)) {
          if (r.setting.find('_') != std::string::npos || !r.value.empty()) {
            EXPECT_TRUE(find_option(table, r.setting)) << where << ": `" << r.setting << "` is not an option";
          }
        }
    }
}

}  // namespace
}  // namespace loopdyn
