// `labkit list` — the labs of this build, with their points and targets from lab.json.
#include <fmt/core.h>

#include "commands.h"
#include "grader/core/exit_codes.h"
#include "grader/judge/lab_spec.h"
#include "labkit_config.h"
#include "registry.h"

#include <fstream>
#include <nlohmann/json.hpp>

namespace labkit::cli {

std::vector<LabEntry> read_registry() {
  const std::filesystem::path file = LABKIT_REGISTRY;
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: missing; reconfigure the build (meson setup --reconfigure)", file.string()));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON ({})", file.string(), e.what()));
  }
  const std::filesystem::path root = LABKIT_SOURCE_ROOT;
  std::vector<LabEntry> labs;
  for (const auto& e : j) {
    LabEntry l{e.at("role"), e.at("id"), e.at("kind"), e.at("folder"), e.at("exe"), e.value("ptx", ""), {},
               e.value("unbuilt", "")};
    l.lab_json = l.role == "test" ? root / l.folder / "lab.json" : root / "labs" / l.id / "lab.json";
    labs.push_back(std::move(l));
  }
  return labs;
}

void add_list(CLI::App& app, int& status) {
  auto* cmd = app.add_subcommand("list", "The labs this build can grade (labs/ and solutions/)");
  auto tests = std::make_shared<bool>(false);
  cmd->add_flag("--tests", *tests, "also list the grader's own test labs (tests/labs)");
  cmd->callback([&status, tests] {
    try {
      const auto labs = read_registry();
      fmt::print("{:<20} {:<9} {:<5} {:>6} {:>7}  {}\n", "lab", "role", "kind", "points", "target", "title");
      int shown = 0;
      for (const LabEntry& l : labs) {
        if (l.role == "test" && !*tests) continue;
        const LabSpec spec = load_lab_spec(l.lab_json, l.role == "test" ? l.id : l.id);
        fmt::print("{:<20} {:<9} {:<5} {:>6g} {:>6.2f}x  {}\n", l.id, l.role, l.kind, spec.points,
                   spec.target_speedup, spec.title);
        ++shown;
      }
      if (shown == 0) fmt::print("(no labs: this build has no labs/*/kernel.cu)\n");
      fmt::print("\nGrade one with `labkit grade ID` (add --solutions for the instructor solutions).\n");
      status = exit_code::kPass;
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit list: {}\n", e.what());
      status = exit_code::kKitError;
    }
  });
}

}  // namespace labkit::cli
