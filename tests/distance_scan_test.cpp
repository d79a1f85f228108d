// The enter phase's distance scan: the AVX2 path must give exactly the scalar path's hits, and
// both exactly the plain rule dx * dx + dz * dz <= r2 (less the stamped), on every run length and
// at the boundary; the same of the enter count (the hits without stamps, counted), and of the
// plain pass's leave test (d2 > L^2, or the viewer; and how many of the rest have d2 <= R^2).
#include "../src/distance_scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../src/simd.h"
#include "rng.h"

namespace sightline {
namespace {

// Ids are positions; a candidate whose position is a multiple of 5 is stamped with kEpoch (already
// handled), others with kEpoch - 1 or 0.
constexpr std::uint32_t kEpoch = 9;
std::vector<std::uint32_t> stamps_for(std::size_t count) {
  std::vector<std::uint32_t> stamp(count);
  for (std::uint32_t i = 0; i < count; ++i) stamp[i] = i % 5 == 0 ? kEpoch : (i % 2 == 0 ? kEpoch - 1 : 0);
  return stamp;
}

std::vector<std::uint32_t> brute_hits(const std::vector<float>& xs, const std::vector<float>& zs, float ox,
                                      float oz, float r2) {
  std::vector<std::uint32_t> hits;
  for (std::uint32_t i = 0; i < xs.size(); ++i) {
    if (i % 5 == 0) continue;  // stamped
    const float dx = xs[i] - ox;
    const float dz = zs[i] - oz;
    const float dx2 = dx * dx;
    const float dz2 = dz * dz;
    const float d2 = dx2 + dz2;  // three rounded operations, never fused
    if (d2 <= r2) hits.push_back(i);
  }
  return hits;
}

// The scan over the given runs, ids being positions, so a found id is its candidate's position.
std::vector<std::uint32_t> run(DistanceScan scan, const std::vector<float>& xs, const std::vector<float>& zs,
                               const std::vector<ScanRun>& runs, float ox, float oz, float r2) {
  std::vector<std::uint32_t> ids(xs.size());
  for (std::uint32_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::size_t total = 0;
  for (const ScanRun& r : runs) total += r.end - r.begin;
  // Exactly the room the contract asks for, so ASan sees any store beyond it.
  std::vector<std::uint32_t> found(total + 8, 0xFFFFFFFFu);
  const std::vector<std::uint32_t> stamp = stamps_for(xs.size());
  const std::uint32_t n =
      scan(xs.data(), zs.data(), ids.data(), runs.data(), static_cast<std::uint32_t>(runs.size()), ox, oz, r2,
           stamp.data(), kEpoch, found.data());
  EXPECT_LE(n, total);
  found.resize(n);
  return found;
}

std::vector<std::uint32_t> run(DistanceScan scan, const std::vector<float>& xs, const std::vector<float>& zs,
                               float ox, float oz, float r2) {
  return run(scan, xs, zs, {ScanRun{0, static_cast<std::uint32_t>(xs.size())}}, ox, oz, r2);
}

// Points scattered around the origin, a share placed exactly on the circle (axis-aligned, where
// the radius is exact) and a share one ulp either side of it.
void fill(scenarios::Rng& rng, std::uint32_t count, float ox, float oz, float radius, std::vector<float>& xs,
          std::vector<float>& zs) {
  xs.clear();
  zs.clear();
  for (std::uint32_t i = 0; i < count; ++i) {
    float x = rng.uniform(ox - 2.0f * radius, ox + 2.0f * radius);
    float z = rng.uniform(oz - 2.0f * radius, oz + 2.0f * radius);
    switch (rng.below(6)) {
      case 0:
        x = ox + radius;
        z = oz;
        break;
      case 1:
        x = ox;
        z = oz - radius;
        break;
      case 2:
        x = std::nextafter(ox + radius, ox + 2.0f * radius);
        z = oz;
        break;
      case 3:
        x = ox;
        z = std::nextafter(oz + radius, oz);
        break;
      default: break;
    }
    xs.push_back(x);
    zs.push_back(z);
  }
}

TEST(DistanceScan, ScalarEqualsThePlainRule) {
  scenarios::Rng rng(0x5ca1a4);
  std::vector<float> xs;
  std::vector<float> zs;
  for (std::uint32_t count = 0; count <= 70; ++count) {
    for (int trial = 0; trial < 20; ++trial) {
      const float ox = rng.uniform(-500.0f, 500.0f);
      const float oz = rng.uniform(-500.0f, 500.0f);
      const float radius = rng.uniform(0.5f, 200.0f);
      fill(rng, count, ox, oz, radius, xs, zs);
      const float r2 = radius * radius;
      ASSERT_EQ(run(&scan_within_scalar, xs, zs, ox, oz, r2), brute_hits(xs, zs, ox, oz, r2))
          << "count " << count << " trial " << trial;
    }
  }
}

TEST(DistanceScan, Avx2EqualsScalarExactly) {
  if (scan_within_avx2 == nullptr) GTEST_SKIP() << "this build has no AVX2 scan (not x86-64)";
  if (!simd::cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2";
  scenarios::Rng rng(0xa5a2);
  std::vector<float> xs;
  std::vector<float> zs;
  std::uint64_t hits_seen = 0;
  std::uint64_t boundary_hits = 0;
  for (std::uint32_t count = 0; count <= 70; ++count) {
    for (int trial = 0; trial < 50; ++trial) {
      const float ox = rng.uniform(0.0f, 2000.0f);
      const float oz = rng.uniform(0.0f, 2000.0f);
      const float radius = rng.uniform(0.5f, 200.0f);
      fill(rng, count, ox, oz, radius, xs, zs);
      const float r2 = radius * radius;
      const auto scalar = run(&scan_within_scalar, xs, zs, ox, oz, r2);
      ASSERT_EQ(run(scan_within_avx2, xs, zs, ox, oz, r2), scalar) << "count " << count << " trial " << trial;
      hits_seen += scalar.size();
      for (std::uint32_t i : scalar) {
        const float dx = xs[i] - ox;
        const float dz = zs[i] - oz;
        boundary_hits += dx * dx + dz * dz == r2 ? 1 : 0;
      }
    }
  }
  // The inputs reach both sides of the rule, and its edge.
  EXPECT_GT(hits_seen, 10000u);
  EXPECT_GT(boundary_hits, 100u);
}

// Several runs in one call, as a grid's rows are handed over: in run order, each run from its
// own start, lengths 0 to 20 so every run ends mid-vector somewhere.
TEST(DistanceScan, RunsAreScannedInOrderFromTheirOwnStart) {
  scenarios::Rng rng(0x7275);
  std::vector<float> xs;
  std::vector<float> zs;
  for (int trial = 0; trial < 400; ++trial) {
    const float ox = rng.uniform(0.0f, 100.0f);
    const float oz = rng.uniform(0.0f, 100.0f);
    const float radius = rng.uniform(0.5f, 20.0f);
    fill(rng, 200, ox, oz, radius, xs, zs);
    const float r2 = radius * radius;
    std::vector<ScanRun> runs;
    std::vector<std::uint32_t> want;
    for (std::uint32_t at = rng.below(5); runs.size() < 6;) {
      const std::uint32_t length = std::min(rng.below(21), 200 - at);
      runs.push_back({at, at + length});
      for (std::uint32_t i = at; i < at + length; ++i) {
        const float dx = xs[i] - ox;
        const float dz = zs[i] - oz;
        if (dx * dx + dz * dz <= r2 && i % 5 != 0) want.push_back(i);
      }
      at = std::min<std::uint32_t>(at + length + rng.below(9), 200);
    }
    ASSERT_EQ(run(&scan_within_scalar, xs, zs, runs, ox, oz, r2), want) << "trial " << trial;
    if (scan_within_avx2 != nullptr && simd::cpu_has_avx2()) {
      ASSERT_EQ(run(scan_within_avx2, xs, zs, runs, ox, oz, r2), want) << "trial " << trial;
    }
  }
}

TEST(DistanceScan, BestIsOneOfThem) {
  const DistanceScan best = best_distance_scan();
  EXPECT_TRUE(best == &scan_within_scalar || (best != nullptr && best == scan_within_avx2));
  const DistanceCount count = best_distance_count();
  EXPECT_TRUE(count == &count_within_scalar || (count != nullptr && count == count_within_avx2));
  const LeaveTest leave = best_leave_test();
  EXPECT_TRUE(leave == &leave_test_scalar || (leave != nullptr && leave == leave_test_avx2));
}

std::uint32_t brute_count(const std::vector<float>& xs, const std::vector<float>& zs,
                          const std::vector<ScanRun>& runs, float ox, float oz, float r2) {
  std::uint32_t n = 0;
  for (const ScanRun& r : runs) {
    for (std::uint32_t i = r.begin; i < r.end; ++i) {
      const float dx = xs[i] - ox;
      const float dz = zs[i] - oz;
      const float dx2 = dx * dx;
      const float dz2 = dz * dz;
      n += dx2 + dz2 <= r2 ? 1u : 0u;
    }
  }
  return n;
}

// Every run length 0..70 as one run, and split in up to four runs with gaps between them (what
// lies in a gap is never counted), points on the circle and one ulp either side.
TEST(DistanceScan, CountsEqualThePlainRule) {
  const bool avx2 = count_within_avx2 != nullptr && simd::cpu_has_avx2();
  scenarios::Rng rng(0xc0047);
  std::vector<float> xs;
  std::vector<float> zs;
  std::uint64_t counted = 0;
  std::uint64_t candidates = 0;
  for (std::uint32_t count = 0; count <= 70; ++count) {
    for (int trial = 0; trial < 30; ++trial) {
      const float ox = rng.uniform(-1000.0f, 1000.0f);
      const float oz = rng.uniform(-1000.0f, 1000.0f);
      const float radius = rng.uniform(0.5f, 200.0f);
      fill(rng, count, ox, oz, radius, xs, zs);
      std::vector<ScanRun> runs{{0, count}};
      if (trial % 2 == 1) {
        runs.clear();
        std::uint32_t at = 0;
        for (int r = 0; r < 4 && at < count; ++r) {
          const std::uint32_t end = std::min(count, at + 1 + rng.below(count - at));
          runs.push_back({at, end});
          at = end + rng.below(3);
        }
      }
      const float r2 = radius * radius;
      const std::uint32_t want = brute_count(xs, zs, runs, ox, oz, r2);
      const auto run_count = static_cast<std::uint32_t>(runs.size());
      // Exactly the candidates, so ASan sees any read beyond them.
      const std::vector<float> xs_exact(xs.begin(), xs.end());
      const std::vector<float> zs_exact(zs.begin(), zs.end());
      ASSERT_EQ(count_within_scalar(xs_exact.data(), zs_exact.data(), runs.data(), run_count, ox, oz, r2),
                want)
          << "count " << count << " trial " << trial;
      if (avx2) {
        ASSERT_EQ(count_within_avx2(xs_exact.data(), zs_exact.data(), runs.data(), run_count, ox, oz, r2),
                  want)
            << "count " << count << " trial " << trial;
      }
      counted += want;
      for (const ScanRun& r : runs) candidates += r.end - r.begin;
    }
  }
  EXPECT_GT(counted, 3000u);
  EXPECT_GT(candidates - counted, 3000u);
}

// The leave test over a set of members (sorted distinct slots of `xs`), against the plain rule:
// the positions of those beyond L or equal to the viewer, in order, and how many of the others
// lie within R.
struct LeaveResult {
  std::vector<std::uint32_t> gone;
  std::uint32_t inside = 0;
  bool operator==(const LeaveResult&) const = default;
};

LeaveResult leave(LeaveTest test, const std::vector<EntityId>& members, const std::vector<float>& xs,
                  const std::vector<float>& zs, float ox, float oz, float leave_r2, float enter_r2,
                  std::uint32_t viewer) {
  LeaveResult out;
  // Exactly `count` values, so ASan sees any store beyond them.
  std::vector<std::uint32_t> gone(members.size());
  out.inside = 12345;
  const std::uint32_t n = test(members.data(), static_cast<std::uint32_t>(members.size()), xs.data(),
                               zs.data(), ox, oz, leave_r2, enter_r2, viewer, gone.data(), out.inside);
  EXPECT_LE(n, members.size());
  gone.resize(n);
  out.gone = gone;
  return out;
}

LeaveResult brute_leave(const std::vector<EntityId>& members, const std::vector<float>& xs,
                        const std::vector<float>& zs, float ox, float oz, float leave_r2, float enter_r2,
                        std::uint32_t viewer) {
  LeaveResult out;
  for (std::uint32_t i = 0; i < members.size(); ++i) {
    const std::uint32_t e = members[i].index;
    const float dx = xs[e] - ox;
    const float dz = zs[e] - oz;
    const float dx2 = dx * dx;
    const float dz2 = dz * dz;
    const float d2 = dx2 + dz2;
    if (d2 > leave_r2 || e == viewer) {
      out.gone.push_back(i);
    } else if (d2 <= enter_r2) {
      ++out.inside;
    }
  }
  return out;
}

TEST(DistanceScan, LeaveTestsEqualThePlainRule) {
  const bool avx2 = leave_test_avx2 != nullptr && simd::cpu_has_avx2();
  scenarios::Rng rng(0x1ea4e);
  std::vector<float> xs;
  std::vector<float> zs;
  std::uint64_t gone_seen = 0;
  std::uint64_t kept_seen = 0;
  std::uint64_t inside_seen = 0;
  for (std::uint32_t count = 0; count <= 70; ++count) {
    for (int trial = 0; trial < 40; ++trial) {
      const float ox = rng.uniform(0.0f, 2000.0f);
      const float oz = rng.uniform(0.0f, 2000.0f);
      const float radius = rng.uniform(0.5f, 200.0f);
      fill(rng, 2 * count + 9, ox, oz, radius, xs, zs);
      // A sorted subset of the slots, the viewer among them in some trials.
      std::vector<EntityId> members;
      for (std::uint32_t e = 0; e < xs.size() && members.size() < count; ++e) {
        if (rng.below(2) == 0) members.push_back({e, 1 + rng.below(9)});
      }
      const std::uint32_t viewer = !members.empty() && rng.below(3) == 0
                                       ? members[rng.below(static_cast<std::uint32_t>(members.size()))].index
                                       : static_cast<std::uint32_t>(xs.size() - 1);
      // L = R in some trials, so the points on L's circle are on R's too.
      const float r2 = radius * radius;
      const float enter_r2 = rng.below(3) == 0 ? r2 : r2 * rng.uniform(0.3f, 1.0f);
      const LeaveResult want = brute_leave(members, xs, zs, ox, oz, r2, enter_r2, viewer);
      ASSERT_EQ(leave(&leave_test_scalar, members, xs, zs, ox, oz, r2, enter_r2, viewer), want)
          << "count " << count << " trial " << trial;
      if (avx2) {
        ASSERT_EQ(leave(leave_test_avx2, members, xs, zs, ox, oz, r2, enter_r2, viewer), want)
            << "count " << count << " trial " << trial;
      }
      gone_seen += want.gone.size();
      kept_seen += members.size() - want.gone.size();
      inside_seen += want.inside;
    }
  }
  EXPECT_GT(gone_seen, 5000u);
  EXPECT_GT(kept_seen, 5000u);
  EXPECT_GT(inside_seen, 3000u);
  EXPECT_GT(kept_seen - inside_seen, 1000u);
}

}  // namespace
}  // namespace sightline
