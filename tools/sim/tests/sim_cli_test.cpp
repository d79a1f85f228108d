// sightline-sim end to end: a trace counted by an independent brute force must match --json
// exactly; --write-trace round-trips; malformed traces and bad flags are refused, naming the line.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "trace.h"

namespace {

namespace fs = std::filesystem;

struct Output {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class SimCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("sightline-sim-test-{}-{}", getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  fs::path file(const std::string& name) const { return dir_ / name; }

  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path path = file(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  Output sim(const std::string& args) const {
    const fs::path err_path = file("stderr.txt");
    const std::string command = fmt::format("'{}' {} 2>'{}'", SIGHTLINE_SIM_PATH, args, err_path.string());
    Output result;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return result;
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
    const int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream err(err_path);
    std::stringstream text;
    text << err.rdbuf();
    result.err = text.str();
    return result;
  }

  fs::path dir_;
};

// An independent generator (not the scenarios' walk): positions on a 0.25 lattice, so distances
// of exactly R and L occur and every squared distance is exact in float.
struct Lattice {
  std::uint64_t state;
  std::uint32_t next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state >> 33);
  }
  float step() { return 0.25f * static_cast<float>(static_cast<int>(next() % 5) - 2); }
};

struct Positions {
  std::uint32_t entities = 0;
  std::uint32_t ticks = 0;
  std::vector<float> xs;  // [tick * entities + id]
  std::vector<float> zs;
};

Positions make_positions(std::uint32_t entities, std::uint32_t ticks, float size, std::uint64_t seed) {
  Lattice rng{seed};
  Positions p{entities, ticks, {}, {}};
  std::vector<float> x(entities);
  std::vector<float> z(entities);
  const auto cells = static_cast<std::uint32_t>(size * 4.0f);
  for (std::uint32_t i = 0; i < entities; ++i) {
    x[i] = 0.25f * static_cast<float>(rng.next() % (cells + 1));
    z[i] = 0.25f * static_cast<float>(rng.next() % (cells + 1));
  }
  for (std::uint32_t t = 0; t < ticks; ++t) {
    for (std::uint32_t i = 0; i < entities; ++i) {
      if (t != 0) {
        // Drift past the world's edges is allowed: the grid must still find everything.
        x[i] += rng.step();
        z[i] += rng.step();
      }
      p.xs.push_back(x[i]);
      p.zs.push_back(z[i]);
    }
  }
  return p;
}

std::string to_csv(const Positions& p) {
  std::string text = "tick,id,x,y\n";
  for (std::uint32_t t = 0; t < p.ticks; ++t) {
    // Rows of a tick in a shuffled (reversed for odd ticks) order: any order is allowed.
    for (std::uint32_t k = 0; k < p.entities; ++k) {
      const std::uint32_t id = (t % 2 == 1) ? p.entities - 1 - k : k;
      const std::size_t at = static_cast<std::size_t>(t) * p.entities + id;
      text += fmt::format("{},{},{},{}\n", t, id, p.xs[at], p.zs[at]);
    }
  }
  return text;
}

struct Counts {
  std::uint64_t spawns = 0;
  std::uint64_t despawns = 0;
  std::uint64_t updates = 0;
};

// O(clients * entities) per tick, straight from the rules: the state starts empty; each tick,
// members beyond L leave, then non-members within R (d == R inside) enter, then members update.
Counts brute_force(const Positions& p, float enter_radius, float leave_radius, std::uint32_t clients,
                   bool tiers) {
  Counts counts;
  std::vector<std::vector<bool>> member(clients, std::vector<bool>(p.entities, false));
  const float enter2 = enter_radius * enter_radius;
  const float leave2 = leave_radius * leave_radius;
  const float half = 0.5f * enter_radius;
  const float near2 = half * half;
  for (std::uint32_t t = 0; t < p.ticks; ++t) {
    const float* xs = &p.xs[static_cast<std::size_t>(t) * p.entities];
    const float* zs = &p.zs[static_cast<std::size_t>(t) * p.entities];
    auto d2 = [&](std::uint32_t a, std::uint32_t b) {
      const float dx = xs[a] - xs[b];
      const float dz = zs[a] - zs[b];
      return dx * dx + dz * dz;
    };
    for (std::uint32_t c = 0; c < clients; ++c) {
      for (std::uint32_t e = 0; e < p.entities; ++e) {
        if (e == c) continue;
        if (member[c][e] && d2(c, e) > leave2) {
          member[c][e] = false;
          ++counts.despawns;
        }
      }
      for (std::uint32_t e = 0; e < p.entities; ++e) {
        if (e == c) continue;
        if (!member[c][e] && d2(c, e) <= enter2) {
          member[c][e] = true;
          ++counts.spawns;
        }
      }
      for (std::uint32_t e = 0; e < p.entities; ++e) {
        if (!member[c][e]) continue;
        if (!tiers || d2(c, e) <= near2 || (t + e) % 2 == 0) ++counts.updates;
      }
    }
  }
  return counts;
}

void expect_totals(const nlohmann::json& j, const Counts& want, std::uint32_t ticks, std::uint32_t entities,
                   std::uint32_t clients) {
  EXPECT_EQ(j.at("ticks").get<std::uint64_t>(), ticks);
  EXPECT_EQ(j.at("entities").get<std::uint64_t>(), entities);
  EXPECT_EQ(j.at("clients").get<std::uint64_t>(), clients);
  EXPECT_EQ(j.at("send_all").get<std::uint64_t>(), std::uint64_t{ticks} * clients * (entities - 1));
  EXPECT_EQ(j.at("spawns").get<std::uint64_t>(), want.spawns);
  EXPECT_EQ(j.at("despawns").get<std::uint64_t>(), want.despawns);
  EXPECT_EQ(j.at("updates").get<std::uint64_t>(), want.updates);
  EXPECT_EQ(j.at("messages").get<std::uint64_t>(), want.spawns + want.despawns + want.updates);
  EXPECT_GT(j.at("distance_tests").get<std::uint64_t>(), 0u);
  const double seconds = ticks / 20.0;
  EXPECT_DOUBLE_EQ(j.at("per_second").at("updates").get<double>(),
                   static_cast<double>(want.updates) / seconds);
}

constexpr std::uint32_t kEntities = 40;
constexpr std::uint32_t kTicks = 60;
constexpr std::uint32_t kClients = 25;

TEST_F(SimCli, TraceCountsMatchBruteForce) {
  const Positions p = make_positions(kEntities, kTicks, 20.0f, 12345);
  const fs::path trace = write("trace.csv", to_csv(p));
  const Counts want = brute_force(p, 3.0f, 4.0f, kClients, false);
  ASSERT_GT(want.spawns, 0u);
  ASSERT_GT(want.despawns, 0u);
  const Output got =
      sim(fmt::format("--json --trace '{}' --radius 3 --leave 4 --clients {}", trace.string(), kClients));
  ASSERT_EQ(got.exit_code, 0) << got.err;
  expect_totals(nlohmann::json::parse(got.out), want, kTicks, kEntities, kClients);
}

TEST_F(SimCli, TraceCountsMatchBruteForceWithTiers) {
  const Positions p = make_positions(kEntities, kTicks, 20.0f, 777);
  const fs::path trace = write("trace.csv", to_csv(p));
  const Counts want = brute_force(p, 3.0f, 4.0f, kClients, true);
  const Output got = sim(
      fmt::format("--json --trace '{}' --radius 3 --leave 4 --clients {} --tiers", trace.string(), kClients));
  ASSERT_EQ(got.exit_code, 0) << got.err;
  expect_totals(nlohmann::json::parse(got.out), want, kTicks, kEntities, kClients);
}

TEST_F(SimCli, OneRadiusAndAllClientsMatchBruteForce) {
  const Positions p = make_positions(kEntities, kTicks, 20.0f, 99);
  const fs::path trace = write("trace.csv", to_csv(p));
  const Counts want = brute_force(p, 3.0f, 3.0f, kEntities, false);
  const Output got = sim(fmt::format("--json --trace '{}' --radius 3", trace.string()));
  ASSERT_EQ(got.exit_code, 0) << got.err;
  expect_totals(nlohmann::json::parse(got.out), want, kTicks, kEntities, kEntities);
}

// A drill culls exactly like a culling space at its radii; without it the space sends everything.
TEST_F(SimCli, DrillCullsLikeARadiusAndTheUnculledSpaceSendsEverything) {
  const Positions p = make_positions(kEntities, kTicks, 20.0f, 7);
  const fs::path trace = write("trace.csv", to_csv(p));
  const Counts want = brute_force(p, 3.0f, 3.75f, kEntities, false);
  const Output got = sim(fmt::format("--json --trace '{}' --drill 3 --leave 3.75", trace.string()));
  ASSERT_EQ(got.exit_code, 0) << got.err;
  const auto j = nlohmann::json::parse(got.out);
  expect_totals(j.at("drill"), want, kTicks, kEntities, kEntities);
  const auto& off = j.at("culling_off");
  const std::uint64_t others = kEntities * (kEntities - 1ull);
  EXPECT_EQ(off.at("updates").get<std::uint64_t>(), kTicks * others);
  EXPECT_EQ(off.at("spawns").get<std::uint64_t>(), others);
  EXPECT_EQ(off.at("despawns").get<std::uint64_t>(), 0u);
  EXPECT_NE(sim("--drill 3 --radius 3").exit_code, 0);
  EXPECT_NE(sim("--drill 0").exit_code, 0);
}

// Every rule of the relevance scenario adds messages, and the rows say so.
TEST_F(SimCli, RelevanceScenarioPrintsWhatEachRuleCosts) {
  const Output got = sim("--scenario relevance --seconds 5");
  ASSERT_EQ(got.exit_code, 0) << got.err;
  for (const char* row : {"radius only", "+ team markers", "+ boss always relevant", "+ carried items",
                          "+ an owned drone each", "+ walls block sight"}) {
    EXPECT_NE(got.out.find(row), std::string::npos) << row << "\n" << got.out;
  }
  // Each rule row ends in what it changed: every rule adds messages per second but the walls,
  // which take some away.
  std::istringstream lines(got.out);
  int rule_rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("+ ", 0) != 0) continue;
    ++rule_rows;
    const std::string added = line.substr(line.find_last_of(' ') + 1);
    EXPECT_EQ(added.front(), line.find("walls") != std::string::npos ? '-' : '+') << line;
    EXPECT_GT(added.size(), 2u) << line;
  }
  EXPECT_EQ(rule_rows, 5) << got.out;
  EXPECT_NE(sim("--scenario relevance --tiers").exit_code, 0);
  EXPECT_NE(sim("--scenario nothing").exit_code, 0);
}

