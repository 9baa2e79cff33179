// Big host buffers made resident ahead of use (grader/protocol/host_pages.h): populate leaves the
// contents as they were, either way of faulting, in a shared file mapped twice as the judge and
// the harness map the tensor file (pages made through one mapping, the other filled with read
// faults, writes through it seen through the first), on ranges that start and end inside a
// page; and an anonymous array made resident keeps what was written before.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "grader/protocol/host_pages.h"

namespace {

struct SharedFile {
  int fd = -1;
  std::size_t bytes = 0;
  explicit SharedFile(std::size_t n) : fd(::memfd_create("test-host-pages", MFD_CLOEXEC)), bytes(n) {
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, static_cast<off_t>(n)) == 0);
  }
  ~SharedFile() { ::close(fd); }
  unsigned char* map() const {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    REQUIRE(p != MAP_FAILED);
    return static_cast<unsigned char*>(p);
  }
};

unsigned char pattern(std::size_t i) { return static_cast<unsigned char>((i * 2654435761u) >> 13); }

}  // namespace

TEST_CASE("populate: a shared file's pages made through one mapping, mapped through another with read faults") {
  const std::size_t bytes = (std::size_t(96) << 20) + 12345;  // several threads' shares, a partial last page
  SharedFile file(bytes);
  unsigned char* judge = file.map();
  labkit::fresh::populate(judge, bytes);  // the judge's side makes the pages (write faults)
  for (std::size_t i = 0; i < bytes; i += 1021) judge[i] = pattern(i);

  unsigned char* harness = file.map();
  const bool mapped = labkit::fresh::populate(harness, bytes, labkit::fresh::Fault::read);
  INFO("MADV_POPULATE_READ " << (mapped ? "mapped every page" : "was refused (an older kernel): pages fault on first touch"));
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < bytes; i += 1021) wrong += harness[i] != pattern(i);
  CHECK(wrong == 0);
  // The harness writes conv1's output into the file: the judge must read what it wrote.
  for (std::size_t i = 7; i < bytes; i += 4093) harness[i] = static_cast<unsigned char>(~pattern(i));
  wrong = 0;
  for (std::size_t i = 7; i < bytes; i += 4093) wrong += judge[i] != static_cast<unsigned char>(~pattern(i));
  CHECK(wrong == 0);

  // A range that starts and ends inside a page: the whole pages inside it, nothing outside.
  CHECK(labkit::fresh::populate(harness + 100, 3 * 4096, labkit::fresh::Fault::read) == mapped);
  CHECK(labkit::fresh::populate(harness + 100, 10, labkit::fresh::Fault::read));  // no whole page: nothing to do
  ::munmap(judge, bytes);
  ::munmap(harness, bytes);
}

TEST_CASE("populate: an anonymous array written before it is made resident keeps its contents") {
  labkit::fresh::AnonymousArray<std::uint32_t> a((std::size_t(8) << 20) + 3);
  for (std::size_t i = 0; i < a.span().size(); i += 997) a.data()[i] = static_cast<std::uint32_t>(i);
  labkit::fresh::populate(a.data(), a.bytes());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < a.span().size(); i += 997) wrong += a.data()[i] != static_cast<std::uint32_t>(i);
  CHECK(wrong == 0);
}
