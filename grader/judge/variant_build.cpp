// A lab's harness rebuilt with one constant changed, from ninja's own commands
// (grader/judge/variant_build.h).
#include "grader/judge/variant_build.h"

#include "grader/judge/text_lines.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "grader/judge/subprocess.h"

namespace labkit::variant {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void needs_shell(char c, std::string_view line) {
  throw std::invalid_argument(fmt::format("'{}' would need a shell to run this command: {}", c, line));
}

// The same file? As written, relative to the build dir, or (when both exist) the same inode.
bool same_file(const std::string& word, const fs::path& file, const fs::path& build_dir) {
  fs::path p(word);
  if (p.is_relative()) p = build_dir / p;
  if (p.lexically_normal() == file.lexically_normal()) return true;
  std::error_code ec;
  return fs::exists(p, ec) && fs::exists(file, ec) && fs::equivalent(p, file, ec);
}

// The word after `flag` ("-o", "-c"), or nullopt.
std::optional<std::string> after(const std::vector<std::string>& words, const std::string& flag) {
  for (std::size_t i = 1; i + 1 < words.size(); ++i)
    if (words[i] == flag) return words[i + 1];
  return std::nullopt;
}

std::string ended(const subprocess::Result& r) {
  return r.started && !r.timed_out && r.signal == 0 ? fmt::format("exited with code {}", r.exit_code) : r.describe();
}

}  // namespace

std::vector<std::string> split_command(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      const std::size_t end = line.find('\'', i + 1);
      if (end == std::string_view::npos) needs_shell('\'', line);
      word.append(line.substr(i + 1, end - i - 1));
      i = end;
      in_word = true;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '$' || line[j] == '`') needs_shell(line[j], line);
        if (line[j] == '\\' && j + 1 < line.size() && std::string_view("$`\"\\").find(line[j + 1]) != std::string_view::npos)
          ++j;  // inside double quotes a backslash escapes only these
        word += line[j];
      }
      if (j >= line.size()) needs_shell('"', line);
      i = j;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 >= line.size()) needs_shell('\\', line);
      word += line[++i];
      in_word = true;
    } else if (std::string_view("|&;<>()$`*?[]{}~\n").find(c) != std::string_view::npos || (!in_word && c == '#')) {
      needs_shell(c, line);
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

Recipe extract_recipe(const std::string& text, const std::string& target, const fs::path& kernel,
                      const fs::path& build_dir) {
  Recipe r;
  r.target = target;
  std::vector<std::vector<std::string>> commands;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    try {
      if (auto words = split_command(line); !words.empty()) commands.push_back(std::move(words));
    } catch (const std::invalid_argument&) {
      // Not a command we run (a static library's `rm -f x && ar ...`): the two we need are plain.
    }
  }
  for (const auto& words : commands) {
    const auto source = after(words, "-c");
    const auto output = after(words, "-o");
    if (source && output && same_file(*source, kernel, build_dir)) {
      r.compile = words;
      r.object = *output;
    }
  }
  if (r.compile.empty())
    throw RecipeError(fmt::format("no command in ninja's recipe for {} compiles {} (`-c` with that file and `-o`)",
                                  target, kernel.string()));
  for (const auto& words : commands) {
    const auto output = after(words, "-o");
    if (output && same_file(*output, build_dir / target, build_dir) &&
        std::find(words.begin(), words.end(), r.object) != words.end())
      r.link = words;
  }
  if (r.link.empty())
    throw RecipeError(fmt::format("no command in ninja's recipe writes {} (`-o {}`) from {}", target, target, r.object));
  return r;
}

std::vector<std::string> query_inputs(const std::string& text) {
  std::vector<std::string> inputs;
  bool in_inputs = false;
  for (const std::string& line : split_lines(text)) {
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    std::string item = line.substr(indent);
    while (!item.empty() && (item.back() == '\r' || item.back() == ' ')) item.pop_back();
    if (indent <= 2) {  // "target:", "  input: RULE", "  outputs:", "  validations:"
      in_inputs = indent == 2 && item.starts_with("input:");
      continue;
    }
    if (!in_inputs || item.starts_with("|| ")) continue;
    if (item.starts_with("| ")) item.erase(0, 2);
    inputs.push_back(item);
  }
  return inputs;
}

