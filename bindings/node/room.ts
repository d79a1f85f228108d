// A Colyseus-style room on Sightline, in TypeScript: what a server written against sightline.d.mts
// looks like. Type-checked by `make test` (tsc --strict); the quickstart runs the same calls.
import {
  load, type Client, type Entity, type Mirror, type QuantizedRange, type Replicator, type Sightline, type World,
} from './sightline.mjs';

interface Player {
  client: Client;
  send(packet: Uint8Array): void;
}

export class InterestRoom {
  private world!: World;
  private replicator!: Replicator;
  private zRange!: QuantizedRange; // the level's depth, known once it is loaded
  private readonly players = new Map<string, Player>();
  private readonly avatars = new Map<string, Entity>();

  constructor(private readonly sl: Sightline) {}

  onCreate(): void {
    this.world = new this.sl.World({ enterRadius: 25, leaveRadius: 30 });
    this.zRange = new this.sl.QuantizedRange(0, 200, 0.01);
    this.replicator = new this.sl.Replicator(this.world, (stream, entity, part) => {
      const [x, z] = this.world.position(entity);
      if (part === this.sl.Part.full) stream.bits(Number(entity & 0xffffn), 16);
      stream.quantized(x, 0, 200, 0.01);
      stream.quantizedRange(z, this.zRange);
    }, { delivery: 'unreliable', tickSeconds: 1 / 20 });
  }

  onDispose(): void {
    this.replicator.close();
    this.world.close();
    this.zRange.close();
  }

  onJoin(sessionId: string, send: (packet: Uint8Array) => void): void {
    const avatar = this.world.createEntity(100, 100);
    this.avatars.set(sessionId, avatar);
    this.players.set(sessionId, { client: this.world.createClient(avatar), send });
  }

  onMessage(sessionId: string, x: number, z: number): void {
    const avatar = this.avatars.get(sessionId);
    if (avatar !== undefined) this.world.setPosition(avatar, x, z);
  }

  onAck(sessionId: string, ack: Uint8Array): void {
    const player = this.players.get(sessionId);
    if (player) this.replicator.receiveAck(player.client, ack);
  }

  onLeave(sessionId: string): void {
    const player = this.players.get(sessionId);
    const avatar = this.avatars.get(sessionId);
    if (player) this.world.destroyClient(player.client);
    if (avatar !== undefined) this.world.destroyEntity(avatar);
    this.players.delete(sessionId);
    this.avatars.delete(sessionId);
  }

  // setSimulationInterval(() => this.update(), 50)
  update(): void {
    this.world.tick();
    this.replicator.send();
    for (const player of this.players.values()) {
      for (const packet of this.replicator.packets(player.client)) player.send(packet);
    }
  }
}

/** The client's side: a mirror fed the room's packets. */
export async function clientMirror(modulePath: string): Promise<Mirror> {
  const sl = await load(modulePath);
  return new sl.Mirror({ delivery: 'unreliable' }, {
    onEnter: (entity, reason, created) => console.log(`${entity} entered (${reason}${created ? ', created' : ''})`),
    onExit: (entity, destroyed) => console.log(`${entity} ${destroyed ? 'destroyed' : 'left'}`),
  });
}
