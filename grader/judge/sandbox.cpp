#include "grader/judge/sandbox.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <stdexcept>
#include <system_error>

#include "allow_list.h"
#include "grader/judge/elf_deps.h"
#include "grader/judge/subprocess.h"

namespace labkit::sandbox {
namespace {

namespace fs = std::filesystem;
using Args = std::vector<std::string>;

// Host directories that may hold the instructor's or other users' files, or sockets into
// services (/run: docker, dbus): hidden even inside a folder an extra shows.
constexpr const char* kAlwaysHidden[] = {"/home", "/root", "/run", "/var/tmp", "/mnt", "/media"};
// What the C library and the CUDA driver read of the system besides libraries: the loader's
// cache, and /sys, where the driver walks PCI devices, NUMA nodes and CPUs (all of it, read-only:
// kernel state, no user's files; which parts of it CUDA can do without is not measured).
constexpr const char* kSystemFiles[] = {"/etc/ld.so.cache"};
constexpr const char* kSystemFolders[] = {"/sys"};
constexpr const char* kEnvAllowed[] = {"PATH", "LANG", "LC_ALL", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
                                       "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"};

// Absolute, symlinks resolved; empty when it does not exist.
fs::path resolve(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::canonical(fs::absolute(p, ec), ec);
  return ec ? fs::path{} : r;
}

// Everything the sandbox shows of the host, for the harness `exe` and the program argv_inside[0]
// (when it is an absolute path other than kInsidePath: a wrapper such as compute-sanitizer).
AllowList view(const Policy& policy, const fs::path& exe, const Args& argv_inside) {
  const char* library_path = std::getenv("LD_LIBRARY_PATH");
  AllowList list{elf::Search(library_path != nullptr ? library_path : "")};
  list.add_program(exe, kInsidePath);
  if (!argv_inside.empty() && argv_inside[0] != kInsidePath && fs::path(argv_inside[0]).is_absolute())
    list.add_program(argv_inside[0]);
  list.add_cuda_driver(exe);
  for (const char* f : kSystemFiles) list.add_path(f, false);
  for (const char* d : kSystemFolders) list.add_path(d, false);
  for (const auto& x : policy.read_only_extra) {
    if (resolve(x) == "/")
      throw std::invalid_argument(fmt::format("sandbox: cannot show {}: that is the whole file system", x.string()));
    list.add_path(x, true);
  }
  for (const char* h : kAlwaysHidden) list.hide(h);
  // $HOME, unless it is a top-level system directory or / (a service account's HOME=/usr).
  if (const char* home = std::getenv("HOME"); home != nullptr && fs::path(home).is_absolute())
    if (const fs::path h = resolve(home); std::distance(h.begin(), h.end()) > 2) list.hide(h);
  for (const auto& h : policy.hide) {
    if (resolve(h) == "/")
      throw std::invalid_argument(fmt::format("sandbox: cannot hide {}: that is the whole file system", h.string()));
    list.hide(h);
  }
  return list;
}

fs::path checked_executable(const Policy& policy) {
  const fs::path exe = resolve(policy.executable);
  if (exe.empty() || !fs::is_regular_file(exe))
    throw std::invalid_argument(fmt::format("sandbox: the harness executable \"{}\" is not an existing file",
                                            policy.executable.string()));
  return exe;
}

void set_env(Args& a) {
  a.push_back("--clearenv");
  for (const char* name : kEnvAllowed)
    if (const char* v = std::getenv(name); v != nullptr) a.insert(a.end(), {"--setenv", name, v});
  a.insert(a.end(), {"--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--setenv", "CUDA_CACHE_DISABLE", "1"});
}

void sized_tmpfs(Args& a, std::uint64_t bytes, const char* where) {
  if (bytes > 0) a.insert(a.end(), {"--size", std::to_string(bytes)});
  a.insert(a.end(), {"--tmpfs", where});
}

// The seccomp program of Policy::lock_cpus (classic BPF, as bwrap --seccomp takes it): the
// native ABI's sched_setaffinity fails with EPERM, and so does every syscall of another ABI
// (their numbers differ: i386's int 0x80 would call sched_setaffinity as 241), everything else
// is allowed.
#if defined(__x86_64__)
constexpr std::uint32_t kNativeArch = AUDIT_ARCH_X86_64;
constexpr std::uint32_t kX32Bit = 0x40000000;  // __X32_SYSCALL_BIT: the x32 ABI on the same arch
#elif defined(__aarch64__)
constexpr std::uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
constexpr std::uint32_t kX32Bit = 0;
#else
#error "labkit's seccomp filter knows x86_64 and aarch64"
#endif

std::vector<sock_filter> affinity_filter() {
  constexpr std::uint32_t kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  std::vector<sock_filter> f = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kNativeArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, kDeny),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
  };
  if (kX32Bit != 0) {
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, kX32Bit, 0, 1));
    f.push_back(BPF_STMT(BPF_RET | BPF_K, kDeny));
  }
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sched_setaffinity, 0, 1));
  f.push_back(BPF_STMT(BPF_RET | BPF_K, kDeny));
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return f;
}

