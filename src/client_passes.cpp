// The client passes of a tick: in the grid's cell order of the viewers, split into one run of
// that order per thread, each client by the plain or the general pass, each thread writing its
// own output part.
#include <algorithm>

#include "pass_steps.h"
#include "world_impl.h"

namespace sightline {

namespace {

/// Adds what client passes count (phases 3 and 4) from one share's totals.
void add_pass_totals(TickStats& to, const TickStats& from) noexcept {
  to.spawns += from.spawns;
  to.updates += from.updates;
  to.despawns += from.despawns;
  to.distance_tests += from.distance_tests;
  to.cell_candidates += from.cell_candidates;
  to.members += from.members;
  to.plain_passes += from.plain_passes;
}

}  // namespace

void size_scratch(PassScratch& scratch, std::size_t entity_slots, std::uint32_t grid_rows) {
  if (scratch.runs.size() < grid_rows) scratch.runs.resize(grid_rows);
  if (scratch.stamp.size() >= entity_slots) return;
  scratch.stamp.resize(entity_slots, 0);
  scratch.kept.resize(entity_slots);
  scratch.gaps.resize(entity_slots);
  scratch.merge.resize(entity_slots);
  scratch.forced.resize(entity_slots, 0);
  scratch.forced_reason.resize(entity_slots, 0);
  scratch.entering.reserve(entity_slots);
  scratch.child_members.reserve(entity_slots);
  scratch.forced_roots.reserve(entity_slots);
  scratch.unseen.resize(entity_slots, 0);
  scratch.last_seen.resize(entity_slots, 0);
  scratch.hits.resize(entity_slots + 8);
  scratch.crowd.reserve(entity_slots);
  scratch.crowded.resize(entity_slots, 0);
}

// Within a tick, clients pass in the grid's cell order of their viewers, not in slot order:
// neighbours share most candidates and members, so each pass finds the positions, items and
// stamps it reads still in cache from the last one. A counting sort by cell: the order depends on
// nothing but positions and clients, and only which output part a client lands in, and the layout
// within each part, follow it; every client reads its own slices.
// Where clients are under a quarter as many as cells, slot order: the sort costs O(cells) (the
// cursors cleared and summed), more than the whole pass of a client there (callgrind, sparse:
// 100 instructions a client of 750), and buys little, since such clients rarely share a cell.
void WorldImpl::order_passes() {
  const std::uint32_t cells = grid.cells_x() * grid.cells_z();
  pass_order.resize(live_clients.size());
  pass_order_current = true;
  passes_in_cell_order = live_clients.size() * 4 >= cells;
  if (!passes_in_cell_order) {
    for (std::size_t i = 0; i < live_clients.size(); ++i) pass_order[i] = live_clients[i].index;
    return;
  }
  pass_cursor.assign(static_cast<std::size_t>(cells) + 1, 0);
  pass_cell.resize(live_clients.size());
  for (std::size_t i = 0; i < live_clients.size(); ++i) {
    const std::uint32_t v = client_slots[live_clients[i].index].viewer;
    pass_cell[i] = grid.cell_of_point(xs[v], zs[v]);
    ++pass_cursor[pass_cell[i] + 1];
  }
  for (std::size_t k = 0; k + 1 < pass_cursor.size(); ++k) pass_cursor[k + 1] += pass_cursor[k];
  for (std::size_t i = 0; i < live_clients.size(); ++i)
    pass_order[pass_cursor[pass_cell[i]]++] = live_clients[i].index;
}

// The pass order split into runs of about equal work (members at the last tick, plus a fixed
// cost per client), one per thread. Runs of the cell order are regions of the world: each thread
// reads the positions, items and sets of its own region only, where runs of slots had every
// thread read the whole world, each at half the density of neighbours (callgrind and CPU time:
// two slot runs on the MMO cost 27% more than one thread's passes).
void WorldImpl::split_shares() {
  const auto n = static_cast<std::uint32_t>(shares.size());
  const auto clients = static_cast<std::uint32_t>(pass_order.size());
  std::uint64_t total = 0;
  for (const std::uint32_t c : pass_order) total += client_slots[c].members.count + 16;
  std::uint64_t acc = 0;
  std::uint32_t share = 0;
  shares[0].first = 0;
  for (std::uint32_t i = 0; i < clients; ++i) {
    acc += client_slots[pass_order[i]].members.count + 16;
    while (share + 1 < n && acc * n >= total * (share + 1)) {
      shares[share].last = i + 1;
      shares[++share].first = i + 1;
    }
  }
  shares[share].last = clients;
  for (std::uint32_t s = share + 1; s < n; ++s) shares[s].first = shares[s].last = shares[share].last;
}

PassOutputs WorldImpl::pass_outputs(std::uint32_t part) noexcept {
  PassOutputs out{parts[part].out, part};
  for (std::size_t p = 0; p < parts.size(); ++p) {
    out.previous_members[p] = parts[p].previous_members.data();
    out.previous_seen[p] = parts[p].previous_seen.data();
  }
  return out;
}

// One share per thread (split_shares), each writing its own output part: nothing to copy after.
void WorldImpl::parallel_passes(TickStats& stats) {
  const auto n = static_cast<std::uint32_t>(shares.size());
  tasks->run(
      n, 1,
      [](std::uint32_t first, std::uint32_t last, std::uint32_t, void* world) {
        for (std::uint32_t s = first; s < last; ++s) static_cast<WorldImpl*>(world)->run_share(s);
      },
      this);
  for (std::uint32_t s = 0; s < n; ++s) add_pass_totals(stats, shares[s].stats);
}

void WorldImpl::run_share(std::uint32_t s) {
  WorkerShare& w = shares[s];
  // The outputs' growth rule, on this share's part of the sets (the part is this share's alone).
  std::uint64_t old_total = 0;
  for (std::uint32_t i = w.first; i < w.last; ++i) old_total += client_slots[pass_order[i]].members.count;
  (void)parts[s].out.reserve_for(old_total, record_periods);
  w.stats = TickStats{};
  PassOutputs out = pass_outputs(s);
  run_passes(w.first, w.last, w.scratch, out, w.stats);
}

void WorldImpl::run_passes(std::uint32_t first, std::uint32_t last, PassScratch& pass, PassOutputs& out,
                           TickStats& stats) {
  size_scratch(pass, alive.size(), grid.cells_z());
  forget_runs(pass, passes_in_cell_order);
  if (plain_tick) {
    plain_passes(first, last, pass, out, stats);
    return;
  }
  for (std::uint32_t i = first; i < last; ++i) {
    ClientSlot& client = client_slots[pass_order[i]];
    client_pass(client, pass, out, stats);
    client.part = out.part;
  }
}

}  // namespace sightline