// The default scenario through the Replicator at a 1200-byte budget: the bandwidth per client, the
// longest wait, pending, and no broken promise below the speed bound the run prints.
TEST_F(SimCli, BandwidthRunReportsBytesWaitsAndThePromise) {
  const Output got = sim("--budget 1200 --seconds 10");
  ASSERT_EQ(got.exit_code, 0) << got.err;
  for (const char* text :
       {"bytes/s", "kbit/s", "longest wait of a member", "largest pending count", "spawns delayed by pacing",
        "promise violations", "holds for closing speeds below"}) {
    EXPECT_NE(got.out.find(text), std::string::npos) << text << "\n" << got.out;
  }
  const Output json = sim("--json --budget 1200 --seconds 10");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_GT(j["bytes_per_second_per_client"].get<double>(), 100.0);
  EXPECT_NEAR(j["kbit_per_second_per_client"].get<double>(),
              j["bytes_per_second_per_client"].get<double>() * 0.008, 1e-6);
  EXPECT_EQ(j["mirror_anomalies"].get<int>(), 0);
  // Walkers close at up to twice their speed, below the bound with no latency: the promise holds.
  EXPECT_LT(2.0 * j["walk_speed"].get<double>(), j["promise_closing_speed_bound"].get<double>());
  EXPECT_EQ(j["promise_violations_at_send"].get<int>(), 0);
  EXPECT_EQ(j["promise_violations_at_client"].get<int>(), 0);
  // A tight budget and allowance: members wait, entry is paced, and still nothing is anomalous.
  const Output tight = sim("--json --budget 120 --entry-budget 60 --leave 2 --seconds 10");
  ASSERT_EQ(tight.exit_code, 0) << tight.err;
  const auto t = nlohmann::json::parse(tight.out);
  EXPECT_GT(t["longest_wait_ticks"].get<int>(), 1);
  EXPECT_GT(t["spawns_delayed"].get<int>(), 0);
  EXPECT_GT(t["max_pending"].get<int>(), 0);
  EXPECT_GT(t["updates_skipped"].get<int>(), 0);
  EXPECT_EQ(t["mirror_anomalies"].get<int>(), 0);
  // Loss: unreliable delivery, resends, and the mirrors still see no anomaly.
  const Output lossy = sim("--json --budget 1200 --loss 10 --latency 50 --seconds 10");
  ASSERT_EQ(lossy.exit_code, 0) << lossy.err;
  const auto l = nlohmann::json::parse(lossy.out);
  EXPECT_EQ(l["delivery"].get<std::string>(), "unreliable");
  EXPECT_GT(l["resends"].get<int>(), 0);
  EXPECT_GT(l["datagrams_dropped"].get<int>(), 0);
  EXPECT_EQ(l["mirror_anomalies"].get<int>(), 0);
  // Above the bound, the promise breaks where it is checked with latency, and the sim says so.
  const Output fast = sim("--json --budget 1200 --latency 150 --speed 2 --seconds 10");
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  const auto f = nlohmann::json::parse(fast.out);
  EXPECT_GT(2.0 * f["walk_speed"].get<double>(), f["promise_closing_speed_bound"].get<double>());
  EXPECT_GT(f["promise_violations_at_client"].get<int>(), 0);
}

