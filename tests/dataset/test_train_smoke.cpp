// labkit-train end to end on tiny sets: it writes six .npy files that load_model accepts and a
// model.json with every documented field, from the generated split and from IDX files written
// by labkit-gen-dataset (--data).
//
// Environment (set by tests/dataset/meson.build): LABKIT_TRAIN, LABKIT_GEN_DATASET (the two
// executables).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "grader/network/dataset.h"
#include "reference/network.h"

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  REQUIRE_MESSAGE(v != nullptr, name << " is not set (run through meson test)");
  return v;
}

fs::path temp_dir(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("labkit-train-smoke-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void run(const std::string& command) {
  INFO("command: " << command);
  REQUIRE(std::system(command.c_str()) == 0);
}

void check_output(const fs::path& out, int train_images, int test_images) {
  const auto model = labkit::reference::network::load_model(out);  // checks every shape
  CHECK(model.fc2_b.size() == 10);
  std::ifstream in(out / "model.json");
  REQUIRE(in.good());
  const nlohmann::json j = nlohmann::json::parse(in);
  for (const char* field : {"network", "generator", "seed", "epochs", "train_images", "batch", "optimizer",
                            "threads", "train_seconds", "train_accuracy", "test_images", "test_accuracy",
                            "test_accuracy_reference", "test_checksum", "train_checksum"}) {
    CHECK_MESSAGE(j.contains(field), "model.json lacks \"" << field << "\"");
  }
  CHECK(j.at("train_images").get<int>() == train_images);
  CHECK(j.at("test_images").get<int>() == test_images);
  CHECK(j.at("epochs").get<int>() == 1);
  CHECK(j.at("test_checksum").get<std::string>().size() == 16);
  for (const char* acc : {"train_accuracy", "test_accuracy", "test_accuracy_reference"}) {
    CHECK(j.at(acc).get<double>() >= 0.0);
    CHECK(j.at(acc).get<double>() <= 1.0);
  }
}

}  // namespace

TEST_CASE("labkit-train on the generated split") {
  const fs::path out = temp_dir("synth");
  run(env("LABKIT_TRAIN") + " --out " + (out / "model").string() +
      " --train 200 --test 100 --epochs 1 --threads 2 > " + (out / "log.txt").string());
  check_output(out / "model", 200, 100);
  fs::remove_all(out);
}

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), p.string() << " cannot be read");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_CASE("the same seed gives the same weights with 1 and 3 threads") {
  const fs::path out = temp_dir("threads");
  for (int t : {1, 3}) {
    run(env("LABKIT_TRAIN") + " --out " + (out / std::to_string(t)).string() +
        " --train 96 --test 20 --batch 32 --epochs 1 --seed 5 --threads " + std::to_string(t) + " > /dev/null");
  }
  for (const auto& f : labkit::reference::network::kModelFiles) {
    INFO("file " << f.name);
    CHECK(file_bytes(out / "1" / f.name) == file_bytes(out / "3" / f.name));
  }
  fs::remove_all(out);
}

TEST_CASE("labkit-train --data on IDX files") {
  const fs::path out = temp_dir("idx");
  const std::string gen = env("LABKIT_GEN_DATASET");
  run(gen + " --out " + (out / "data").string() + " --split train --count 120 --seed 7 > /dev/null");
  run(gen + " --out " + (out / "data").string() + " --split test --count 60 --seed 8 > /dev/null");
  run(env("LABKIT_TRAIN") + " --out " + (out / "model").string() + " --data " + (out / "data").string() +
      " --epochs 1 --threads 2 > " + (out / "log.txt").string());
  check_output(out / "model", 120, 60);
  // The recorded checksum is the one of the files trained on.
  const auto test = labkit::load_image_set(out / "data", labkit::Split::test);
  std::ifstream in(out / "model" / "model.json");
  CHECK(nlohmann::json::parse(in).at("test_checksum").get<std::string>() == labkit::checksum_hex(test));
  fs::remove_all(out);
}
