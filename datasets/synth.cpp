// synth.cpp — the synthetic image set (synth.h).
//
// Every pixel is built from a signed distance d (in pixels, negative inside) of the shape;
// coverage = clamp(0.5 - d, 0, 1) anti-aliases the edge over one pixel without supersampling.
// Rotations use a random unit vector (rejection sampling in the unit disk) instead of sin/cos,
// and stripes a triangle wave instead of a sine, so no libm function whose last bit differs
// between libraries ever touches a pixel. Normal-ish noise is the sum of four 16-bit uniforms
// (Irwin-Hall), from one 64-bit draw per pixel.
#include "datasets/synth.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "grader/core/random.h"
#include "reference/parallel.h"

namespace labkit::datasets {
namespace {

constexpr int kSide = kImageSetSide;
constexpr int kClasses = kImageSetClasses;
constexpr float kJitter = 6.f;  // shape centre: the image centre +- this, in pixels
constexpr std::array<std::string_view, kClasses> kNames{
    "disk", "ellipse", "ring", "square", "frame", "cross", "triangle", "fine", "coarse", "checker"};

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  std::uint64_t bits() { return g_.next(); }
  // Uniform in [0, 1) with 24 bits: exact in float.
  float uniform() { return float(g_.next() >> 40) * 0x1.0p-24f; }
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
  int below(int n) { return int((g_.next() >> 33) % std::uint64_t(n)); }
  bool coin() { return (g_.next() >> 63) != 0; }
  // A random unit vector (c, s): cos and sin of a uniform angle, without calling them.
  void direction(float& c, float& s) {
    for (;;) {
      float x = uniform(-1.f, 1.f), y = uniform(-1.f, 1.f);
      float r2 = x * x + y * y;
      if (r2 > 0.01f && r2 <= 1.f) {
        float r = std::sqrt(r2);
        c = x / r;
        s = y / r;
        return;
      }
    }
  }