// Events in the bandwidth run: each reaches the clients within its radius, every one sent is
// heard (reliable stream), and their bytes are counted apart.
TEST_F(SimCli, BandwidthRunCountsEventsBytes) {
  const Output quiet = sim("--json --budget 1200 --seconds 10");
  const Output loud = sim("--json --budget 1200 --seconds 10 --events 40");
  ASSERT_EQ(loud.exit_code, 0) << loud.err;
  const auto q = nlohmann::json::parse(quiet.out);
  const auto l = nlohmann::json::parse(loud.out);
  EXPECT_EQ(q["events_emitted"].get<int>(), 0);
  EXPECT_EQ(q["event_bytes_per_second_per_client"].get<double>(), 0.0);
  EXPECT_EQ(l["events_emitted"].get<int>(), 400);                          // 40 a second for 10 s
  EXPECT_GT(l["events_sent"].get<int>(), l["events_emitted"].get<int>());  // several hear each
  EXPECT_EQ(l["events_heard"].get<int>(), l["events_sent"].get<int>());
  EXPECT_GT(l["event_bytes_per_second_per_client"].get<double>(), 0.0);
  // The events' own bytes, and now and then a packet header where one no longer fits.
  const double more =
      l["bytes_per_second_per_client"].get<double>() - q["bytes_per_second_per_client"].get<double>();
  EXPECT_GE(more, l["event_bytes_per_second_per_client"].get<double>());
  EXPECT_LT(more, 1.1 * l["event_bytes_per_second_per_client"].get<double>());
  EXPECT_EQ(l["mirror_anomalies"].get<int>(), 0);
  const Output text = sim("--budget 1200 --seconds 10 --events 40");
  EXPECT_NE(text.out.find("/s heard;"), std::string::npos) << text.out;
  EXPECT_EQ(sim("--budget 1200 --events -1").exit_code, 2);
  EXPECT_NE(sim("--budget 1200 --events -1").err.find("--events is -1"), std::string::npos);
}

