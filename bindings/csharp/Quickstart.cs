// Sightline's quickstart from C#, in the shape of a Unity or Mirror server's fixed update: walkers
// move, the World ticks, the Replicator sends, and each connection's packets go (here straight) to
// that player's ClientMirror, which acks back. Exits non-zero unless every mirror ends holding its
// client's interest set.
//
//   mcs -out:quickstart.exe Sightline.cs Quickstart.cs && LD_LIBRARY_PATH=build mono quickstart.exe
using System;
using System.Linq;
using Sightline;

sealed class Counts : IMirrorListener
{
    public int Enters, Updates, Exits;
    public void OnEnter(ulong entity, string reason, bool created, byte[] state, uint tick) => ++Enters;
    public void OnUpdate(ulong entity, byte[] state, uint tick) => ++Updates;
    public void OnExit(ulong entity, bool destroyed, string reason) => ++Exits;
}

// What a mirror heard of each entity's entry: whether it said created.
sealed class Arrivals : IMirrorListener
{
    public readonly System.Collections.Generic.Dictionary<ulong, bool> Created =
        new System.Collections.Generic.Dictionary<ulong, bool>();
    public void OnEnter(ulong entity, string reason, bool created, byte[] state, uint tick) => Created[entity] = created;
    public void OnUpdate(ulong entity, byte[] state, uint tick) { }
    public void OnExit(ulong entity, bool destroyed, string reason) { }
}

sealed class Throwing : IMirrorListener
{
    public void OnEnter(ulong entity, string reason, bool created, byte[] state, uint tick)
    {
        throw new InvalidOperationException("listener failed");
    }
    public void OnUpdate(ulong entity, byte[] state, uint tick) { }
    public void OnExit(ulong entity, bool destroyed, string reason) { }
}

static class Quickstart
{
    const float Size = 200.0f;
    const int Walkers = 400, Players = 3, Ticks = 60;

