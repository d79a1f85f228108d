"""Sightline's quickstart from Python: walkers in numpy arrays, three players, the packets a
Replicator writes for each over unreliable delivery, and each player's mirror holding exactly
what the World says it should; a recording replayed with the same history. Run by `make test` (ctest python_binding); exits non-zero on a
mismatch.

    SIGHTLINE_C_LIBRARY=build/libsightline_c.so /usr/bin/python3 bindings/python/quickstart.py
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sightline  # noqa: E402

SIZE = 200.0  # world units a side
ENTITIES = 400
PLAYERS = 3
TICKS = 60


# z's range, made once (x is written with the per-call form; the reader below reads both with it,
# so the two forms must write the same bits).
z_range = sightline.QuantizedRange(0.0, SIZE, 0.01)


def serialize(stream, entity, part):
    """The game's state: its position to a centimetre; a spawn also carries its kind."""
    x, z = world.position(entity)
    if part == sightline.FULL:
        stream.bits(int(entity) & 0xFFFF, 16)
    stream.quantized(x, 0.0, SIZE, 0.01)
    stream.quantized_range(z, z_range)


class Counts:
    def __init__(self):
        self.enters = self.updates = self.exits = 0

    def on_enter(self, entity, reason, created, state, tick):
        self.enters += 1

    def on_update(self, entity, state, tick):
        self.updates += 1

    def on_exit(self, entity, kind, reason):
        self.exits += 1


rng = np.random.default_rng(7)
xs = rng.uniform(20.0, SIZE - 20.0, ENTITIES).astype(np.float32)
zs = rng.uniform(20.0, SIZE - 20.0, ENTITIES).astype(np.float32)
heading = rng.uniform(0.0, 2.0 * np.pi, ENTITIES).astype(np.float32)

world = sightline.World(enter_radius=25.0, leave_radius=30.0, threads=2)
entities = world.create_entities(xs, zs)
players = [world.create_client(int(entities[i])) for i in range(PLAYERS)]
replicator = sightline.Replicator(world, serialize, delivery="unreliable")
counts = [Counts() for _ in players]
mirrors = [sightline.Mirror(delivery="unreliable", listener=c) for c in counts]

for tick in range(TICKS):
    # Everyone walks; the arrays go to the library in place.
    xs += np.cos(heading)
    zs += np.sin(heading)
    bounce_x = (xs < 10.0) | (xs > SIZE - 10.0)
    bounce_z = (zs < 10.0) | (zs > SIZE - 10.0)
    heading[bounce_x] = np.pi - heading[bounce_x]
    heading[bounce_z] = -heading[bounce_z]
    world.set_positions(entities, xs, zs)
    world.tick()
    replicator.send()
    for player, mirror in zip(players, mirrors):
        for packet in replicator.packets(player):
            mirror.receive(packet)
        replicator.receive_ack(player, mirror.ack())

failed = False
for i, (player, mirror) in enumerate(zip(players, mirrors)):
    held, wanted = mirror.held(), world.interest_set(player)
    stats = mirror.stats()
    near = [e for e in wanted if world.why(player, int(e))[1] in ("near", "within_leave")]
    state, part, state_tick = mirror.state(int(wanted[0]))
    reader = sightline.Stream.reader(state)
    if part == sightline.FULL:
        reader.bits(0, 16)
    x, z = reader.quantized(0.0, 0.0, SIZE, 0.01), reader.quantized(0.0, 0.0, SIZE, 0.01)
    # The same bytes read through the range made once.
    again = sightline.Stream.reader(state)
    if part == sightline.FULL:
        again.bits(0, 16)
    same = again.quantized_range(0.0, z_range) == x and again.quantized_range(0.0, z_range) == z
    ok = (np.array_equal(np.sort(held), np.sort(wanted)) and stats["anomalies"] == 0 and
          replicator.pending(player) == 0 and len(near) == len(wanted) and stats["enters"] == counts[i].enters and
          0.0 <= min(x, z) and max(x, z) <= SIZE and reader.rest_is_zero() and same and again.rest_is_zero())
    failed |= not ok
    print(f"player {i}: holds {len(held)} of {len(wanted)} in its interest set, {counts[i].enters} enters, "
          f"{counts[i].exits} exits, {counts[i].updates} updates, {stats['anomalies']} anomalies"
          f"{'' if ok else '  MISMATCH'}")

