// Wire format v2 state packets (docs/protocol.md), decoded and checked byte for byte the way
// src/protocol.cpp's decode_packet does: anything else is a MalformedPacket naming the byte
// offset and the reason, and nothing of the packet is returned.

export const PROTOCOL_VERSION = 2;
export const STATE_HEADER_BYTES = 25;
/** The largest state a delta update may rebuild: a 65535-byte packet's payload. */
export const MAX_DELTA_STATE_BYTES = 65535 - STATE_HEADER_BYTES;
export const FLAG_UNRELIABLE = 1;
export const FLAG_CULLING = 2;
export const SPAWN_CREATED = 0x80;  // bit 7 of a spawn's reason byte
export const RECORD_SPAWN = 1;
export const RECORD_UPDATE = 2;
export const RECORD_DESPAWN = 3;
export const RECORD_EVENT = 4;
export const RECORD_MESSAGE = 5;
export const RECORD_DELTA_UPDATE = 6;
export const RECORD_REFRESH = 7;
export const UPDATE_KEEP = 1;   // a delta update's flags: the client keeps the state
export const UPDATE_DELTA = 2;  // written as delta runs against a state kept before
export const EVENT_RELIABLE = 1;
export const EVENT_SUBJECT = 2;
const MAX_COORDINATE = 1e15;
export const LAST_SPAWN_REASON = 8;  // unculled
export const LAST_DESPAWN_REASON = 5;  // hidden

export const SPAWN_REASONS = ['near', 'always', 'key', 'owner', 'origin', 'attached', 'teleport', 'presenter', 'unculled'];
export const DESPAWN_REASONS = ['left', 'destroyed', 'key_removed', 'space_changed', 'culling_switched', 'hidden'];

export class MalformedPacket extends Error {
  constructor(message, offset) {
    super(message);
    this.name = 'MalformedPacket';
    this.offset = offset;
  }
}

