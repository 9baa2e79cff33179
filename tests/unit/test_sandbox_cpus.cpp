// The CPU partition (grader/judge/cpu_partition.h): how cores are split between the kit and the lab,
// and, through a real bwrap, that the lab's harness starts on its CPUs and cannot leave them
// (the seccomp filter of Policy::lock_cpus) while everything else still works inside.
#include <doctest/doctest.h>

#include <sched.h>

#include <fmt/core.h>

#include "grader/judge/cpu_partition.h"
#include "sandbox_util.h"

using namespace sandbox_test;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

}  // namespace

TEST_CASE("split_cores: whole cores to each side, the kit the first half, no split below 4 CPUs or 2 cores") {
  // 8 cores with two threads each, siblings i and i + 8 (a common VM numbering).
  std::vector<std::vector<int>> smt;
  for (int i = 0; i < 8; ++i) smt.push_back({i + 8, i});
  const auto p = labkit::split_cores(smt);
  CHECK(p.split);
  CHECK(labkit::cpu_list(p.kit) == "0-3,8-11");
  CHECK(labkit::cpu_list(p.lab) == "4-7,12-15");
  CHECK(p.describe() == "lab on CPUs 4-7,12-15, kit on 0-3,8-11");

  // Three cores: the lab gets the larger half.
  const auto odd = labkit::split_cores({{0}, {1}, {2}, {3, 4}});
  CHECK(odd.split);
  CHECK(labkit::cpu_list(odd.kit) == "0-1");
  CHECK(labkit::cpu_list(odd.lab) == "2-4");

  const auto two = labkit::split_cores({{0}, {1}});
  CHECK_FALSE(two.split);
  CHECK(two.kit == two.lab);
  CHECK(labkit::cpu_list(two.lab) == "0-1");
  CHECK(two.describe() == "lab and kit share CPUs 0-1 (2 CPUs on 2 cores: too few to split)");

  const auto one_core = labkit::split_cores({{0, 1, 2, 3}});
  CHECK_FALSE(one_core.split);
  CHECK(one_core.why == "4 CPUs on 1 core: too few to split");
}

TEST_CASE("split_cpus: every CPU this process may use lands on a side, the two sides disjoint when split") {
  const auto p = labkit::split_cpus();
  std::vector<int> all = p.kit;
  if (p.split) all.insert(all.end(), p.lab.begin(), p.lab.end());
  std::sort(all.begin(), all.end());
  CHECK(all == allowed_cpus());
  if (!p.split) CHECK(p.kit == p.lab);
}

TEST_CASE("cpu_list") {
  CHECK(labkit::cpu_list({}) == "");
  CHECK(labkit::cpu_list({3}) == "3");
  CHECK(labkit::cpu_list({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
}

TEST_SUITE("bwrap") {

TEST_CASE("inside the sandbox: the harness runs on Limits::cpus and, locked, cannot change its affinity") {
  if (!bwrap().seccomp) {
    MESSAGE("bwrap cannot load a seccomp filter here: " << bwrap().seccomp_why);
    return;
  }
  const std::vector<int> cpus = allowed_cpus();
  REQUIRE(!cpus.empty());
  sb::Limits l;
  l.cpus = {cpus.front()};
  const auto limited = [&] { sb::apply_limits(l); };
  sb::Policy policy = default_policy();
  policy.lock_cpus = true;
  // taskset resolves to the host's /usr/bin (read-only inside); its own error says EPERM.
  const std::string script = "grep Cpus_allowed_list /proc/self/status; taskset -p -c " + labkit::cpu_list(cpus) +
                             " $$; echo rc=$?; echo still-works";
  const int program = sb::seccomp_program();
  REQUIRE(program >= 0);
  const auto locked = fork_exec(sb::command(bwrap(), policy, {"/bin/sh", "-c", script}), {{sb::kSeccompFd, program}},
                                limited);
  INFO(locked.out);
  CHECK(locked.exit_code() == 0);
  CHECK(contains(locked.out, fmt::format("Cpus_allowed_list:\t{}\n", cpus.front())));
  CHECK(contains(locked.out, "Operation not permitted"));
  CHECK(contains(locked.out, "rc=1"));
  CHECK(contains(locked.out, "still-works"));

  // Unlocked (the kit's own harness, trusted), the same call succeeds: the filter is what stops it.
  policy.lock_cpus = false;
  const auto free = fork_exec(sb::command(bwrap(), policy, {"/bin/sh", "-c", script}), {}, limited);
  INFO(free.out);
  CHECK(contains(free.out, "rc=0"));
  ::close(program);
}

}  // TEST_SUITE
