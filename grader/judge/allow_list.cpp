#include "allow_list.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

namespace labkit::sandbox {
namespace {

namespace fs = std::filesystem;

// A symlink chain longer than this is a loop (the kernel's own limit is 40).
constexpr int kMaxLinks = 40;
// A tool's folder is scanned this deep in entries at most (compute-sanitizer's has ~100).
constexpr int kMaxScanned = 50000;

// Libraries that are loaded by name at run time, never named in an ELF file: when the first is
// shown, its companions in the same directory come too.
struct Family {
  const char* trigger;
  std::vector<const char*> companions;
};
const Family kFamilies[] = {
    // The CUDA driver: the runtime dlopens libcuda.so.1, which dlopens the rest by soname (the
    // PTX JIT, the compiler of newer drivers, NVVM for LTO, the debugger compute-sanitizer uses,
    // NVML, the confidential-computing crypto) and some versioned with the driver's version.
    {"libcuda.so",
     {"libcuda.so", "libnvidia-ptxjitcompiler.so", "libnvidia-gpucomp.so", "libnvidia-nvvm.so", "libcudadebugger.so",
      "libnvidia-ml.so", "libnvidia-pkcs11", "libnvidia-fatbinaryloader.so"}},
    // CUPTI loads the perfworks libraries for counters, and its helpers, from its own directory.
    {"libcupti.so", {"libnvperf_host.so", "libnvperf_target.so", "libpcsamplingutil.so", "libcheckpoint.so"}},
};
// Mapped files of the judge that are part of the driver (/proc/self/maps).
constexpr const char* kDriverMapped[] = {"libcuda.so", "libnvidia-", "libcudadebugger.so"};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool is_under(const fs::path& p, const fs::path& dir) {
  const auto [d, _] = std::mismatch(dir.begin(), dir.end(), p.begin(), p.end());
  return d == dir.end();
}

// The interpreter of a "#!" script, or empty.
fs::path shebang(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char buf[256] = {};
  in.read(buf, sizeof buf - 1);
  const std::string head(buf, static_cast<std::size_t>(in.gcount()));
  if (head.rfind("#!", 0) != 0) return {};
  std::istringstream line(head.substr(2, head.find('\n') - 2));
  std::string interpreter;
  line >> interpreter;
  return interpreter.empty() || interpreter[0] != '/' ? fs::path{} : fs::path(interpreter);
}

fs::path canonical_or_empty(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  return ec ? fs::path{} : c;
}

}  // namespace

AllowList::AllowList(elf::Search search) : search_(std::move(search)) {}

fs::path AllowList::walk(const fs::path& path) {
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  if (ec) return {};
  const fs::path relative = abs.relative_path();
  std::vector<fs::path> rest(relative.begin(), relative.end());
  fs::path cur = "/";
  int links = 0;
  for (std::size_t i = 0; i < rest.size();) {
    const fs::path c = rest[i++];
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      cur = cur.parent_path();
      continue;
    }
    const fs::path next = cur / c;
    struct stat st{};
    if (::lstat(next.c_str(), &st) != 0) return {};
    if (!S_ISLNK(st.st_mode)) {
      cur = next;
      continue;
    }
    if (++links > kMaxLinks) return {};
    const fs::path target = fs::read_symlink(next, ec);
    if (ec) return {};
    put(next, {Kind::link, target});
    const fs::path target_relative = target.relative_path();
    std::vector<fs::path> more(target_relative.begin(), target_relative.end());
    more.insert(more.end(), rest.begin() + static_cast<long>(i), rest.end());
    rest = std::move(more);
    i = 0;
    if (target.is_absolute()) cur = "/";
  }
  return cur;
}

void AllowList::put(const fs::path& inside, Node node) {
  const auto [it, inserted] = nodes_.emplace(inside, node);
  const bool was_hide = it->second.kind == Kind::hide_dir || it->second.kind == Kind::hide_file;
  if (!inserted && was_hide && node.kind != Kind::hide_dir && node.kind != Kind::hide_file) it->second = std::move(node);
}

void AllowList::add_libraries(const std::vector<fs::path>& objects, bool skip_first) {
  if (objects.empty()) return;
  const elf::Closure c = search_.closure(objects);
  missing_.insert(missing_.end(), c.missing.begin(), c.missing.end());
  for (std::size_t i = skip_first ? 1 : 0; i < c.files.size(); ++i)
    if (const fs::path real = walk(c.files[i]); !real.empty()) put(real, {Kind::file, real});
  for (const auto& f : c.files) add_companions(f);
}

void AllowList::add_companions(const fs::path& library) {
  const std::string name = library.filename().string();
  for (const Family& family : kFamilies) {
    if (!starts_with(name, family.trigger)) continue;
    std::vector<fs::path> found;
    for (const fs::path& dir : {library.parent_path(), canonical_or_empty(library).parent_path()}) {
      if (dir.empty() || !companions_.insert(dir).second) continue;
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(dir, fs::directory_options::skip_permission_denied, ec)) {
        const std::string n = e.path().filename().string();
        if (std::any_of(family.companions.begin(), family.companions.end(), [&](const char* p) { return starts_with(n, p); }))
          found.push_back(e.path());
      }
    }
    std::sort(found.begin(), found.end());
    add_libraries(found, false);
  }
}

