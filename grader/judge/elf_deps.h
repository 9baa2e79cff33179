// grader/judge/elf_deps.h — the files a program needs to start, found as the dynamic loader finds them,
// without running it: its ELF interpreter and the shared libraries it links, recursively. The
// sandbox (grader/judge/sandbox.h) shows the lab's harness these and nothing else of the system.
//
// Contract
//   * read_elf() reads only headers, the dynamic section and its string table (a 500 MB library
//     costs a few reads): ELF64 little-endian fully; any other ELF (32-bit, big-endian) gives
//     its class and machine only, so that a search can pass over it. nullopt: not an ELF file
//     or unreadable; a truncated or inconsistent ELF64 gives the fields it could read.
//   * ld_cache() lists the paths /etc/ld.so.cache (glibc's "glibc-ld.so.cache1.1" format, alone
//     or after the old "ld.so-1.7.0" table) gives for a soname, in the cache's order (several:
//     other architectures, glibc-hwcaps subdirectories). An unreadable or unknown cache: none.
//   * Search::find() follows glibc's order for a name an object needs: a name with '/' as it
//     is; else DT_RPATH of the object and then of the program (only while the object has no
//     DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH of the object, the cache, the default
//     directories. $ORIGIN and ${ORIGIN} expand to the object's directory. The first candidate
//     that is an ELF file of the program's class and machine wins; empty when none is. Paths are
//     returned as the loader opens them (symlinks not resolved: the sandbox recreates them).
//   * Search::closure() is every file of the given objects' start: each object's interpreter
//     (PT_INTERP) and needed libraries, recursively, each once, the objects themselves first;
//     names found nowhere are listed in `missing` ("libfoo.so.1 (needed by PATH)"), not an error:
//     the loader inside will say the same. A library that dlopen() loads later is not in an ELF
//     file: callers add those by name (find(), then closure() of the result).
//   * Nothing is executed: not the program, not ld.so, not ldconfig.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace labkit::elf {

struct Info {
  bool elf64_le = false;           // the only kind whose dynamic section is read
  std::uint8_t elf_class = 0;      // 1: 32-bit, 2: 64-bit
  std::uint16_t machine = 0;       // e_machine (62: x86-64, 183: AArch64)
  std::string interpreter;         // PT_INTERP, e.g. /lib64/ld-linux-x86-64.so.2 (programs only)
  std::vector<std::string> needed;   // DT_NEEDED, in order
  std::vector<std::string> rpath;    // DT_RPATH, split at ':', unexpanded
  std::vector<std::string> runpath;  // DT_RUNPATH, split at ':', unexpanded
};

std::optional<Info> read_elf(const std::filesystem::path& file);

// Whether the first bytes of `file` are ELF's magic (a cheap test before read_elf()).
bool is_elf(const std::filesystem::path& file);

std::vector<std::filesystem::path> ld_cache(const std::filesystem::path& cache, const std::string& soname);

// The glibc default library directories of this machine's architecture, Debian's multiarch ones
// and RHEL's lib64 both (a candidate that does not exist costs nothing).
std::vector<std::filesystem::path> default_library_dirs();

struct Closure {
  std::vector<std::filesystem::path> files;  // the objects, then interpreters and libraries
  std::vector<std::string> missing;
};

class Search {
 public:
  // `library_path`: LD_LIBRARY_PATH's value (':'-separated, empty entries ignored).
  explicit Search(std::string library_path = {}, std::filesystem::path cache = "/etc/ld.so.cache",
                  std::vector<std::filesystem::path> default_dirs = default_library_dirs());

  // Where the loader would find `name`, needed by `object` of the program `program`.
  std::filesystem::path find(const std::string& name, const std::filesystem::path& object, const Info& object_info,
                             const std::filesystem::path& program, const Info& program_info) const;

  // `objects` are each their own program (DT_RPATH, class and machine come from each).
  Closure closure(const std::vector<std::filesystem::path>& objects) const;

 private:
  std::vector<std::filesystem::path> library_path_;
  std::filesystem::path cache_;
  std::vector<std::filesystem::path> default_dirs_;
};

}  // namespace labkit::elf
