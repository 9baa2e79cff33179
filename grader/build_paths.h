// build_paths.h — where this build's trees are: its source folder, its build folder and the files
// in them the judge and the instructor tools read (fixtures, the synthetic test set, the model,
// the lab registry, the kit's own harnesses). Absolute paths, fixed at configure time, defined in
// the generated build_paths.cpp alone (grader/build_paths.cpp.in): a build folder copied to
// another path and reconfigured there (`labkit bulk`'s prebuilt kit, tools/slurm/bulk-kit.sh)
// then recompiles that one file, and every other object of the kit stays as it was built.
// Read them through labkit_config.h's LABKIT_* macros.
#pragma once

namespace labkit::build_paths {

extern const char* const kSourceRoot;      // meson.project_source_root()
extern const char* const kBuildRoot;       // meson.project_build_root()
extern const char* const kFixturesSmall;   // SOURCE/datasets/fixtures/manifest.json
extern const char* const kFixturesLarge;   // BUILD/datasets/fixtures-large.json
extern const char* const kKitHarnessDir;   // BUILD/grader/harness
extern const char* const kDatasetDir;      // BUILD/datasets/synth
extern const char* const kModelDir;        // SOURCE/datasets/model
extern const char* const kNetworkExe;      // BUILD/grader/labkit-network
extern const char* const kRegistry;        // BUILD/grader/harness/labs.json

}  // namespace labkit::build_paths