# A refusal names what it refused.
gone = int(entities[-1])
world.destroy_entity(gone)
try:
    world.set_position(gone, 1.0, 1.0)
    failed = True
    print("a destroyed entity was moved")
except sightline.SightlineError as e:
    print(f"refused as expected: {e.code}")
    failed |= e.code != "stale_handle"

# Withdrawn (handed elsewhere, not dead): its holder's despawn says `left`, not `destroyed`; the
# handle is then stale, and a client's viewer is refused as destroy_entity refuses it.
handed = sightline.World(enter_radius=10.0)
keeper_eye = handed.create_entity(0.0, 0.0)
keeper = handed.create_client(keeper_eye)
traveller = handed.create_entity(2.0, 0.0)
handed.tick()
handed.withdraw_entity(traveller)
handed.tick()
withdrawn = handed.despawns(keeper)
print(f"withdrawn: despawns {withdrawn}")
failed |= withdrawn != [(traveller, "left")]
for entity, code in ((traveller, "stale_handle"), (keeper_eye, "entity_is_viewer")):
    try:
        handed.withdraw_entity(entity)
        failed = True
        print(f"withdrawing {entity} was not refused")
    except sightline.SightlineError as e:
        print(f"withdrawing refused as expected: {e.code}")
        failed |= e.code != code

# External ids under order_key="external": every entity needs one, unique among live entities; the
# World finds an entity by its id until it leaves; one that existed elsewhere (created=False)
# spawns without `created`.
copies = sightline.World(enter_radius=10.0, order_key="external")
far_id = 2**32 + 5  # beyond 32 bits
try:
    copies.create_entity(0.0, 0.0)
    failed = True
    print("an entity without an external id was made under the external key")
except sightline.SightlineError as e:
    print(f"no external id refused as expected: {e}")
    failed |= e.code != "invalid_argument" or "external_id is 0" not in str(e)
copy_eye = copies.create_entity(0.0, 0.0, external_id=far_id)
try:
    copies.create_entity(1.0, 0.0, external_id=far_id)
    failed = True
    print(f"external id {far_id} was given twice")
except sightline.SightlineError as e:
    print(f"a duplicate external id refused as expected: {e}")
    failed |= e.code != "invalid_argument" or f"external_id {far_id} is held" not in str(e)
copy = copies.create_entity(1.0, 0.0, external_id=7, created=False)
fresh = copies.create_entity(2.0, 0.0, external_id=8)
distant = copies.create_entities([50.0, 60.0], [0.0, 0.0], external_ids=[20, 21])
looked_up = (copies.external_id(copy_eye), copies.external_id(copy), copies.external_id(int(distant[1])),
             copies.find_external(far_id), copies.find_external(7), copies.find_external(8), copies.find_external(21),
             copies.find_external(9), copies.find_external(0))
print(f"external ids: {looked_up[:3]}; found {looked_up[3:]}")
failed |= looked_up != (far_id, 7, 21, copy_eye, copy, fresh, distant[1], None, None)
copy_viewer = copies.create_client(copy_eye)
copies.tick()
arrived = sorted(copies.spawns(copy_viewer))
print(f"spawns (entity, reason, created): {arrived}")
failed |= arrived != [(copy, "near", False), (fresh, "near", True)]
copies.withdraw_entity(copy)
gone_id = copies.find_external(7)
handed_back = copies.create_entity(1.0, 0.0, external_id=7, created=False)  # its id is free again
print(f"after withdrawing: find_external(7) {gone_id}, then {copies.find_external(7) == handed_back}")
failed |= gone_id is not None or copies.find_external(7) != handed_back or copies.external_id(handed_back) != 7
try:
    sightline.World(order_key="by_name")
    failed = True
    print("an unknown order key was taken")