Args build(const fs::path& bwrap, const Policy& policy, const Args& argv_inside) {
  if (argv_inside.empty() || argv_inside[0].empty())
    throw std::invalid_argument("sandbox: empty command line for inside");
  const fs::path exe = checked_executable(policy);
  const AllowList list = view(policy, exe, argv_inside);

  // bwrap applies these in order, each over what came before, so the order is the design:
  //  1. namespaces, no capabilities (root could otherwise unmount the hiding tmpfs);
  //     --die-with-parent also kills bwrap's init when the outer bwrap exits with the harness:
  //     without it init waits for every process left inside, and they outlive the harness;
  //  2. fresh /proc and /dev, the GPU nodes, a sized /dev/shm, then /dev read-only (no files
  //     filling memory there; device nodes stay usable on a read-only mount);
  //  3. the private /tmp;
  //  4. the allow-list on bwrap's empty root, parents first (allow_list.h): the executable at
  //     kInsidePath, its loader and libraries, the CUDA driver's, the extras, the symlinks on
  //     their way, and hidden paths inside shown folders; the hiding tmpfs stay writable until
  //     step 5 for the mount points of what is shown under them;
  //  5. hiding tmpfs and / read-only (not recursive: mounts on them keep their own flags);
  //  6. working directory and environment; then the command.
  Args a{bwrap.string(), "--die-with-parent", "--unshare-net", "--unshare-pid", "--unshare-ipc",
         "--unshare-uts", "--new-session", "--cap-drop", "ALL"};
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev"});
  for (const auto& node : gpu_device_nodes("/dev")) a.insert(a.end(), {"--dev-bind-try", node.string(), node.string()});
  sized_tmpfs(a, policy.tmp_bytes, "/dev/shm");
  a.insert(a.end(), {"--remount-ro", "/dev"});
  sized_tmpfs(a, policy.tmp_bytes, "/tmp");
  const Args shown = list.args();
  a.insert(a.end(), shown.begin(), shown.end());
  for (const auto& d : list.hidden_dirs()) a.insert(a.end(), {"--remount-ro", d});
  a.insert(a.end(), {"--remount-ro", "/", "--chdir", "/tmp"});
  set_env(a);
  if (policy.lock_cpus) a.insert(a.end(), {"--seccomp", std::to_string(kSeccompFd)});
  a.push_back("--");
  a.insert(a.end(), argv_inside.begin(), argv_inside.end());
  return a;
}

bool executable_file(const fs::path& p) { return fs::is_regular_file(p) && ::access(p.c_str(), X_OK) == 0; }

fs::path find_bwrap(const fs::path& hint, std::string& why) {
  if (!hint.empty()) {
    const fs::path p = fs::absolute(hint);
    if (executable_file(p)) return p;
    why = fmt::format("bwrap not found at {} (no such executable file)", p.string());
    return {};
  }
  std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  for (std::size_t start = 0; start <= path.size();) {
    const std::size_t end = std::min(path.find(':', start), path.size());
    if (end > start)
      if (const fs::path p = fs::path(path.substr(start, end - start)) / "bwrap"; p.is_absolute() && executable_file(p))
        return p;
    start = end + 1;
  }
  if (executable_file("/usr/bin/bwrap")) return "/usr/bin/bwrap";
  why = "bwrap not found in PATH or /usr/bin (install bubblewrap: tools/install-deps.sh)";
  return {};
}

std::string first_line(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find('\n', b) - b);
}

// RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL at the hard one for a harness that ignores it.
constexpr rlim_t kCpuKillAfter = 2;

int lower_limit(int resource, rlim_t soft, rlim_t hard) noexcept {
  rlimit old{};
  if (::getrlimit(resource, &old) != 0) return errno;
  rlimit lim{std::min(soft, old.rlim_max), std::min(hard, old.rlim_max)};
  if (::setrlimit(resource, &lim) != 0) return errno;
  return 0;
}

}  // namespace

std::vector<fs::path> gpu_device_nodes(const fs::path& dev) {
  static const std::regex kNames("nvidiactl|nvidia-uvm|nvidia-uvm-tools|nvidia-modeset|nvidia[0-9]+|nvidia-caps");
  std::vector<fs::path> nodes;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dev, ec))
    if (std::regex_match(e.path().filename().string(), kNames)) nodes.push_back(e.path());
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

Probe assume(const fs::path& bwrap_hint) {
  Probe p;
  p.bwrap = find_bwrap(bwrap_hint, p.why);
  if (p.bwrap.empty()) p.bwrap = bwrap_hint;
  else p.available = true;
  return p;
}

