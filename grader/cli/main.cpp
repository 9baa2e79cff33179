// labkit — the kit's command-line tool. One subcommand per file in this folder.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <exception>

#include "commands.h"
#include "grader/core/exit_codes.h"

int main(int argc, char** argv) {
  CLI::App app{"labkit: GPU kernel optimization labs (inspect data, run and grade labs)"};
  app.require_subcommand(1);
  int status = labkit::exit_code::kPass;
  labkit::cli::add_inspect(app, status);
  labkit::cli::add_baseline(app, status);
  labkit::cli::add_list(app, status);
  labkit::cli::add_grade(app, status);
  labkit::cli::add_report(app, status);
  labkit::cli::add_bulk(app, status);
  labkit::cli::add_profile(app, status);
  labkit::cli::add_calibrate(app, status);
  labkit::cli::add_sweep(app, status);
  labkit::cli::add_dist(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return labkit::exit_code::kUsage;
  } catch (const std::exception& e) {
    // A subcommand that lets an exception escape is a kit bug: say so instead of aborting.
    fmt::print(stderr, "labkit: internal error: {}\n", e.what());
    return labkit::exit_code::kKitError;
  }
  return status;
}
