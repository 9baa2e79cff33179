// grader/judge/sandbox.h — the bubblewrap sandbox the harness (student code) runs in (design.md
// section 5, "Trust"): no network, an allow-list view of the file system (the harness, what it
// links, the CUDA driver, nothing else of the host), a private /tmp, only the GPU device nodes,
// rlimits, and nothing left running after it.
//
// Contract
//   * probe() finds bwrap (the hint alone when one is given; else PATH, then /usr/bin/bwrap) and
//     runs the very command() grading uses, with /bin/true as the harness, 10 s at most.
//     available = false with `why` (bwrap's first stderr line, e.g. "bwrap: No permissions to
//     creates new namespace, ...", or the path that is missing) where namespaces are refused:
//     grading then says so and runs unsandboxed only on an explicit `--sandbox none`;
//     describe() names what ran, for the report and the JSON.
//   * command() returns bwrap's full argv: options, "--", argv_inside. Inside the sandbox, on an
//     empty root, read-only, only (the allow-list; allow_list() gives its paths):
//       - Policy::executable at kInsidePath, wherever it is and whatever hides it; its ELF
//         interpreter and the shared libraries it links, found as the loader finds them
//         (grader/judge/elf_deps.h: DT_NEEDED, DT_RPATH/DT_RUNPATH, LD_LIBRARY_PATH, /etc/ld.so.cache,
//         the default directories; never by running anything). $ORIGIN in the executable's
//         run path means its host directory when searching, /labkit inside: the kit's harness
//         links nothing from beside itself.
//       - argv_inside[0] the same way at its own path, when it is absolute and not kInsidePath
//         (a wrapper such as compute-sanitizer; its folder comes through read_only_extra).
//       - the CUDA driver's user-space libraries that the CUDA runtime dlopens: libcuda.so.1 as
//         the executable's dlopen would find it, the NVIDIA libraries this process has mapped
//         (/proc/self/maps: the judge has CUDA initialised), the driver's companions beside them
//         (libnvidia-ptxjitcompiler, -gpucomp, -nvvm, -ml, libcudadebugger, ...) and CUPTI's
//         (libnvperf_*), with their own dependencies.
//       - /etc/ld.so.cache and /sys (the driver walks PCI devices, NUMA nodes and CPUs there).
//       - Policy::read_only_extra at their own paths: a file, or a folder with everything under
//         it; every ELF file in them comes with its libraries and every script with its #!
//         interpreter, and symlinks that lead out of a folder are followed (add a tool's whole
//         install folder, e.g. compute-sanitizer's or ncu's: see add_tool()).
//       - Every symlink on the way to any of these is recreated (merged /usr's /lib -> usr/lib,
//         /usr/local/cuda -> cuda-12.4, libcuda.so.1 -> libcuda.so.550.54.15): the path the
//         loader opens and the real file at its real path both exist inside.
//       - a fresh /proc of its own pid namespace; a fresh /dev with null, zero, full, random,
//         urandom, tty, pts, the gpu_device_nodes() of /dev and a private /dev/shm; a private
//         /tmp, empty, the working directory. /tmp and /dev/shm are tmpfs (memory) of
//         Policy::tmp_bytes each; nothing else is writable (/, /dev, the hiding tmpfs included).
//         An extra under the host's /tmp shows in the private /tmp.
//     Policy::hide (and /home, /root, /run, /var/tmp, /mnt, /media, the judge's $HOME unless
//     that is / or top-level): never shown. Nothing is bound unless listed above, so a hide only
//     acts inside a shown folder (an empty read-only tmpfs over a hidden directory; a hidden
//     regular file reads as empty); a path shown above that is more specific than a hide still
//     shows (the CUDA toolkit's CUPTI under a hidden home), and at one path shown wins.
//       - namespaces: network (only `lo`, and nothing listens there), pid, ipc, uts; a new
//         session (no TIOCSTI into the judge's terminal); no capabilities even when the judge is
//         root (root with capabilities inside could unmount the hiding tmpfs).
//       - environment: PATH, LANG, LC_ALL, LD_LIBRARY_PATH (containers put libcuda there),
//         CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, NVIDIA_VISIBLE_DEVICES and
//         NVIDIA_DRIVER_CAPABILITIES when the judge has them; HOME=/tmp, TMPDIR=/tmp,
//         CUDA_CACHE_DISABLE=1 (a JIT cache in a fresh /tmp only eats its space). Nothing else,
//         never LD_PRELOAD.
//     Relative paths are made absolute and symlinks resolved; paths with spaces are fine (argv,
//     no shell); hide and extra paths that do not exist are skipped. std::invalid_argument for
//     an empty argv_inside, a hide or an extra of "/", or an executable that is not an existing
//     regular file; std::logic_error for a probe that is not available. command() reads the
//     environment, /dev, /proc/self/maps and the libraries' headers at call time: not safe
//     against a concurrent setenv.
//   * Still visible: the names of the libraries and folders shown and of hidden paths inside
//     shown folders (bwrap's command line, /proc/1/cmdline); /sys and /proc (kernel state,
//     other users' process names but not their files). A judge running as root (containers,
//     CI) makes the harness uid 0 without capabilities: it can still read any root-only file
//     the allow-list shows; grade as an unprivileged user where that matters.
//   * Processes: bwrap's init is pid 1 inside, the harness pid 2. --die-with-parent ties init to
//     the outer bwrap, which exits with the harness: the kernel then kills everything left in the
//     pid namespace (background, setsid, double-forked). It also kills the sandbox when the
//     judge dies; "the judge" is the thread that spawned bwrap (PR_SET_PDEATHSIG): spawn from a
//     thread that outlives the child.
//   * Exit status: bwrap exits with the harness's code, and with 128 + N when the harness was
//     killed by signal N (SIGSEGV 139, SIGKILL 137, SIGXCPU 152, SIGXFSZ 153), never by the
//     signal itself. Where bwrap cannot set the sandbox up it exits 1 with "bwrap: ..." on stderr.
//   * File descriptors the judge leaves open without CLOEXEC (e.g. 3, 4, 5 for the harness
//     channel) reach the harness with the same numbers; bwrap adds none of its own.
//   * Limits: apply_limits() is for the child between fork and exec of bwrap (posix_spawn, and so
//     labkit::subprocess::run, has no such hook): only getrlimit/setrlimit, async-signal-safe.
//     Each limit is lowered to the value given, never above the inherited hard limit; 0 leaves
//     one as inherited. They hold for bwrap and everything inside. RLIMIT_CPU is per process
//     (SIGXCPU at cpu_seconds, SIGKILL 2 s later); RLIMIT_FSIZE fails a longer write (SIGXFSZ,
//     or EFBIG where that is ignored); core dumps are off. RLIMIT_NPROC counts threads as well as
//     processes, and all of the real user's, in the sandbox or not (a busy desktop account can
//     exceed 512 on its own); it is not enforced for root. Never RLIMIT_AS: CUDA reserves huge
//     address ranges. Limits::cpus (when not empty) becomes the CPU affinity of bwrap and all
//     inside (sched_setaffinity; an id the judge may not use is dropped by the kernel).
//   * CPUs (grader/judge/cpu_partition.h): Policy::lock_cpus adds `--seccomp kSeccompFd`: inside,
//     sched_setaffinity fails with EPERM, so the harness keeps the CPU set it was started with
//     (its own pid namespace already keeps it from touching the judge's processes); syscalls of
//     another ABI (32-bit int 0x80, x32) fail with EPERM too, as they could bypass the filter.
//     The caller places seccomp_program() at kSeccompFd in bwrap (HarnessProcess's fds);
//     bwrap reads and closes it. probe() tries the filter too: Probe::seccomp says whether this
//     machine allows it (else seccomp_why), and command() leaves it out where it does not.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace labkit::sandbox {

