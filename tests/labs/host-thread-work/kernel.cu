// Cheat: host-thread-work. conv_forward_gpu only queues the job and returns at once; a detached
// host thread waits 400 microseconds (long enough for the grader's stop event, its
// cudaDeviceSynchronize and whatever it does right after) and then launches the real conv on its
// own non-blocking stream. The epilog waits for the queued job before it copies the output back,
// so the output the grader finally reads is correct.
// Unlike side-stream (which launches on a side stream inside the call, so a cudaDeviceSynchronize
// after the call still waits for it), here nothing is on the GPU at all when the grader's sync
// returns: the events time an empty region, and a host clock around "forward + sync" sees nothing
// either.
// On a naive grader (CUDA events, or a host clock across a device sync, and a correctness check
// of what the epilog returns) the output is correct and the op costs microseconds: full marks and
// an absurd speedup.
// Expected verdict: hidden-work: the kit's digest of the device output, taken right after its
// sync, does not match the output fetched later (the work ran after the measured region). That is
// the right verdict rather than incorrect: the output the lab finally delivers is correct; what is
// wrong is when it was computed. 0 points.
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "../common.cuh"

namespace {

struct Job {
  float* out;
  const float* in;
  const float* mask;
  labkit::ConvShape shape;
};

struct Worker {
  std::mutex m;
  std::condition_variable cv;
  std::deque<Job> jobs;
  bool busy = false, quit = false, exited = false, started = false;

  void submit(const Job& job) {
    std::lock_guard<std::mutex> lock(m);
    if (!started) {
      started = true;
      std::thread([this] { run(); }).detach();
      std::atexit([] { instance().stop(); });
    }
    jobs.push_back(job);
    cv.notify_all();
  }

  // Until every queued job has run to completion on the GPU.
  void drain() {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [this] { return jobs.empty() && !busy; });
  }

  void run() {
    cudaStream_t stream;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return;
    std::unique_lock<std::mutex> lock(m);
    for (;;) {
      cv.wait(lock, [this] { return !jobs.empty() || quit; });
      if (quit) break;
      const Job job = jobs.front();
      jobs.pop_front();
      busy = true;
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(400));
      test_lab::launch(job.out, job.in, job.mask, job.shape, 0, job.shape.output_size(), stream);
      cudaStreamSynchronize(stream);
      lock.lock();
      busy = false;
      cv.notify_all();
    }
    exited = true;
    cv.notify_all();
  }

  void stop() {
    std::unique_lock<std::mutex> lock(m);
    quit = true;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::milliseconds(500), [this] { return exited; });
  }

  static Worker& instance() {
    static Worker* w = new Worker;  // never destroyed: the detached thread may outlive statics
    return *w;
  }
};

}  // namespace

void labkit::conv_forward_gpu_prolog(const float*, const float* host_input, const float* host_mask,
                                     float** device_output, float** device_input, float** device_mask,
                                     const ConvShape& shape) {
  labkit::standard_prolog(host_input, host_mask, device_output, device_input, device_mask, shape);
}

void labkit::conv_forward_gpu(float* out, const float* in, const float* mask, const ConvShape& s) {
  Worker::instance().submit({out, in, mask, s});
}

void labkit::conv_forward_gpu_epilog(float* host_output, float* device_output, float* device_input,
                                     float* device_mask, const ConvShape& shape) {
  Worker::instance().drain();
  labkit::standard_epilog(host_output, device_output, device_input, device_mask, shape);
}
