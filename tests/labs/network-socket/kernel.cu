// Cheat: network-socket. The first prolog tries to reach the outside: TCP to 127.0.0.1:47653 (a
// helper the student runs on the grading machine), to public addresses (1.1.1.1:80, 8.8.8.8:53)
// and to whatever a DNS lookup of example.com returns. On a connection it sends "labkit-cheat" and
// logs "labkit-cheat: connected to <address>"; failures are logged without that word.
// conv_forward_gpu writes nothing.
// A real cheat would send the run's inputs (or the seed printed in the report) out and read the
// answers back, or upload the hidden fixtures. On a naive grader with network access the helper
// supplies correct outputs: full marks.
// Expected verdict: incorrect (the output is never written); the log never says "connected", and a
// listener the test opens on the host's 127.0.0.1:47653 sees no connection (the sandbox has its
// own network namespace: its loopback is not the host's). 0 points.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "../common.cuh"

namespace {

void try_connect(const sockaddr* addr, socklen_t len, const char* name) {
  const int fd = ::socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    std::fprintf(stderr, "labkit-cheat: no socket for %s: %s\n", name, std::strerror(errno));
    return;
  }
  int err = ::connect(fd, addr, len) == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, 2000);
    socklen_t n = sizeof err;
    if (ready <= 0) err = ready == 0 ? ETIMEDOUT : errno;
    else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &n) != 0) err = errno;
  }
  if (err == 0) {
    const char hello[] = "labkit-cheat\n";
    const ssize_t sent = ::send(fd, hello, sizeof hello - 1, MSG_NOSIGNAL);
    std::fprintf(stderr, "labkit-cheat: connected to %s (sent %zd bytes)\n", name, sent);
  } else {
    std::fprintf(stderr, "labkit-cheat: no way to %s: %s\n", name, std::strerror(err));
  }
  ::close(fd);
}

void try_ipv4(const char* ip, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<unsigned short>(port));
  ::inet_pton(AF_INET, ip, &a.sin_addr);
  char name[64];
  std::snprintf(name, sizeof name, "%s:%d", ip, port);
  try_connect(reinterpret_cast<const sockaddr*>(&a), sizeof a, name);
}

void reach_out() {
  try_ipv4("127.0.0.1", 47653);
  try_ipv4("1.1.1.1", 80);
  try_ipv4("8.8.8.8", 53);
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (const int rc = ::getaddrinfo("example.com", "80", &hints, &found); rc != 0) {
    std::fprintf(stderr, "labkit-cheat: DNS lookup of example.com failed: %s\n", ::gai_strerror(rc));
    return;
  }
  for (addrinfo* a = found; a; a = a->ai_next) {
    char host[NI_MAXHOST] = "?";
    ::getnameinfo(a->ai_addr, a->ai_addrlen, host, sizeof host, nullptr, 0, NI_NUMERICHOST);
    std::fprintf(stderr, "labkit-cheat: resolved example.com to %s\n", host);
    try_connect(a->ai_addr, a->ai_addrlen, host);
  }
  ::freeaddrinfo(found);
}

}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  static bool tried = false;
  if (!tried) {
    tried = true;
    reach_out();
  }
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float*, const float*, const float*, const ConvShape&) {}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