except ValueError as e:
    print(f"an unknown order key refused as expected: {e}")
copies.close()

# A range made once reads what the per-call form reads (255 steps: every 8 bits is a value), and
# is refused as that form fails, naming the argument.
eighths = sightline.QuantizedRange(-8.0, 7.9375, 1.0 / 16.0)
payload = bytes([0x5A, 0xC3, 0x17, 0xE8])
per_call, made = sightline.Stream.reader(payload), sightline.Stream.reader(payload)
read = [(per_call.quantized(0.0, -8.0, 7.9375, 1.0 / 16.0), made.quantized_range(0.0, eighths)) for _ in payload]
eighths.close()
if any(a != b for a, b in read) or len(set(read)) != len(payload):
    failed = True
    print(f"the range made once reads {read}")
refusals = (((1.0, 1.0, 0.5), "max"), ((0.0, 1.0, 0.0), "resolution"), ((0.0, 1.0, float("nan")), "resolution"))
for bad, argument in refusals:
    try:
        sightline.QuantizedRange(*bad)
        failed = True
        print(f"QuantizedRange{bad} was made")
    except sightline.SightlineError as e:
        failed |= e.code != "invalid_argument" or argument not in str(e)
        print(f"QuantizedRange{bad} refused: {e}")

# What the game's callbacks raise comes back from the call that ran them, not through the library.
small = sightline.World(enter_radius=10.0)
near = [small.create_entity(0.0, 0.0), small.create_entity(1.0, 0.0)]
watcher = small.create_client(near[0])


def broken(stream, entity, part):
    raise ValueError("no state for this one")


small_replicator = sightline.Replicator(small, broken)
small.tick()
try:
    small_replicator.send()
    failed = True
    print("a serializer's exception was lost")
except sightline.SightlineError as e:
    print(f"a serializer's exception comes back from send(): {'ValueError' in str(e)}")
    failed |= "ValueError" not in str(e)


class Broken:
    def on_enter(self, *args):
        raise RuntimeError("listener failed")


def small_state(stream, entity, part):
    x, z = small.position(entity)
    stream.float(x)
    stream.float(z)


shown = sightline.Replicator(small, small_state)
small.tick()
shown.send()
try:
    for packet in shown.packets(watcher):
        sightline.Mirror(listener=Broken()).receive(packet)
    failed = True
    print("a listener's exception was lost")
except RuntimeError:
    print("a listener's exception comes back from receive(): True")

# Recorded, then replayed with a history: the walker that left the watcher's set is explained
# after the fact, exactly as the live world kept it.
chunks = []
recorded = sightline.World(enter_radius=2.0, leave_radius=2.5, recording=chunks.append)
eye = recorded.create_entity(0.0, 0.0)
walker = recorded.create_entity(1.0, 0.0)
viewer = recorded.create_client(eye)
recorded.set_history_capacity(viewer, 16)
for t in range(8):
    recorded.set_position(walker, 1.0 + 0.5 * t, 0.0)
    recorded.tick()
live_history = recorded.history(viewer, walker)
recorded.close()
replay = sightline.Replay(b"".join(chunks))
ticks = sum(1 for _ in replay)
replayed_history = replay.world.history(viewer, walker)
print(f"replay: {ticks} ticks; the walker {[h['reason'] for h in replayed_history]}, "
      f"last at {replayed_history[-1]['distance']:.2f} ({replayed_history[-1]['rule']})")
if ticks != 8 or replayed_history != live_history or replayed_history[-1]["reason"] != "left":
    failed = True
    print(f"the replay's history differs: {replayed_history} against {live_history}")

sent = replicator.stats()
print(f"last send: {sent['packets']} packets, {sent['bytes']} bytes, {sent['updates']} updates; "
      f"sightline {sightline.version()}")
sys.exit(1 if failed else 0)
