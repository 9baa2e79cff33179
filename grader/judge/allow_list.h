// allow_list.h — what the sandbox shows of the host (grader/judge/sandbox.h): each file, folder and
// symlink the lab's harness needs, as bwrap mounts on an empty root. Internal to the judge.
//
// Contract
//   * Every path is walked component by component as the kernel would: each symlink met on the
//     way (merged /usr's /lib -> usr/lib, /usr/local/cuda -> cuda-12.4, libcuda.so.1 ->
//     libcuda.so.550.54.15, alternatives) is recreated inside (--symlink, its target text as on
//     the host) and the walk goes on at its target, so that the path the loader opens and the
//     real file both exist inside, and the real file is bound at its real path. A path that
//     does not exist adds nothing.
//   * add_program(): the file (at `inside` when given, e.g. /labkit/harness, else its own path),
//     its ELF interpreter and shared libraries (grader/judge/elf_deps.h), or for a script its #!
//     interpreter, recursively. add_path(): a file or a folder at its own path; with `scan`,
//     every ELF file and script under a folder comes with what it needs (a tool's install
//     folder), and symlinks in it that lead outside it are followed.
//   * add_cuda_driver(): the libraries the CUDA runtime dlopens, found as the program's dlopen
//     would (libcuda.so.1 by the loader's search from the program), plus the NVIDIA driver
//     libraries this process has mapped (/proc/self/maps: the judge has CUDA initialised), each
//     with the driver's own companions beside it (ptxjitcompiler, gpucomp, nvvm, cudadebugger,
//     nvidia-ml, ...) and their dependencies. CUPTI likewise brings its nvperf libraries.
//   * hide(): never shown, even inside a folder added here (a tmpfs over a folder, /dev/null over
//     a file); a path added here that is more specific than a hidden one still shows (a library
//     under a hidden home). At one path, shown wins.
//   * args(): bwrap options, parents before children, for after the private /tmp is mounted;
//     nothing under /proc or /dev (the sandbox makes its own); a path under the private /tmp
//     shows there. hidden_dirs(): the tmpfs to remount read-only at the end.
//   * shown(): the inside paths args() mounts or links, sorted (for describe() and tests).
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "grader/judge/elf_deps.h"

namespace labkit::sandbox {

class AllowList {
 public:
  explicit AllowList(elf::Search search);

  void add_program(const std::filesystem::path& program, const std::filesystem::path& inside = {});
  void add_path(const std::filesystem::path& path, bool scan);
  void add_cuda_driver(const std::filesystem::path& program);
  void hide(const std::filesystem::path& path);

  std::vector<std::string> args() const;
  std::vector<std::string> hidden_dirs() const;
  std::vector<std::filesystem::path> shown() const;
  const std::vector<std::string>& missing() const { return missing_; }

 private:
  enum class Kind { file, folder, link, hide_dir, hide_file };
  struct Node {
    Kind kind;
    std::filesystem::path source;  // the host file or folder; a link's target text
  };
  struct Emitted {
    std::filesystem::path path;
    Node node;
  };

  std::filesystem::path walk(const std::filesystem::path& path);
  void put(const std::filesystem::path& inside, Node node);
  void add_libraries(const std::vector<std::filesystem::path>& objects, bool skip_first);
  void add_companions(const std::filesystem::path& library);
  std::vector<Emitted> emitted() const;

  elf::Search search_;
  std::map<std::filesystem::path, Node> nodes_;
  std::set<std::filesystem::path> scanned_;     // folders and programs already followed
  std::set<std::filesystem::path> companions_;  // directories already searched for companions
  std::vector<std::string> missing_;
};

}  // namespace labkit::sandbox
