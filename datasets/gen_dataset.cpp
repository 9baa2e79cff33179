// labkit-gen-dataset — writes a split of the synthetic set (datasets/synth.h) as the IDX pair
// that labkit::load_image_set reads (Fashion-MNIST file names), and prints one line:
//   "<count> images, checksum <16 hex>, <out dir>"
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <exception>
#include <filesystem>
#include <map>
#include <optional>

#include "datasets/synth.h"
#include "grader/network/dataset.h"

int main(int argc, char** argv) {
  using namespace labkit;
  CLI::App app{"labkit-gen-dataset: write the synthetic image set as IDX files"};
  std::filesystem::path out;
  Split split = Split::test;
  int count = 10000;
  std::optional<std::uint64_t> seed;
  unsigned threads = 0;
  const std::map<std::string, Split> splits{{"test", Split::test}, {"train", Split::train}};
  app.add_option("--out", out, "output folder (created)")->required();
  app.add_option("--split", split, "test (t10k-* files) or train (train-* files)")
      ->required()
      ->transform(CLI::CheckedTransformer(splits, CLI::ignore_case));
  app.add_option("--count", count, "number of images")->required()->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "generator seed (default: the split's own seed)");
  app.add_option("--threads", threads, "worker threads (0: every core)");
  CLI11_PARSE(app, argc, argv);
  try {
    const std::uint64_t s = seed.value_or(split == Split::test ? datasets::kTestSeed : datasets::kTrainSeed);
    const ImageSet set = datasets::generate(count, s, threads);
    std::filesystem::create_directories(out);
    save_image_set(set, out, split);
    fmt::print("{} images, checksum {}, {}\n", set.n, checksum_hex(set), out.string());
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "labkit-gen-dataset: {}\n", e.what());
    return 1;
  }
}
