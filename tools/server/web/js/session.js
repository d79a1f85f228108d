// One connection's state, fed one WebSocket message at a time: the welcome, the mirror, the
// viewer, the counters, the enter and leave marks, the debug view with its why question and
// answer, and each entity's last transitions. No DOM and no socket, so node can test it. A frame or packet that does not decode stops the session: nothing of that
// frame is applied, and the caller closes the connection. A bundle message is taken as its
// frames, one after another, each as if it had come as its own message.

import {
  decodeServerFrame, FRAME_BUNDLE, FrameError, OPTION_DEBUG, OPTION_HYSTERESIS, OPTION_INTEREST, splitBundle,
} from './frames.js';
import { DESPAWN_REASONS, MalformedPacket, SPAWN_REASONS } from './wire.js';
import { Mirror, decodeTickPackets } from './mirror.js';
import { Counters } from './counters.js';
import { MARKER_MS, RING_MS } from './draw.js';

export const MAX_MARKERS = 4000;
/** Transitions kept per entity, newest last, and entities kept (those touched longest ago go first). */
export const TRANSITIONS_PER_ENTITY = 8;
export const MAX_ENTITIES_WITH_TRANSITIONS = 4096;

export class Session {
  constructor() {
    this.welcome = null;
    this.mirror = new Mirror();
    this.counters = new Counters();
    this.error = null;
    this.viewer = null;
    this.enterRadius = 0;
    this.leaveRadius = 0;
    this.options = null;  // as the server applied them, from the last tick frame
    this.markers = [];
    this.grid = null;  // the library's grid and this connection's scanned cells, from the last tick frame
    this.rings = [];  // shots this connection heard: {x, z, time}, drawn as expanding rings
    this.shotsHeard = 0;
    this.serverMessages = [];  // the server's messages (UTF-8 text), oldest first, the last 20
    this.shotsHeardBeyondR = 0;  // heard from farther than the enter radius: never seen there
    this.interest = { culling: false, radius: 0, pending: 0 };  // the mirror's, after the last tick
    this.ticksLoading = 0;  // ticks after which entities were still on their way
    this.hidden = null;  // the last debug frame's entities, while debug view is on
    /** Spawns and despawns the mirror applied, by entity index: [{tick, generation, kind, reason, created}]. */
    this.transitions = new Map();
    /** The entity asked about ({index, generation}; generation 0: whichever is at the index), and its answer. */
    this.question = null;
    this.answer = null;
    this.whyAnswers = 0;
    this.ticksSeen = 0;
    this.lastTick = null;
    this.resets = 0;
    /** Frames taken: those inside a bundle each count, the bundle itself does not. */
    this.frames = 0;
    /** Bundle messages taken (their frames count in `frames`). */
    this.bundles = 0;
    this.packets = 0;
    this.debugFrames = 0;
    this.debugBytes = 0;
    /** Anomalies of mirrors replaced at a reset, so the count covers the connection. */
    this.pastAnomalies = 0;
  }

  get anomalies() {
    return this.pastAnomalies + this.mirror.anomalyTotal;
  }

  /**
   * Takes one message. Returns null, or the error (a string) that ends the session; after an
   * error every further message is ignored.
   *
   * A bundle is split whole first (a bundle that does not split applies none of its frames),
   * then its frames are taken in order exactly as separate messages would be: the frames before
   * one that fails stay applied, that one and those after it are not, and the error names the
   * failing frame's place in the bundle. Byte counters get each frame's own length, so they read
   * as if the frames had come apart; the bundle's type byte and lengths are counted nowhere.
   * @param {Uint8Array} bytes
   * @param {number} now milliseconds
   */
  receive(bytes, now) {
    if (this.error !== null) return this.error;
    if (bytes.length === 0 || bytes[0] !== FRAME_BUNDLE) return this.takeFrame(bytes, now, '');
    let frames;
    try {
      frames = splitBundle(bytes);
    } catch (e) {
      if (!(e instanceof FrameError)) throw e;
      this.error = `malformed frame: ${e.message}`;
      return this.error;
    }
    ++this.bundles;
    for (let i = 0; i < frames.length; ++i) {
      const at = frames[i].byteOffset - bytes.byteOffset;
      const error = this.takeFrame(frames[i], now, `bundle frame ${i} of ${frames.length} at byte ${at}: `);
      if (error !== null) return error;
    }
    return null;
  }

