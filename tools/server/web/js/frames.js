// The demo's WebSocket frames (docs/demo_protocol.md): a type byte, then fixed little-endian
// fields. Server frames are decoded and checked completely (a FrameError names the frame, the
// byte and the reason); client frames are encoded at their fixed sizes. A bundle carries several
// server frames in one message: splitBundle cuts it into them, each then decoded on its own.

import { ByteReader, MalformedPacket } from './wire.js';

export const FRAME_WELCOME = 1;
export const FRAME_TICK = 2;
export const FRAME_RESET = 3;
export const FRAME_DEBUG = 4;
export const FRAME_WHY_ANSWER = 5;
/** Several whole server frames in one message, each after its u32 length (never a bundle). */
export const FRAME_BUNDLE = 7;

/** The frame version the welcome states, and the only one this page reads. */
export const FRAME_VERSION = 4;

export const WELCOME_BYTES = 37;
export const TICK_HEADER_BYTES = 61;
export const RESET_BYTES = 5;
export const DEBUG_HEADER_BYTES = 13;
export const WHY_ANSWER_BYTES = 24;
export const WHY_BYTES = 9;
/** A bundle's least: the type byte, one u32 length and a frame of at least its type byte. */
export const BUNDLE_MIN_BYTES = 1 + 4 + 1;

/** include/sightline/relevance.h's Rule by value, as rule_name spells each. */
export const RULE_NAMES = [
  'viewer', 'other_space', 'always', 'owner', 'origin', 'key_excluded', 'presenter', 'key_bypass',
  'unculled', 'near', 'within_leave', 'out_of_range', 'hidden', 'crowded',
];

export const OPTION_HYSTERESIS = 1;
export const OPTION_INTEREST = 2;
export const OPTION_DEBUG = 4;
export const SERVER_FLAG_DEBUG_VIEW = 1;
/** The stream is unreliable (a UDP transport): a page over WebSocket never sees it. */
export const SERVER_FLAG_UNRELIABLE = 2;

export class FrameError extends Error {
  constructor(message) {
    super(message);
    this.name = 'FrameError';
  }
}

function finite(input, what, frame) {
  const at = input.pos;
  const v = input.f32(what);
  if (!Number.isFinite(v)) throw new FrameError(`${frame}: ${what} at byte ${at} is not finite`);
  return v;
}

function exactSize(bytes, size, frame) {
  if (bytes.length !== size) throw new FrameError(`${frame} frame is ${bytes.length} bytes, expected ${size}`);
}

function decodeWelcome(input, bytes) {
  exactSize(bytes, WELCOME_BYTES, 'welcome');
  const version = input.u8('frame version');
  if (version !== FRAME_VERSION) {
    throw new FrameError(`welcome: frame version at byte 1 is ${version}, expected ${FRAME_VERSION}`);
  }
  const w = {
    type: 'welcome',
    version,
    connectionId: input.u32('connection id'),
    width: finite(input, 'world width', 'welcome'),
    height: finite(input, 'world height', 'welcome'),
    enterRadius: finite(input, 'enter radius', 'welcome'),
    leaveRadius: finite(input, 'leave radius', 'welcome'),
    cellSize: finite(input, 'cell size', 'welcome'),
    tickRate: input.u16('tick rate'),
    serverFlags: input.u8('server flags'),
    maxRadius: finite(input, 'largest radius', 'welcome'),
    entityCount: input.u32('entity count'),
  };
  if (!(w.width > 0 && w.height > 0)) throw new FrameError('welcome: the world is empty');
  if (!(w.enterRadius > 0 && w.leaveRadius >= w.enterRadius)) throw new FrameError('welcome: radii not 0 < R <= L');
  if (!(w.cellSize > 0)) throw new FrameError('welcome: cell size not positive');
  if (w.tickRate === 0) throw new FrameError('welcome: tick rate is 0');
  w.debugAllowed = (w.serverFlags & SERVER_FLAG_DEBUG_VIEW) !== 0;
  return w;
}