Probe probe(const fs::path& bwrap_hint) {
  Probe p = assume(bwrap_hint);
  if (!p.available) return p;
  p.available = false;  // until the sandboxed run below says so
  subprocess::Options o;
  o.timeout = std::chrono::seconds(10);
  const auto version = subprocess::run({p.bwrap.string(), "--version"}, o);
  p.version = first_line(version.out);
  if (p.version.empty()) p.version = "bubblewrap (unknown version)";

  Policy policy;
  policy.executable = executable_file("/bin/true") ? "/bin/true" : "/usr/bin/true";
  Args argv;
  try {
    argv = build(p.bwrap, policy, {kInsidePath});
  } catch (const std::exception& e) {
    p.why = e.what();
    return p;
  }
  const auto r = subprocess::run(argv, o);
  p.available = r.started && !r.timed_out && r.signal == 0 && r.exit_code == 0;
  if (!p.available) {
    const std::string line = first_line(r.err);
    p.why = line.empty() ? fmt::format("{} {}", p.bwrap.string(), r.describe()) : line;
    return p;
  }
  // The same with the CPU lock: a kernel or container that refuses seccomp still sandboxes.
  const int program = seccomp_program();
  if (program < 0) {
    p.seccomp_why = fmt::format("cannot write the seccomp program: {}", std::strerror(errno));
    return p;
  }
  policy.lock_cpus = true;
  o.fds = {{program, kSeccompFd}};
  const auto rs = subprocess::run(build(p.bwrap, policy, {kInsidePath}), o);
  ::close(program);
  p.seccomp = rs.started && !rs.timed_out && rs.signal == 0 && rs.exit_code == 0;
  if (!p.seccomp) {
    const std::string line = first_line(rs.err);
    p.seccomp_why = line.empty() ? fmt::format("{} {}", p.bwrap.string(), rs.describe()) : line;
  }
  return p;
}

int seccomp_program() {
  const std::vector<sock_filter> f = affinity_filter();
  const int fd = ::memfd_create("labkit-seccomp", MFD_CLOEXEC);
  if (fd < 0) return -1;
  const std::size_t bytes = f.size() * sizeof(sock_filter);
  if (::write(fd, f.data(), bytes) != static_cast<ssize_t>(bytes) || ::lseek(fd, 0, SEEK_SET) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e != 0 ? e : EIO;
    return -1;
  }
  return fd;
}

std::vector<std::string> command(const Probe& probe, const Policy& policy, const std::vector<std::string>& argv_inside) {
  if (!probe.available)
    throw std::logic_error(fmt::format("the bubblewrap sandbox is not available: {}", probe.why));
  Policy p = policy;
  p.lock_cpus = policy.lock_cpus && probe.seccomp;
  return build(probe.bwrap, p, argv_inside);
}

int apply_limits(const Limits& l) noexcept {
  int first = 0;
  const auto set = [&](int resource, rlim_t soft, rlim_t hard) {
    if (const int e = lower_limit(resource, soft, hard); e != 0 && first == 0) first = e;
  };
  if (l.cpu_seconds > 0) {
    const auto s = static_cast<rlim_t>(std::ceil(l.cpu_seconds));
    set(RLIMIT_CPU, s, s + kCpuKillAfter);
  }
  if (l.file_bytes > 0) set(RLIMIT_FSIZE, l.file_bytes, l.file_bytes);
  if (l.data_bytes > 0) set(RLIMIT_DATA, l.data_bytes, l.data_bytes);
  if (l.processes > 0) set(RLIMIT_NPROC, l.processes, l.processes);
  if (l.open_files > 0) set(RLIMIT_NOFILE, l.open_files, l.open_files);
  set(RLIMIT_CORE, 0, 0);
  if (!l.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const int c : l.cpus)
      if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0 && first == 0) first = errno;
  }
  return first;
}

std::vector<fs::path> allow_list(const Policy& policy, const std::vector<std::string>& argv_inside) {
  return view(policy, checked_executable(policy), argv_inside.empty() ? Args{kInsidePath} : argv_inside).shown();
}

void add_tool(Policy& policy, const fs::path& tool) {
  policy.read_only_extra.push_back(tool);  // the path it is run by, symlinks and all
  std::error_code ec;
  if (fs::is_directory(tool, ec)) return;
  // Its install folder, unless that is a system bin directory (a packaged tool's wrapper script
  // there: the caller names the folder it runs from).
  const fs::path folder = resolve(tool).parent_path();
  for (const char* system : {"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin"})
    if (folder.empty() || folder == system) return;
  policy.read_only_extra.push_back(folder);
}

std::string describe(Mode mode, const Probe& probe, const std::string& cpus, std::size_t shown) {
  if (mode == Mode::none) return cpus.empty() ? "none" : fmt::format("none; {}", cpus);
  if (!probe.available) return fmt::format("bubblewrap (not available: {})", probe.why);
  std::string d = shown > 0 ? fmt::format("{} (no network, private /tmp, allow-list: {} paths)", probe.version, shown)
                            : fmt::format("{} (no network, private /tmp, allow-list)", probe.version);
  if (!cpus.empty())
    d += probe.seccomp ? fmt::format("; {}, affinity locked", cpus)
                       : fmt::format("; {}, affinity not locked: {}", cpus, probe.seccomp_why);
  return d;
}

Mode parse_mode(const std::string& text) {
  if (text == "bubblewrap" || text == "bwrap") return Mode::bubblewrap;
  if (text == "none") return Mode::none;
  throw std::invalid_argument(
      fmt::format("unknown sandbox \"{}\": use bubblewrap (or bwrap), or none to run the harness unsandboxed", text));
}

}  // namespace labkit::sandbox
