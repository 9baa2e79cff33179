#include "grader/judge/cpu_partition.h"

#include <sched.h>

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>

namespace labkit {
namespace {

// "0-3,8" -> {0, 1, 2, 3, 8}; empty on anything unexpected.
std::vector<int> parse_list(const std::string& text) {
  std::vector<int> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = text.find(',', i);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(i, end - i);
    const std::size_t dash = item.find('-');
    char* rest = nullptr;
    const long a = std::strtol(item.c_str(), &rest, 10);
    long b = a;
    if (dash != std::string::npos) b = std::strtol(item.c_str() + dash + 1, &rest, 10);
    if (rest == item.c_str() || a < 0 || b < a || b - a > 4096) return {};
    for (long c = a; c <= b; ++c) out.push_back(int(c));
    i = end + 1;
  }
  return out;
}

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

}  // namespace

std::string cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

std::string CpuPartition::describe() const {
  if (split) return fmt::format("lab on CPUs {}, kit on {}", cpu_list(lab), cpu_list(kit));
  return fmt::format("lab and kit share CPUs {} ({})", cpu_list(lab), why);
}

CpuPartition split_cores(std::vector<std::vector<int>> cores) {
  CpuPartition p;
  for (auto& c : cores) std::sort(c.begin(), c.end());
  cores.erase(std::remove_if(cores.begin(), cores.end(), [](const auto& c) { return c.empty(); }), cores.end());
  std::sort(cores.begin(), cores.end());
  std::size_t cpus = 0;
  for (const auto& c : cores) cpus += c.size();
  const std::size_t kit_cores = cores.size() / 2;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    auto& side = i < kit_cores ? p.kit : p.lab;
    side.insert(side.end(), cores[i].begin(), cores[i].end());
  }
  std::sort(p.kit.begin(), p.kit.end());
  std::sort(p.lab.begin(), p.lab.end());
  p.split = cpus >= 4 && cores.size() >= 2;
  if (!p.split) {
    p.why = fmt::format("{} CPU{} on {} core{}: too few to split", cpus, cpus == 1 ? "" : "s", cores.size(),
                        cores.size() == 1 ? "" : "s");
    p.lab.insert(p.lab.end(), p.kit.begin(), p.kit.end());
    std::sort(p.lab.begin(), p.lab.end());
    p.kit = p.lab;
  }
  return p;
}

CpuPartition split_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> allowed;
  if (::sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) allowed.push_back(c);
  // Group the allowed CPUs by physical core; a CPU whose siblings cannot be read is a core alone.
  const std::set<int> allowed_set(allowed.begin(), allowed.end());
  std::map<int, std::vector<int>> by_first;  // lowest allowed sibling -> the core's allowed CPUs
  for (const int c : allowed) {
    const auto siblings = parse_list(read_line(fmt::format("/sys/devices/system/cpu/cpu{}/topology/thread_siblings_list", c)));
    int first = c;
    for (const int s : siblings)
      if (allowed_set.count(s) != 0) first = std::min(first, s);
    by_first[first].push_back(c);
  }
  std::vector<std::vector<int>> cores;
  for (auto& [_, cpus] : by_first) cores.push_back(cpus);
  CpuPartition p = split_cores(cores);
  if (const char* v = std::getenv("LABKIT_CPU_PARTITION"); v != nullptr && std::string(v) == "0" && p.split) {
    p.lab.insert(p.lab.end(), p.kit.begin(), p.kit.end());
    std::sort(p.lab.begin(), p.lab.end());
    p.kit = p.lab;
    p.split = false;
    p.why = "LABKIT_CPU_PARTITION=0";
  }
  return p;
}

PinThread::PinThread(const std::vector<int>& cpus) {
  CPU_ZERO(&old_);
  if (cpus.empty() || ::sched_getaffinity(0, sizeof old_, &old_) != 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  pinned_ = ::sched_setaffinity(0, sizeof set, &set) == 0;
}

PinThread::~PinThread() {
  if (pinned_) ::sched_setaffinity(0, sizeof old_, &old_);
}

}  // namespace labkit