enum class Mode { bubblewrap, none };

// Where the harness executable is inside the sandbox.
inline constexpr const char* kInsidePath = "/labkit/harness";

struct Limits {
  double cpu_seconds = 900;                   // RLIMIT_CPU (rounded up to whole seconds)
  std::uint64_t file_bytes = 256ull << 20;    // RLIMIT_FSIZE: the largest file it may write
  std::uint64_t data_bytes = 0;               // RLIMIT_DATA (heap and anonymous mappings)
  std::uint64_t processes = 512;              // RLIMIT_NPROC (the user's threads: see above)
  std::uint64_t open_files = 4096;            // RLIMIT_NOFILE
  std::vector<int> cpus;                      // CPU affinity (empty: inherited)
};

// The fd number at which bwrap reads the seccomp program (Policy::lock_cpus).
inline constexpr int kSeccompFd = 9;

struct Policy {
  std::filesystem::path executable;                    // bound read-only at kInsidePath
  std::vector<std::filesystem::path> hide;             // never shown: kit, build dir, data, submissions
  std::vector<std::filesystem::path> read_only_extra;  // files or folders, with what their programs need
  std::uint64_t tmp_bytes = 256ull << 20;              // each of /tmp, /dev/shm; 0: half the RAM
  Limits limits;
  bool lock_cpus = false;                              // seccomp: no sched_setaffinity inside
};

