#include "grader/judge/elf_deps.h"

#include <elf.h>

#include <cstring>
#include <deque>
#include <fstream>
#include <set>

#include <fmt/core.h>

namespace labkit::elf {
namespace {

namespace fs = std::filesystem;

// Bounds on what a header may make us read: a corrupt file must not cost gigabytes.
constexpr std::size_t kMaxPhdrs = 4096;
constexpr std::size_t kMaxDynamic = 1 << 20;
constexpr std::size_t kMaxStrtab = 64 << 20;
constexpr std::size_t kMaxInterp = 4096;
constexpr std::size_t kMaxCache = 256 << 20;

bool read_at(std::ifstream& in, std::uint64_t offset, void* out, std::size_t bytes) {
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(static_cast<char*>(out), static_cast<std::streamsize>(bytes));
  return static_cast<std::size_t>(in.gcount()) == bytes;
}

template <class T>
bool read_array(std::ifstream& in, std::uint64_t offset, std::size_t count, std::vector<T>& out) {
  out.resize(count);
  return count == 0 || read_at(in, offset, out.data(), count * sizeof(T));
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  for (std::size_t start = 0; start <= s.size();) {
    const std::size_t end = std::min(s.find(sep, start), s.size());
    if (end > start) parts.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// A C string at `offset` of a string table, or "" when it does not end inside it.
std::string string_at(const std::vector<char>& table, std::uint64_t offset) {
  if (offset >= table.size()) return {};
  const char* s = table.data() + offset;
  const void* end = std::memchr(s, '\0', table.size() - offset);
  return end == nullptr ? std::string{} : std::string(s);
}

// The dynamic section's strings: DT_STRTAB is a virtual address, found in the PT_LOAD that holds it.
void read_dynamic(std::ifstream& in, const std::vector<Elf64_Phdr>& phdrs, const Elf64_Phdr& dyn_ph, Info& info) {
  std::vector<Elf64_Dyn> dyn;
  if (!read_array(in, dyn_ph.p_offset, std::min<std::size_t>(dyn_ph.p_filesz / sizeof(Elf64_Dyn), kMaxDynamic), dyn))
    return;
  std::uint64_t strtab = 0, strsz = 0;
  for (const auto& d : dyn) {
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
    if (d.d_tag == DT_STRSZ) strsz = d.d_un.d_val;
  }
  std::uint64_t offset = 0;
  bool mapped = false;
  for (const auto& p : phdrs)
    if (p.p_type == PT_LOAD && strtab >= p.p_vaddr && strtab < p.p_vaddr + p.p_filesz) {
      offset = strtab - p.p_vaddr + p.p_offset;
      mapped = true;
      break;
    }
  std::vector<char> table;
  if (!mapped || strsz > kMaxStrtab || !read_array(in, offset, strsz, table)) return;
  for (const auto& d : dyn) {
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_NEEDED) {
      if (std::string n = string_at(table, d.d_un.d_val); !n.empty()) info.needed.push_back(std::move(n));
    } else if (d.d_tag == DT_RPATH) {
      info.rpath = split(string_at(table, d.d_un.d_val), ':');
    } else if (d.d_tag == DT_RUNPATH) {
      info.runpath = split(string_at(table, d.d_un.d_val), ':');
    }
  }
}

// Class and machine only: what decides whether the loader takes a candidate file.
bool compatible(const fs::path& p, const Info& program) {
  std::ifstream in(p, std::ios::binary);
  unsigned char ident[EI_NIDENT];
  std::uint16_t type_machine[2];
  if (!in || !read_at(in, 0, ident, sizeof ident) || std::memcmp(ident, ELFMAG, SELFMAG) != 0) return false;
  if (!read_at(in, EI_NIDENT, type_machine, sizeof type_machine)) return false;
  const bool le = ident[EI_DATA] == ELFDATA2LSB;
  const std::uint16_t machine = le ? type_machine[1] : static_cast<std::uint16_t>(type_machine[1] << 8 | type_machine[1] >> 8);
  return ident[EI_CLASS] == program.elf_class && machine == program.machine;
}

fs::path expand_origin(const std::string& dir, const fs::path& object) {
  std::string d = dir;
  const std::string origin = fs::absolute(object).parent_path().string();
  for (const char* token : {"${ORIGIN}", "$ORIGIN"})
    for (std::size_t at; (at = d.find(token)) != std::string::npos;) d.replace(at, std::strlen(token), origin);
  return d;
}

std::uint32_t u32_at(const std::string& b, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

}  // namespace

bool is_elf(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[SELFMAG];
  return in && in.read(magic, SELFMAG) && std::memcmp(magic, ELFMAG, SELFMAG) == 0;
}

std::optional<Info> read_elf(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in || !read_at(in, 0, eh.e_ident, EI_NIDENT) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return std::nullopt;
  Info info;
  info.elf_class = eh.e_ident[EI_CLASS];
  const bool le = eh.e_ident[EI_DATA] == ELFDATA2LSB;
  std::uint16_t type_machine[2] = {};
  if (!read_at(in, EI_NIDENT, type_machine, sizeof type_machine)) return info;
  info.machine = le ? type_machine[1] : static_cast<std::uint16_t>(type_machine[1] << 8 | type_machine[1] >> 8);
  info.elf64_le = le && info.elf_class == ELFCLASS64;
  if (!info.elf64_le || !read_at(in, 0, &eh, sizeof eh) || eh.e_phentsize != sizeof(Elf64_Phdr)) return info;

  std::vector<Elf64_Phdr> phdrs;
  if (!read_array(in, eh.e_phoff, std::min<std::size_t>(eh.e_phnum, kMaxPhdrs), phdrs)) return info;
  for (const auto& p : phdrs) {
    if (p.p_type == PT_INTERP && p.p_filesz > 1 && p.p_filesz <= kMaxInterp) {
      std::vector<char> s;
      if (read_array(in, p.p_offset, p.p_filesz, s)) info.interpreter = std::string(s.data(), strnlen(s.data(), s.size()));
    }
  }
  for (const auto& p : phdrs)
    if (p.p_type == PT_DYNAMIC) read_dynamic(in, phdrs, p, info);
  return info;
}

std::vector<fs::path> ld_cache(const fs::path& cache, const std::string& soname) {
  std::ifstream in(cache, std::ios::binary);
  std::string b;
  if (!in) return {};
  b.assign(std::istreambuf_iterator<char>(in), {});
  if (b.size() > kMaxCache) return {};
  // glibc's dl-cache.h: the old table (magic[11], nlibs, 12-byte entries) may come first; the new
  // header is then at the next 8-byte boundary, and its string offsets count from that header.
  static constexpr char kOld[] = "ld.so-1.7.0";
  static constexpr char kNew[] = "glibc-ld.so.cache1.1";
  std::size_t base = 0;
  if (b.compare(0, sizeof kOld - 1, kOld) == 0 && b.size() >= 16) {
    base = 16 + std::size_t(u32_at(b, 12)) * 12;
    base = (base + 7) / 8 * 8;
  }
  constexpr std::size_t kHeader = 48, kEntry = 24;
  if (b.size() < base + kHeader || b.compare(base, sizeof kNew - 1, kNew) != 0) return {};
  const std::size_t n = u32_at(b, base + 20);
  if (n > (b.size() - base - kHeader) / kEntry) return {};
  std::vector<fs::path> out;
  const auto str = [&](std::uint32_t off) -> std::string {
    const std::size_t at = base + off;
    if (at >= b.size()) return {};
    const std::size_t end = b.find('\0', at);
    return end == std::string::npos ? std::string{} : b.substr(at, end - at);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t e = base + kHeader + i * kEntry;
    if (str(u32_at(b, e + 4)) == soname)
      if (std::string v = str(u32_at(b, e + 8)); !v.empty()) out.emplace_back(std::move(v));
  }
  return out;
}

std::vector<fs::path> default_library_dirs() {
#if defined(__x86_64__)
  const std::string triplet = "x86_64-linux-gnu";
#elif defined(__aarch64__)
  const std::string triplet = "aarch64-linux-gnu";
#else
#error "labkit's library search knows x86_64 and aarch64"
#endif
  return {"/lib/" + triplet, "/usr/lib/" + triplet, "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
}

Search::Search(std::string library_path, fs::path cache, std::vector<fs::path> default_dirs)
    : cache_(std::move(cache)), default_dirs_(std::move(default_dirs)) {
  for (const auto& d : split(library_path, ':')) library_path_.emplace_back(d);
}

fs::path Search::find(const std::string& name, const fs::path& object, const Info& object_info, const fs::path& program,
                      const Info& program_info) const {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return compatible(name, program_info) ? fs::path(name) : fs::path{};
  std::vector<fs::path> dirs;
  if (object_info.runpath.empty()) {
    for (const auto& d : object_info.rpath) dirs.push_back(expand_origin(d, object));
    if (object != program && program_info.runpath.empty())
      for (const auto& d : program_info.rpath) dirs.push_back(expand_origin(d, program));
  }
  dirs.insert(dirs.end(), library_path_.begin(), library_path_.end());
  for (const auto& d : object_info.runpath) dirs.push_back(expand_origin(d, object));
  std::vector<fs::path> candidates;
  for (const auto& d : dirs) candidates.push_back(d / name);
  for (auto& p : ld_cache(cache_, name)) candidates.push_back(std::move(p));
  for (const auto& d : default_dirs_) candidates.push_back(d / name);
  for (const auto& c : candidates)
    if (c.is_absolute() && compatible(c, program_info)) return c;
  return {};
}

Closure Search::closure(const std::vector<fs::path>& objects) const {
  Closure c;
  std::set<fs::path> seen;
  const auto add = [&](const fs::path& p) {
    if (!seen.insert(p).second) return false;
    c.files.push_back(p);
    return true;
  };
  for (const auto& o : objects) add(fs::absolute(o));
  for (const auto& o : objects) {
    const fs::path program = fs::absolute(o);
    const std::optional<Info> pinfo = read_elf(program);
    if (!pinfo || !pinfo->elf64_le) continue;
    if (!pinfo->interpreter.empty() && fs::exists(pinfo->interpreter)) add(pinfo->interpreter);
    std::deque<std::pair<fs::path, Info>> todo{{program, *pinfo}};
    while (!todo.empty()) {
      const auto [object, info] = std::move(todo.front());
      todo.pop_front();
      for (const auto& name : info.needed) {
        const fs::path lib = find(name, object, info, program, *pinfo);
        if (lib.empty()) {
          c.missing.push_back(fmt::format("{} (needed by {})", name, object.string()));
        } else if (add(lib)) {
          if (auto li = read_elf(lib); li && li->elf64_le) todo.emplace_back(lib, std::move(*li));
        }
      }
    }
  }
  return c;
}

}  // namespace labkit::elf
