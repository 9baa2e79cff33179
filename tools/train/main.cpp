// labkit-train — trains the report network (reference/network.h) on the CPU and writes its
// weights (six .npy files) and model.json. By default it trains on the kit's synthetic set
// (datasets/synth.h), generated in memory; --data trains on an instructor's IDX files instead.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "datasets/synth.h"
#include "grader/network/dataset.h"
#include "reference/network.h"
#include "tools/train/net.h"
#include "tools/train/reference_eval.h"
#include "tools/train/trainer.h"

namespace fs = std::filesystem;
using namespace labkit;

namespace {

constexpr const char* kNetwork =
    "conv1 C1 M4 K7 -> ReLU -> maxpool 2 -> conv2 C4 M16 K7 -> ReLU -> maxpool 4 (ceil) -> "
    "FC 1296->32 -> ReLU -> FC 32->10";

std::string class_label(int c, bool synthetic) {
  return synthetic ? std::string(datasets::class_name(c)) : std::to_string(c);
}

void print_confusion(const train::Confusion& c, bool synthetic) {
  fmt::print("confusion (rows: true class, columns: predicted), reference path:\n{:>9}", "");
  for (int p = 0; p < kImageSetClasses; ++p) fmt::print("{:>8}", class_label(p, synthetic));
  fmt::print("\n");
  for (int t = 0; t < kImageSetClasses; ++t) {
    fmt::print("{:>9}", class_label(t, synthetic));
    for (int p = 0; p < kImageSetClasses; ++p) fmt::print("{:>8}", c[t][p]);
    fmt::print("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"labkit-train: train the report network on the CPU"};
  fs::path out_dir, data_dir;
  train::TrainOptions options;
  int train_count = 40000, test_count = 10000;
  options.seed = 1;
  app.add_option("--out", out_dir, "folder for the six .npy files and model.json")->required();
  app.add_option("--seed", options.seed, "seed of the initial weights and the batch order")->capture_default_str();
  app.add_option("--epochs", options.epochs, "passes over the training set")->capture_default_str();
  app.add_option("--train", train_count, "training images (generated, or the first N of --data)")
      ->capture_default_str();
  app.add_option("--test", test_count, "test images to evaluate")->capture_default_str();
  app.add_option("--data", data_dir, "train on the IDX files in this folder (train-* and t10k-*)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--threads", options.threads, "worker threads (0: every core)")->capture_default_str();
  app.add_option("--batch", options.batch, "minibatch size")->capture_default_str();
  app.add_option("--lr", options.adam.lr, "Adam's peak learning rate (cosine schedule)")->capture_default_str();
  app.add_option("--conv1-lr-scale", options.conv1_step_scale, "conv1's learning rate relative to the others")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    if (train_count <= 0 || test_count <= 0) {
      throw std::invalid_argument(fmt::format("--train {} and --test {} must be positive", train_count, test_count));
    }
    const bool synthetic = data_dir.empty();
    auto t0 = std::chrono::steady_clock::now();
    ImageSet train_set, test_set;
    if (synthetic) {
      train_set = datasets::generate(train_count, datasets::kTrainSeed, options.threads);
      test_set = datasets::generate(test_count, datasets::kTestSeed, options.threads);
    } else {
      train_set = load_image_set(data_dir, Split::train);
      test_set = load_image_set(data_dir, Split::test);
      if (train_set.n > train_count) train_set = train_set.first(train_count);
      if (test_set.n > test_count) test_set = test_set.first(test_count);
    }
    const double data_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    fmt::print("data: {} training images ({}), {} test images ({}), {:.1f} s; {} threads\n", train_set.n,
               train_set.source, test_set.n, test_set.source, data_seconds, threads);

    nlohmann::json epochs_log = nlohmann::json::array();
    t0 = std::chrono::steady_clock::now();
    std::vector<float> params = train::train(train_set, test_set, options, [&](const train::EpochStats& e) {
      fmt::print("epoch {:>3}/{}: loss {:.4f}  train acc {:.4f}  test acc {:.4f}  lr {:.2e}  {:.1f} s\n", e.epoch,
                 options.epochs, e.loss, e.train_accuracy, e.test_accuracy, e.learning_rate, e.seconds);
      std::fflush(stdout);
      epochs_log.push_back({{"epoch", e.epoch}, {"loss", e.loss}, {"train_accuracy", e.train_accuracy},
                            {"test_accuracy", e.test_accuracy}, {"seconds", e.seconds}});
    });
    const double train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const reference::network::Model model = train::unflatten(params);
    const double train_acc = train::accuracy(train::predict_all(params, train_set, options.threads), train_set.labels);
    const double test_acc = train::accuracy(train::predict_all(params, test_set, options.threads), test_set.labels);
    t0 = std::chrono::steady_clock::now();
    const std::vector<std::uint8_t> ref_pred = train::classify_reference(model, test_set, options.threads);
    const double ref_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double ref_acc = train::accuracy(ref_pred, test_set.labels);
    const train::Confusion conf = train::confusion(ref_pred, test_set.labels);
    fmt::print("final: train acc {:.4f}, test acc {:.4f} (float), {:.4f} (reference path, {:.1f} s); "
               "training took {:.1f} s\n", train_acc, test_acc, ref_acc, ref_seconds, train_seconds);
    print_confusion(conf, synthetic);

    fs::create_directories(out_dir);
    reference::network::save_model(model, out_dir);
    nlohmann::json j;
    j["network"] = kNetwork;
    j["generator"] = synthetic ? std::string(datasets::kGeneratorVersion) : "idx files";
    j["train_source"] = train_set.source;
    j["test_source"] = test_set.source;
    j["seed"] = options.seed;
    j["epochs"] = options.epochs;
    j["train_images"] = train_set.n;
    j["batch"] = options.batch;
    j["optimizer"] = {{"name", "adam"}, {"lr", options.adam.lr}, {"beta1", options.adam.beta1},
                      {"beta2", options.adam.beta2}, {"eps", options.adam.eps},
                      {"schedule", "cosine"}, {"conv1_lr_scale", options.conv1_step_scale}, {"final_lr_fraction", options.adam.final_lr_fraction},
                      {"loss", "softmax cross-entropy"}};
    j["threads"] = threads;
    j["deterministic_across_thread_counts"] = true;
    j["deterministic_note"] =
        "per-image gradients summed in sample order: same seed gives the same weights for any thread "
        "count on the same CPU and compiler";
    j["train_seconds"] = train_seconds;
    j["train_accuracy"] = train_acc;
    j["test_images"] = test_set.n;
    j["test_accuracy"] = test_acc;
    j["test_accuracy_reference"] = ref_acc;
    j["test_checksum"] = checksum_hex(test_set);
    j["train_checksum"] = checksum_hex(train_set);
    if (synthetic) {
      std::vector<std::string> names;
      for (int c = 0; c < kImageSetClasses; ++c) names.emplace_back(datasets::class_name(c));
      j["class_names"] = names;
    }
    j["confusion_reference"] = conf;
    j["epochs_log"] = epochs_log;
    std::ofstream json_out(out_dir / "model.json");
    json_out << j.dump(2) << "\n";
    if (!json_out) throw std::runtime_error((out_dir / "model.json").string() + ": cannot write");
    fmt::print("wrote {} (six .npy files and model.json)\n", out_dir.string());
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "labkit-train: {}\n", e.what());
    return 1;
  }
}
