// set_positions' batch check: the AVX2 path must name exactly the entry the scalar path names,
// and both the first entry that breaks the rule (a null, out-of-range, stale or destroyed
// handle, or a coordinate beyond kMaxCoordinate or NaN), at every batch length and position;
// and both must say exactly when a clean batch is one run of slots.
#include "../src/position_batch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "../src/simd.h"
#include "rng.h"
#include "sightline/world_def.h"

namespace sightline {
namespace {

bool brute_contiguous(const std::vector<EntityId>& ids) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i].index != ids[0].index + i) return false;
  }
  return true;
}

std::size_t brute_first_bad(const std::vector<EntityId>& ids, const std::vector<float>& xs,
                            const std::vector<float>& zs, const std::vector<std::uint32_t>& live) {
  auto coordinate_ok = [](float v) { return !std::isnan(v) && std::fabs(v) <= kMaxCoordinate; };
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const EntityId id = ids[i];
    const bool handle_ok = id.generation != 0 && id.index < live.size() && live[id.index] == id.generation;
    if (!handle_ok || !coordinate_ok(xs[i]) || !coordinate_ok(zs[i])) return i;
  }
  return ids.size();
}

TEST(PositionBatch, BothChecksNameTheFirstBadEntry) {
  const bool avx2 = first_bad_position_avx2 != nullptr && simd::cpu_has_avx2();
  scenarios::Rng rng(0xba7c4);
  // 200 slots: generation 1..5 while alive, 0 for the destroyed ones.
  std::vector<std::uint32_t> all_live(200);
  for (std::uint32_t& g : all_live) g = rng.below(6) == 0 ? 0 : 1 + rng.below(5);
  const float edge = kMaxCoordinate;
  const float odd[] = {std::nextafter(edge, 2 * edge), -std::nextafter(edge, 2 * edge),
                       std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  const float fine[] = {edge, -edge, 0.0f, -0.0f, std::numeric_limits<float>::denorm_min()};
  std::size_t found_bad = 0;
  std::size_t found_contiguous = 0;
  for (std::uint32_t count = 0; count <= 40; ++count) {
    for (int trial = 0; trial < 200; ++trial) {
      // A third of the batches are one run of slots (made live for the trial), sometimes with
      // one index off by one.
      std::vector<std::uint32_t> live = all_live;
      const bool run = rng.below(3) == 0;
      const std::uint32_t base = rng.below(150);
      std::vector<EntityId> ids;
      std::vector<float> xs;
      std::vector<float> zs;
      for (std::uint32_t i = 0; i < count; ++i) {
        std::uint32_t index = rng.below(200);
        while (live[index] == 0) index = rng.below(200);
        if (run) {
          index = base + i;
          if (live[index] == 0) live[index] = 1;
        }
        ids.push_back({index, live[index]});
        xs.push_back(rng.below(8) == 0 ? fine[rng.below(5)] : rng.uniform(-edge, edge));
        zs.push_back(rng.below(8) == 0 ? fine[rng.below(5)] : rng.uniform(-edge, edge));
      }
      if (run && count > 1 && rng.below(4) == 0) {
        const std::uint32_t at = 1 + rng.below(count - 1);
        const std::uint32_t index = ids[at].index + 1 < 200 ? ids[at].index + 1 : ids[at].index - 1;
        live[index] = live[index] == 0 ? 1 : live[index];
        ids[at] = {index, live[index]};
      }
      // Mostly one flaw, sometimes two, anywhere in the batch; sometimes none.
      const std::uint32_t flaws = count == 0 ? 0 : rng.below(3);
      for (std::uint32_t f = 0; f < flaws; ++f) {
        const std::uint32_t at = rng.below(count);
        switch (rng.below(8)) {
          case 0: ids[at] = EntityId{}; break;                           // null
          case 1: ids[at].index = 200 + rng.below(100); break;           // never created
          case 2: ids[at].index = 0x80000000u + rng.below(1000); break;  // far out, signed negative
          case 3: ids[at].generation += 1 + rng.below(3); break;         // stale
          case 4: {                                                      // destroyed
            std::uint32_t d = 0;
            while (d < live.size() && live[d] != 0) ++d;
            if (d < live.size()) ids[at] = {d, 1};
            break;
          }
          case 5: xs[at] = odd[rng.below(5)]; break;
          case 6: zs[at] = odd[rng.below(5)]; break;
          default: ids[at].index = 0xffffffffu; break;
        }
      }
      const std::size_t want = brute_first_bad(ids, xs, zs, live);
      const bool want_contiguous = brute_contiguous(ids);
      found_bad += want != count ? 1 : 0;
      found_contiguous += want == count && want_contiguous && count > 8 ? 1 : 0;
      const struct {
        const char* name;
        PositionBatchCheck check;
      } checks[] = {{"scalar", &first_bad_position_scalar},
                    {"avx2", avx2 ? first_bad_position_avx2 : nullptr}};
      for (const auto& c : checks) {
        if (c.check == nullptr) continue;
        bool contiguous = !want_contiguous;
        ASSERT_EQ(c.check(ids.data(), xs.data(), zs.data(), count, live.data(), live.size(), kMaxCoordinate,
                          &contiguous),
                  want)
            << c.name << ", count " << count << " trial " << trial;
        if (want == count) {
          ASSERT_EQ(contiguous, want_contiguous) << c.name << ", count " << count << " trial " << trial;
        }
      }
    }
  }
  EXPECT_GT(found_bad, 3000u);
  EXPECT_GT(found_contiguous, 300u);
}

TEST(PositionBatch, BestIsOneOfThem) {
  const PositionBatchCheck best = best_position_batch_check();
  EXPECT_TRUE(best == &first_bad_position_scalar || (best != nullptr && best == first_bad_position_avx2));
}

}  // namespace
}  // namespace sightline
