"""Sightline from Python: the World, the Replicator and the ClientMirror over the C API.

The module loads libsightline_c through cffi (no compiler needed) and reads the C API's
declarations from sightline_c.h. It finds them through the environment:

  SIGHTLINE_C_LIBRARY  path of libsightline_c.so (default: build/libsightline_c.so of this checkout)
  SIGHTLINE_C_HEADER   path of sightline_c.h (default: include/sightline/sightline_c.h of this checkout)

Handles are Python ints (numpy uint64 in arrays): the slot index in the low 32 bits, the
generation in the high 32. Positions are numpy float32 arrays: C-contiguous float32 arrays (and
uint64 handle arrays) are passed to the library in place, without a copy; other arrays are
converted first. A refused call raises SightlineError with the library's message and code.
"""

import os
import re

import numpy as np
from cffi import FFI

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.normpath(os.path.join(_HERE, "..", "..", ".."))


def _declarations(header_path):
    """The header as cffi's cdef reads it: its integer #defines kept, every other preprocessor
    line, the C++ guards and the export macro left out."""
    with open(header_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    kept = []
    in_cplusplus = False
    for line in lines:
        stripped = line.strip()
        if stripped == "#ifdef __cplusplus":
            in_cplusplus = True
        elif in_cplusplus:
            in_cplusplus = stripped != "#endif"
        elif re.fullmatch(r"#define\s+\w+\s+\d+", stripped):
            kept.append(stripped)
        elif not stripped.startswith("#"):
            kept.append(line)
    return re.sub(r"\bSL_API\s+", "", "\n".join(kept))


ffi = FFI()
ffi.cdef(_declarations(os.environ.get("SIGHTLINE_C_HEADER",
                                      os.path.join(_ROOT, "include", "sightline", "sightline_c.h"))))
lib = ffi.dlopen(os.environ.get("SIGHTLINE_C_LIBRARY", os.path.join(_ROOT, "build", "libsightline_c.so")))

FULL = lib.SL_PART_FULL
UPDATE = lib.SL_PART_UPDATE
_DELIVERY = {"reliable": lib.SL_DELIVERY_RELIABLE, "unreliable": lib.SL_DELIVERY_UNRELIABLE}
_ORDER_KEY = {"slot": 0, "external": 1}  # sl_world_def::order_key


class SightlineError(Exception):
    """A refused call: `code` is the status name ("stale_handle", "invalid_def", ...)."""

    def __init__(self, status, message):
        self.code = ffi.string(lib.sl_status_name(status)).decode()
        super().__init__(f"{self.code}: {message}")


def _check(status):
    if status != lib.SL_OK:
        raise SightlineError(status, ffi.string(lib.sl_last_error()).decode())


def version():
    return ffi.string(lib.sl_version()).decode()


def _floats(values, name):
    array = np.ascontiguousarray(values, dtype=np.float32)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, not of shape {array.shape}")
    return array


def _handles(values, name):
    array = np.ascontiguousarray(values, dtype=np.uint64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, not of shape {array.shape}")
    return array


def _list(call, ctype, *args):
    """The C API's two-call list: count, then copy into an array that large."""
    count = ffi.new("size_t*")
    _check(call(*args, ffi.NULL, 0, count))
    out = ffi.new(f"{ctype}[]", max(count[0], 1))
    _check(call(*args, out, count[0], count))
    return out, count[0]


class World:
    """Entities with positions, clients that view from an entity, and one tick that turns positions
    into per-client spawns, updates and despawns (world.h)."""

    def __init__(self, enter_radius=1.6, leave_radius=None, threads=1, cell_size=0.0, crowd_cap=0, recording=None,
                 order_key="slot"):
        """`recording`: a callable given each chunk of the world's recording (bytes) as it is
        written (docs/recording.md); Replay re-runs the chunks joined. `order_key`: what ranks
        entities among equals (the crowd cap's ties, the update stagger), "slot" or "external" (their
        external ids, which every entity then needs: docs/relevance.md)."""
        if order_key not in _ORDER_KEY:
            raise ValueError(f"order_key is {order_key!r}: 'slot' or 'external'")
        d = ffi.new("sl_world_def*")
        lib.sl_world_def_default(d)
        d.enter_radius = enter_radius
        d.leave_radius = enter_radius if leave_radius is None else leave_radius
        d.threads = threads
        d.cell_size = cell_size
        d.crowd_cap = crowd_cap
        d.order_key = _ORDER_KEY[order_key]
        out = ffi.new("sl_world**")
        if recording is None:
            _check(lib.sl_world_create(d, out))
            self._ptr = ffi.gc(out[0], lib.sl_world_destroy)
        else:
            sink = ffi.callback("void(void*, const uint8_t*, size_t)",
                                lambda _context, data, size: recording(bytes(ffi.buffer(data, size))))
            _check(lib.sl_world_create_recording(d, sink, ffi.NULL, out))
            # The destructor holds the callback: destroying the world hands it the last chunk.
            self._ptr = ffi.gc(out[0], lambda p, sink=sink: lib.sl_world_destroy(p))

    _replicators = 0  # alive over this world: close() waits for them

    def close(self):
        """Destroys the world now (a recording gets its last chunk); any later call is refused. Not
        while a Replicator over it lives, and not a replay's world (its Replay owns it)."""
        if getattr(self, "_replay", None) is not None:
            raise ValueError("a replay's world is its Replay's: it cannot be closed")
        if self._replicators:
            raise ValueError(f"{self._replicators} Replicator(s) still send from this world")
        if self._ptr != ffi.NULL:
            ffi.release(self._ptr)
            self._ptr = ffi.NULL

    def create_entity(self, x, z, bound_radius=0.0, always_relevant=False, external_id=0, created=True):
        """`external_id`: the game's id for it (0: none), unique among live entities and required
        under order_key="external"; a duplicate or a missing one raises SightlineError
        (invalid_argument). `created=False` for one that existed elsewhere (a copy, one handed
        back): its first spawns do not say created."""
        d = ffi.new("sl_entity_def*")
        lib.sl_entity_def_default(d)
        d.x, d.z, d.bound_radius, d.always_relevant = x, z, bound_radius, always_relevant
        d.external_id, d.created = external_id, created
        out = ffi.new("sl_entity*")
        _check(lib.sl_world_create_entity(self._ptr, d, out))
        return out[0]

    def create_entities(self, xs, zs, external_ids=None):
        """One entity at each (xs[i], zs[i]), with external id external_ids[i] where given: their
        handles, a uint64 array."""
        xs, zs = _floats(xs, "xs"), _floats(zs, "zs")
        if xs.shape != zs.shape:
            raise ValueError(f"xs has {xs.shape[0]} positions and zs {zs.shape[0]}")
        ids = np.zeros(xs.shape, np.uint64) if external_ids is None else _handles(external_ids, "external_ids")
        if ids.shape != xs.shape:
            raise ValueError(f"{xs.shape[0]} positions and {ids.shape[0]} external ids")
        return np.array([self.create_entity(float(x), float(z), external_id=int(i)) for x, z, i in zip(xs, zs, ids)],
                        dtype=np.uint64)

    def destroy_entity(self, entity):
        _check(lib.sl_world_destroy_entity(self._ptr, entity))

    def withdraw_entity(self, entity):
        """As destroy_entity (refused the same way: entity_is_viewer, stale_handle, null_handle), but
        the entity goes on existing elsewhere: its holders despawn with reason `left`, not
        `destroyed`, at the next tick."""
        _check(lib.sl_world_withdraw_entity(self._ptr, entity))

    def external_id(self, entity):
        """The entity's external id (0 for none)."""
        out = ffi.new("uint64_t*")
        _check(lib.sl_world_external_id(self._ptr, entity, out))
        return out[0]

    def find_external(self, external_id):
        """The live entity holding `external_id`; None when none does (and for 0)."""
        entity = lib.sl_world_find_external(self._ptr, external_id)
        return None if entity == 0 else entity  # SL_NULL_HANDLE

    def set_position(self, entity, x, z):
        _check(lib.sl_world_set_position(self._ptr, entity, x, z))

    def set_positions(self, entities, xs, zs):
        """entities[i] moves to (xs[i], zs[i]); float32 and uint64 C-contiguous arrays are read in place."""
        entities, xs, zs = _handles(entities, "entities"), _floats(xs, "xs"), _floats(zs, "zs")
        if not entities.shape == xs.shape == zs.shape:
            raise ValueError(f"{entities.shape[0]} entities, {xs.shape[0]} xs and {zs.shape[0]} zs")
        _check(lib.sl_world_set_positions(self._ptr, ffi.from_buffer("sl_entity[]", entities),
                                          ffi.from_buffer("float[]", xs), ffi.from_buffer("float[]", zs),
                                          entities.shape[0]))

    def position(self, entity):
        x, z = ffi.new("float*"), ffi.new("float*")
        _check(lib.sl_world_position(self._ptr, entity, x, z))
        return x[0], z[0]

    def teleport(self, entity, x, z):
        _check(lib.sl_world_teleport(self._ptr, entity, x, z))

    def create_client(self, viewer):
        out = ffi.new("sl_client*")
        _check(lib.sl_world_create_client(self._ptr, viewer, out))
        return out[0]

    def destroy_client(self, client):
        _check(lib.sl_world_destroy_client(self._ptr, client))

    def set_view_radius(self, client, enter_radius, leave_radius=0.0):
        _check(lib.sl_world_set_view_radius(self._ptr, client, enter_radius, leave_radius))

    def tick(self):
        """Runs one tick: its totals as a dict."""
        stats = ffi.new("sl_tick_stats*")
        _check(lib.sl_world_tick(self._ptr, stats))
        return {"tick": stats.tick, "spawns": stats.spawns, "updates": stats.updates,
                "despawns": stats.despawns, "members": stats.members}

    def interest_set(self, client):
        """The client's set after the last tick, sorted by index: a uint64 array."""
        out, count = _list(lib.sl_world_interest_set, "sl_entity", self._ptr, client)
        return np.frombuffer(ffi.buffer(out, count * 8), dtype=np.uint64).copy()

    def spawns(self, client):
        """(entity, reason name, created) of the last tick's spawns."""
        out, count = _list(lib.sl_world_spawns, "sl_spawn", self._ptr, client)
        return [(out[i].entity, ffi.string(lib.sl_spawn_reason_name(out[i].reason)).decode(), bool(out[i].created))
                for i in range(count)]

    def despawns(self, client):
        """(entity, reason name) of the last tick's despawns."""
        out, count = _list(lib.sl_world_despawns, "sl_despawn", self._ptr, client)
        return [(out[i].entity, ffi.string(lib.sl_despawn_reason_name(out[i].reason)).decode())
                for i in range(count)]

    def why(self, client, entity):
        """(held, rule name, root): why the client holds the entity or not."""
        out = ffi.new("sl_why*")
        _check(lib.sl_world_why(self._ptr, client, entity, out))
        return bool(out.held), ffi.string(lib.sl_rule_name(out.rule)).decode(), out.root

    def set_history_capacity(self, client, capacity):
        """The client keeps its last `capacity` spawns and despawns (0: none)."""
        _check(lib.sl_world_set_history_capacity(self._ptr, client, capacity))

    def history(self, client, entity=None):
        """The client's kept transitions (of `entity`, or of every entity), oldest first: dicts of
        tick, entity, spawned, reason, distance and rule (None for an entity destroyed then)."""
        out, count = _list(lib.sl_world_history, "sl_history_entry", self._ptr, client,
                           0 if entity is None else entity)
        entries = []
        for i in range(count):
            e = out[i]
            reason = lib.sl_spawn_reason_name(e.reason) if e.spawned else lib.sl_despawn_reason_name(e.reason)
            entries.append({"tick": e.tick, "entity": e.entity, "spawned": bool(e.spawned),
                            "reason": ffi.string(reason).decode(), "distance": e.distance,
                            "rule": ffi.string(lib.sl_rule_name(e.rule)).decode() if e.rule_known else None})
        return entries


class Replay:
    """A recording re-run tick by tick on a world of its own (docs/recording.md). Iterating runs
    the ticks and yields each one's totals; `world` answers the World's questions in between."""

    def __init__(self, data, history_capacity=0, threads=0):
        d = ffi.new("sl_replay_def*")
        lib.sl_replay_def_default(d)
        d.history_capacity = history_capacity
        d.threads = threads
        out = ffi.new("sl_replay**")
        _check(lib.sl_replay_open(data, len(data), d, out))
        self._ptr = ffi.gc(out[0], lib.sl_replay_destroy)
        self.world = World.__new__(World)
        self.world._ptr = lib.sl_replay_world(self._ptr)  # read-only: the replay owns it
        self.world._replay = self

    @property
    def done(self):
        return bool(lib.sl_replay_done(self._ptr))

    def next_tick(self):
        stats = ffi.new("sl_tick_stats*")
        _check(lib.sl_replay_next_tick(self._ptr, stats))
        return {"tick": stats.tick, "spawns": stats.spawns, "updates": stats.updates,
                "despawns": stats.despawns, "members": stats.members}

    def __iter__(self):
        while not self.done:
            yield self.next_tick()


class QuantizedRange:
    """A quantized range checked and divided once (sl_quantized_range), for a range known only at run
    time: Stream.quantized_range(value, range) writes and reads exactly the bits Stream.quantized(value,
    lo, hi, resolution) does. A range its per-call form fails on (lo or hi not finite, lo >= hi,
    resolution not finite or <= 0, more than 2**32 - 1 steps) raises SightlineError naming the
    argument. Immutable: a serializer on the World's worker threads may share one."""

    def __init__(self, lo, hi, resolution):
        out = ffi.new("sl_quantized_range**")
        _check(lib.sl_quantized_range_create(lo, hi, resolution, out))
        self._ptr = ffi.gc(out[0], lib.sl_quantized_range_destroy)
        self.lo, self.hi, self.resolution = lo, hi, resolution

    def close(self):
        """Frees the range now; a later Stream.quantized_range with it raises ValueError."""
        if self._ptr != ffi.NULL:
            ffi.release(self._ptr)
            self._ptr = ffi.NULL


class Stream:
    """A payload being written (in a serializer) or read (Stream.reader). Each call returns the value
    written or read and raises StreamError once the stream has failed."""

    def __init__(self, ptr, owned=None):
        self._ptr = ptr
        self._owned = owned  # a reader's bytes, kept alive while it reads

    @classmethod
    def reader(cls, payload):
        data = ffi.from_buffer(payload)
        out = ffi.new("sl_stream**")
        _check(lib.sl_stream_reader_create(ffi.cast("const uint8_t*", data), len(data), out))
        stream = cls(ffi.gc(out[0], lib.sl_stream_destroy), data)
        return stream

    def _done(self, ok, value):
        if not ok:
            raise StreamError(ffi.string(lib.sl_stream_error(self._ptr)).decode())
        return value[0]

    def bits(self, value, bits):
        v = ffi.new("uint32_t*", value)
        return self._done(lib.sl_stream_bits(self._ptr, v, bits), v)

    def uint(self, value, lo, hi):
        v = ffi.new("uint32_t*", value)
        return self._done(lib.sl_stream_uint(self._ptr, v, lo, hi), v)

    def boolean(self, value):
        v = ffi.new("bool*", value)
        return self._done(lib.sl_stream_bool(self._ptr, v), v)

    def float(self, value):
        v = ffi.new("float*", value)
        return self._done(lib.sl_stream_float(self._ptr, v), v)

    def quantized(self, value, lo, hi, resolution):
        v = ffi.new("float*", value)
        return self._done(lib.sl_stream_quantized(self._ptr, v, lo, hi, resolution), v)

    def quantized_range(self, value, range):
        """quantized(value, range.lo, range.hi, range.resolution), with a QuantizedRange made once."""
        if range._ptr == ffi.NULL:
            raise ValueError("the QuantizedRange is closed")
        v = ffi.new("float*", value)
        return self._done(lib.sl_stream_quantized_range(self._ptr, v, range._ptr), v)

    def entity(self, value):
        v = ffi.new("sl_entity*", value)
        return self._done(lib.sl_stream_entity(self._ptr, v), v)

    @property
    def reading(self):
        return bool(lib.sl_stream_is_reading(self._ptr))

    def rest_is_zero(self):
        return bool(lib.sl_stream_rest_is_zero(self._ptr))


class StreamError(Exception):
    """A stream call failed (out of room, a value out of its range, read past the end)."""


class Replicator:
    """Interest sets to packets (replicator.h). `serialize(stream, entity, part)` writes an entity's
    state part (FULL or UPDATE) through the Stream; it returns nothing, and an exception in it
    refuses that record (send() then raises with the first one's message)."""

    def __init__(self, world, serialize, delivery="reliable", packet_bytes=1200, budget_bytes=1200,
                 tick_seconds=1.0 / 20.0):
        errors = []  # not self: a cycle through the callback would leave the order of finalizers open
        self._errors = errors

        @ffi.callback("bool(sl_stream*, sl_entity, int, void*)")
        def trampoline(stream, entity, part, context):
            try:
                serialize(Stream(stream), entity, part)
                return True
            except Exception as e:  # the record is refused; send() reports it
                errors.append(f"serializer for entity {entity & 0xffffffff}: {e!r}")
                return False

        self._trampoline = trampoline  # kept alive as long as the Replicator
        d = ffi.new("sl_replicator_def*")
        lib.sl_replicator_def_default(d)
        d.serialize = trampoline
        d.delivery = _DELIVERY[delivery]
        d.packet_bytes, d.budget_bytes, d.tick_seconds = packet_bytes, budget_bytes, tick_seconds
        out = ffi.new("sl_replicator**")
        _check(lib.sl_replicator_create(world._ptr, d, out))
        # Destroying a Replicator reads its World: the destructor holds the World (and a replay's
        # world its Replay), so the World is freed after it whatever order Python collects them in.
        world._replicators += 1

        def destroy(p, world=world):
            lib.sl_replicator_destroy(p)
            world._replicators -= 1

        self._ptr = ffi.gc(out[0], destroy)

    def send(self):
        self._errors.clear()
        status = lib.sl_replicator_send(self._ptr)
        if status != lib.SL_OK:
            detail = f" ({self._errors[0]})" if self._errors else ""
            raise SightlineError(status, ffi.string(lib.sl_last_error()).decode() + detail)

    def packets(self, client):
        """The client's packets of the last send, as bytes."""
        count = ffi.new("size_t*")
        _check(lib.sl_replicator_packet_count(self._ptr, client, count))
        data, size = ffi.new("uint8_t**"), ffi.new("size_t*")
        out = []
        for i in range(count[0]):
            _check(lib.sl_replicator_packet(self._ptr, client, i, ffi.cast("const uint8_t**", data), size))
            out.append(bytes(ffi.buffer(data[0], size[0])))
        return out

    def receive_ack(self, client, ack):
        data = ffi.from_buffer(ack)
        _check(lib.sl_replicator_receive_ack(self._ptr, client, ffi.cast("const uint8_t*", data), len(data)))

    def pending(self, client):
        out = ffi.new("uint32_t*")
        _check(lib.sl_replicator_pending(self._ptr, client, out))
        return out[0]

    def set_priority(self, entity, priority):
        _check(lib.sl_replicator_set_priority(self._ptr, entity, priority))

    def stats(self):
        s = ffi.new("sl_send_stats*")
        lib.sl_replicator_get_stats(self._ptr, s)
        return {name: getattr(s, name) for name in ("packets", "bytes", "spawns", "updates", "despawns",
                                                      "resends", "pending", "serialize_calls", "serialize_errors")}


class Mirror:
    """The client's side (client_mirror.h): applies packets, holds what they say is held. `listener`
    (optional) may define on_enter(entity, reason, created, state, tick), on_update(entity, state,
    tick) and on_exit(entity, exit_kind, reason); states are bytes."""

    def __init__(self, delivery="reliable", history=4, max_entities=1 << 20, listener=None):
        d = ffi.new("sl_mirror_def*")
        lib.sl_mirror_def_default(d)
        d.delivery, d.history, d.max_entities = _DELIVERY[delivery], history, max_entities
        out = ffi.new("sl_mirror**")
        _check(lib.sl_mirror_create(d, out))
        self._ptr = ffi.gc(out[0], lib.sl_mirror_destroy)
        self._listener = ffi.NULL
        self._errors = []
        if listener is not None:
            self._callbacks = self._relay(listener, self._errors)
            self._listener = ffi.new("sl_mirror_listener*", self._callbacks)

    @staticmethod
    def _relay(listener, errors):
        """C callbacks over the listener's methods; what they raise is kept for receive() to raise
        (an exception may not unwind through the library)."""
        def guarded(call):
            def run(*args):
                try:
                    call(*args)
                except Exception as e:
                    errors.append(e)
            return run

        callbacks = {}
        if hasattr(listener, "on_enter"):
            @ffi.callback("void(void*, sl_entity, uint8_t, bool, const uint8_t*, size_t, uint32_t)")
            @guarded
            def on_enter(_, entity, reason, created, state, size, tick):
                listener.on_enter(entity, ffi.string(lib.sl_spawn_reason_name(reason)).decode(), bool(created),
                                  bytes(ffi.buffer(state, size)), tick)
            callbacks["on_enter"] = on_enter
        if hasattr(listener, "on_update"):
            @ffi.callback("void(void*, sl_entity, const uint8_t*, size_t, uint32_t)")
            @guarded
            def on_update(_, entity, state, size, tick):
                listener.on_update(entity, bytes(ffi.buffer(state, size)), tick)
            callbacks["on_update"] = on_update
        if hasattr(listener, "on_exit"):
            @ffi.callback("void(void*, sl_entity, uint8_t, uint8_t)")
            @guarded
            def on_exit(_, entity, kind, reason):
                listener.on_exit(entity, "destroy" if kind == 1 else "leave",
                                 ffi.string(lib.sl_despawn_reason_name(reason)).decode())
            callbacks["on_exit"] = on_exit
        return callbacks

    def receive(self, packet):
        """Applies one packet; raises what a listener method raised (after the packet applied)."""
        data = ffi.from_buffer(packet)
        self._errors.clear()
        status = lib.sl_mirror_receive(self._ptr, ffi.cast("const uint8_t*", data), len(data), self._listener)
        if self._errors:
            error = self._errors[0]
            self._errors.clear()  # no cycle through the traceback
            raise error
        _check(status)

    def holds(self, entity):
        return bool(lib.sl_mirror_holds(self._ptr, entity))

    def held(self):
        """The held entities, sorted by index: a uint64 array."""
        out, count = _list(lib.sl_mirror_held, "sl_entity", self._ptr)
        return np.frombuffer(ffi.buffer(out, count * 8), dtype=np.uint64).copy()

    def state(self, entity):
        """(bytes, part, tick) of the entity's latest state."""
        data, size = ffi.new("uint8_t**"), ffi.new("size_t*")
        part, tick = ffi.new("int*"), ffi.new("uint32_t*")
        _check(lib.sl_mirror_state(self._ptr, entity, ffi.cast("const uint8_t**", data), size, part, tick))
        return bytes(ffi.buffer(data[0], size[0])), part[0], tick[0]

    def ack(self):
        out = ffi.new("uint8_t[]", lib.SL_ACK_BYTES)
        _check(lib.sl_mirror_ack(self._ptr, out, lib.SL_ACK_BYTES))
        return bytes(ffi.buffer(out, lib.SL_ACK_BYTES))

    def interest(self):
        s = ffi.new("sl_interest*")
        lib.sl_mirror_interest(self._ptr, s)
        return {"culling": bool(s.culling), "radius": s.radius, "pending": s.pending}

    def stats(self):
        s = ffi.new("sl_mirror_stats*")
        lib.sl_mirror_get_stats(self._ptr, s)
        return {name: getattr(s, name) for name in ("packets", "rejected", "enters", "updates", "exits", "messages",
                                                      "anomalies")}
