// A timed call's kernel records, read back from the tensor file (remote.h, executed_out).
#include <string_view>

#include "remote.h"

namespace labkit::judge {

using nlohmann::json;

json executed_out(std::uint64_t offset) { return {{"offset", offset}, {"bytes", executed::kRegionBytes}}; }

executed::Window executed_window(TensorFile& tensors, std::uint64_t offset, const json& reply, std::string group,
                                 double wall_ms, double reported_ms) {
  auto unavailable = [&](const char* why) {
    executed::Window w;
    w.group = std::move(group);
    w.why = why;
    w.wall_ms = wall_ms;
    w.reported_ms = reported_ms;
    return w;
  };
  if (!reply.is_object() || !reply.contains("executed")) return unavailable("the harness sent no records of the timed call");
  const json& e = reply.at("executed");
  if (!e.is_object() || !e.contains("bytes") || !e.at("bytes").is_number_unsigned() ||
      e.at("bytes").get<std::uint64_t>() > executed::kRegionBytes)
    return unavailable("the harness announced records of an impossible size");
  const std::size_t n = e.at("bytes").get<std::size_t>();
  const std::span<float> region = tensors.floats(offset, executed::kRegionBytes / sizeof(float));
  const std::string_view text(reinterpret_cast<const char*>(region.data()), n);
  return executed::window_from_text(text, std::move(group), wall_ms, reported_ms);
}

}  // namespace labkit::judge