  /**
   * Takes one frame, a message's or a bundle's: receive's work for a message that is no bundle.
   * @param {Uint8Array} bytes
   * @param {number} now milliseconds
   * @param {string} where put before an error's reason: '' for a message, the place in a bundle
   */
  takeFrame(bytes, now, where) {
    let frame;
    let packets = null;
    try {
      frame = decodeServerFrame(bytes);
      if (frame.type !== 'welcome' && this.welcome === null) throw new FrameError(`a ${frame.type} frame before the welcome`);
      if (frame.type === 'welcome' && this.welcome !== null) throw new FrameError('a second welcome');
      if (frame.type === 'tick') packets = decodeTickPackets(frame.packets, this.welcome, this.mirror);
    } catch (e) {
      if (!(e instanceof FrameError || e instanceof MalformedPacket)) throw e;
      this.error = `${e instanceof MalformedPacket ? 'malformed packet' : 'malformed frame'}: ${where}${e.message}`;
      return this.error;
    }
    ++this.frames;
    switch (frame.type) {
      case 'welcome':
        this.welcome = Object.freeze(frame);
        this.enterRadius = frame.enterRadius;
        this.leaveRadius = frame.leaveRadius;
        this.counters.add(now, { bytes: bytes.length });
        break;
      case 'tick':
        this.applyTick(frame, packets, bytes.length, now);
        break;
      case 'reset':
        this.pastAnomalies += this.mirror.anomalyTotal;
        this.mirror = new Mirror();
        this.markers = [];
        this.rings = [];
        this.hidden = null;
        // Indices of the restarted stream name entities of the server's other World.
        this.transitions.clear();
        this.question = null;
        this.answer = null;
        ++this.resets;
        this.counters.add(now, { bytes: bytes.length });
        break;
      case 'debug':
        ++this.debugFrames;
        this.debugBytes += bytes.length;
        this.hidden = frame.entities;
        break;
      case 'why_answer':
        this.takeAnswer(frame);
        break;
      default:
        break;
    }
    return null;
  }

  /** Asks about entity `index` (generation 0: whichever entity the server has there); the caller sends encodeWhy. */
  ask(index, generation) {
    if (this.question === null || this.question.index !== index ||
        (generation !== 0 && this.question.generation !== generation)) {
      this.answer = null;
    }
    this.question = { index, generation };
  }

  /** Forgets the question and its answer (the panel closed, or the debug view went off). */
  dismiss() {
    this.question = null;
    this.answer = null;
  }

  /** The answer to the question asked, if it is; one to an earlier question is dropped. */
  takeAnswer(a) {
    const q = this.question;
    if (q === null || a.index !== q.index || (q.generation !== 0 && a.generation !== q.generation)) return;
    ++this.whyAnswers;
    this.answer = a;
    // Found at the index: later questions name that entity, so a reused slot reads stale.
    if (q.generation === 0 && !a.stale) this.question = { index: q.index, generation: a.generation };
  }

  /** The entity's transitions kept (all generations of its index), oldest first. */
  transitionsOf(index) {
    return this.transitions.get(index) ?? [];
  }

  noteTransition(index, t) {
    const list = this.transitions.get(index) ?? [];
    this.transitions.delete(index);
    list.push(t);
    if (list.length > TRANSITIONS_PER_ENTITY) list.shift();
    this.transitions.set(index, list);
    if (this.transitions.size > MAX_ENTITIES_WITH_TRANSITIONS) this.transitions.delete(this.transitions.keys().next().value);
  }

