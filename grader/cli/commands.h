// commands.h — the `labkit` subcommands. Each add_* registers one subcommand on the app; when it
// runs, its callback stores the process exit status (grader/core/exit_codes.h) in `status`. Errors go
// to stderr as one line starting with "labkit <command>: ".
#pragma once

#include <CLI/CLI.hpp>

namespace labkit::cli {

void add_inspect(CLI::App& app, int& status);   // print a .npy file's dtype, shape, stats
void add_baseline(CLI::App& app, int& status);  // run the baseline on the fixtures, short table
void add_list(CLI::App& app, int& status);      // the labs this build can grade
void add_grade(CLI::App& app, int& status);     // grade labs in child processes, aggregate
void add_report(CLI::App& app, int& status);    // milestone tables of the network with a lab's conv
void add_bulk(CLI::App& app, int& status);      // Slurm bulk grading of a class: submit, collect (bulk.cpp)
void add_profile(CLI::App& app, int& status);   // Nsight Compute summary: lab vs baseline kernels
void add_calibrate(CLI::App& app, int& status); // propose target_speedup from the solutions
void add_sweep(CLI::App& app, int& status);     // one lab built with each value of a constant, graded and timed
void add_dist(CLI::App& app, int& status);      // export the student distribution

}  // namespace labkit::cli
