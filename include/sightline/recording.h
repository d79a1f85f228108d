// Recording a World's inputs and replaying them: the World writes every call that changed it (in
// order, with its arguments and the handles it returned) and every tick() to a sink the game
// sets in WorldDef::recording; Replay re-runs those bytes on a fresh World, tick by tick, so that
// what a client saw can be asked about after the fact (World::why, World::history). The bytes
// are specified in docs/recording.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sightline/export.h"
#include "sightline/handles.h"
#include "sightline/occlusion.h"
#include "sightline/status.h"

namespace sightline {

/// Receives the next bytes of a recording, in order; `bytes` is valid during the call only. The
/// World calls it from the thread that called into the World: once when it is created (the
/// header), at the end of every tick() and whenever its 64 KiB buffer fills between two ticks,
/// and when it is destroyed. A chunk may end inside a record: the concatenation of all chunks is
/// the recording. The function must not call back into the World and must not throw; what it
/// does with a write that fails (a full disk) is the game's choice. The context must outlive
/// the World (its destructor writes what is still buffered).
using RecordingFunction = void (*)(void* context, std::span<const std::uint8_t> bytes);

/// A function and its context; a null function (the default) records nothing and costs nothing.
struct RecordingSink {
  RecordingFunction function = nullptr;
  void* context = nullptr;
};

class World;
struct TickStats;
class ReplayImpl;

/// See ReplayDef::on_client.
using ReplayClientFunction = void (*)(void* context, World& world, ClientId client);

/// How a recording is replayed. The defaults replay it as it was recorded.
struct ReplayDef {
  /// The visibility filter (occlusion.h) to set where the recorded World set one: a function
  /// pointer cannot be recorded, only that one was set or cleared. Null replays without it, and
  /// Replay::used_visibility_filter() says whether that changed what the recording saw.
  VisibilityFilter visibility_filter = nullptr;
  void* visibility_context = nullptr;
  /// Threads of the replaying World, in 1..kMaxThreads; 0 (the default) keeps the recorded count.
  /// Records are identical whatever the count.
  std::uint32_t threads = 0;
  /// Called right after the replay creates a client, before it takes part in any tick: where the
  /// caller switches on what it will ask about that client, such as its history
  /// (World::set_history_capacity), from its first tick. It must not change what the World
  /// decides (see world()). Null (the default): nothing.
  ReplayClientFunction on_client = nullptr;
  void* on_client_context = nullptr;
  /// For a file that is not trusted, two bounds on what recorded values may cost; 0 (the
  /// default) keeps the recorded value. A recording's own bytes bound its entities, clients and
  /// lists, but these two are a number each: the grid's cells (WorldDef::max_grid_cells, 4 bytes
  /// a cell: up to 16 GiB) and each client's history (World::set_history_capacity, 32 bytes an
  /// entry: up to 2 MiB a client). A smaller grid changes the work counts of TickStats, a
  /// shorter history what history() keeps; neither changes the records or sets. The recorded
  /// capacity hints are never honoured in a replay (they would only reserve memory).
  std::uint32_t max_grid_cells = 0;
  std::uint32_t max_history_capacity = 0;
};

/// A recording being replayed on a World of its own. Move-only; a moved-from Replay may only be
/// destroyed or assigned to. Not thread-safe: one thread at a time, as for a World.
///
///   auto replay = sightline::Replay::open(bytes);   // bytes of a file the sink wrote
///   while (replay && !replay->done()) {
///     if (auto stats = replay->next_tick(); !stats) { report(stats.status()); break; }
///     // replay->world() stands as the recorded World did after that tick.
///   }
///
/// A recording cut short (the game crashed mid-write) replays up to its last whole record; the
/// call that reaches the cut reports where it is.
class SIGHTLINE_API Replay {
 public:
  /// Reads the header and creates the World it describes. Refused (malformed_packet) when the
  /// bytes do not start with a recording's header of this version; the World's own refusal of a
  /// recorded def (invalid_def) is passed on, and a bad ReplayDef field is named (invalid_def).
  /// Keeps a copy of `bytes`.
  [[nodiscard]] static Result<Replay> open(std::span<const std::uint8_t> bytes, const ReplayDef& def = {});

  Replay(Replay&&) noexcept;
  Replay& operator=(Replay&&) noexcept;
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;
  ~Replay();

  /// Applies the recorded calls up to the next tick and runs it. An error names the record's byte
  /// offset, its call and the tick it comes before (0-based, as TickStats::tick): bytes that do
  /// not decode or end inside a record (malformed_packet; nothing of that step is applied), a
  /// call the World refuses or a handle it returns that differs from the recorded one (the
  /// recording does not belong to this version, or was edited; the calls before it in that step
  /// are applied). After an error, or once done(), every call returns an error and the World
  /// stays as it was.
  [[nodiscard]] Result<TickStats> next_tick();

  /// True when no tick is left to replay, or after an error. Calls recorded after the last tick
  /// (a game tearing down) are not applied: no tick saw them, and the World stays as the last
  /// tick left it. Bytes that do not decode before the next tick (a file cut inside a record)
  /// are the next next_tick()'s error, and the World stays as the last tick left it then too.
  [[nodiscard]] bool done() const noexcept;
  /// Ticks replayed so far.
  [[nodiscard]] std::uint64_t ticks() const noexcept;
  /// Byte offset of the next record to apply: after an error, the start of the step or of the
  /// record it stopped at.
  [[nodiscard]] std::size_t offset() const noexcept;
  /// True once a recorded call set a visibility filter that ReplayDef did not supply.
  [[nodiscard]] bool used_visibility_filter() const noexcept;

  /// The replaying World, as the recorded one stood after the last replayed tick (and the calls
  /// before the next). Ask it anything; calls that change it make the rest of the replay diverge.
  [[nodiscard]] World& world() noexcept;
  [[nodiscard]] const World& world() const noexcept;

 private:
  explicit Replay(std::unique_ptr<ReplayImpl> impl) noexcept;
  std::unique_ptr<ReplayImpl> impl_;
};

}  // namespace sightline
