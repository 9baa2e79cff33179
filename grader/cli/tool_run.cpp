#include "tool_run.h"

#include <algorithm>

namespace labkit::cli {

judge::Options under_tool(const ToolCheckOptions& o, std::vector<std::string> wrapper, std::vector<std::string> show,
                          int pipe_fd, int log_fd, SessionEnd* end) {
  judge::Options so = o.judge;
  so.wrapper = std::move(wrapper);
  so.correctness_only = true;
  so.under_sanitizer = true;
  so.batch = o.batch;
  so.random_cases = 1;
  so.timeout_s = std::min(so.timeout_s, o.timeout_s);
  so.show = std::move(show);
  so.extra_fds = {{pipe_fd, log_fd}};
  so.session_end = end;
  so.close_wait_s = 30;
  return so;
}

}  // namespace labkit::cli
