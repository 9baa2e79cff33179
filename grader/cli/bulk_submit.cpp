// `labkit bulk submit SUBMISSIONS_DIR` — one Slurm array task per student. Checks the submissions
// (one folder per student holding their labs/ tree), writes OUT_DIR (students.txt, skipped.txt,
// grade.sbatch, kit-build.sbatch, bulk-task.sh, bulk-kit.sh, one folder per student, logs/) and
// submits with sbatch first kit-build.sbatch, the kit's build once for the class, then
// grade.sbatch with --dependency=afterany on it (--no-prebuilt-kit: grade.sbatch alone, each task
// builds the kit; --dry-run: writes everything and prints the commands instead).
#include <fmt/chrono.h>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "bulk.h"
#include "bulk_submit.h"
#include "lab_process.h"
#include "grader/tools/bulk.h"
#include "grader/core/exit_codes.h"
#include "grader/judge/pair_timing.h"
#include "grader/judge/subprocess.h"
#include "labkit_config.h"

namespace labkit::cli::bulk_cmd {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> kit_labs(const fs::path& kit) {
  std::vector<std::string> ids;
  if (fs::is_directory(kit / "labs"))
    for (const auto& e : fs::directory_iterator(kit / "labs"))
      if (fs::is_regular_file(e.path() / "kernel.cu")) ids.push_back(e.path().filename().string());
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The student's labs/ folder: FOLDER/labs, or FOLDER/<only subfolder>/labs (an unzipped archive).
fs::path find_labs(const fs::path& folder) {
  if (fs::is_directory(folder / "labs")) return folder / "labs";
  std::vector<fs::path> subs;
  for (const auto& e : fs::directory_iterator(folder)) {
    const std::string n = e.path().filename().string();
    if (e.is_directory() && !e.is_symlink() && n[0] != '.' && n != "__MACOSX") subs.push_back(e.path());
  }
  if (subs.size() == 1 && fs::is_directory(subs[0] / "labs")) return subs[0] / "labs";
  return {};
}

// Runs argv with a time limit; on failure says why in `why`.
subprocess::Result run_tool(const std::vector<std::string>& argv, const fs::path& cwd) {
  subprocess::Options so;
  so.timeout = std::chrono::seconds(120);
  so.working_directory = cwd;
  return subprocess::run(argv, so);
}

std::string joined(const std::vector<std::string>& argv) {
  std::string command;
  for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
  return command;
}

// `--resubmit OUT_DIR`: a job array of the students of OUT_DIR/students.txt whose result is not
// complete (read_student: the not-graded students of collect) or holds a kit-error (a lab the kit
// failed to grade: fixed, it is graded again), from OUT_DIR/grade.sbatch with its
// --array line replaced; refused while a job of OUT_DIR/job.txt is still queued or running (its
// students have no result yet, and two tasks must not grade one student at once).
int run_resubmit(const SubmitOptions& o) {
  const fs::path out = fs::absolute(o.resubmit).lexically_normal();
  const std::string script = read_text(out / "grade.sbatch", 1u << 20);
  std::ifstream list(out / "students.txt");
  if (!list || script.empty()) {
    fmt::print(stderr, "labkit bulk: {}: not the output folder of `labkit bulk submit` (students.txt and grade.sbatch)\n",
               out.string());
    return exit_code::kUsage;
  }
  std::vector<std::string> indexes, names;
  for (std::string line; std::getline(list, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string index, student;
    std::getline(fields, index, '\t');
    std::getline(fields, student, '\t');
    bulk::StudentResult result;
    if (!bulk::valid_student_id(student) || index.empty() || index.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::string why = read_student((out / student).string(), student, index, StoppingRule{}.max_noise, result);
    if (why.empty()) {
      // A kit-error is the kit's failure, not the student's verdict: the student is graded again.
      std::vector<std::string> kit;
      for (const bulk::LabRow& row : result.rows)
        if (row.verdict == "kit-error") kit.push_back(row.lab);
      if (!kit.empty()) why = fmt::format("kit-error in {} (the kit's failure, not the student's): graded again", fmt::join(kit, ", "));
    }
    if (!why.empty()) {
      indexes.push_back(index);
      names.push_back(student);
      fmt::print("labkit bulk: task {} ({}): {}\n", index, student, why);
    }
  }
  if (indexes.empty()) {
    fmt::print("labkit bulk: every student of {} has a complete result; nothing to resubmit\n", out.string());
    return exit_code::kPass;
  }
  std::vector<std::string> jobs;
  {
    std::istringstream in(read_text(out / "job.txt", 1u << 20));
    for (std::string j; std::getline(in, j);)
      if (!j.empty()) jobs.push_back(j);
  }
  if (!jobs.empty() && !o.dry_run) {
    const fs::path squeue = fs::path(o.sbatch).parent_path() / "squeue";
    std::string ids;
    for (const auto& j : jobs) ids += (ids.empty() ? "" : ",") + j;
    const std::vector<std::string> argv{o.sbatch.find('/') == std::string::npos ? "squeue" : squeue.string(), "-h", "-o", "%i %T", "-j", ids};
    const subprocess::Result r = run_tool(argv, out);
    if (!r.started || r.exit_code != 0)
      fmt::print(stderr, "labkit bulk: {} {}: cannot tell whether jobs {} still run; resubmitting anyway\n", joined(argv),
                 r.started ? r.describe() : r.error, ids);
    else if (r.out.find_first_not_of(" \n") != std::string::npos) {
      fmt::print(stderr, "labkit bulk: jobs of {} are still queued or running:\n{}Wait for them (or scancel them), then resubmit.\n",
                 out.string(), r.out);
      return exit_code::kFail;
    }
  }
  std::string array;
  for (const auto& i : indexes) array += (array.empty() ? "" : ",") + i;
  // The first script's --array line, with its "%P" limit kept.
  std::string text, limit;
  std::istringstream in(script);
  bool replaced = false;
  for (std::string line; std::getline(in, line);) {
    if (!replaced && line.rfind("#SBATCH --array=", 0) == 0) {
      const std::string spec = line.substr(16, line.find_first_of(" \t", 16) - 16);
      if (const auto pct = spec.find('%'); pct != std::string::npos) limit = spec.substr(pct);
      line = fmt::format("#SBATCH --array={}{}  # resubmitted: the students without a complete result", array, limit);
      replaced = true;
    }
    text += line + "\n";
  }
  if (!replaced) {
    fmt::print(stderr, "labkit bulk: {}: no \"#SBATCH --array=\" line to replace\n", (out / "grade.sbatch").string());
    return exit_code::kUsage;
  }
  const fs::path again = out / fmt::format("resubmit-{}.sbatch", jobs.size());
  write_file(again.string(), text);
  const std::vector<std::string> argv{o.sbatch, "--parsable", again.string()};
  fmt::print("labkit bulk: {} student(s) to grade again (tasks {})\n", indexes.size(), array);
  if (o.dry_run) {
    fmt::print("labkit bulk: dry run, not submitted. Submit with:\n  {}\n", joined(argv));
    return exit_code::kPass;
  }
  const subprocess::Result r = run_tool(argv, out);
  if (!r.started || r.exit_code != 0) {
    fmt::print(stderr, "labkit bulk: {} {}: {}\n", joined(argv), r.started ? r.describe() : "could not run",
               r.started ? r.err : r.error);
    return exit_code::kFail;
  }
  const std::string job = r.out.substr(0, r.out.find_first_of(";\n"));
  std::string all;
  for (const auto& j : jobs) all += j + "\n";
  write_file((out / "job.txt").string(), all + job + "\n");
  fmt::print("labkit bulk: submitted job array {} ({}); when it is done: labkit bulk collect {}\n", job, joined(argv),
             out.string());
  return exit_code::kPass;
}

int run_submit(SubmitOptions o) {
  auto usage = [](const std::string& msg) {
    fmt::print(stderr, "labkit bulk: {}\n", msg);
    return exit_code::kUsage;
  };
  if (!o.resubmit.empty()) return run_resubmit(o);
  if (o.submissions.empty()) return usage("name the submissions folder (or --resubmit OUT_DIR)");
  const fs::path subs = fs::absolute(o.submissions).lexically_normal();
  if (!fs::is_directory(subs)) return usage(fmt::format("{}: not a folder (expected one folder per student)", subs.string()));
  const fs::path kit = fs::absolute(o.kit).lexically_normal();
  const fs::path task_script = kit / "tools" / "slurm" / "bulk-task.sh", kit_script = kit / "tools" / "slurm" / "bulk-kit.sh";
  const auto labs = kit_labs(kit);
  if (labs.empty() || !fs::is_regular_file(task_script) || !fs::is_regular_file(kit_script))
    return usage(fmt::format("{}: not a labkit source tree (expected labs/NN-name/kernel.cu, "
                             "tools/slurm/bulk-task.sh and bulk-kit.sh)", kit.string()));
  if (o.out.empty()) {
    const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    o.out = fmt::format("bulk-{:%Y%m%d-%H%M%S}", fmt::localtime(now));
  }
  const fs::path out = fs::absolute(o.out).lexically_normal();
  if (out.string().find_first_of(" \t\n%'\"") != std::string::npos)
    return usage(fmt::format("{}: the output folder's path may not hold spaces, quotes or '%' (sbatch lines)", out.string()));
  if (fs::exists(out) && !fs::is_empty(out))
    return usage(fmt::format("{}: exists and is not empty; name a new output folder with --out", out.string()));

  std::vector<Student> students;
  std::string skipped = "folder\treason\n";
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(subs)) folders.push_back(e.path());
  std::sort(folders.begin(), folders.end());
  for (const fs::path& f : folders) {
    const std::string name = f.filename().string();
    std::string why;
    Student st{name, {}, {}};
    if (!fs::is_directory(f) || fs::is_symlink(f)) why = "not a folder";
    else if (!bulk::valid_student_id(name)) why = "not a usable student id (letters, digits, . _ - @ + only)";
    else if ((st.labs = find_labs(f)).empty()) why = "no labs/ folder (expected labs/NN-name/kernel.cu)";
    else {
      for (const std::string& id : labs)
        if (!fs::is_symlink(st.labs / id) && fs::is_regular_file(fs::symlink_status(st.labs / id / "kernel.cu")))
          st.submitted.push_back(id);
      if (st.submitted.empty()) why = fmt::format("no labs/NN-name/kernel.cu of a kit lab in {}", st.labs.string());
      else if (st.labs.string().find_first_of("\t\n") != std::string::npos) why = "a tab or newline in the path";
    }
    if (!why.empty()) {
      skipped += name + "\t" + why + "\n";
      fmt::print(stderr, "labkit bulk: skipped {}: {}\n", name, why);
    } else {
      students.push_back(std::move(st));
    }
  }
  if (students.empty())
    return usage(fmt::format("{}: no student folder with labs/NN-name/kernel.cu (see the skipped folders above)", subs.string()));

  fs::create_directories(out / "logs");
  std::string list = "# task\tstudent\tlabs folder\tlabs submitted\n";
  for (std::size_t i = 0; i < students.size(); ++i) {
    const Student& st = students[i];
    std::string ids;
    for (const auto& id : st.submitted) ids += (ids.empty() ? "" : ",") + id;
    list += fmt::format("{}\t{}\t{}\t{}\n", i, st.id, st.labs.string(), ids);
    fs::create_directories(out / st.id);
  }
  write_file((out / "students.txt").string(), list);
  write_file((out / "skipped.txt").string(), skipped);
  fs::copy_file(task_script, out / "bulk-task.sh");
  fs::copy_file(kit_script, out / "bulk-kit.sh");
  const fs::path labkit = fs::canonical("/proc/self/exe");
  write_file((out / "grade.sbatch").string(), sbatch_script(o, out, labkit, students));
  if (o.prebuilt) write_file((out / "kit-build.sbatch").string(), kit_sbatch_script(o, out, labkit));
  fmt::print("labkit bulk: {} student(s) in {} ({} skipped, see skipped.txt); {} labs of the kit\n", students.size(),
             out.string(), folders.size() - students.size(), labs.size());

  // The kit build job first; the array waits for its end, whatever its state (afterany: with
  // afterok a failed kit build would leave the array pending for ever), and each task checks the
  // build's stamp before using it.
  const std::vector<std::string> kit_argv{o.sbatch, "--parsable", (out / "kit-build.sbatch").string()};
  std::string kit_job = o.dry_run ? "KIT_JOB" : "";
  if (o.prebuilt && !o.dry_run) {
    const subprocess::Result k = run_tool(kit_argv, out);
    if (k.started && k.exit_code == 0) {
      kit_job = k.out.substr(0, k.out.find_first_of(";\n"));
      write_file((out / "kit-job.txt").string(), kit_job + "\n");
    } else {
      fmt::print(stderr, "labkit bulk: {} {}: {}; each task builds the kit itself\n", joined(kit_argv),
                 k.started ? k.describe() : "could not run", k.started ? k.err : k.error);
    }
  }
  std::vector<std::string> argv{o.sbatch, "--parsable"};
  if (o.prebuilt && !kit_job.empty()) argv.push_back("--dependency=afterany:" + kit_job);
  argv.push_back((out / "grade.sbatch").string());
  const std::string command = joined(argv);
  if (o.dry_run) {
    fmt::print("labkit bulk: dry run, not submitted. Submit with:\n");
    if (o.prebuilt) fmt::print("  KIT_JOB=$({})\n", joined(kit_argv));
    fmt::print("  {}\n", o.prebuilt ? fmt::format("{} --parsable --dependency=afterany:$KIT_JOB {}", o.sbatch,
                                                   (out / "grade.sbatch").string())
                                     : command);
    return exit_code::kPass;
  }
  const subprocess::Result r = run_tool(argv, out);
  if (!r.started || r.exit_code != 0) {
    fmt::print(stderr, "labkit bulk: {} {}: {}{}\n", command, r.started ? r.describe() : "could not run",
               r.started ? r.err : r.error, r.started ? "" : " (run on a Slurm login node, or use --dry-run)");
    return exit_code::kFail;
  }
  std::string job = r.out.substr(0, r.out.find_first_of(";\n"));
  write_file((out / "job.txt").string(), job + "\n");
  if (!kit_job.empty())
    fmt::print("labkit bulk: submitted kit build job {} (kit-build.sbatch: the kit built once, kit-build.log)\n", kit_job);
  fmt::print("labkit bulk: submitted job array {} ({}); when it is done: labkit bulk collect {}\n", job, command,
             out.string());
  return exit_code::kPass;
}

}  // namespace

void add_submit(CLI::App& bulk, int& status) {
  auto o = std::make_shared<SubmitOptions>();
  auto* cmd = bulk.add_subcommand("submit", "Submit one Slurm array task per student folder (sbatch --array)");
  cmd->add_option("submissions", o->submissions, "one folder per student, each holding their labs/ tree");
  cmd->add_option("--resubmit", o->resubmit, "an earlier OUT_DIR: submit again, with its grade.sbatch, only the students "
                                             "without a complete result (the not-graded of collect)");
  cmd->add_option("--out", o->out, "output folder (default ./bulk-DATE-TIME)");
  cmd->add_option("--task", o->task, "grade: full grading on a GPU; evidence: PTX checks only, no GPU needed")
      ->check(CLI::IsMember({"grade", "evidence"}));
  cmd->add_option("--time", o->time, "Slurm time limit per task")->capture_default_str();
  cmd->add_option("--partition", o->partition, "Slurm partition");
  cmd->add_option("--account", o->account, "Slurm account");
  cmd->add_option("--gres", o->gres, "generic resources per task; \"none\" requests none")->capture_default_str();
  cmd->add_option("--constraint", o->constraint, "Slurm node feature, e.g. one GPU model for the whole class");
  cmd->add_flag("--exclusive", o->exclusive, "whole nodes: nothing else runs beside a task being timed");
  cmd->add_option("--max-parallel", o->max_parallel, "tasks running at once (0: no limit)")->check(CLI::Range(0, 100000));
  cmd->add_option("--cpus-per-task", o->cpus, "CPUs per task (compiling)")->check(CLI::Range(1, 1024))->capture_default_str();
  cmd->add_option("--mem", o->mem, "memory per task, e.g. 16G (default: the cluster's)");
  cmd->add_option("--lab-timeout", o->lab_timeout, "seconds per lab before it is stopped")->check(CLI::Range(2.0, 86400.0));
  cmd->add_option("--gpu-arch", o->gpu_arch, "the kit's gpu_arch option for the tasks' builds, e.g. 8.0 (default: the kit's)");
  cmd->add_option("--data", o->data, "the synthetic test set the tasks' accuracy checks read (default: this "
                                     "build's; built by each task when missing)");
  cmd->add_option("--kit", o->kit, "the labkit source tree the tasks build (default: this labkit's)")->capture_default_str();
  cmd->add_option("--scratch", o->scratch, "node-local folder for the tasks' builds (default: $TMPDIR or /tmp)");
  cmd->add_option("--job-name", o->job_name, "Slurm job name")->capture_default_str();
  cmd->add_option("--sbatch", o->sbatch, "the sbatch program")->capture_default_str();
  cmd->add_flag("--dry-run", o->dry_run, "write everything, print the sbatch commands, do not submit");
  cmd->add_flag("!--no-prebuilt-kit", o->prebuilt, "no kit build job: every task builds the kit's trusted part itself "
                                                    "(by default one job builds it once and the tasks copy it)");
  cmd->callback([o, &status] {
    try {
      status = run_submit(*o);
    } catch (const std::exception& e) {
      fmt::print(stderr, "labkit bulk: {}\n", e.what());
      status = exit_code::kKitError;
    }
  });
}

}  // namespace labkit::cli::bulk_cmd