struct Probe {
  bool available = false;
  std::string version;          // "bubblewrap 0.8.0"
  std::string why;              // when not available
  std::filesystem::path bwrap;  // the one found (or tried)
  bool seccomp = false;         // bwrap could load the filter of Policy::lock_cpus here
  std::string seccomp_why;      // when it could not
};

// A new close-on-exec file (memfd) holding the seccomp program of Policy::lock_cpus, at offset 0;
// -1 with errno set when it cannot be made.
int seccomp_program();

Probe probe(const std::filesystem::path& bwrap_hint = {});

// Finds bwrap as probe() does and runs nothing: available wherever bwrap is found, with no
// version and seccomp = false. For a caller that spawns at once and, when the spawn fails, calls
// probe() for the reason: labkit-network, where probe()'s three bwrap runs came before the lab's
// harness could start and counted in Total Execution Time.
Probe assume(const std::filesystem::path& bwrap_hint = {});

// Throws std::logic_error when the probe is not available (its `why` in the message).
std::vector<std::string> command(const Probe& probe, const Policy& policy,
                                 const std::vector<std::string>& argv_inside);

// The paths the sandbox of command(probe, policy, argv_inside) shows, as seen inside (files,
// folders, recreated symlinks; kInsidePath among them), sorted. Empty argv_inside: the harness
// alone. Throws as command() does for a bad policy.
std::vector<std::filesystem::path> allow_list(const Policy& policy, const std::vector<std::string>& argv_inside = {});

// Shows a tool's whole install folder inside (compute-sanitizer, ncu: they load their own
// libraries and injection modules from it), with what its programs need: `folder` joins
// read_only_extra. `folder` may be the tool itself (its directory is taken) or a symlink to it.
void add_tool(Policy& policy, const std::filesystem::path& folder);

// The NVIDIA device nodes under `dev` that CUDA opens: nvidiactl, nvidia-uvm, nvidia-uvm-tools,
// nvidia-modeset, nvidia<N> and the nvidia-caps directory; sorted. command() binds these of /dev.
std::vector<std::filesystem::path> gpu_device_nodes(const std::filesystem::path& dev = "/dev");

// 0, or the errno of the first setrlimit that failed (the others are still applied).
int apply_limits(const Limits& limits) noexcept;

// "bubblewrap 0.8.0 (no network, private /tmp, allow-list: 41 paths)" (`shown`: the size of
// allow_list(); "allow-list" alone when 0), or "none"; with `cpus` (a CpuPartition::describe())
// and whether the affinity is locked, when given.
std::string describe(Mode mode, const Probe& probe, const std::string& cpus = {}, std::size_t shown = 0);

// "bubblewrap" or "bwrap", "none"; else std::invalid_argument naming the allowed values.
Mode parse_mode(const std::string& text);

}  // namespace labkit::sandbox