void AllowList::add_program(const fs::path& program, const fs::path& inside) {
  const fs::path real = inside.empty() ? walk(program) : canonical_or_empty(program);
  if (real.empty()) return;
  put(inside.empty() ? real : inside, {Kind::file, real});
  if (!scanned_.insert(inside.empty() ? real : inside).second || !fs::is_regular_file(real)) return;
  if (elf::is_elf(real)) {
    add_libraries({real}, true);
  } else if (const fs::path interpreter = shebang(real); !interpreter.empty()) {
    add_program(interpreter);
  }
}

void AllowList::add_path(const fs::path& path, bool scan) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    if (scan) add_program(path);
    else if (const fs::path real = walk(path); !real.empty()) put(real, {Kind::file, real});
    return;
  }
  const fs::path real = walk(path);
  if (real.empty()) return;
  put(real, {Kind::folder, real});
  if (!scan || !scanned_.insert(real).second) return;
  std::vector<fs::path> objects, outside;
  int seen = 0;
  for (auto it = fs::recursive_directory_iterator(real, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator() && ++seen < kMaxScanned; it.increment(ec)) {
    std::error_code e2;
    if (it->is_symlink(e2)) {
      if (const fs::path target = canonical_or_empty(it->path()); !target.empty() && !is_under(target, real))
        outside.push_back(it->path());
    } else if (it->is_regular_file(e2)) {
      if (elf::is_elf(it->path())) objects.push_back(it->path());
      else if (const fs::path interpreter = shebang(it->path()); !interpreter.empty()) add_program(interpreter);
    }
  }
  add_libraries(objects, false);
  for (const auto& o : outside) add_path(o, true);
}

void AllowList::add_cuda_driver(const fs::path& program) {
  const fs::path real = canonical_or_empty(program);
  const auto info = real.empty() ? std::nullopt : elf::read_elf(real);
  if (info && info->elf64_le)
    if (const fs::path cuda = search_.find("libcuda.so.1", real, *info, real, *info); !cuda.empty()) add_libraries({cuda}, false);
  // What this process loaded: the driver where its own search found it (an LD_LIBRARY_PATH of
  // the judge's, a container's injected folder).
  std::ifstream maps("/proc/self/maps");
  std::vector<fs::path> mapped;
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash == std::string::npos || line.ends_with(" (deleted)")) continue;
    const fs::path p = line.substr(slash);
    const std::string n = p.filename().string();
    if (std::any_of(std::begin(kDriverMapped), std::end(kDriverMapped), [&](const char* d) { return starts_with(n, d); }) &&
        std::find(mapped.begin(), mapped.end(), p) == mapped.end())
      mapped.push_back(p);
  }
  add_libraries(mapped, false);
  for (const auto& m : mapped) add_companions(m.parent_path() / "libcuda.so");  // its neighbours of the family
}

void AllowList::hide(const fs::path& path) {
  const fs::path real = canonical_or_empty(fs::absolute(path));
  if (real.empty()) return;
  nodes_.emplace(real, Node{fs::is_directory(real) ? Kind::hide_dir : Kind::hide_file, {}});
}

std::vector<AllowList::Emitted> AllowList::emitted() const {
  std::vector<Emitted> out, open;  // open: the shown folders and hiding tmpfs above the current path
  for (const auto& [path, node] : nodes_) {
    if (path == "/" || is_under(path, "/proc") || is_under(path, "/dev")) continue;
    while (!open.empty() && !is_under(path, open.back().path)) open.pop_back();
    const bool in_folder = !open.empty() && open.back().node.kind == Kind::folder;
    const bool hiding = node.kind == Kind::hide_dir || node.kind == Kind::hide_file;
    // A hide matters only inside a shown folder; anything else there is already visible.
    if (hiding != in_folder) continue;
    out.push_back({path, node});
    if (node.kind == Kind::folder || node.kind == Kind::hide_dir) open.push_back({path, node});
  }
  return out;
}

std::vector<std::string> AllowList::args() const {
  std::vector<std::string> a;
  for (const auto& [path, node] : emitted()) {
    const std::string p = path.string();
    switch (node.kind) {
      case Kind::file:
      case Kind::folder: a.insert(a.end(), {"--ro-bind", node.source.string(), p}); break;
      case Kind::link: a.insert(a.end(), {"--symlink", node.source.string(), p}); break;
      case Kind::hide_dir: a.insert(a.end(), {"--tmpfs", p}); break;
      case Kind::hide_file: a.insert(a.end(), {"--ro-bind", "/dev/null", p}); break;
    }
  }
  return a;
}

std::vector<std::string> AllowList::hidden_dirs() const {
  std::vector<std::string> d;
  for (const auto& e : emitted())
    if (e.node.kind == Kind::hide_dir) d.push_back(e.path.string());
  return d;
}

std::vector<fs::path> AllowList::shown() const {
  std::vector<fs::path> s;
  for (const auto& e : emitted())
    if (e.node.kind != Kind::hide_dir && e.node.kind != Kind::hide_file) s.push_back(e.path);
  return s;
}

}  // namespace labkit::sandbox