function decodeTick(input, bytes) {
  if (bytes.length < TICK_HEADER_BYTES) {
    throw new FrameError(`tick frame is ${bytes.length} bytes, shorter than its ${TICK_HEADER_BYTES}-byte header`);
  }
  const t = {
    type: 'tick',
    tick: input.u32('tick'),
    viewerX: finite(input, 'viewer x', 'tick'),
    viewerZ: finite(input, 'viewer z', 'tick'),
    enterRadius: finite(input, 'enter radius', 'tick'),
    leaveRadius: finite(input, 'leave radius', 'tick'),
    options: input.u8('options'),
    serverTimeMs: 0,
    packets: [],
  };
  if ((t.options & ~7) !== 0) throw new FrameError(`tick: options at byte 21 are ${t.options}: unknown bits set`);
  // Byte 22, inside the header whose length was checked above.
  t.serverTimeMs = input.view.getFloat64(input.pos, true);
  if (!Number.isFinite(t.serverTimeMs)) throw new FrameError(`tick: server time at byte ${input.pos} is not finite`);
  input.pos += 8;
  const n = input.u16('packet count');
  // The library's grid and the cells this connection's scan read (scanned 1), or none (0).
  t.gridOriginX = finite(input, 'grid origin x', 'tick');
  t.gridOriginZ = finite(input, 'grid origin z', 'tick');
  const cellAt = input.pos;
  t.cellSize = finite(input, 'cell size', 'tick');
  if (!(t.cellSize > 0)) throw new FrameError(`tick: cell size at byte ${cellAt} is ${t.cellSize}: must be > 0`);
  const scannedAt = input.pos;
  const scanned = input.u8('scanned');
  if (scanned > 1) throw new FrameError(`tick: scanned at byte ${scannedAt} is ${scanned}: must be 0 or 1`);
  const x0 = input.u32('scan x0');
  const x1 = input.u32('scan x1');
  const z0 = input.u32('scan z0');
  const z1 = input.u32('scan z1');
  if (scanned === 1 && (x0 > x1 || z0 > z1)) throw new FrameError(`tick: the scanned cells [${x0}, ${x1}] x [${z0}, ${z1}] are empty`);
  if (scanned === 0 && (x0 | x1 | z0 | z1) !== 0) throw new FrameError('tick: scan cells given while scanned is 0');
  t.scanned = scanned === 1 ? { x0, x1, z0, z1 } : null;
  for (let i = 0; i < n; ++i) {
    const length = input.u16(`packet ${i} length`);
    t.packets.push(input.take(length, `packet ${i}`));
  }
  if (input.remaining !== 0) throw new FrameError(`tick: ${input.remaining} bytes after its last packet`);
  return t;
}

function decodeDebug(input, bytes) {
  if (bytes.length < DEBUG_HEADER_BYTES) throw new FrameError(`debug frame is ${bytes.length} bytes, too short`);
  const tick = input.u32('tick');
  const members = input.u32('members');
  const count = input.u32('count');
  if (input.remaining !== count * 12) {
    throw new FrameError(`debug frame: ${count} entities need ${count * 12} bytes, ${input.remaining} follow`);
  }
  const entities = [];
  for (let i = 0; i < count; ++i) {
    const index = input.u32('entity index');
    entities.push({ index, x: finite(input, 'x', 'debug'), z: finite(input, 'z', 'debug') });
  }
  return { type: 'debug', tick, members, entities };
}

function decodeWhyAnswer(input, bytes) {
  exactSize(bytes, WHY_ANSWER_BYTES, 'why_answer');
  const a = {
    type: 'why_answer',
    tick: input.u32('tick'),
    index: input.u32('entity index'),
    generation: input.u32('entity generation'),
  };
  const outcome = input.u8('answer');
  const held = input.u8('held');
  const rule = input.u8('rule');
  a.root = { index: input.u32('root index'), generation: input.u32('root generation') };
  if (outcome > 1) throw new FrameError(`why_answer: answer at byte 13 is ${outcome}: must be 0 (answered) or 1 (stale)`);
  if (held > 1) throw new FrameError(`why_answer: held at byte 14 is ${held}: must be 0 or 1`);
  if (rule >= RULE_NAMES.length) throw new FrameError(`why_answer: rule at byte 15 is ${rule}: above the last rule, crowded (${RULE_NAMES.length - 1})`);
  a.stale = outcome === 1;
  a.held = held === 1;
  a.rule = a.stale ? null : RULE_NAMES[rule];
  if (a.stale && (held | rule | a.root.index | a.root.generation) !== 0) {
    throw new FrameError('why_answer: held, rule and root must be 0 in a stale answer');
  }
  if (!a.stale && (a.generation === 0 || a.root.generation === 0)) {
    throw new FrameError('why_answer: an answer names no entity (generation 0)');
  }
  if (a.stale) a.root = null;
  return a;
}