TEST_F(SimCli, DeltaUpdatesCutTheBytesOfAWholeState) {
  const Output whole = sim("--json --budget 1200 --seconds 10 --whole-state");
  const Output delta = sim("--json --budget 1200 --seconds 10 --whole-state --deltas");
  const Output lossy = sim("--json --budget 1200 --seconds 10 --whole-state --deltas --loss 5 --latency 100");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  ASSERT_EQ(delta.exit_code, 0) << delta.err;
  ASSERT_EQ(lossy.exit_code, 0) << lossy.err;
  const auto w = nlohmann::json::parse(whole.out);
  const auto d = nlohmann::json::parse(delta.out);
  const auto l = nlohmann::json::parse(lossy.out);
  EXPECT_EQ(w["state"], "whole");
  EXPECT_EQ(w["delta_updates"].get<int>(), 0);
  // The same records, most updates as deltas, and well under half the bytes.
  EXPECT_EQ(d["updates"], w["updates"]);
  EXPECT_EQ(d["spawns"], w["spawns"]);
  EXPECT_GT(d["delta_updates"].get<int>(), d["updates"].get<int>() * 9 / 10);
  EXPECT_LT(d["bytes_per_second_per_client"].get<double>(),
            0.5 * w["bytes_per_second_per_client"].get<double>());
  EXPECT_EQ(d["mirror_anomalies"].get<int>(), 0);
  // Unreliable: bases confirmed by acks through loss and latency, still no anomaly.
  EXPECT_GT(l["delta_updates"].get<int>(), 0);
  EXPECT_EQ(l["mirror_anomalies"].get<int>(), 0);
  EXPECT_NE(sim("--budget 1200 --seconds 1 --deltas").out.find("of them deltas"), std::string::npos);
  EXPECT_EQ(sim("--no-interest --deltas").exit_code, 2);
}