    static int Main()
    {
        var def = WorldDef.Default();
        def.EnterRadius = 25.0f;
        def.LeaveRadius = 30.0f;
        var world = new World(def);
        var random = new Random(7);
        var entities = new ulong[Walkers];
        var xs = new float[Walkers];
        var zs = new float[Walkers];
        var heading = new double[Walkers];
        for (int i = 0; i < Walkers; ++i)
        {
            xs[i] = 20.0f + (float)random.NextDouble() * (Size - 40.0f);
            zs[i] = 20.0f + (float)random.NextDouble() * (Size - 40.0f);
            heading[i] = random.NextDouble() * 2.0 * Math.PI;
            entities[i] = world.CreateEntity(xs[i], zs[i]);
        }
        // z's range, made once (x is written with the per-call form; the reader below reads both
        // with it, so the two forms must write the same bits).
        var zRange = new QuantizedRange(0.0f, Size, 0.01f);
        // The game's state: its position to a centimetre; a spawn also carries its kind.
        Serializer serialize = (s, e, part) =>
        {
            var (x, z) = world.Position(e);
            uint kind = (uint)(e & 0xffff);
            if (part == Part.Full && !s.Bits(ref kind, 16)) return false;
            return s.Quantized(ref x, 0.0f, Size, 0.01f) && s.QuantizedRange(ref z, zRange);
        };
        var replicator = new Replicator(world, Delivery.Unreliable, serialize);
        var clients = new ulong[Players];
        var counts = new Counts[Players];
        var mirrors = new Mirror[Players];
        for (int p = 0; p < Players; ++p)
        {
            clients[p] = world.CreateClient(entities[p]);
            counts[p] = new Counts();
            mirrors[p] = new Mirror(Delivery.Unreliable, counts[p]);
        }

        for (int t = 0; t < Ticks; ++t)  // FixedUpdate
        {
            for (int i = 0; i < Walkers; ++i)
            {
                xs[i] += (float)Math.Cos(heading[i]);
                zs[i] += (float)Math.Sin(heading[i]);
                if (xs[i] < 10.0f || xs[i] > Size - 10.0f) heading[i] = Math.PI - heading[i];
                if (zs[i] < 10.0f || zs[i] > Size - 10.0f) heading[i] = -heading[i];
            }
            world.SetPositions(entities, xs, zs);
            world.Tick();
            replicator.Send();
            for (int p = 0; p < Players; ++p)
            {
                foreach (var packet in replicator.Packets(clients[p])) mirrors[p].Receive(packet);  // conn.Send(packet)
                replicator.ReceiveAck(clients[p], mirrors[p].Ack());
            }
        }

        bool failed = false;
        for (int p = 0; p < Players; ++p)
        {
            var held = mirrors[p].Held().OrderBy(e => e).ToArray();
            var wanted = world.InterestSet(clients[p]).OrderBy(e => e).ToArray();
            var latest = mirrors[p].State(wanted[0]);
            var state = latest.state;
            var part = latest.part;
            bool read;
            float x = 0.0f, z = 0.0f;
            using (var reader = Stream.Reader(state))
            {
                uint kind = 0;
                read = (part != Part.Full || reader.Bits(ref kind, 16)) && reader.Quantized(ref x, 0.0f, Size, 0.01f) &&
                       reader.Quantized(ref z, 0.0f, Size, 0.01f) && reader.RestIsZero() && x >= 0.0f && z <= Size;
            }
            // The same bytes read through the range made once.
            using (var again = Stream.Reader(state))
            {
                uint kind = 0;
                float x2 = 0.0f, z2 = 0.0f;
                read &= (part != Part.Full || again.Bits(ref kind, 16)) && again.QuantizedRange(ref x2, zRange) &&
                        again.QuantizedRange(ref z2, zRange) && again.RestIsZero() && x2 == x && z2 == z;
            }
            bool ok = held.SequenceEqual(wanted) && replicator.Pending(clients[p]) == 0 && mirrors[p].Anomalies == 0 &&
                      read && counts[p].Enters >= wanted.Length && world.Why(clients[p], wanted[0]).held;
            failed |= !ok;
            Console.WriteLine($"player {p}: holds {held.Length} of {wanted.Length} in its interest set, " +
                              $"{counts[p].Enters} enters, {counts[p].Exits} exits, {counts[p].Updates} updates, " +
                              $"{mirrors[p].Anomalies} anomalies{(ok ? "" : "  MISMATCH")}");
        }
        ulong gone = entities[Walkers - 1];
        world.DestroyEntity(gone);
        try
        {
            world.SetPosition(gone, 1.0f, 1.0f);
            Console.WriteLine("a destroyed entity was moved");
            failed = true;
        }
        catch (SightlineException e)
        {
            Console.WriteLine($"refused as expected: {e.Code}");
            failed |= e.Code != "stale_handle";
        }
        failed |= !QuantizedRanges();
        failed |= !Withdrawn();
        failed |= !ExternalIds();
        failed |= !CallbacksComeBack();
        failed |= !ReplayKeepsTheHistory();
        Console.WriteLine($"sightline {Library.Version}");
        foreach (var m in mirrors) m.Dispose();
        replicator.Dispose();
        world.Dispose();
        zRange.Dispose();
        return failed ? 1 : 0;
    }

    // A range made once reads what the per-call form reads (255 steps: every 8 bits is a value), and
    // is refused as that form fails, naming the argument.
    static bool QuantizedRanges()
    {
        bool ok = true;
        var payload = new byte[] { 0x5a, 0xc3, 0x17, 0xe8 };
        var seen = new System.Collections.Generic.HashSet<float>();
        using (var eighths = new QuantizedRange(-8.0f, 7.9375f, 1.0f / 16.0f))
        using (var perCall = Stream.Reader(payload))
        using (var made = Stream.Reader(payload))
        {
            for (int i = 0; i < payload.Length; ++i)
            {
                float a = 0.0f, b = 0.0f;
                bool read = perCall.Quantized(ref a, -8.0f, 7.9375f, 1.0f / 16.0f) &&
                            made.QuantizedRange(ref b, eighths);
                if (!read || a != b)
                {
                    Console.WriteLine($"the range made once reads {b}, the per-call form {a}");
                    ok = false;
                }
                seen.Add(b);
            }
        }
        ok &= seen.Count == payload.Length;
        var refusals = new (float min, float max, float resolution, string argument)[]
        {
            (1.0f, 1.0f, 0.5f, "max"), (0.0f, 1.0f, 0.0f, "resolution"), (0.0f, 1.0f, -0.5f, "resolution"),
        };
        foreach (var bad in refusals)
        {
            try
            {
                new QuantizedRange(bad.min, bad.max, bad.resolution).Dispose();
                Console.WriteLine($"QuantizedRange({bad.min}, {bad.max}, {bad.resolution}) was made");
                ok = false;
            }
            catch (SightlineException e)
            {
                Console.WriteLine($"QuantizedRange({bad.min}, {bad.max}, {bad.resolution}) refused: {e.Message}");
                ok &= e.Code == "invalid_argument" && e.Message.Contains(bad.argument);
            }
        }
        return ok;
    }

