// tensor-map-probe — what mapping the network's tensor file costs a harness, on this host.
//
// The judge makes the tensor file's pages (1.3 GB at batch 10000) in a process of its own; the
// lab's harness then maps the file and must have every page in its page table before conv1's
// requests, or conv1's copies fault once per 4 KiB page inside the Layer Time. This probe plays
// both sides outside the kit: it makes a memfd's pages in a child, then starts one fresh process
// per run that maps the file and fills its page table one way, with or without CUDA's start-up
// (cudaFree(nullptr)) beside it on another thread, and then writes one byte per page to count
// the faults left over. Ways:
//   write  madvise(MADV_POPULATE_WRITE): one write fault per page
//   read   madvise(MADV_POPULATE_READ): read faults, each of which the kernel answers for up to
//          16 pages (fault-around); in a shared writable mapping of a memfd the entries it makes
//          are writable, so the writes after it should not fault
//   touch  a load every 64 KiB: the same read faults, without madvise's walk of every page
//   none   nothing: every page faults on its first write
// Not part of the build. On a GPU host:
//   nvcc -O2 -std=c++17 -o tensor-map-probe tools/tensor-map-probe.cpp && ./tensor-map-probe
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kBytes = std::size_t(1300) << 20;  // about conv1's input + output at batch 10000

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

long minor_faults() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return r.ru_minflt;
}

// Thread k of n fills pages [pages*k/n, pages*(k+1)/n) of the mapping the given way.
void fill(unsigned char* p, const std::string& way, int threads) {
  const std::size_t pages = kBytes / kPage;
  auto part = [&](int k) {
    unsigned char* a = p + pages * k / threads * kPage;
    unsigned char* b = p + pages * (k + 1) / threads * kPage;
    if (way == "write" || way == "read") {
      if (::madvise(a, b - a, way == "write" ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) != 0) std::perror("madvise");
    } else if (way == "touch") {
      unsigned sum = 0;
      for (unsigned char* q = a; q < b; q += 16 * kPage) sum += *static_cast<volatile unsigned char*>(q);
      if (sum == 12345) std::puts("");  // keeps the loads
    }
  };
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k) pool.emplace_back(part, k);
  part(0);
  for (auto& t : pool) t.join();
}

// One run, in its own process: prints "cuda_ms map_ms map_faults write_ms write_faults".
int run(int fd, const std::string& way, int threads, const std::string& cuda) {
  double cuda_ms = 0;
  auto start_cuda = [&] {
    const auto t = Clock::now();
    cudaFree(nullptr);
    cuda_ms = ms_since(t);
  };
  if (cuda == "seq") start_cuda();
  std::thread beside;
  if (cuda == "par") beside = std::thread(start_cuda);
  const long f0 = minor_faults();
  const auto t0 = Clock::now();
  void* m = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return 1;
  auto* p = static_cast<unsigned char*>(m);
  fill(p, way, threads);
  const double map_ms = ms_since(t0);
  const long f1 = minor_faults();
  if (beside.joinable()) beside.join();
  const long f2 = minor_faults();
  const auto t1 = Clock::now();
  for (std::size_t i = 0; i < kBytes; i += kPage) p[i] = static_cast<unsigned char>(i >> 12);
  const double write_ms = ms_since(t1);
  const long f3 = minor_faults();
  std::printf("%.1f %.1f %ld %.1f %ld\n", cuda_ms, map_ms, f1 - f0, write_ms, f3 - f2);
  return 0;
}

struct Row {
  std::vector<double> cuda, map, write;
  std::vector<long> map_faults, write_faults;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 6 && std::strcmp(argv[1], "run") == 0) return run(std::atoi(argv[2]), argv[3], std::atoi(argv[4]), argv[5]);
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  utsname u{};
  uname(&u);
  std::printf("kernel %s, %u CPUs, %.2f GB shared file, %d runs a row, one process a run\n", u.release,
              std::thread::hardware_concurrency(), kBytes / 1e9, reps);
  const int fd = memfd_create("tensor-map-probe", 0);  // inherited by the runs
  if (fd < 0 || ftruncate(fd, kBytes) != 0) return 1;
  if (pid_t maker = fork(); maker == 0) {  // the judge's child: makes the pages, then exits
    void* m = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) _exit(1);
    fill(static_cast<unsigned char*>(m), "write", 8);
    _exit(0);
  } else {
    waitpid(maker, nullptr, 0);
  }
  std::printf("%-6s %-7s %-4s | %9s | %9s %9s %11s | %9s %12s\n", "cuda", "way", "thr", "cuda ms", "map ms", "map max",
              "map faults", "write ms", "write faults");
  for (const char* cuda : {"none", "seq", "par"})
    for (const char* way : {"none", "write", "read", "touch"})
      for (int threads : {1, 8}) {
        if (std::strcmp(way, "none") == 0 && threads != 1) continue;
        if (std::strcmp(cuda, "none") == 0 && std::strcmp(way, "none") == 0) continue;
        Row r;
        for (int i = 0; i < reps; ++i) {
          const std::string cmd = std::string("'") + argv[0] + "' run " + std::to_string(fd) + " " + way + " " +
                                  std::to_string(threads) + " " + cuda;
          FILE* f = popen(cmd.c_str(), "r");
          double c = 0, m = 0, w = 0;
          long mf = 0, wf = 0;
          if (!f || fscanf(f, "%lf %lf %ld %lf %ld", &c, &m, &mf, &w, &wf) != 5) {
            std::printf("run failed: %s\n", cmd.c_str());
            if (f) pclose(f);
            continue;
          }
          pclose(f);
          r.cuda.push_back(c), r.map.push_back(m), r.write.push_back(w), r.map_faults.push_back(mf), r.write_faults.push_back(wf);
        }
        if (r.map.empty()) continue;
        std::printf("%-6s %-7s %-4d | %9.1f | %9.1f %9.1f %11ld | %9.1f %12ld\n", cuda, way, threads, median(r.cuda),
                    median(r.map), *std::max_element(r.map.begin(), r.map.end()), r.map_faults[0], median(r.write),
                    r.write_faults[0]);
      }
  std::printf("medians (map max: the slowest run); cuda ms: cudaFree(nullptr) before the mapping (seq) or beside it "
              "on another thread (par)\n");
  return 0;
}