TEST_F(SimCli, NoInterestSendsEverything) {
  const Output got = sim("--json --no-interest --entities 10 --seconds 2");
  ASSERT_EQ(got.exit_code, 0) << got.err;
  const auto j = nlohmann::json::parse(got.out);
  EXPECT_EQ(j.at("updates").get<std::uint64_t>(), 40u * 10u * 9u);
  EXPECT_EQ(j.at("messages").get<std::uint64_t>(), j.at("send_all").get<std::uint64_t>());
  EXPECT_EQ(j.at("spawns").get<std::uint64_t>(), 0u);
  EXPECT_EQ(j.at("distance_tests").get<std::uint64_t>(), 0u);
}

TEST_F(SimCli, WrittenTraceReproducesTheRun) {
  const fs::path trace = file("written.csv");
  const std::string config = "--radius 1.5 --leave 2 --clients 12 --json";
  const Output first = sim(fmt::format(
      "--entities 30 --world 10x6 --seconds 3 --seed 7 {} --write-trace '{}'", config, trace.string()));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const Output again = sim(fmt::format("--trace '{}' {}", trace.string(), config));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(first.out), nlohmann::json::parse(again.out));
  const Output tiered =
      sim(fmt::format("--entities 30 --world 10x6 --seconds 3 --seed 7 {} --tiers", config));
  const Output tiered_again = sim(fmt::format("--trace '{}' {} --tiers", trace.string(), config));
  EXPECT_EQ(nlohmann::json::parse(tiered.out), nlohmann::json::parse(tiered_again.out));
}

struct BadTrace {
  const char* name;
  const char* text;
  std::size_t line;
  const char* says;
};

TEST_F(SimCli, MalformedTracesNameTheLine) {
  const BadTrace cases[] = {
      {"empty", "", 1, "empty"},
      {"bad header", "tick,id,x,z\n0,0,1,1\n", 1, "header"},
      {"header only", "tick,id,x,y\n", 2, "no rows"},
      {"too few fields", "tick,id,x,y\n0,0,1,1\n0,1,2\n", 3, "3 fields"},
      {"too many fields", "tick,id,x,y\n0,0,1,1,5\n", 2, "5 fields"},
      {"not a number", "tick,id,x,y\n0,0,1,1\n0,1,abc,2\n", 3, "not a number"},
      {"nan", "tick,id,x,y\n0,0,nan,1\n", 2, "not finite"},
      {"inf", "tick,id,x,y\n0,0,1,-inf\n", 2, "not finite"},
      {"negative id", "tick,id,x,y\n0,0,1,1\n0,-1,1,1\n", 3, "negative"},
      {"fractional tick", "tick,id,x,y\n0.5,0,1,1\n", 2, "integer"},
      {"id out of range", "tick,id,x,y\n0,0,1,1\n0,1,1,1\n1,0,1,1\n1,2,1,1\n", 5, "out of range"},
      {"id gap in tick 0", "tick,id,x,y\n0,0,1,1\n0,2,1,1\n", 3, "id 1 is missing"},
      {"duplicate id", "tick,id,x,y\n0,0,1,1\n0,1,1,1\n1,1,1,1\n1,1,2,2\n", 5, "twice"},
      {"duplicate in tick 0", "tick,id,x,y\n0,0,1,1\n0,1,1,1\n0,0,2,2\n", 4, "twice"},
      {"missing id", "tick,id,x,y\n0,0,1,1\n0,1,1,1\n1,1,1,1\n2,0,1,1\n", 5, "no row for id 0"},
      {"missing at end", "tick,id,x,y\n0,0,1,1\n0,1,1,1\n1,0,1,1\n", 4, "no row for id 1"},
      {"skipped tick", "tick,id,x,y\n0,0,1,1\n2,0,1,1\n", 3, "consecutive"},
      {"starts late", "tick,id,x,y\n1,0,1,1\n", 2, "start at 0"},
      {"blank line", "tick,id,x,y\n0,0,1,1\n\n1,0,1,1\n", 3, "empty line"},
  };
  for (const BadTrace& bad : cases) {
    SCOPED_TRACE(bad.name);
    const sightline::sim::TraceParse parsed = sightline::sim::parse_trace(std::string_view(bad.text));
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error.line, bad.line) << parsed.error.to_string();
    EXPECT_NE(parsed.error.message.find(bad.says), std::string::npos) << parsed.error.to_string();

    const fs::path path = write("bad.csv", bad.text);
    const Output got = sim(fmt::format("--json --trace '{}'", path.string()));
    EXPECT_NE(got.exit_code, 0);
    EXPECT_TRUE(got.out.empty()) << got.out;
    EXPECT_NE(got.err.find(fmt::format("line {}:", bad.line)), std::string::npos) << got.err;
  }
}