    // WithdrawEntity: this binding has no list of the World's despawns, so the client's history
    // tells the reason of its despawn, which says "left" (handed elsewhere), not "destroyed"; the
    // handle is then stale, and a client's viewer is refused.
    static bool Withdrawn()
    {
        bool ok = true;
        using (var world = new World(WorldDef.Default()))
        {
            ulong eye = world.CreateEntity(0.0f, 0.0f);
            ulong keeper = world.CreateClient(eye);
            world.SetHistoryCapacity(keeper, 16);
            ulong traveller = world.CreateEntity(1.0f, 0.0f);
            world.Tick();
            world.WithdrawEntity(traveller);
            world.Tick();
            var history = world.History(keeper, traveller);
            if (history.Length != 2 || !history[0].Spawned || history[1].Spawned || history[1].Entity != traveller ||
                history[1].Reason != "left" || history[1].Rule != null)
            {
                Console.WriteLine($"the withdrawn entity's history: {string.Join(", ", history.Select(h => $"{h.Spawned} {h.Reason}"))}");
                ok = false;
            }
            else
            {
                Console.WriteLine($"withdrawn: {history[0].Reason} then {history[1].Reason}");
            }
            var refusals = new (ulong entity, string code)[] { (traveller, "stale_handle"), (eye, "entity_is_viewer") };
            foreach (var refused in refusals)
            {
                try
                {
                    world.WithdrawEntity(refused.entity);
                    Console.WriteLine($"withdrawing {refused.entity} was not refused");
                    ok = false;
                }
                catch (SightlineException e)
                {
                    Console.WriteLine($"withdrawing refused as expected: {e.Code}");
                    ok &= e.Code == refused.code;
                }
            }
        }
        return ok;
    }

    // External ids under OrderKey.External: every entity needs one, unique among live entities (a
    // missing one and a duplicate are refused, naming external_id); ExternalId reads it back and
    // FindExternal finds the entity until it is withdrawn (then 0); one that existed elsewhere
    // (created: false) spawns without created. This binding has no list of the World's spawns, so
    // the client's mirror tells what each entry said.
    static bool ExternalIds()
    {
        bool ok = true;
        var def = WorldDef.Default();
        def.EnterRadius = def.LeaveRadius = 10.0f;
        def.OrderKey = OrderKey.External;
        using (var world = new World(def))
        {
            Func<string, Func<ulong>, string, bool> refused = (what, create, naming) =>
            {
                try
                {
                    create();
                    Console.WriteLine($"{what} was not refused");
                    return false;
                }
                catch (SightlineException e)
                {
                    Console.WriteLine($"{what} refused as expected: {e.Message}");
                    return e.Code == "invalid_argument" && e.Message.Contains(naming);
                }
            };
            ok &= refused("an entity without an external id", () => world.CreateEntity(0.0f, 0.0f), "external_id is 0");
            const ulong farId = (1UL << 32) + 5;  // beyond 32 bits
            ulong eye = world.CreateEntity(0.0f, 0.0f, farId);
            ok &= refused("a duplicate external id", () => world.CreateEntity(1.0f, 0.0f, farId), $"external_id {farId} is held");
            ulong copy = world.CreateEntity(1.0f, 0.0f, 7, created: false);
            ulong fresh = world.CreateEntity(2.0f, 0.0f, 8);
            var ids = new[] { world.ExternalId(eye), world.ExternalId(copy) };
            var found = new[] { world.FindExternal(farId), world.FindExternal(7), world.FindExternal(8), world.FindExternal(9), world.FindExternal(0) };
            bool same = ids.SequenceEqual(new[] { farId, 7UL }) && found.SequenceEqual(new[] { eye, copy, fresh, 0UL, 0UL });
            Console.WriteLine($"external ids: {string.Join(", ", ids)}; found {string.Join(" ", found)}{(same ? "" : "  MISMATCH")}");
            ok &= same;
            ulong client = world.CreateClient(eye);
            var heard = new Arrivals();
            using (var replicator = new Replicator(world, Delivery.Reliable, (s, e, part) => { uint bit = 1; return s.Bits(ref bit, 1); }))
            using (var mirror = new Mirror(Delivery.Reliable, heard))
            {
                world.Tick();
                replicator.Send();
                foreach (var packet in replicator.Packets(client)) mirror.Receive(packet);
                bool entries = heard.Created.Count == 2 && heard.Created.TryGetValue(copy, out bool copyCreated) && !copyCreated &&
                               heard.Created.TryGetValue(fresh, out bool freshCreated) && freshCreated;
                Console.WriteLine($"entries (entity: created): {string.Join(", ", heard.Created.Select(h => $"{h.Key}: {h.Value}"))}" +
                                  (entries ? "" : "  MISMATCH"));
                ok &= entries;
                world.WithdrawEntity(copy);
                ulong gone = world.FindExternal(7);
                ulong back = world.CreateEntity(1.0f, 0.0f, 7, created: false);  // handed back: its id is free again
                bool freed = gone == 0 && world.FindExternal(7) == back;
                Console.WriteLine($"after withdrawing: FindExternal(7) {gone}, then the entity handed back {world.FindExternal(7) == back}");
                ok &= freed;
            }
        }
        return ok;
    }