 private:
  SplitMix64 g_;
};

// Standard-normal-like value (mean 0, variance 1, range +-3.46) from one 64-bit draw.
float irwin_hall4(std::uint64_t b) {
  float sum = 0.f;
  for (int k = 0; k < 4; ++k) sum += float((b >> (16 * k)) & 0xFFFF) * 0x1.0p-16f;
  return (sum - 2.f) * 1.7320508f;  // each term has variance 1/12
}

std::uint64_t mix(std::uint64_t seed, std::uint64_t index, std::uint64_t salt) {
  return SplitMix64(SplitMix64(seed ^ salt).next() + index * 0xD1B54A32D192ED03ull).next();
}

float coverage(float d) { return std::clamp(0.5f - d, 0.f, 1.f); }

// Approximate signed distance to an ellipse with radii a (along u) and b (along v): the implicit
// function over its gradient's length, exact on the boundary, which is all anti-aliasing needs.
float ellipse_sd(float u, float v, float a, float b) {
  const float f = (u * u) / (a * a) + (v * v) / (b * b) - 1.f;
  const float gu = u / (a * a), gv = v / (b * b);
  const float g = 2.f * std::sqrt(gu * gu + gv * gv);
  return g > 1e-6f ? f / g : -1e6f;
}

float box_sd(float u, float v, float hu, float hv) {
  const float qu = std::fabs(u) - hu, qv = std::fabs(v) - hv;
  const float ou = std::max(qu, 0.f), ov = std::max(qv, 0.f);
  return std::sqrt(ou * ou + ov * ov) + std::min(std::max(qu, qv), 0.f);
}

// Equilateral triangle of inradius r centred at the origin: intersection of three half-planes.
float triangle_sd(float u, float v, float r) {
  constexpr float h = 0.8660254f;  // sqrt(3) / 2
  const float d0 = v - r, d1 = -h * u - 0.5f * v - r, d2 = h * u - 0.5f * v - r;
  return std::max(d0, std::max(d1, d2));
}

// Triangle wave of period 1 in [0, 1].
float tri(float t) { return std::fabs(2.f * (t - std::floor(t)) - 1.f); }

// One image's random parameters (drawn in a fixed order, before any pixel).
struct Shape {
  int cls;
  float cx, cy, c, s;  // centre, rotation (cos, sin)
  float a, b;          // half sizes along u and v
  float ratio;         // hole / wall / arm ratio
  float period, phase_u, phase_v;
};

Shape draw_shape(int cls, Rng& rng) {
  Shape sh{};
  sh.cls = cls;
  rng.direction(sh.c, sh.s);
  const float r = rng.uniform(12.f, 22.f);
  float aspect = 1.f;
  switch (cls) {
    case 0: aspect = rng.uniform(1.f, 1.3f); break;
    case 1: aspect = rng.uniform(1.25f, 2.2f); break;
    case 2: aspect = rng.uniform(1.f, 1.3f); sh.ratio = rng.uniform(0.3f, 0.65f); break;
    case 3: aspect = rng.uniform(1.f, 1.35f); break;
    case 4: aspect = rng.uniform(1.f, 1.35f); sh.ratio = rng.uniform(0.25f, 0.6f); break;
    case 5: sh.ratio = rng.uniform(0.22f, 0.45f); break;
    case 6: break;
    case 7: sh.period = rng.uniform(3.6f, 6.2f); break;
    case 8: sh.period = rng.uniform(5.6f, 10.f); break;
    case 9: sh.period = rng.uniform(6.f, 10.f); break;
  }
  // Squares, frames and checkers get half side 0.85 r, so their area stays near the disk's.
  sh.a = (cls == 3 || cls == 4 || cls == 9) ? r * 0.85f : r;
  sh.b = sh.a / aspect;
  sh.phase_u = rng.uniform();
  sh.phase_v = rng.uniform();
  // Near the centre, like MNIST's digits: the network has no global pooling, so its FC1 would
  // have to learn every class again at each of the 9 x 9 positions of conv2's pooled output.
  sh.cx = kSide / 2.f + rng.uniform(-kJitter, kJitter);
  sh.cy = kSide / 2.f + rng.uniform(-kJitter, kJitter);
  return sh;
}

// Coverage of the shape at local (u, v), times the texture for the textured classes; in [0, 1].
float shape_value(const Shape& sh, float u, float v) {
  switch (sh.cls) {
    case 0:
    case 1: return coverage(ellipse_sd(u, v, sh.a, sh.b));
    case 2: {
      const float outer = coverage(ellipse_sd(u, v, sh.a, sh.b));
      const float inner = coverage(ellipse_sd(u, v, sh.a * sh.ratio, sh.b * sh.ratio));
      return std::min(outer, 1.f - inner);
    }
    case 3: return coverage(box_sd(u, v, sh.a, sh.b));
    case 4: {
      const float wall = sh.ratio * std::min(sh.a, sh.b);
      const float outer = coverage(box_sd(u, v, sh.a, sh.b));
      const float inner = coverage(box_sd(u, v, sh.a - wall, sh.b - wall));
      return std::min(outer, 1.f - inner);
    }
    case 5: {
      const float w = sh.ratio * sh.a;
      return coverage(std::min(box_sd(u, v, sh.a, w), box_sd(u, v, w, sh.a)));
    }
    case 6: return coverage(triangle_sd(u, v, 0.6f * sh.a));
    case 7:
    case 8: return coverage(ellipse_sd(u, v, sh.a, sh.a)) * tri(u / sh.period + sh.phase_u);
    default: {
      const float gu = tri(u / sh.period + sh.phase_u) - 0.5f;
      const float gv = tri(v / sh.period + sh.phase_v) - 0.5f;
      return coverage(box_sd(u, v, sh.a, sh.a)) * (0.5f + 2.f * gu * gv);
    }
  }
}

// A clutter object: a small rotated block or a thin line, of its own grey level.
struct Clutter {
  float cx, cy, c, s, hu, hv, level;
};

void render(int cls, std::uint64_t stream, std::uint8_t* out) {
  Rng rng(stream);
  const Shape sh = draw_shape(cls, rng);
  // Background: a level and a linear gradient; the shape is brighter or darker by `contrast`.
  const float base = rng.uniform(40.f, 215.f);
  float gc, gs;
  rng.direction(gc, gs);
  const float slope = rng.uniform(0.f, 50.f) / (kSide / 2.f);
  const float contrast = (rng.coin() ? 1.f : -1.f) * rng.uniform(40.f, 120.f);
  const float sigma = rng.uniform(0.5f, 4.f);
  std::array<Clutter, 2> clutter{};
  const int n_clutter = rng.below(3);
  for (int k = 0; k < n_clutter; ++k) {
    Clutter& o = clutter[k];
    o.cx = rng.uniform(0.f, float(kSide));
    o.cy = rng.uniform(0.f, float(kSide));
    rng.direction(o.c, o.s);
    if (rng.coin()) {  // block
      o.hu = rng.uniform(1.5f, 5.f);
      o.hv = rng.uniform(1.5f, 5.f);
    } else {  // line
      o.hu = rng.uniform(5.f, 20.f);
      o.hv = rng.uniform(0.5f, 1.2f);
    }
    o.level = rng.uniform(0.f, 255.f);
  }
  for (int y = 0; y < kSide; ++y) {
    for (int x = 0; x < kSide; ++x) {
      const float px = float(x) + 0.5f, py = float(y) + 0.5f;
      const float dx = px - sh.cx, dy = py - sh.cy;
      const float u = sh.c * dx + sh.s * dy, v = sh.c * dy - sh.s * dx;
      float value = base + slope * (gc * (px - kSide / 2.f) + gs * (py - kSide / 2.f));
      value += contrast * shape_value(sh, u, v);
      for (int k = 0; k < n_clutter; ++k) {
        const Clutter& o = clutter[k];
        const float ox = px - o.cx, oy = py - o.cy;
        const float cov = coverage(box_sd(o.c * ox + o.s * oy, o.c * oy - o.s * ox, o.hu, o.hv));
        value += cov * (o.level - value);
      }
      value += sigma * irwin_hall4(rng.bits());
      out[y * kSide + x] = std::uint8_t(std::clamp(std::floor(value + 0.5f), 0.f, 255.f));
    }
  }
}

constexpr std::uint64_t kImageSalt = 0x1A6E'0000'0000'0001ull;
constexpr std::uint64_t kLabelSalt = 0x1A6E'0000'0000'0002ull;

}  // namespace