TEST_F(SimCli, GoodTraceEdgeCasesParse) {
  const auto parsed =
      sightline::sim::parse_trace(std::string_view("tick,id,x,y\r\n0,1,-1e3,2.5\r\n0,0, 3 ,4\r\n"));
  ASSERT_TRUE(parsed.ok()) << parsed.error.to_string();
  EXPECT_EQ(parsed.trace->entities, 2u);
  EXPECT_EQ(parsed.trace->ticks, 1u);
  EXPECT_EQ(parsed.trace->xs[1], -1000.0f);
  EXPECT_EQ(parsed.trace->zs[0], 4.0f);
}

TEST_F(SimCli, BadFlagsAreRefused) {
  const fs::path trace = write("ok.csv", "tick,id,x,y\n0,0,1,1\n0,1,2,2\n");
  const std::pair<std::string, std::string> cases[] = {
      {"--radius 0", "--radius"},
      {"--radius -1", "--radius"},
      {"--radius 2 --leave 1", "--leave"},
      {"--entities 0", "--entities"},
      {"--entities 5 --clients 6", "--clients"},
      {"--hz 0", "--hz"},
      {"--world 12by7", "--world"},
      {"--world 0x5", "--world"},
      {"--seconds 0", "--seconds"},
      {"--leave inf", "--leave"},
      {"--seed -1", "--seed"},
      {"--no-interest --tiers", "--tiers"},
      {"--no-interest --leave 2", "--leave"},
      {fmt::format("--trace '{}' --entities 5", trace.string()), "--entities"},
      {fmt::format("--trace '{}' --seed 3", trace.string()), "--seed"},
      {fmt::format("--trace '{}' --clients 3", trace.string()), "--clients"},
      {"--trace /nonexistent/trace.csv", "cannot open"},
      {"--budget 10", "--budget"},
      {"--loss 150", "--loss"},
      {"--loss -1", "--loss"},
      {"--latency -5", "--latency"},
      {"--entry-budget 0", "--entry-budget"},
      {"--budget 1200 --no-interest", "--no-interest"},
      {"--speed -1", "--speed"},
      {fmt::format("--trace '{}' --speed 3", trace.string()), "--speed"},
  };
  for (const auto& [args, says] : cases) {
    SCOPED_TRACE(args);
    const Output got = sim(args);
    EXPECT_NE(got.exit_code, 0);
    EXPECT_NE(got.err.find(says), std::string::npos) << got.err;
  }
}

// The relevance scenario prints one table of its own rows: a flag it would ignore is refused,
// named, instead of exiting 0 as if it had applied.
TEST_F(SimCli, RelevanceScenarioRefusesTheFlagsItIgnores) {
  for (const char* flag : {"--json", "--budget 1200", "--entry-budget 4096", "--latency 100", "--loss 5",
                           "--tiers", "--leave 2", "--no-interest", "--drill 3"}) {
    SCOPED_TRACE(flag);
    const Output got = sim(fmt::format("--scenario relevance --seconds 1 {}", flag));
    EXPECT_EQ(got.exit_code, 2);
    EXPECT_TRUE(got.out.empty()) << got.out;
    const std::string name = std::string(flag).substr(0, std::string(flag).find(' '));
    EXPECT_NE(got.err.find(name + " cannot be used with --scenario relevance"), std::string::npos) << got.err;
  }
  const Output writes =
      sim(fmt::format("--scenario relevance --seconds 1 --write-trace '{}'", file("t.csv").string()));
  EXPECT_EQ(writes.exit_code, 2);
  EXPECT_NE(writes.err.find("--write-trace cannot be used"), std::string::npos) << writes.err;
  // What it does take still runs.
  EXPECT_EQ(sim("--scenario relevance --seconds 1 --entities 40 --seed 3 --radius 2 --clients 20 --hz 10")
                .exit_code,
            0);
}

}  // namespace

