// Sightline from Node and TypeScript: the World, the Replicator and the ClientMirror over the C API,
// compiled to WebAssembly (the sightline_wasm target of an emcmake build, sightline_wasm.cjs). Types: sightline.d.mts.
//
//   import { load } from './sightline.mjs';
//   const sl = await load('build-wasm/bin/sightline_wasm.cjs');
//   const world = new sl.World({ enterRadius: 25, leaveRadius: 30 });
//
// Handles are BigInt (the slot index in the low 32 bits, the generation in the high 32). A refused
// call throws SightlineError with the library's code name and message. Objects hold WebAssembly
// memory: call close() when done (a Replicator before its World).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const PART_FULL = 0;
const DELIVERY = { reliable: 0, unreliable: 1 };
const ORDER_KEY = { slot: 0, external: 1 }; // sl_world_def::order_key

export class SightlineError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.code = code;
  }
}

/** Loads the WebAssembly module at `modulePath` (a file path of sightline_wasm.cjs) and returns the
 * API over it. */
export async function load(modulePath) {
  const createSightline = require(modulePath);
  // The .wasm beside it, read here: Emscripten 3.1.6 would fetch() it, which Node's fetch refuses
  // for a file path.
  const wasmBinary = readFileSync(modulePath.replace(/\.c?js$/, '.wasm'));
  const m = await createSightline({ wasmBinary });
  // Scratch memory for the calls' out-parameters, made once.
  const scratch = m._malloc(64);
  const text = (pointer) => m.UTF8ToString(pointer);
  const check = (status) => {
    if (status !== 0) throw new SightlineError(text(m._sl_status_name(status)), text(m._sl_last_error()));
  };
  const u32 = (pointer) => m.HEAPU32[pointer >>> 2];
  const u64 = (pointer) => BigInt(m.HEAPU32[pointer >>> 2]) | (BigInt(m.HEAPU32[(pointer >>> 2) + 1]) << 32n);
  const f32 = (pointer) => m.HEAPF32[pointer >>> 2];
  const putU64 = (pointer, value) => {
    m.HEAPU32[pointer >>> 2] = Number(value & 0xffffffffn);
    m.HEAPU32[(pointer >>> 2) + 1] = Number(value >> 32n);
  };
  // An external id as the C API takes it: a bigint (or an integer number) in [0, 2^64).
  const externalIdOf = (value) => {
    const id = typeof value === 'bigint' ? value : Number.isInteger(value) ? BigInt(value) : -1n;
    if (BigInt.asUintN(64, id) !== id) {
      throw new SightlineError('invalid_argument', `external id ${value}: not an integer in [0, 2^64)`);
    }
    return id;
  };
  const bytesAt = (pointer, size) => m.HEAPU8.slice(pointer, pointer + size);
  // Copies `bytes` into WebAssembly memory for the length of fn(pointer, size).
  const withBytes = (bytes, fn) => {
    const pointer = m._malloc(Math.max(bytes.length, 1));
    try {
      m.HEAPU8.set(bytes, pointer);
      return fn(pointer, bytes.length);
    } finally {
      m._free(pointer);
    }
  };
  // The C API's two-call lists of 8-byte handles.
  const handles = (call, ...args) => {
    check(call(...args, 0, 0, scratch));
    const count = u32(scratch);
    const out = m._malloc(Math.max(count, 1) * 8);
    try {
      check(call(...args, out, count, scratch));
      const list = new BigUint64Array(count);
      for (let i = 0; i < count; ++i) list[i] = u64(out + 8 * i);
      return list;
    } finally {
      m._free(out);
    }
  };

  class World {
    /** @param def { enterRadius, leaveRadius, threads, cellSize, crowdCap, orderKey } (the C defaults otherwise). */
    constructor(def = {}) {
      if (def.orderKey !== undefined && !Object.hasOwn(ORDER_KEY, def.orderKey)) {
        throw new SightlineError('invalid_def', `WorldDef::orderKey is '${def.orderKey}': 'slot' or 'external'`);
      }
      const d = m._malloc(32); // sl_world_def: 3 floats, 4 uint32, order_key uint8 (29 bytes, 32 aligned)
      try {
        m._sl_world_def_default(d);
        const f = d >>> 2;
        if (def.enterRadius !== undefined) m.HEAPF32[f] = def.enterRadius;
        m.HEAPF32[f + 1] = def.leaveRadius ?? m.HEAPF32[f];
        if (def.cellSize !== undefined) m.HEAPF32[f + 2] = def.cellSize;
        if (def.threads !== undefined) m.HEAPU32[f + 3] = def.threads;
        if (def.crowdCap !== undefined) m.HEAPU32[f + 4] = def.crowdCap;
        if (def.orderKey !== undefined) m.HEAPU8[d + 28] = ORDER_KEY[def.orderKey];
        if (def.recording) {
          // An exception may not unwind through the WebAssembly frames: kept, and thrown by close().
          this.recordingError = null;
          this.recording = m.addFunction((context, bytes, size) => {
            try {
              def.recording(bytesAt(bytes, size));
            } catch (e) {
              this.recordingError ??= e;
            }
          }, 'viii');
          const status = m._sl_world_create_recording(d, this.recording, 0, scratch);
          if (status !== 0) m.removeFunction(this.recording);
          check(status);
        } else {
          check(m._sl_world_create(d, scratch));
        }
        this.ptr = u32(scratch);
      } finally {
        m._free(d);
      }
    }
    close() {
      m._sl_world_destroy(this.ptr); // a replay's world: ignored
      this.ptr = 0;
      if (this.recording) {
        m.removeFunction(this.recording);
        this.recording = 0;
        if (this.recordingError) throw this.recordingError;
      }
    }
    /** The client keeps its last `capacity` spawns and despawns (0: none). */
    setHistoryCapacity(client, capacity) {
      check(m._sl_world_set_history_capacity(this.ptr, client, capacity));
    }
    /** The client's kept transitions of the entity (0n: of every entity), oldest first. */
    history(client, entity = 0n) {
      check(m._sl_world_history(this.ptr, client, entity, 0, 0, scratch));
      const count = u32(scratch);
      const out = m._malloc(Math.max(count, 1) * 32); // sl_history_entry: 32 bytes
      try {
        check(m._sl_world_history(this.ptr, client, entity, out, count, scratch));
        const entries = [];
        for (let i = 0; i < count; ++i) {
          const e = out + 32 * i;
          const spawned = m.HEAPU8[e + 16] !== 0;
          const reason = m.HEAPU8[e + 17];
          entries.push({
            tick: u64(e),
            entity: u64(e + 8),
            spawned,
            reason: text(spawned ? m._sl_spawn_reason_name(reason) : m._sl_despawn_reason_name(reason)),
            distance: f32(e + 20),
            rule: m.HEAPU8[e + 24] !== 0 ? text(m._sl_rule_name(m.HEAPU8[e + 25])) : null,
          });
        }
        return entries;
      } finally {
        m._free(out);
      }
    }
    /** @param def { externalId, created }: the game's id for it (0n: none; unique among live
     * entities, and needed by every entity under orderKey 'external'), and false for one that existed
     * elsewhere, whose first spawns do not say created (default true). */
    createEntity(x, z, def = {}) {
      const externalId = externalIdOf(def.externalId ?? 0n);
      const d = m._malloc(40); // sl_entity_def: 4 floats, 2 bools, external_id uint64 at 24, created bool at 32
      try {
        m._sl_entity_def_default(d);
        m.HEAPF32[d >>> 2] = x;
        m.HEAPF32[(d >>> 2) + 1] = z;
        putU64(d + 24, externalId);
        if (def.created !== undefined) m.HEAPU8[d + 32] = def.created ? 1 : 0;
        check(m._sl_world_create_entity(this.ptr, d, scratch));
        return u64(scratch);
      } finally {
        m._free(d);
      }
    }
    destroyEntity(entity) {
      check(m._sl_world_destroy_entity(this.ptr, entity));
    }
    /** As destroyEntity (refused the same way: entity_is_viewer, stale_handle, null_handle), for an
     * entity that goes on existing elsewhere: its holders despawn with reason 'left', not
     * 'destroyed', at the next tick. */
    withdrawEntity(entity) {
      check(m._sl_world_withdraw_entity(this.ptr, entity));
    }
    /** The entity's external id (0n for none). */
    externalId(entity) {
      check(m._sl_world_external_id(this.ptr, entity, scratch));
      return u64(scratch);
    }
    /** The live entity holding external id `id` (a bigint or an integer number); 0n (the null handle)
     * when none does, and for 0. */
    findExternal(id) {
      return BigInt.asUintN(64, m._sl_world_find_external(this.ptr, externalIdOf(id)));
    }
    setPosition(entity, x, z) {
      check(m._sl_world_set_position(this.ptr, entity, x, z));
    }
    /** entities[i] (BigUint64Array) moves to (xs[i], zs[i]) (Float32Array). */
    setPositions(entities, xs, zs) {
      if (entities.length !== xs.length || xs.length !== zs.length) {
        throw new SightlineError('invalid_argument', `${entities.length} entities, ${xs.length} xs and ${zs.length} zs`);
      }
      const n = entities.length;
      const block = m._malloc(Math.max(n, 1) * 16);
      try {
        m.HEAPU8.set(new Uint8Array(entities.buffer, entities.byteOffset, n * 8), block);
        m.HEAPF32.set(xs, (block + 8 * n) >>> 2);
        m.HEAPF32.set(zs, (block + 12 * n) >>> 2);
        check(m._sl_world_set_positions(this.ptr, block, block + 8 * n, block + 12 * n, n));
      } finally {
        m._free(block);
      }
    }
    position(entity) {
      check(m._sl_world_position(this.ptr, entity, scratch, scratch + 4));
      return [f32(scratch), f32(scratch + 4)];
    }
    createClient(viewer) {
      check(m._sl_world_create_client(this.ptr, viewer, scratch));
      return u64(scratch);
    }
    destroyClient(client) {
      check(m._sl_world_destroy_client(this.ptr, client));
    }
    /** Runs one tick: the index of the tick run (a BigInt). */
    tick() {
      const stats = m._malloc(40);
      try {
        check(m._sl_world_tick(this.ptr, stats));
        return u64(stats);
      } finally {
        m._free(stats);
      }
    }
    /** The client's set after the last tick, sorted by index. */
    interestSet(client) {
      return handles(m._sl_world_interest_set, this.ptr, client);
    }
    /** Whether the client holds the entity, and the rule that decided ("near", "out_of_range", ...). */
    why(client, entity) {
      const out = m._malloc(16); // sl_why: bool, uint8, then the root at 8
      try {
        check(m._sl_world_why(this.ptr, client, entity, out));
        return { held: m.HEAPU8[out] !== 0, rule: text(m._sl_rule_name(m.HEAPU8[out + 1])), root: u64(out + 8) };
      } finally {
        m._free(out);
      }
    }
  }

  /** A quantized range checked and divided once, for a range known only at run time:
   * stream.quantizedRange(value, range) writes and reads exactly the bits stream.quantized(value, min,
   * max, resolution) does. Immutable: one may serve every serializer. close() frees it. */
  class QuantizedRange {
    /** Throws SightlineError (naming the argument) for what quantized() fails on: min or max not
     * finite, min >= max, resolution not finite or <= 0, more than 2^32 - 1 steps. */
    constructor(min, max, resolution) {
      check(m._sl_quantized_range_create(min, max, resolution, scratch));
      this.ptr = u32(scratch);
      this.min = min;
      this.max = max;
      this.resolution = resolution;
    }
    close() {
      m._sl_quantized_range_destroy(this.ptr);
      this.ptr = 0;
    }
  }

  /** A payload being written (in a serializer) or read (Stream.reader). Each call returns the value
   * written or read, and throws once the stream has failed. */
  class Stream {
    constructor(ptr, owned = 0) {
      this.ptr = ptr;
      this.owned = owned;
    }
    static reader(bytes) {
      const copy = m._malloc(Math.max(bytes.length, 1));
      m.HEAPU8.set(bytes, copy);
      const status = m._sl_stream_reader_create(copy, bytes.length, scratch);
      if (status !== 0) m._free(copy);
      check(status);
      return new Stream(u32(scratch), copy);
    }
    close() {
      if (this.owned) {
        m._sl_stream_destroy(this.ptr);
        m._free(this.owned);
        this.owned = 0;
      }
    }
    done(ok, value) {
      if (!ok) throw new SightlineError('stream', text(m._sl_stream_error(this.ptr)));
      return value;
    }
    bits(value, bits) {
      m.HEAPU32[scratch >>> 2] = value;
      return this.done(m._sl_stream_bits(this.ptr, scratch, bits), u32(scratch));
    }
    quantized(value, min, max, resolution) {
      m.HEAPF32[scratch >>> 2] = value;
      return this.done(m._sl_stream_quantized(this.ptr, scratch, min, max, resolution), f32(scratch));
    }
    /** quantized(value, range.min, range.max, range.resolution), with a QuantizedRange made once. */
    quantizedRange(value, range) {
      if (!range.ptr) throw new SightlineError('invalid_argument', 'the QuantizedRange is closed');
      m.HEAPF32[scratch >>> 2] = value;
      return this.done(m._sl_stream_quantized_range(this.ptr, scratch, range.ptr), f32(scratch));
    }
    float(value) {
      m.HEAPF32[scratch >>> 2] = value;
      return this.done(m._sl_stream_float(this.ptr, scratch), f32(scratch));
    }
    restIsZero() {
      return m._sl_stream_rest_is_zero(this.ptr) !== 0;
    }
  }

  /** A recording re-run tick by tick on a world of its own (docs/recording.md). */
  class Replay {
    /** @param def { historyCapacity }: every client the replay creates keeps that many transitions. */
    constructor(bytes, def = {}) {
      const d = m._malloc(16); // sl_replay_def: 4 uint32
      try {
        m._sl_replay_def_default(d);
        if (def.historyCapacity !== undefined) m.HEAPU32[(d >>> 2) + 1] = def.historyCapacity;
        withBytes(bytes, (pointer, size) => check(m._sl_replay_open(pointer, size, d, scratch)));
        this.ptr = u32(scratch);
      } finally {
        m._free(d);
      }
      // Its world answers questions and refuses changes; valid until close().
      this.world = Object.create(World.prototype);
      this.world.ptr = m._sl_replay_world(this.ptr);
    }
    get done() {
      return m._sl_replay_done(this.ptr) !== 0;
    }
    /** Applies the recorded calls up to the next tick and runs it: the index of the tick run. */
    nextTick() {
      const stats = m._malloc(40);
      try {
        check(m._sl_replay_next_tick(this.ptr, stats));
        return u64(stats);
      } finally {
        m._free(stats);
      }
    }
    close() {
      m._sl_replay_destroy(this.ptr);
      this.ptr = 0;
    }
  }

  class Replicator {
    /** serialize(stream, entity, part) writes an entity's state part (Part.full or Part.update); an
     * exception in it refuses the record, and send() throws with the first one's message. */
    constructor(world, serialize, def = {}) {
      this.errors = [];
      this.callback = m.addFunction((stream, entity, part) => {
        try {
          serialize(new Stream(stream), entity, part);
          return 1;
        } catch (e) {
          this.errors.push(`serializer for entity ${entity & 0xffffffffn}: ${e.message}`);
          return 0;
        }
      }, 'iijii');
      const d = m._malloc(48); // sl_replicator_def
      try {
        m._sl_replicator_def_default(d);
        const w = d >>> 2;
        m.HEAPU32[w] = this.callback;
        m.HEAPU32[w + 2] = DELIVERY[def.delivery ?? 'reliable'];
        if (def.tickSeconds !== undefined) m.HEAPF32[w + 3] = def.tickSeconds;
        if (def.packetBytes !== undefined) m.HEAPU32[w + 4] = def.packetBytes;
        if (def.budgetBytes !== undefined) m.HEAPU32[w + 5] = def.budgetBytes;
        const status = m._sl_replicator_create(world.ptr, d, scratch);
        if (status !== 0) m.removeFunction(this.callback);
        check(status);
        this.ptr = u32(scratch);
      } finally {
        m._free(d);
      }
    }
    close() {
      m._sl_replicator_destroy(this.ptr);
      m.removeFunction(this.callback);
      this.ptr = 0;
    }
    send() {
      this.errors.length = 0;
      const status = m._sl_replicator_send(this.ptr);
      if (status !== 0) {
        const detail = this.errors.length ? ` (${this.errors[0]})` : '';
        throw new SightlineError(text(m._sl_status_name(status)), text(m._sl_last_error()) + detail);
      }
    }
    /** The client's packets of the last send, copied out as Uint8Arrays. */
    packets(client) {
      check(m._sl_replicator_packet_count(this.ptr, client, scratch));
      const count = u32(scratch);
      const out = [];
      for (let i = 0; i < count; ++i) {
        check(m._sl_replicator_packet(this.ptr, client, i, scratch, scratch + 4));
        out.push(bytesAt(u32(scratch), u32(scratch + 4)));
      }
      return out;
    }
    receiveAck(client, ack) {
      withBytes(ack, (pointer, size) => check(m._sl_replicator_receive_ack(this.ptr, client, pointer, size)));
    }
    pending(client) {
      check(m._sl_replicator_pending(this.ptr, client, scratch));
      return u32(scratch);
    }
  }

  class Mirror {
    /** listener (optional): onEnter(entity, reason, created, state, tick), onUpdate(entity, state,
     * tick), onExit(entity, destroyed, reason); states are Uint8Arrays. */
    constructor(def = {}, listener = undefined) {
      const d = m._malloc(12); // sl_mirror_def
      try {
        m._sl_mirror_def_default(d);
        m.HEAPU32[d >>> 2] = DELIVERY[def.delivery ?? 'reliable'];
        check(m._sl_mirror_create(d, scratch));
        this.ptr = u32(scratch);
      } finally {
        m._free(d);
      }
      this.functions = [];
      this.listener = 0;
      this.thrown = [];
      if (listener) {
        // An exception may not unwind through the WebAssembly frames: kept, and rethrown by receive().
        const add = (fn, signature) => {
          const index = m.addFunction((...args) => {
            try {
              fn(...args);
            } catch (e) {
              this.thrown.push(e);
            }
          }, signature);
          this.functions.push(index);
          return index;
        };
        this.listener = m._malloc(24); // sl_mirror_listener: context and five callbacks
        m.HEAPU32.fill(0, this.listener >>> 2, (this.listener >>> 2) + 6);
        const l = this.listener >>> 2;
        if (listener.onEnter) {
          m.HEAPU32[l + 1] = add((_, entity, reason, created, state, size, tick) =>
            listener.onEnter(entity, text(m._sl_spawn_reason_name(reason)), created !== 0, bytesAt(state, size), tick),
          'vijiiiii');
        }
        if (listener.onUpdate) {
          m.HEAPU32[l + 2] = add((_, entity, state, size, tick) => listener.onUpdate(entity, bytesAt(state, size), tick),
            'vijiii');
        }
        if (listener.onExit) {
          m.HEAPU32[l + 4] = add((_, entity, kind, reason) =>
            listener.onExit(entity, kind === 1, text(m._sl_despawn_reason_name(reason))), 'vijii');
        }
      }
    }
    close() {
      m._sl_mirror_destroy(this.ptr);
      for (const index of this.functions) m.removeFunction(index);
      if (this.listener) m._free(this.listener);
      this.ptr = 0;
    }
    /** Applies one packet; rethrows what a listener threw (after the packet applied). */
    receive(packet) {
      this.thrown.length = 0;
      const status = withBytes(packet, (pointer, size) => m._sl_mirror_receive(this.ptr, pointer, size, this.listener));
      if (this.thrown.length) throw this.thrown[0];
      check(status);
    }
    holds(entity) {
      return m._sl_mirror_holds(this.ptr, entity) !== 0;
    }
    /** The held entities, sorted by index. */
    held() {
      return handles(m._sl_mirror_held, this.ptr);
    }
    /** The entity's latest state: { state, part, tick }. */
    state(entity) {
      check(m._sl_mirror_state(this.ptr, entity, scratch, scratch + 4, scratch + 8, scratch + 12));
      return { state: bytesAt(u32(scratch), u32(scratch + 4)), part: m.HEAPU32[(scratch + 8) >>> 2], tick: u32(scratch + 12) };
    }
    /** The ack to send back to the server. */
    ack() {
      const out = m._malloc(14);
      try {
        check(m._sl_mirror_ack(this.ptr, out, 14));
        return bytesAt(out, 14);
      } finally {
        m._free(out);
      }
    }
    get anomalies() {
      const stats = m._malloc(56);
      try {
        m._sl_mirror_get_stats(this.ptr, stats);
        return Number(u64(stats + 48));
      } finally {
        m._free(stats);
      }
    }
  }

  return {
    World,
    Replay,
    Stream,
    QuantizedRange,
    Replicator,
    Mirror,
    SightlineError,
    Part: { full: PART_FULL, update: 1 },
    version: text(m._sl_version()),
  };
}
