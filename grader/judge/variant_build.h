// grader/judge/variant_build.h — a lab's harness built again with one compile-time constant changed
// (`labkit sweep`), without touching meson: the exact commands ninja runs for the lab's harness
// target, with -DNAME=VALUE added to the kernel.cu compile and every output moved into a folder
// of ours, so the registered harness (and the build dir's state) stays as it was.
//
// Contract
//   * split_command(): one line of `ninja -t commands` cut into words the way /bin/sh would (meson
//     quotes with '...' and "...", and escapes with a backslash). A line that needs a real shell
//     to mean what it says (an unquoted | & ; < > ( ) $ ` * ? [ ] { } ~, a # starting a word, $ or
//     ` inside double quotes, a quote left open) throws std::invalid_argument naming the
//     character: the words are run with execvp, never through a shell.
//   * extract_recipe(): from the text of `ninja -t commands TARGET` (every step TARGET needs, one
//     per line), the command that compiles KERNEL (`-c KERNEL`, a path as written or relative to
//     the build dir) and the last command writing TARGET (`-o TARGET`), which must read the
//     compile's object. Lines that cannot be split are skipped (e.g. `rm -f x && ar ...`); throws
//     RecipeError naming the kernel or the target when either command is missing.
//   * query_inputs(): the explicit and implicit inputs (`|`) listed by `ninja -t query TARGET`;
//     order-only ones (`||`) are left out.
//   * for_value(): the recipe with `-DNAME=VALUE` just before `-c` (after every other flag, so it
//     is the last definition), the object (and a depfile named after it) written to
//     DIR/kernel.cu.o and the executable to DIR/<TARGET's file name>.
//   * build_variants(): runs ninja on TARGET's inputs except the kernel's object (the kit's own
//     objects and libraries, usually up to date already), then each value's compile and link in
//     the build dir, `jobs` values at a time, each step with the timeout. A value whose compile or
//     link fails is ok = false with the tool's output; the others are still built. Throws
//     BuildError for what is not the value's fault: ninja missing or failing on the kit's inputs,
//     no recipe, a folder that cannot be made. An old executable of a value is removed first, so
//     a failed build never leaves a stale one to be graded.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace labkit::variant {

class RecipeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
class BuildError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::vector<std::string> split_command(std::string_view line);

struct Recipe {
  std::vector<std::string> compile;  // argv of the kernel.cu compile, run in the build dir
  std::vector<std::string> link;     // argv of the harness link
  std::string object;                // the compile's -o, as written (relative to the build dir)
  std::string target;                // the link's -o, as written
};

Recipe extract_recipe(const std::string& commands_text, const std::string& target,
                      const std::filesystem::path& kernel, const std::filesystem::path& build_dir);

std::vector<std::string> query_inputs(const std::string& query_text);

Recipe for_value(const Recipe& recipe, const std::string& name, const std::string& value,
                 const std::filesystem::path& dir);

struct Request {
  std::filesystem::path build_dir;  // meson's build folder: every command runs there
  std::string target;               // the harness as ninja names it: grader/harness/harness-03-tiling
  std::filesystem::path kernel;     // the kernel.cu that target compiles
  std::filesystem::path out_dir;    // a value's files go to out_dir/NAME-VALUE/
  std::string name;                 // "TILE"
  std::vector<std::string> values;  // "8", "16", "32": built in this order
  std::string ninja = "ninja";      // a path, or a name looked up in PATH
  int jobs = 1;
  std::chrono::seconds timeout{900};
  std::function<void(const std::string&)> progress;  // one line per step; called by one thread at a time
};

struct Built {
  std::string value;
  bool ok = false;
  std::filesystem::path exe;  // the variant's harness when ok
  std::string step;           // "compile" or "link": the step that failed
  std::string log;            // that step's output (the compiler's errors) and how it ended
};

std::vector<Built> build_variants(const Request& request);

// A tool's output for a student: absolute paths under `source_root` made relative to it, at most
// `max_lines` lines (then "... N more lines"), each cut at 300 characters.
std::string readable_log(const std::string& text, const std::string& source_root, std::size_t max_lines);

}  // namespace labkit::variant
