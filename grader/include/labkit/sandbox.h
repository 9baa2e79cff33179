// labkit/sandbox.h — the bubblewrap sandbox the harness (student code) runs in (design.md
// section 5, "Trust"): no network, a read-only system, the kit and the instructor's files
// hidden, a private /tmp, only the GPU device nodes, rlimits, and nothing left running after it.
//
// Contract
//   * probe() finds bwrap (the hint alone when given; else PATH, then /usr/bin/bwrap) and runs
//     the very command() grading uses on /bin/true, 10 s at most. available = false with `why`
//     (bwrap's first stderr line, e.g. "bwrap: No permissions to creates new namespace, ...", or
//     the path that is missing) where user namespaces are refused: grading must then say so and
//     run unsandboxed only on an explicit `--sandbox none`; describe() names what ran, for the
//     report and JSON.
//   * command() returns bwrap's full argv: options, "--", argv_inside. Inside:
//       - every top-level entry of the host's / read-only (system and NVIDIA driver libraries
//         wherever they are, /sys, /etc), except: an empty read-only tmpfs over each existing
//         Policy::hide directory (a hidden regular file reads as empty), /home, /root, /run (its
//         sockets: docker, dbus), /var/tmp, /mnt, /media and the judge's $HOME (unless / or top-level); a fresh /proc
//         (this pid namespace only), a fresh /dev with only null/zero/full/random/urandom/tty,
//         pts, the NVIDIA nodes of gpu_device_nodes() and a private /dev/shm; a private /tmp.
//         Neither /tmp nor /dev/shm is the host's; each is a tmpfs of Policy::tmp_bytes (memory,
//         so together up to twice that), /tmp starts empty and is the working directory.
//       - Policy::executable at kInsidePath; Policy::read_only_extra at their own paths even
//         under a hidden one (an extra under the host's /tmp shows in the private /tmp).
//       - / itself, /dev and the hidden tmpfs are read-only: only /tmp and /dev/shm are writable.
//       - namespaces: network (only `lo`, nothing listening), pid, ipc, uts; a new session (no
//         TIOCSTI into the judge's terminal); no capabilities even when the judge is root (without
//         --cap-drop ALL root inside could unmount the hidden tmpfs).
//       - environment: only PATH, LANG, LC_ALL, LD_LIBRARY_PATH (containers put libcuda there),
//         CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, NVIDIA_VISIBLE_DEVICES and
//         NVIDIA_DRIVER_CAPABILITIES when the judge has them, HOME=/tmp, TMPDIR=/tmp and
//         CUDA_CACHE_DISABLE=1 (a JIT cache in a fresh /tmp only eats its space). Never LD_PRELOAD.
//     Missing hide or extra paths are skipped; relative paths are made absolute and symlinks
//     resolved; paths with spaces are fine (argv, no shell). std::invalid_argument for an empty
//     argv_inside, a hide of "/", or an executable that is not an existing regular file.
//     command() reads the environment and /dev at call time: not safe against a concurrent setenv.
//   * Still visible, read-only: everything else the judge's user can read (/etc, /opt, /srv, other
//     top-level directories such as /work or /scratch): hide the kit, its build directory,
//     fixtures, data and submissions explicitly. The names of hidden paths show in bwrap's
//     command line (/proc/1/cmdline inside), never their contents. A judge running as root
//     (containers, CI) leaves the harness uid 0 without capabilities: it can still read visible
//     root-only files (/etc/shadow); grade as an unprivileged user where that matters.
//   * Processes: the harness is pid 2 under bwrap's init; when it exits, everything it started
//     (background, setsid, double-forked) is killed by the kernel with the pid namespace.
//     --die-with-parent kills the sandbox when the process that spawned bwrap dies; that is the
//     spawning *thread* (PR_SET_PDEATHSIG): spawn from a thread that outlives the child.
//   * Exit status: bwrap exits with the harness's code, and with 128 + N when the harness was
//     killed by signal N (SIGSEGV: 139, SIGXCPU: 152, SIGKILL: 137), never by the signal itself.
//     When bwrap cannot set the sandbox up it exits 1 with "bwrap: ..." on stderr.
//   * File descriptors the judge leaves open without CLOEXEC (e.g. 3, 4, 5 for the harness
//     channel) reach the harness with the same numbers.
//   * Limits: apply_limits() is for the child between fork and exec of bwrap (posix_spawn has no
//     such hook): only getrlimit/setrlimit, async-signal-safe. Each limit is lowered to the value
//     given (never raised above the inherited hard limit); 0 leaves a limit as inherited. They
//     hold for bwrap and everything inside. RLIMIT_CPU is per process (SIGXCPU at cpu_seconds,
//     SIGKILL 2 s later); RLIMIT_FSIZE makes a longer write fail (SIGXFSZ, or EFBIG if ignored);
//     RLIMIT_NPROC counts every process of the real user, sandbox or not, and is not enforced
//     for root; core dumps are off. Never RLIMIT_AS: CUDA reserves huge address ranges.
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
  std::uint64_t processes = 512;              // RLIMIT_NPROC (see the contract: per user)
  std::uint64_t open_files = 4096;            // RLIMIT_NOFILE
};

struct Policy {
  std::filesystem::path executable;                    // bound read-only at kInsidePath
  std::vector<std::filesystem::path> hide;             // kit, build dir, fixtures, data, submissions
  std::vector<std::filesystem::path> read_only_extra;  // e.g. the CUDA toolkit's lib dir (libcupti)
  std::uint64_t tmp_bytes = 256ull << 20;              // size of the private /tmp and /dev/shm; 0 = tmpfs default
  Limits limits;
};

struct Probe {
  bool available = false;
  std::string version;          // "bubblewrap 0.8.0"
  std::string why;              // when not available
  std::filesystem::path bwrap;  // the one found (or tried)
};

Probe probe(const std::filesystem::path& bwrap_hint = {});

// Throws std::logic_error when the probe is not available (its `why` in the message).
std::vector<std::string> command(const Probe& probe, const Policy& policy,
                                 const std::vector<std::string>& argv_inside);

// The NVIDIA device nodes under `dev` that CUDA opens: nvidiactl, nvidia-uvm, nvidia-uvm-tools,
// nvidia-modeset, nvidia<N> and the nvidia-caps directory; sorted. command() binds these of /dev.
std::vector<std::filesystem::path> gpu_device_nodes(const std::filesystem::path& dev = "/dev");

// 0, or the errno of the first setrlimit that failed (the others are still applied).
int apply_limits(const Limits& limits) noexcept;

// "bubblewrap 0.8.0 (no network, private /tmp, kit hidden)", or "none".
std::string describe(Mode mode, const Probe& probe);

// "bubblewrap" or "bwrap", "none"; else std::invalid_argument naming the allowed values.
Mode parse_mode(const std::string& text);

}  // namespace labkit::sandbox