/**
 * Decodes one server frame. The packets of a tick frame are returned as byte views, still to
 * be decoded (wire.js).
 * @param {Uint8Array} bytes
 */
export function decodeServerFrame(bytes) {
  const input = new ByteReader(bytes);
  try {
    const type = input.u8('frame type');
    switch (type) {
      case FRAME_WELCOME: return decodeWelcome(input, bytes);
      case FRAME_TICK: return decodeTick(input, bytes);
      case FRAME_RESET:
        exactSize(bytes, RESET_BYTES, 'reset');
        return { type: 'reset', tick: input.u32('tick') };
      case FRAME_DEBUG: return decodeDebug(input, bytes);
      case FRAME_WHY_ANSWER: return decodeWhyAnswer(input, bytes);
      case FRAME_BUNDLE: throw new FrameError('a bundle frame holds other frames: split it with splitBundle, then decode each');
      default: throw new FrameError(`frame type ${type} is unknown`);
    }
  } catch (e) {
    if (e instanceof MalformedPacket) throw new FrameError(`frame: ${e.message}`);
    throw e;
  }
}

/**
 * Cuts a bundle message (u8 type 7, then entries of a u32 length >= 1 and that many bytes of one
 * whole server frame, filling the message exactly) into its frames, in order: views into
 * `bytes`, not copies, each still to be decoded by decodeServerFrame. Checks only the bundle's own
 * structure, all of it before returning any frame; a FrameError names the byte and the reason.
 * @param {Uint8Array} bytes
 * @returns {Uint8Array[]}
 */
export function splitBundle(bytes) {
  if (bytes.length < BUNDLE_MIN_BYTES) {
    throw new FrameError(`bundle is ${bytes.length} bytes: the type, a length at byte 1 and a frame need at least ${BUNDLE_MIN_BYTES}`);
  }
  if (bytes[0] !== FRAME_BUNDLE) throw new FrameError(`bundle: frame type at byte 0 is ${bytes[0]}, expected ${FRAME_BUNDLE}`);
  const input = new ByteReader(bytes);
  input.pos = 1;
  const frames = [];
  while (input.remaining > 0) {
    const at = input.pos;
    if (input.remaining < 4) {
      throw new FrameError(`bundle: ${input.remaining} bytes at byte ${at}, after frame ${frames.length - 1}, cannot hold a length`);
    }
    const length = input.u32('length');
    if (length === 0) throw new FrameError(`bundle: length at byte ${at} is 0: each entry holds a whole frame`);
    if (length > input.remaining) {
      throw new FrameError(`bundle: length at byte ${at} is ${length}, but ${input.remaining} bytes are left after it`);
    }
    if (bytes[input.pos] === FRAME_BUNDLE) {
      throw new FrameError(`bundle: frame ${frames.length} at byte ${input.pos} is a bundle: bundles do not nest`);
    }
    frames.push(input.take(length, `frame ${frames.length}`));
  }
  return frames;
}

export function encodeMove(x, z) {
  const out = new Uint8Array(9);
  const view = new DataView(out.buffer);
  out[0] = 1;
  view.setFloat32(1, x, true);
  view.setFloat32(5, z, true);
  return out;
}

export function encodeOptions(flags) {
  if ((flags & ~7) !== 0) throw new RangeError(`options ${flags}: only bits 0..2 exist`);
  return Uint8Array.of(2, flags);
}

export function encodeRadius(enterRadius) {
  const out = new Uint8Array(5);
  out[0] = 3;
  new DataView(out.buffer).setFloat32(1, enterRadius, true);
  return out;
}

/** Asks why the connection holds entity `index` or not; generation 0: whichever entity is at the index. */
export function encodeWhy(index, generation) {
  const out = new Uint8Array(WHY_BYTES);
  const view = new DataView(out.buffer);
  out[0] = 4;
  view.setUint32(1, index, true);
  view.setUint32(5, generation, true);
  return out;
}