  applyTick(frame, packets, size, now) {
    const mark = (kind) => (_, e) => this.markers.push({ kind, x: e.x, z: e.z, time: now });
    const heard = [];
    // The spawn records of the packet being applied: the mirror reports the spawns it applied in
    // their order, without the reason, so each is matched to the next record of its handle.
    let spawns = [];
    let nextSpawn = 0;
    let packetTick = 0;
    const on = {
      // An entity created since the server's previous tick gets a spawn mark besides the plus.
      enter: (index, e, created) => {
        mark('enter')(index, e);
        if (created) this.markers.push({ kind: 'created', x: e.x, z: e.z, time: now });
        while (nextSpawn < spawns.length && (spawns[nextSpawn].index !== index || spawns[nextSpawn].generation !== e.generation)) ++nextSpawn;
        const r = spawns[nextSpawn++];
        this.noteTransition(index, { tick: packetTick, generation: e.generation, kind: 'spawn',
          reason: r === undefined ? 'unknown' : SPAWN_REASONS[r.reason] ?? 'unknown', created });
      },
      exit: (index, e, reason) => {
        mark('leave')(index, e);
        this.noteTransition(index, { tick: packetTick, generation: e.generation, kind: 'despawn',
          reason: DESPAWN_REASONS[reason] ?? 'unknown', created: false });
      },
      event: (r) => heard.push(r),
      message: (payload) => {
        this.serverMessages.push(new TextDecoder().decode(payload));
        if (this.serverMessages.length > 20) this.serverMessages.shift();
      },
    };
    // The counters count records as they arrived, whether or not the table agreed with them.
    let spawned = 0;
    let despawned = 0;
    let updates = 0;
    for (const p of packets) {
      spawns = p.records.filter((r) => r.type === 'spawn');
      nextSpawn = 0;
      packetTick = p.tick;
      this.mirror.apply(p, on);
      for (const r of p.records) {
        if (r.type === 'spawn') ++spawned;
        else if (r.type === 'despawn') ++despawned;
        else ++updates;
      }
    }
    this.packets += packets.length;
    this.counters.add(now, { spawns: spawned, despawns: despawned, updates, bytes: size });
    ++this.ticksSeen;
    this.lastTick = frame.tick;
    this.viewer = { x: frame.viewerX, z: frame.viewerZ };
    this.grid = { originX: frame.gridOriginX, originZ: frame.gridOriginZ, cellSize: frame.cellSize, scanned: frame.scanned };
    this.enterRadius = frame.enterRadius;
    this.leaveRadius = frame.leaveRadius;
    this.interest = this.mirror.interest();
    if (this.interest.pending > 0) ++this.ticksLoading;
    for (const r of heard) {
      this.rings.push({ x: r.x, z: r.z, time: now });
      ++this.shotsHeard;
      if ((r.x - this.viewer.x) ** 2 + (r.z - this.viewer.z) ** 2 > this.enterRadius ** 2) ++this.shotsHeardBeyondR;
    }
    this.options = {
      byte: frame.options,
      hysteresis: (frame.options & OPTION_HYSTERESIS) !== 0,
      interest: (frame.options & OPTION_INTEREST) !== 0,
      debug: (frame.options & OPTION_DEBUG) !== 0,
    };
    if (!this.options.debug) {
      this.hidden = null;
      this.dismiss();  // why() is the debug view's
    }
    this.expireMarkers(now);
  }

  expireMarkers(now) {
    let drop = 0;
    while (drop < this.markers.length && now - this.markers[drop].time >= MARKER_MS) ++drop;
    if (this.markers.length - drop > MAX_MARKERS) drop = this.markers.length - MAX_MARKERS;
    if (drop > 0) this.markers.splice(0, drop);
    let gone = 0;
    while (gone < this.rings.length && now - this.rings[gone].time >= RING_MS) ++gone;
    if (this.rings.length - gone > MAX_MARKERS) gone = this.rings.length - MAX_MARKERS;
    if (gone > 0) this.rings.splice(0, gone);
  }
}