    // Recorded, then replayed: the replay keeps the same history of a walker that left.
    static bool ReplayKeepsTheHistory()
    {
        var recording = new System.Collections.Generic.List<byte>();
        HistoryEntry[] live;
        ulong viewer, walker;
        using (var recorded = new World(WorldDef.Default(), chunk => recording.AddRange(chunk)))
        {
            ulong eye = recorded.CreateEntity(0.0f, 0.0f);
            walker = recorded.CreateEntity(1.0f, 0.0f);
            viewer = recorded.CreateClient(eye);
            recorded.SetHistoryCapacity(viewer, 16);
            for (int t = 0; t < 6; ++t)
            {
                recorded.SetPosition(walker, 1.0f + 0.5f * t, 0.0f);
                recorded.Tick();
            }
            live = recorded.History(viewer, walker);
        }
        using (var replay = new Replay(recording.ToArray()))
        {
            int ticks = 0;
            for (; !replay.Done; ++ticks) replay.NextTick();
            var replayed = replay.World.History(viewer, walker);
            bool readOnly = false;
            try { replay.World.Tick(); } catch (SightlineException) { readOnly = true; }
            bool same = ticks == 6 && readOnly && live.Length == 2 && replayed.SequenceEqual(live) && live[1].Reason == "left";
            Console.WriteLine(same ? $"replay: {ticks} ticks; the walker {live[0].Reason} then {live[1].Reason} at {live[1].Distance:F2} ({live[1].Rule})"
                                   : $"the replay differs after {ticks} ticks");
            return same;
        }
    }

    // What the game's callbacks throw comes back from the call that ran them.
    static bool CallbacksComeBack()
    {
        bool ok = true;
        var small = new World(WorldDef.Default());
        ulong watched = small.CreateEntity(0.0f, 0.0f);
        small.CreateEntity(1.0f, 0.0f);
        ulong watcher = small.CreateClient(watched);
        Serializer failing = (s, e, part) =>
        {
            if (e != 0) throw new InvalidOperationException("no state");
            return false;
        };
        var broken = new Replicator(small, Delivery.Reliable, failing);
        small.Tick();
        try
        {
            broken.Send();
            Console.WriteLine("a serializer's exception was lost");
            ok = false;
        }
        catch (InvalidOperationException)
        {
            Console.WriteLine("a serializer's exception comes back from Send(): True");
        }
        broken.Dispose();
        Serializer state = (s, e, part) =>
        {
            var (x, z) = small.Position(e);
            return s.Quantized(ref x, -10.0f, 10.0f, 0.01f) && s.Quantized(ref z, -10.0f, 10.0f, 0.01f);
        };
        var shown = new Replicator(small, Delivery.Reliable, state);
        small.Tick();
        shown.Send();
        var listening = new Mirror(Delivery.Reliable, new Throwing());
        try
        {
            foreach (var packet in shown.Packets(watcher)) listening.Receive(packet);
            Console.WriteLine("a listener's exception was lost");
            ok = false;
        }
        catch (InvalidOperationException)
        {
            Console.WriteLine("a listener's exception comes back from Receive(): True");
        }
        listening.Dispose();
        shown.Dispose();
        small.Dispose();
        return ok;
    }
}
