// bulk_submit.h — what `labkit bulk submit` writes into OUT_DIR for Slurm: grade.sbatch, the
// student array (one task per student, tools/slurm/bulk-task.sh), and kit-build.sbatch, the job
// that builds the kit's trusted part once for the class (tools/slurm/bulk-kit.sh) before the
// array starts (bulk_submit.cpp submits the array with --dependency=afterany on it).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "labkit_config.h"

namespace labkit::cli::bulk_cmd {

struct SubmitOptions {
  std::string submissions, out, kit = LABKIT_SOURCE_ROOT;
  std::string time = "01:00:00", partition, account, gres = "gpu:1", mem, constraint, gpu_arch, scratch;
  std::string data = LABKIT_DATASET_DIR;  // the synthetic test set of this labkit's build
  std::string task = "grade", job_name = "labkit-grade", sbatch = "sbatch";
  std::string resubmit;  // an earlier output folder: grade its students without a complete result
  int max_parallel = 0, cpus = 4;
  double lab_timeout = 600;
  bool exclusive = false, dry_run = false;
  bool prebuilt = true;  // false: --no-prebuilt-kit, every task builds the kit itself
};

struct Student {
  std::string id;
  std::filesystem::path labs;
  std::vector<std::string> submitted;
};

// 'text' as one shell word.
std::string sh(const std::string& text);

// The student array's script (OUT/grade.sbatch); `labkit` is the judge that runs `bulk finish`.
std::string sbatch_script(const SubmitOptions& o, const std::filesystem::path& out, const std::filesystem::path& labkit,
                          const std::vector<Student>& students);

// The kit build job's script (OUT/kit-build.sbatch): no GPU, the tasks' CPUs, time, partition,
// account, memory and node constraint, and the tasks' environment.
std::string kit_sbatch_script(const SubmitOptions& o, const std::filesystem::path& out, const std::filesystem::path& labkit);

}  // namespace labkit::cli::bulk_cmd