// --record then --replay --why: an entity walking out of a client's leave radius is explained
// after the fact, tick by tick, exactly as the trace puts it.
TEST_F(SimCli, ReplayExplainsADespawnAfterTheFact) {
  const float xs[] = {1.0f, 1.5f, 1.9f, 2.0f, 2.1f, 2.5f};
  std::string csv = "tick,id,x,y\n";
  for (int t = 0; t < 6; ++t) csv += fmt::format("{},0,0,0\n{},1,{},0\n", t, t, xs[t]);
  const fs::path trace = write("walk.csv", csv);
  const fs::path recording = file("walk.slrec");
  const Output run = sim(fmt::format("--trace '{}' --radius 1.6 --leave 2 --clients 1 --record '{}'",
                                     trace.string(), recording.string()));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Output why = sim(fmt::format("--replay '{}' --why 0 1", recording.string()));
  ASSERT_EQ(why.exit_code, 0) << why.err;
  EXPECT_EQ(why.out,
            fmt::format("replay of {}: client 0, entity 1\n"
                        "tick 0: client 0:1 spawned entity 1:1 (near), distance 1.000, rule near\n"
                        "tick 4: client 0:1 despawned entity 1:1 (left), distance 2.100, rule out_of_range\n"
                        "after tick 5: client 0:1 does not hold entity 1:1: rule out_of_range\n",
                        recording.string()));
  const Output summary = sim(fmt::format("--replay '{}'", recording.string()));
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find(": 6 ticks from "), std::string::npos) << summary.out;
  // Ticks 0 to 3 update the entity (a spawn is updated at its tick too).
  EXPECT_NE(summary.out.find("records: 1 spawns, 4 updates, 1 despawns, 0 event records"), std::string::npos)
      << summary.out;

  // Cut inside a record: what came before is printed, then the byte and the call, and exit 1.
  std::ifstream in(recording, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const fs::path cut = write("cut.slrec", bytes.substr(0, bytes.size() - 5));
  const Output cut_run = sim(fmt::format("--replay '{}' --why 0 1", cut.string()));
  EXPECT_EQ(cut_run.exit_code, 1);
  EXPECT_NE(cut_run.out.find("tick 4: client 0:1 despawned entity 1:1"), std::string::npos) << cut_run.out;
  EXPECT_NE(
      cut_run.err.find(fmt::format("recording byte {} (set_positions, before tick 5)", bytes.size() - 38)),
      std::string::npos)
      << cut_run.err;
  const Output not_one = sim(fmt::format("--replay '{}'", trace.string()));
  EXPECT_EQ(not_one.exit_code, 1);
  EXPECT_NE(not_one.err.find("not a Sightline recording"), std::string::npos) << not_one.err;
}

TEST_F(SimCli, ReplayRefusesWhatTheRecordingGives) {
  const Output with_radius = sim("--replay x.slrec --radius 2");
  EXPECT_EQ(with_radius.exit_code, 2);
  EXPECT_NE(with_radius.err.find("--radius cannot be used with --replay"), std::string::npos)
      << with_radius.err;
  const Output bad_name = sim("--replay x.slrec --why 3:0 1");
  EXPECT_EQ(bad_name.exit_code, 2);
  EXPECT_NE(bad_name.err.find("--why CLIENT is '3:0'"), std::string::npos) << bad_name.err;
  const Output alone = sim("--why 3 1");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("--why needs --replay FILE"), std::string::npos) << alone.err;
  const Output missing = sim(fmt::format("--replay '{}'", file("none.slrec").string()));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("cannot open recording"), std::string::npos) << missing.err;
  const Output scenario = sim(fmt::format("--scenario relevance --record '{}'", file("r.slrec").string()));
  EXPECT_EQ(scenario.exit_code, 2);
  EXPECT_NE(scenario.err.find("--scenario cannot be used with --record"), std::string::npos) << scenario.err;
}