/** A bounds-checked cursor over untrusted bytes (little-endian). */
export class ByteReader {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = 0;
  }

  /** Refuses the field that starts at byte `at` (by default the current offset). */
  fail(what, why, at = this.pos) {
    throw new MalformedPacket(`${what} at byte ${at} ${why}`, at);
  }

  get remaining() {
    return this.bytes.length - this.pos;
  }

  u8(what) {
    if (this.remaining < 1) this.fail(what, 'ends before it');
    return this.bytes[this.pos++];
  }

  u16(what) {
    if (this.remaining < 2) this.fail(what, 'ends before it');
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }

  u32(what) {
    if (this.remaining < 4) this.fail(what, 'ends before it');
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  f32(what) {
    if (this.remaining < 4) this.fail(what, 'ends before it');
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  /** Unsigned LEB128 of a u32: 1..5 bytes, no overlong form, nothing above 2^32 - 1. */
  varint(what) {
    const start = this.pos;
    let value = 0;
    for (let i = 0; i < 5; ++i) {
      if (this.remaining < 1) this.fail(what, 'ends inside a varint', start);
      const b = this.bytes[this.pos++];
      value += (b & 0x7f) * 2 ** (7 * i);
      if ((b & 0x80) === 0) {
        if (i > 0 && b === 0) this.fail(what, 'is an overlong varint', start);
        if (value > 0xffffffff) this.fail(what, 'is a varint above 32 bits', start);
        return value;
      }
    }
    return this.fail(what, 'is a varint longer than 5 bytes', start);
  }

  /** An entity id: varint index, varint generation >= 1. */
  id() {
    const index = this.varint('entity index');
    const generationAt = this.pos;
    const generation = this.varint('entity generation');
    if (generation === 0) this.fail('entity generation', 'is 0 (the null handle)', generationAt);
    return { index, generation };
  }

  take(count, what) {
    if (this.remaining < count) this.fail(what, `of ${count} bytes runs past the end`);
    const out = this.bytes.subarray(this.pos, this.pos + count);
    this.pos += count;
    return out;
  }
}

/** A float as C++'s format_value writes it in messages: "20", "-20", "inf", "nan". */
function formatFloat(v) {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  return String(v);
}

/**
 * Decodes one state packet: {delivery, sequence, tick, reliableNext, interest: {culling, radius,
 * pending}, records}. Records are {type: 'spawn'|'update'|'despawn'|'event'|'message'|
 * 'delta_update'|'refresh', index, generation, and reliableId, reason, created, stateAge, payload as
 * they apply}; payloads are views into `bytes`.
 * @param {Uint8Array} bytes
 */
export function decodePacket(bytes) {
  const input = new ByteReader(bytes);
  const version = input.u8('version');
  if (version !== PROTOCOL_VERSION) {
    throw new MalformedPacket(`version at byte 0 is ${version}, expected ${PROTOCOL_VERSION}`, 0);
  }
  const kind = input.u8('kind');
  if (kind !== 1) throw new MalformedPacket(`kind at byte 1 is ${kind}, expected 1 (state)`, 1);
  const flags = input.u8('flags');
  if ((flags & ~(FLAG_UNRELIABLE | FLAG_CULLING)) !== 0) {
    throw new MalformedPacket(`flags at byte 2 are ${flags}: unknown bits set`, 2);
  }
  const header = {
    delivery: (flags & FLAG_UNRELIABLE) !== 0 ? 'unreliable' : 'reliable',
    sequence: input.u32('sequence'),
    tick: input.u32('tick'),
    reliableNext: input.u32('reliable_next'),
  };
  const culling = (flags & FLAG_CULLING) !== 0;
  const pending = input.u32('pending');
  const radiusBits = input.u32('radius');
  const radius = input.view.getFloat32(input.pos - 4, true);
  if (culling && !(Number.isFinite(radius) && radius > 0)) {
    throw new MalformedPacket(`radius at byte 19 is ${formatFloat(radius)}: culling needs a finite radius > 0`, 19);
  }
  if (!culling && radiusBits !== 0) {
    throw new MalformedPacket(
      `radius at byte 19 is ${formatFloat(radius)} (bits ${radiusBits}): without culling it must be 0`, 19);
  }
  header.interest = { culling, radius, pending };
  const count = input.u16('record count');
  // Every record takes at least 3 bytes (a message: type, reliable id, empty payload).
  if (count > Math.floor(input.remaining / 3)) {
    throw new MalformedPacket(`record count ${count} at byte 23 exceeds what ${bytes.length} bytes can hold`, 23);
  }
  const records = [];
  for (let i = 0; i < count; ++i) {
    const type = input.u8('record type');
    if (type === RECORD_SPAWN) {
      const reliableId = input.varint('reliable id');
      const { index, generation } = input.id();
      const reasonByte = input.u8('spawn reason');
      const created = (reasonByte & SPAWN_CREATED) !== 0;
      const reason = reasonByte & ~SPAWN_CREATED;
      if (reason > LAST_SPAWN_REASON) input.fail('spawn reason', `is ${reason}, above ${LAST_SPAWN_REASON}`, input.pos - 1);
      const stateAge = readStateAge(input, header.tick);
      const length = input.varint('payload length');
      const payload = input.take(length, 'payload');
      records.push({ type: 'spawn', reliableId, index, generation, reason, created, stateAge, payload });
    } else if (type === RECORD_REFRESH) {
      const reliableId = input.varint('reliable id');
      const { index, generation } = input.id();
      const stateAge = readStateAge(input, header.tick);
      const length = input.varint('payload length');
      const payload = input.take(length, 'payload');
      records.push({ type: 'refresh', reliableId, index, generation, stateAge, payload });
    } else if (type === RECORD_UPDATE) {
      const { index, generation } = input.id();
      const length = input.varint('payload length');
      const payload = input.take(length, 'payload');
      records.push({ type: 'update', index, generation, payload });
    } else if (type === RECORD_DESPAWN) {
      const reliableId = input.varint('reliable id');
      const { index, generation } = input.id();
      const reason = input.u8('despawn reason');
      if (reason > LAST_DESPAWN_REASON) {
        input.fail('despawn reason', `is ${reason}, above ${LAST_DESPAWN_REASON}`, input.pos - 1);
      }
      records.push({ type: 'despawn', reliableId, index, generation, reason });
    } else if (type === RECORD_EVENT) {
      records.push(readEvent(input, header.tick));
    } else if (type === RECORD_MESSAGE) {
      const reliableId = input.varint('reliable id');
      const length = input.varint('payload length');
      records.push({ type: 'message', reliableId, payload: input.take(length, 'payload') });
    } else if (type === RECORD_DELTA_UPDATE) {
      records.push(readDeltaUpdate(input, header.tick));
    } else {
      input.fail('record type', `is ${type}, not 1 to 7`, input.pos - 1);
    }
  }
  if (input.remaining !== 0) input.fail('packet', `has ${input.remaining} bytes after its last record`);
  return { ...header, records };
}

/** A spawn's or refresh's state age: at most the packet's tick. */
function readStateAge(input, tick) {
  const at = input.pos;
  const stateAge = input.varint('state age');
  if (stateAge > tick) input.fail('state age', `is ${stateAge}, beyond the packet's tick ${tick}`, at);
  return stateAge;
}

/** A delta update after its type byte (docs/protocol.md, "Delta update"). */
function readDeltaUpdate(input, tick) {
  const flags = input.u8('update flags');
  if ((flags & ~(UPDATE_KEEP | UPDATE_DELTA)) !== 0) {
    input.fail('update flags', `are ${flags}: unknown bits set`, input.pos - 1);
  }
  const keep = (flags & UPDATE_KEEP) !== 0;
  const { index, generation } = input.id();
  if ((flags & UPDATE_DELTA) === 0) {
    const length = input.varint('payload length');
    const payload = input.take(length, 'payload');
    return { type: 'delta_update', index, generation, keep, baseAge: 0, stateSize: length, payload };
  }
  const ageAt = input.pos;
  const baseAge = input.varint('base age');
  if (baseAge === 0 || baseAge > tick) {
    input.fail('base age', `is ${baseAge}: must be in [1, the packet's tick ${tick}]`, ageAt);
  }
  const sizeAt = input.pos;
  const stateSize = input.varint('state length');
  if (stateSize > MAX_DELTA_STATE_BYTES) {
    input.fail('state length', `is ${stateSize}: must be at most ${MAX_DELTA_STATE_BYTES} (a packet's largest state)`, sizeAt);
  }
  const length = input.varint('delta length');
  const runsAt = input.pos;
  const payload = input.take(length, 'delta');
  const why = deltaRunsError(payload, stateSize);
  if (why !== null) input.fail('delta', why, runsAt);
  return { type: 'delta_update', index, generation, keep, baseAge, stateSize, payload };
}

/** Reads the delta runs' pairs: [kept, changed, offset of the changed bytes], or a reason. */
function deltaRuns(runs) {
  const reader = new ByteReader(runs);
  const out = [];
  while (reader.remaining > 0) {
    let kept;
    let changed;
    try {
      kept = reader.varint('run');
      changed = reader.varint('run');
    } catch (e) {
      if (e instanceof MalformedPacket) return 'has a run count that is not a varint (overlong, above 32 bits, or cut off)';
      throw e;
    }
    if (changed === 0) return 'has a run of 0 changed bytes';
    out.push([kept, changed, reader.pos]);
    if (reader.remaining < changed) {
      out.push(null);  // its bytes run past the end
      return out;
    }
    reader.pos += changed;
  }
  return out;
}

/** Why delta runs of a `size`-byte state do not decode, or null (src/protocol.cpp's rule). */
function deltaRunsError(runs, size) {
  const pairs = deltaRuns(runs);
  if (typeof pairs === 'string') return pairs;
  let end = 0;
  for (const pair of pairs) {
    if (pair === null) return 'has a run whose changed bytes run past its end';
    end += pair[0] + pair[1];
    if (end > size) return "has runs past the state's length";
  }
  return null;
}

/**
 * Rebuilds a delta update's state of `size` bytes from the state kept (`base`) and its runs, or
 * returns null where the runs keep bytes beyond the end of `base`.
 */
export function applyDeltaRuns(base, runs, size) {
  const pairs = deltaRuns(runs);
  // Bytes past the runs come from the base: a longer state cannot be rebuilt.
  if (typeof pairs === 'string' || size > base.length + runs.length) return null;
  const out = new Uint8Array(size);
  let p = 0;
  const keep = (count) => {
    if (count === 0) return true;
    if (p + count > size || p + count > base.length) return false;
    out.set(base.subarray(p, p + count), p);
    p += count;
    return true;
  };
  for (const pair of pairs) {
    if (pair === null || !keep(pair[0]) || p + pair[1] > size) return null;
    out.set(runs.subarray(pair[2], pair[2] + pair[1]), p);
    p += pair[1];
  }
  return keep(size - p) ? out : null;
}

/** An event record after its type byte (docs/protocol.md, "Event"). */
function readEvent(input, tick) {
  const flags = input.u8('event flags');
  if ((flags & ~(EVENT_RELIABLE | EVENT_SUBJECT)) !== 0) {
    input.fail('event flags', `are ${flags}: unknown bits set`, input.pos - 1);
  }
  const reliable = (flags & EVENT_RELIABLE) !== 0;
  let reliableId = 0;
  let age = 0;
  if (reliable) {
    reliableId = input.varint('reliable id');
    const ageAt = input.pos;
    age = input.varint('state age');
    if (age > tick) input.fail('state age', `is ${age}, beyond the packet's tick ${tick}`, ageAt);
  }
  const eventClass = input.varint('event class');
  const coordinate = (what) => {
    const at = input.pos;
    const v = input.f32(what);
    if (!(Number.isFinite(v) && Math.abs(v) <= MAX_COORDINATE)) {
      input.fail(what, `is ${formatFloat(v)}: must be finite, within 1e15`, at);
    }
    return v;
  };
  const x = coordinate('event x');
  const z = coordinate('event z');
  let subject = null;
  if ((flags & EVENT_SUBJECT) !== 0) subject = input.id();
  const length = input.varint('payload length');
  const payload = input.take(length, 'payload');
  return { type: 'event', reliable, reliableId, stateAge: age, eventClass, x, z, subject, payload };
}

/** One line naming a decoded record, for messages. */
export function describeRecord(r) {
  const id = `${r.index}:${r.generation}`;
  if (r.type === 'spawn') {
    return `spawn ${id} (reliable id ${r.reliableId}, ${SPAWN_REASONS[r.reason]}${r.created ? ', created' : ''}, age ${r.stateAge})`;
  }
  if (r.type === 'despawn') return `despawn ${id} (reliable id ${r.reliableId}, ${DESPAWN_REASONS[r.reason]})`;
  if (r.type === 'message') return `message (reliable id ${r.reliableId}, ${r.payload.length} bytes)`;
  if (r.type === 'event') {
    const subject = r.subject ? ` of ${r.subject.index}:${r.subject.generation}` : '';
    return `event of class ${r.eventClass}${subject} at (${r.x}, ${r.z})${r.reliable ? `, reliable id ${r.reliableId}` : ''}`;
  }
  if (r.type === 'delta_update') {
    return `update ${id}${r.keep ? ', kept' : ''}${r.baseAge ? `, delta against ${r.baseAge} ticks back` : ''}`;
  }
  return `update ${id}`;
}
