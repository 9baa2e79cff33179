// network_check.cpp — see network_check.h.
#include "network_check.h"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

#include "labkit/dataset.h"
#include "labkit/network_run.h"
#include "labkit/phase.h"
#include "reference/baseline.h"
#include "reference/network.h"

namespace labkit::runner {

void require_network_data(const Options& opt, const NetworkAccuracy& want) {
  set_phase("loading the network's test set and model");
  const ImageSet set = load_image_set(opt.data_dir, Split::test);
  if (set.n < want.images) {
    throw std::runtime_error(fmt::format("lab.json asks for the network on {} test images, but {} holds {}",
                                         want.images, set.source, set.n));
  }
  reference::network::load_model(opt.model_dir);
}

CaseReport network_accuracy_case(const LabUnderTest& lab, const NetworkAccuracy& want, const Options& opt) {
  network::RunOptions ro;
  ro.batch = want.images;
  ro.data_dir = opt.data_dir;
  ro.model_dir = opt.model_dir;
  ro.op_repeats = 0;
  set_phase("the network with the baseline's conv");
  const network::RunResult base = network::run_network({"baseline", &baseline::conv_ops}, ro);
  set_phase("the network with the lab's conv");
  const network::RunResult mine = network::run_network({lab.id, lab.conv}, ro);

  const int differ = network::count_differing(base.predictions, mine.predictions);
  const double drop = 100.0 * (base.accuracy - mine.accuracy);
  CaseReport rep;
  rep.name = "network accuracy";
  rep.origin = "network";
  rep.shape = fmt::format("the milestone network on the first {} test images", want.images);
  rep.passed = drop <= want.max_drop_points;
  rep.outcome = rep.passed ? "accuracy kept" : "accuracy lost";
  rep.worst = want.max_drop_points > 0 ? std::max(drop, 0.0) / want.max_drop_points : (drop > 0 ? 1e9 : 0);
  rep.detail = fmt::format(
      "accuracy {:.4f} with this conv, {:.4f} with the fp32 baseline's: {:.2f} points lost, at most {:g} allowed; "
      "{} of {} images classified differently{}",
      mine.accuracy, base.accuracy, std::max(drop, 0.0), want.max_drop_points, differ, want.images,
      rep.passed ? "" : ". Every element passed its tolerance, but the errors all lean the same way and move the "
                        "network's decisions: accumulate fewer terms at low precision");
  return rep;
}

}  // namespace labkit::runner