std::string_view class_name(int c) {
  if (c < 0 || c >= kClasses) {
    throw std::out_of_range("class_name: class " + std::to_string(c) + " is not in 0..9");
  }
  return kNames[c];
}

ImageSet generate(int n, std::uint64_t seed, unsigned threads) {
  if (n < 0) throw std::invalid_argument("generate: n = " + std::to_string(n) + " images, expected >= 0");
  ImageSet set;
  set.n = n;
  set.images.resize(std::size_t(n) * kSide * kSide);
  set.labels.resize(std::size_t(n));
  // Labels: a Fisher-Yates permutation of 0..9 per block of ten images.
  for (int block = 0; block * kClasses < n; ++block) {
    std::array<std::uint8_t, kClasses> perm{};
    for (int k = 0; k < kClasses; ++k) perm[k] = std::uint8_t(k);
    Rng rng(mix(seed, std::uint64_t(block), kLabelSalt));
    for (int k = kClasses - 1; k > 0; --k) std::swap(perm[k], perm[rng.below(k + 1)]);
    for (int k = 0; k < kClasses && block * kClasses + k < n; ++k) set.labels[block * kClasses + k] = perm[k];
  }
  reference::parallel_for(
      std::size_t(n),
      [&](std::size_t i) {
        render(set.labels[i], mix(seed, i, kImageSalt), set.images.data() + i * kSide * kSide);
      },
      threads);
  set.source = "synthetic " + std::string(kGeneratorVersion) + " seed " + std::to_string(seed);
  return set;
}

}  // namespace labkit::datasets