Recipe for_value(const Recipe& recipe, const std::string& name, const std::string& value, const fs::path& dir) {
  Recipe v = recipe;
  const std::string object = (dir / "kernel.cu.o").string();
  const std::string exe = (dir / fs::path(recipe.target).filename()).string();
  for (std::string& w : v.compile) {
    if (w == recipe.object) w = object;
    else if (w == recipe.object + ".d") w = object + ".d";
  }
  const auto c = std::find(v.compile.begin() + 1, v.compile.end(), "-c");
  v.compile.insert(c, "-D" + name + "=" + value);
  for (std::size_t i = 1; i < v.link.size(); ++i) {
    if (v.link[i] == recipe.object) v.link[i] = object;
    else if (v.link[i - 1] == "-o" && v.link[i] == recipe.target) v.link[i] = exe;
  }
  v.object = object;
  v.target = exe;
  return v;
}

std::vector<Built> build_variants(const Request& q) {
  std::mutex say_mutex;
  auto say = [&](const std::string& line) {
    if (!q.progress) return;
    std::lock_guard lock(say_mutex);
    q.progress(line);
  };
  subprocess::Options tool;
  tool.working_directory = q.build_dir;
  tool.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(q.timeout);
  auto ninja = [&](std::vector<std::string> args) {
    args.insert(args.begin(), q.ninja);
    subprocess::Result r = subprocess::run(args, tool);
    if (!r.started || r.timed_out || r.signal != 0 || r.exit_code != 0)
      throw BuildError(fmt::format("`{} {}` in {} {}:\n{}{}", q.ninja, fmt::join(args.begin() + 1, args.end(), " "),
                                   q.build_dir.string(), ended(r), r.out, r.err));
    return r.out;
  };

  const Recipe recipe = extract_recipe(ninja({"-t", "commands", q.target}), q.target, q.kernel, q.build_dir);
  std::vector<std::string> inputs;
  for (std::string& in : query_inputs(ninja({"-t", "query", q.target})))
    if (in != recipe.object) inputs.push_back(std::move(in));
  if (!inputs.empty()) {
    say(fmt::format("bringing the kit's part of {} up to date (ninja)", q.target));
    inputs.insert(inputs.begin(), "--");
    ninja(inputs);
  }

  std::vector<Built> built(q.values.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < q.values.size(); i = next++) {
      Built& b = built[i];
      b.value = q.values[i];
      const fs::path dir = q.out_dir / (q.name + "-" + b.value);
      const Recipe v = for_value(recipe, q.name, b.value, dir);
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) {
        b.step = "prepare";
        b.log = fmt::format("cannot create {}: {}", dir.string(), ec.message());
        continue;
      }
      fs::remove(v.target, ec);
      fs::remove(v.object, ec);
      say(fmt::format("building {}={} ...", q.name, b.value));
      for (const auto& [step, argv] : {std::pair{"compile", &v.compile}, std::pair{"link", &v.link}}) {
        const subprocess::Result r = subprocess::run(*argv, tool);
        if (!r.started || r.timed_out || r.signal != 0 || r.exit_code != 0) {
          b.step = step;
          b.log = r.out + r.err + fmt::format("({} {})\n", fs::path(r.program).filename().string(), ended(r));
          break;
        }
      }
      b.ok = b.step.empty() && fs::is_regular_file(v.target, ec);
      if (b.ok) b.exe = v.target;
      else if (b.step.empty()) b.step = "link", b.log = "the link reported success but wrote no " + v.target + "\n";
      say(fmt::format("built {}={}: {}", q.name, b.value, b.ok ? "ok" : b.step + " failed"));
    }
  };
  const int jobs = std::clamp<int>(q.jobs, 1, std::max<int>(1, static_cast<int>(q.values.size())));
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  return built;
}

std::string readable_log(const std::string& text, const std::string& source_root, std::size_t max_lines) {
  std::string root = source_root;
  if (!root.empty() && root.back() != '/') root += '/';
  std::vector<std::string> lines = split_lines(text);
  for (std::string& line : lines) {
    if (root.size() > 1)
      for (std::size_t at; (at = line.find(root)) != std::string::npos;) line.erase(at, root.size());
    if (line.size() > 300) line = line.substr(0, 297) + "...";
  }
  std::string out;
  for (std::size_t i = 0; i < lines.size() && i < max_lines; ++i) out += lines[i] + "\n";
  if (lines.size() > max_lines) out += fmt::format("... {} more lines\n", lines.size() - max_lines);
  return out;
}

}  // namespace labkit::variant
