// Types of sightline.mjs (sightline.d.mts): Sightline's World, Replicator and ClientMirror from Node and TypeScript,
// over the C API compiled to WebAssembly. Handles are bigint: the slot index in the low 32 bits,
// the generation in the high 32. Positions are world units; sizes are bytes.

/** A refused call: `code` names the status ("stale_handle", "invalid_def", "malformed_packet", ...). */
export class SightlineError extends Error {
  readonly code: string;
}

export type Entity = bigint;
export type Client = bigint;
export type Delivery = 'reliable' | 'unreliable';
/** What ranks entities where a rule must choose among equals (the crowd cap's ties, the update
 * stagger): their slots, or their external ids, which every entity then needs (docs/relevance.md). */
export type OrderKey = 'slot' | 'external';

export interface WorldDef {
  /** Enter radius, world units, > 0 (default 1.6). */
  enterRadius?: number;
  /** Leave radius, >= enterRadius (default: enterRadius). */
  leaveRadius?: number;
  /** The grid's cell; 0 (default) uses enterRadius. */
  cellSize?: number;
  /** Worker threads; 1 (the WebAssembly build has no threads). */
  threads?: number;
  /** Most entities held by distance per client; 0 (default) = no cap. */
  crowdCap?: number;
  /** 'slot' (default) or 'external'; another name throws SightlineError ('invalid_def'). */
  orderKey?: OrderKey;
  /** Receives each chunk of the world's recording (docs/recording.md) as it is written, the last
   * on close(); an exception in it is thrown by close(). */
  recording?: (chunk: Uint8Array) => void;
}
export interface EntityDef {
  /** The game's id for it, unique among live entities; 0n (default) none. Every entity needs one
   * under orderKey 'external'; a missing or a duplicate one throws SightlineError
   * ('invalid_argument'). */
  externalId?: bigint | number;
  /** False for one that existed elsewhere (a copy, one handed back after withdrawEntity): its first
   * spawns do not say created. Default true. */
  created?: boolean;
}
/** One spawn or despawn a client's history keeps. */
export interface HistoryEntry {
  tick: bigint;
  entity: Entity;
  spawned: boolean;
  /** The spawn or despawn reason's name. */
  reason: string;
  /** From the client's nearest origin; Infinity when none is in its space. */
  distance: number;
  /** why()'s rule right after that tick; null for an entity destroyed then. */
  rule: string | null;
}

/** Entities with positions, clients that view from one, and a tick that turns positions into
 * per-client spawns, updates and despawns. */
export interface World {
  close(): void;
  createEntity(x: number, z: number, def?: EntityDef): Entity;
  destroyEntity(entity: Entity): void;
  /** As destroyEntity (refused the same way: entity_is_viewer, stale_handle, null_handle), for an
   * entity that goes on existing elsewhere: its holders despawn with reason 'left', not
   * 'destroyed', at the next tick. */
  withdrawEntity(entity: Entity): void;
  /** The entity's external id (0n for none). */
  externalId(entity: Entity): bigint;
  /** The live entity holding the external id; 0n (the null handle) when none does, and for 0. */
  findExternal(externalId: bigint | number): Entity;
  setPosition(entity: Entity, x: number, z: number): void;
  /** entities[i] moves to (xs[i], zs[i]); all are checked before any moves. */
  setPositions(entities: BigUint64Array, xs: Float32Array, zs: Float32Array): void;
  position(entity: Entity): [number, number];
  createClient(viewer: Entity): Client;
  destroyClient(client: Client): void;
  /** Runs one tick: the index of the tick run. */
  tick(): bigint;
  /** The client's set after the last tick, sorted by index. */
  interestSet(client: Client): BigUint64Array;
  /** Whether the client holds the entity, the rule that decided ("near", "within_leave",
   * "out_of_range", ...) and the root of its attachment tree. */
  why(client: Client, entity: Entity): { held: boolean; rule: string; root: Entity };
  /** The client keeps its last `capacity` spawns and despawns (0: none). */
  setHistoryCapacity(client: Client, capacity: number): void;
  /** The client's kept transitions of the entity (0n: of every entity), oldest first. */
  history(client: Client, entity?: Entity): HistoryEntry[];
}
/** A recording re-run tick by tick on a world of its own. */
export interface Replay {
  /** The replay's world: it answers questions and refuses changes; valid until close(). */
  readonly world: World;
  /** True when no tick is left. */
  readonly done: boolean;
  /** Applies the recorded calls up to the next tick and runs it: the index of the tick run. */
  nextTick(): bigint;
  close(): void;
}

/** A quantized range checked and divided once, for a range known only at run time (new
 * QuantizedRange(min, max, resolution)): stream.quantizedRange(value, range) writes and reads exactly
 * the bits stream.quantized(value, min, max, resolution) does. Throws SightlineError
 * ('invalid_argument', naming the argument) for what quantized() fails on: min or max not finite,
 * min >= max, resolution not finite or <= 0, more than 2^32 - 1 steps. */
export interface QuantizedRange {
  readonly min: number;
  readonly max: number;
  readonly resolution: number;
  /** Frees it; a stream call with it afterwards throws. */
  close(): void;
}

/** A payload being written (in a serializer) or read (Stream.reader). Each call returns the value
 * written or read; it throws once the stream has failed (out of room, a value out of range). */
export interface Stream {
  bits(value: number, bits: number): number;
  quantized(value: number, min: number, max: number, resolution: number): number;
  /** quantized(value, range.min, range.max, range.resolution), with a range made once. */
  quantizedRange(value: number, range: QuantizedRange): number;
  float(value: number): number;
  /** Reading: whether what is left is only zero padding. */
  restIsZero(): boolean;
  /** Frees a reader. */
  close(): void;
}

export const enum PartValue {
  full = 0,
  update = 1,
}

/** Writes an entity's state part through the stream; throwing refuses the record. */
export type Serializer = (stream: Stream, entity: Entity, part: PartValue) => void;

export interface ReplicatorDef {
  delivery?: Delivery;
  /** Seconds a tick lasts, > 0 (default 1/20). */
  tickSeconds?: number;
  /** Largest packet, [80, 65535] (default 1200). */
  packetBytes?: number;
  /** Bytes a client is sent per send (default 1200). */
  budgetBytes?: number;
}

/** Turns interest sets into packets. */
export interface Replicator {
  close(): void;
  /** Writes every live client's packets for the World's last tick. */
  send(): void;
  /** The client's packets of the last send. */
  packets(client: Client): Uint8Array[];
  receiveAck(client: Client, ack: Uint8Array): void;
  /** Members of the client's set not yet sent. */
  pending(client: Client): number;
}

export interface MirrorDef {
  delivery?: Delivery;
}

export interface MirrorListener {
  onEnter?(entity: Entity, reason: string, created: boolean, state: Uint8Array, tick: number): void;
  onUpdate?(entity: Entity, state: Uint8Array, tick: number): void;
  onExit?(entity: Entity, destroyed: boolean, reason: string): void;
}

/** The client's side: applies packets and holds what they say is held. */
export interface Mirror {
  close(): void;
  /** Applies one packet; malformed bytes throw and change nothing. */
  receive(packet: Uint8Array): void;
  holds(entity: Entity): boolean;
  held(): BigUint64Array;
  state(entity: Entity): { state: Uint8Array; part: PartValue; tick: number };
  /** The ack to send back (14 bytes). */
  ack(): Uint8Array;
  readonly anomalies: number;
}

export interface Sightline {
  World: new (def?: WorldDef) => World;
  /** historyCapacity: every client the replay creates keeps that many transitions. */
  Replay: new (recording: Uint8Array, def?: { historyCapacity?: number }) => Replay;
  Stream: { reader(bytes: Uint8Array): Stream };
  QuantizedRange: new (min: number, max: number, resolution: number) => QuantizedRange;
  Replicator: new (world: World, serialize: Serializer, def?: ReplicatorDef) => Replicator;
  Mirror: new (def?: MirrorDef, listener?: MirrorListener) => Mirror;
  SightlineError: typeof SightlineError;
  Part: { full: PartValue.full; update: PartValue.update };
  /** "MAJOR.MINOR.PATCH". */
  version: string;
}

/** Loads the WebAssembly module (the file path of sightline_wasm.cjs; its .wasm beside it). */
export function load(modulePath: string): Promise<Sightline>;
