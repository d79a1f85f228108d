// Sightline from C#: the World, the Replicator and the ClientMirror over the C API (sightline_c.h)
// through P/Invoke, the shape a Unity, Mirror or FishNet server calls. The runtime loads
// libsightline_c.so (on Linux, from LD_LIBRARY_PATH or beside the program).
//
// Handles are ulong values: the slot index in the low 32 bits, the generation in the high 32. A
// refused call throws SightlineException with the library's code name and message. Objects are
// IDisposable (dispose a Replicator before its World) and used from one thread at a time; give a
// World with a Replicator one thread (WorldDef.Threads = 1) so the serializer runs on the caller's.
using System;
using System.Collections.Generic;
using System.Runtime.ExceptionServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace Sightline
{
    public sealed class SightlineException : Exception
    {
        public string Code { get; }
        public SightlineException(string code, string message) : base(code + ": " + message) { Code = code; }
    }

    public enum Part { Full = 0, Update = 1 }
    public enum Delivery { Reliable = 0, Unreliable = 1 }

    /// <summary>What ranks entities where a rule must choose among equals (the crowd cap's ties, the
    /// update stagger): their slots (the default), or their external ids, which every entity then
    /// needs (docs/relevance.md). Another value is refused by new World (invalid_def).</summary>
    public enum OrderKey : byte { Slot = 0, External = 1 }

    [StructLayout(LayoutKind.Sequential)]
    public struct WorldDef
    {
        public float EnterRadius, LeaveRadius, CellSize;
        public uint Threads, CrowdCap, EntityCapacity, ClientCapacity;
        public OrderKey OrderKey;  // sl_world_def::order_key, a uint8_t
        public static WorldDef Default() { WorldDef d; Native.sl_world_def_default(out d); return d; }
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct EntityDef
    {
        public float X, Z, BoundRadius, RadiusScale;
        [MarshalAs(UnmanagedType.U1)] public bool AlwaysRelevant;
        [MarshalAs(UnmanagedType.U1)] public bool Presenter;
        public ulong ExternalId;
        [MarshalAs(UnmanagedType.U1)] public bool Created;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct TickStats { public ulong Tick, Spawns, Updates, Despawns, Members; }

    [StructLayout(LayoutKind.Sequential)]
    internal struct Why
    {
        [MarshalAs(UnmanagedType.U1)] public bool Held;
        public byte Rule;
        public ulong Root;
    }

    /// <summary>One spawn or despawn a client's history keeps (sl_history_entry).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct HistoryEntryNative
    {
        public ulong Tick, Entity;
        [MarshalAs(UnmanagedType.U1)] public bool Spawned;
        public byte Reason;
        public float Distance;
        [MarshalAs(UnmanagedType.U1)] public bool RuleKnown;
        public byte Rule;
    }

    /// <summary>A kept transition: Reason and Rule by name (Rule null for an entity destroyed then);
    /// Distance from the client's nearest origin, +Infinity when none is in its space.</summary>
    public struct HistoryEntry
    {
        public ulong Tick, Entity;
        public bool Spawned;
        public string Reason;
        public float Distance;
        public string Rule;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct ReplayDefNative { public uint Threads, HistoryCapacity, MaxGridCells, MaxHistoryCapacity; }

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate void RecordingFn(IntPtr context, IntPtr bytes, UIntPtr size);

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    [return: MarshalAs(UnmanagedType.U1)]
    internal delegate bool SerializeFn(IntPtr stream, ulong entity, int part, IntPtr context);

    [StructLayout(LayoutKind.Sequential)]
    internal struct ReplicatorDefNative
    {
        public IntPtr Serialize;
        public IntPtr SerializeContext;
        public int Delivery;
        public float TickSeconds;
        public uint PacketBytes, BudgetBytes, EntryBudgetBytes;
        [MarshalAs(UnmanagedType.U1)] public bool DeltaUpdates;
        public IntPtr PayloadSource, PayloadSourceContext;  // not wrapped: left null
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct MirrorDefNative { public int Delivery; public uint History, MaxEntities; }

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate void EnterFn(IntPtr context, ulong entity, byte reason, [MarshalAs(UnmanagedType.U1)] bool created,
                                   IntPtr state, UIntPtr size, uint tick);
    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate void UpdateFn(IntPtr context, ulong entity, IntPtr state, UIntPtr size, uint tick);
    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    internal delegate void ExitFn(IntPtr context, ulong entity, byte kind, byte reason);

    [StructLayout(LayoutKind.Sequential)]
    internal struct ListenerNative
    {
        public IntPtr Context, OnEnter, OnUpdate, OnRefresh, OnExit, OnMessage;
    }

    [StructLayout(LayoutKind.Sequential)]
    internal struct MirrorStatsNative { public ulong Packets, Rejected, Enters, Updates, Exits, Messages, Anomalies; }

    internal static class Native
    {
        const string Lib = "sightline_c";
        [DllImport(Lib)] internal static extern IntPtr sl_last_error();
        [DllImport(Lib)] internal static extern IntPtr sl_status_name(int status);
        [DllImport(Lib)] internal static extern IntPtr sl_version();
        [DllImport(Lib)] internal static extern IntPtr sl_rule_name(byte rule);
        [DllImport(Lib)] internal static extern IntPtr sl_spawn_reason_name(byte reason);
        [DllImport(Lib)] internal static extern IntPtr sl_despawn_reason_name(byte reason);
        [DllImport(Lib)] internal static extern void sl_world_def_default(out WorldDef def);
        [DllImport(Lib)] internal static extern void sl_entity_def_default(out EntityDef def);
        [DllImport(Lib)] internal static extern int sl_world_create(ref WorldDef def, out IntPtr world);
        [DllImport(Lib)] internal static extern void sl_world_destroy(IntPtr world);
        [DllImport(Lib)] internal static extern int sl_world_create_entity(IntPtr world, ref EntityDef def, out ulong entity);
        [DllImport(Lib)] internal static extern int sl_world_destroy_entity(IntPtr world, ulong entity);
        [DllImport(Lib)] internal static extern int sl_world_withdraw_entity(IntPtr world, ulong entity);
        [DllImport(Lib)] internal static extern int sl_world_external_id(IntPtr world, ulong entity, out ulong id);
        [DllImport(Lib)] internal static extern ulong sl_world_find_external(IntPtr world, ulong externalId);
        [DllImport(Lib)] internal static extern int sl_world_set_position(IntPtr world, ulong entity, float x, float z);
        [DllImport(Lib)] internal static extern int sl_world_set_positions(IntPtr world, ulong[] entities, float[] xs, float[] zs, UIntPtr count);
        [DllImport(Lib)] internal static extern int sl_world_position(IntPtr world, ulong entity, out float x, out float z);
        [DllImport(Lib)] internal static extern int sl_world_create_client(IntPtr world, ulong viewer, out ulong client);
        [DllImport(Lib)] internal static extern int sl_world_destroy_client(IntPtr world, ulong client);
        [DllImport(Lib)] internal static extern int sl_world_tick(IntPtr world, out TickStats stats);
        [DllImport(Lib)] internal static extern int sl_world_interest_set(IntPtr world, ulong client, ulong[] entities, UIntPtr capacity, out UIntPtr count);
        [DllImport(Lib)] internal static extern int sl_world_why(IntPtr world, ulong client, ulong entity, out Why why);
        [DllImport(Lib)] internal static extern int sl_world_create_recording(ref WorldDef def, RecordingFn recording, IntPtr context, out IntPtr world);
        [DllImport(Lib)] internal static extern int sl_world_set_history_capacity(IntPtr world, ulong client, uint capacity);
        [DllImport(Lib)] internal static extern int sl_world_history(IntPtr world, ulong client, ulong entity, [Out] HistoryEntryNative[] entries, UIntPtr capacity, out UIntPtr count);
        [DllImport(Lib)] internal static extern void sl_replay_def_default(out ReplayDefNative def);
        [DllImport(Lib)] internal static extern int sl_replay_open(byte[] bytes, UIntPtr size, ref ReplayDefNative def, out IntPtr replay);
        [DllImport(Lib)] internal static extern void sl_replay_destroy(IntPtr replay);
        [DllImport(Lib)] internal static extern int sl_replay_next_tick(IntPtr replay, out TickStats stats);
        [DllImport(Lib)] [return: MarshalAs(UnmanagedType.U1)] internal static extern bool sl_replay_done(IntPtr replay);
        [DllImport(Lib)] internal static extern IntPtr sl_replay_world(IntPtr replay);
        [DllImport(Lib)] [return: MarshalAs(UnmanagedType.U1)] internal static extern bool sl_stream_bits(IntPtr stream, ref uint value, int bits);
        [DllImport(Lib)] [return: MarshalAs(UnmanagedType.U1)] internal static extern bool sl_stream_quantized(IntPtr stream, ref float value, float min, float max, float resolution);
        [DllImport(Lib)] internal static extern int sl_quantized_range_create(float min, float max, float resolution, out IntPtr range);
        [DllImport(Lib)] internal static extern void sl_quantized_range_destroy(IntPtr range);
        [DllImport(Lib)] [return: MarshalAs(UnmanagedType.U1)] internal static extern bool sl_stream_quantized_range(IntPtr stream, ref float value, IntPtr range);
        [DllImport(Lib)] [return: MarshalAs(UnmanagedType.U1)] internal static extern bool sl_stream_rest_is_zero(IntPtr stream);
        [DllImport(Lib)] internal static extern int sl_stream_reader_create(IntPtr bytes, UIntPtr size, out IntPtr stream);
        [DllImport(Lib)] internal static extern void sl_stream_destroy(IntPtr stream);
        [DllImport(Lib)] internal static extern int sl_replicator_create(IntPtr world, ref ReplicatorDefNative def, out IntPtr replicator);
        [DllImport(Lib)] internal static extern void sl_replicator_def_default(out ReplicatorDefNative def);
        [DllImport(Lib)] internal static extern void sl_replicator_destroy(IntPtr replicator);
        [DllImport(Lib)] internal static extern int sl_replicator_send(IntPtr replicator);
        [DllImport(Lib)] internal static extern int sl_replicator_packet_count(IntPtr replicator, ulong client, out UIntPtr count);
        [DllImport(Lib)] internal static extern int sl_replicator_packet(IntPtr replicator, ulong client, UIntPtr index, out IntPtr bytes, out UIntPtr size);
        [DllImport(Lib)] internal static extern int sl_replicator_receive_ack(IntPtr replicator, ulong client, byte[] bytes, UIntPtr size);
        [DllImport(Lib)] internal static extern int sl_replicator_pending(IntPtr replicator, ulong client, out uint pending);
        [DllImport(Lib)] internal static extern void sl_mirror_def_default(out MirrorDefNative def);
        [DllImport(Lib)] internal static extern int sl_mirror_create(ref MirrorDefNative def, out IntPtr mirror);
        [DllImport(Lib)] internal static extern void sl_mirror_destroy(IntPtr mirror);
        [DllImport(Lib)] internal static extern int sl_mirror_receive(IntPtr mirror, byte[] bytes, UIntPtr size, ref ListenerNative listener);
        [DllImport(Lib)] internal static extern int sl_mirror_held(IntPtr mirror, ulong[] entities, UIntPtr capacity, out UIntPtr count);
        [DllImport(Lib)] internal static extern int sl_mirror_state(IntPtr mirror, ulong entity, out IntPtr bytes, out UIntPtr size, out int part, out uint tick);
        [DllImport(Lib)] internal static extern int sl_mirror_ack(IntPtr mirror, byte[] bytes, UIntPtr capacity);
        [DllImport(Lib)] internal static extern void sl_mirror_get_stats(IntPtr mirror, out MirrorStatsNative stats);

        internal static string Text(IntPtr s) => Marshal.PtrToStringAnsi(s) ?? "";

        internal static void Check(int status)
        {
            if (status != 0) throw new SightlineException(Text(sl_status_name(status)), Text(sl_last_error()));
        }
    }

    public static class Library
    {
        public static string Version => Native.Text(Native.sl_version());
    }

    /// <summary>Entities with positions, clients that view from one, and a tick that turns positions
    /// into per-client spawns, updates and despawns.</summary>
    /// <summary>A recording re-run tick by tick on a world of its own (docs/recording.md).</summary>
    public sealed class Replay : IDisposable
    {
        IntPtr handle;

        /// <summary>Every client the replay creates keeps `historyCapacity` transitions.</summary>
        public Replay(byte[] recording, uint historyCapacity = 0)
        {
            Native.sl_replay_def_default(out ReplayDefNative d);
            d.HistoryCapacity = historyCapacity;
            Native.Check(Native.sl_replay_open(recording, (UIntPtr)recording.Length, ref d, out handle));
            World = new World(Native.sl_replay_world(handle));
        }

        /// <summary>The replay's world: it answers questions and refuses changes; valid until Dispose.</summary>
        public World World { get; }
        public bool Done => Native.sl_replay_done(handle);

        /// <summary>Applies the recorded calls up to the next tick and runs it.</summary>
        public TickStats NextTick()
        {
            Native.Check(Native.sl_replay_next_tick(handle, out TickStats s));
            return s;
        }

        public void Dispose()
        {
            if (handle != IntPtr.Zero) Native.sl_replay_destroy(handle);
            handle = IntPtr.Zero;
        }
    }

    public sealed class World : IDisposable
    {
        internal IntPtr Handle;
        RecordingFn recording;  // kept alive while the native world may call it

        public World(WorldDef def) { Native.Check(Native.sl_world_create(ref def, out Handle)); }

        /// <summary>A world that hands `record` each chunk of its recording (docs/recording.md) as it is
        /// written, the last on Dispose; Replay re-runs the chunks joined.</summary>
        public World(WorldDef def, Action<byte[]> record)
        {
            recording = (context, bytes, size) =>
            {
                var chunk = new byte[(int)size];
                Marshal.Copy(bytes, chunk, 0, chunk.Length);
                record(chunk);
            };
            Native.Check(Native.sl_world_create_recording(ref def, recording, IntPtr.Zero, out Handle));
        }

        internal World(IntPtr view) { Handle = view; }

        public void Dispose()
        {
            if (Handle != IntPtr.Zero) Native.sl_world_destroy(Handle);  // a replay's world: ignored
            Handle = IntPtr.Zero;
            GC.KeepAlive(recording);
        }

        /// <summary>The client keeps its last `capacity` spawns and despawns (0: none).</summary>
        public void SetHistoryCapacity(ulong client, uint capacity) =>
            Native.Check(Native.sl_world_set_history_capacity(Handle, client, capacity));

        /// <summary>The client's kept transitions of the entity (0: of every entity), oldest first.</summary>
        public HistoryEntry[] History(ulong client, ulong entity)
        {
            Native.Check(Native.sl_world_history(Handle, client, entity, null, UIntPtr.Zero, out UIntPtr n));
            var raw = new HistoryEntryNative[(int)n];
            Native.Check(Native.sl_world_history(Handle, client, entity, raw, n, out n));
            var entries = new HistoryEntry[(int)n];
            for (int i = 0; i < entries.Length; ++i)
            {
                var h = raw[i];
                string reason = Native.Text(h.Spawned ? Native.sl_spawn_reason_name(h.Reason) : Native.sl_despawn_reason_name(h.Reason));
                entries[i] = new HistoryEntry { Tick = h.Tick, Entity = h.Entity, Spawned = h.Spawned, Reason = reason,
                                                Distance = h.Distance, Rule = h.RuleKnown ? Native.Text(Native.sl_rule_name(h.Rule)) : null };
            }
            return entries;
        }

        /// <summary>An entity at (x, z). externalId: the game's id for it (0: none), unique among live
        /// entities and needed by every entity under OrderKey.External (a duplicate or a missing one
        /// throws invalid_argument). created: false for one that existed elsewhere (a copy, one handed
        /// back after WithdrawEntity), whose first spawns do not say created.</summary>
        public ulong CreateEntity(float x, float z, ulong externalId = 0, bool created = true)
        {
            Native.sl_entity_def_default(out EntityDef d);
            d.X = x;
            d.Z = z;
            d.ExternalId = externalId;
            d.Created = created;
            Native.Check(Native.sl_world_create_entity(Handle, ref d, out ulong e));
            return e;
        }

        public void DestroyEntity(ulong e) => Native.Check(Native.sl_world_destroy_entity(Handle, e));

        /// <summary>As DestroyEntity (refused the same way: entity_is_viewer, stale_handle,
        /// null_handle), for an entity that goes on existing elsewhere: its holders despawn with
        /// reason "left", not "destroyed", at the next tick.</summary>
        public void WithdrawEntity(ulong e) => Native.Check(Native.sl_world_withdraw_entity(Handle, e));

        /// <summary>The entity's external id (0 for none).</summary>
        public ulong ExternalId(ulong e)
        {
            Native.Check(Native.sl_world_external_id(Handle, e, out ulong id));
            return id;
        }

        /// <summary>The live entity holding `externalId`; 0 (the null handle) when none does, and for 0.</summary>
        public ulong FindExternal(ulong externalId) => Native.sl_world_find_external(Handle, externalId);

        public void SetPosition(ulong e, float x, float z) => Native.Check(Native.sl_world_set_position(Handle, e, x, z));

        /// <summary>entities[i] moves to (xs[i], zs[i]): the arrays are pinned and read in place.</summary>
        public void SetPositions(ulong[] entities, float[] xs, float[] zs)
        {
            if (entities.Length != xs.Length || xs.Length != zs.Length)
                throw new ArgumentException($"{entities.Length} entities, {xs.Length} xs and {zs.Length} zs");
            Native.Check(Native.sl_world_set_positions(Handle, entities, xs, zs, (UIntPtr)entities.Length));
        }

        public (float x, float z) Position(ulong e)
        {
            Native.Check(Native.sl_world_position(Handle, e, out float x, out float z));
            return (x, z);
        }

        public ulong CreateClient(ulong viewer)
        {
            Native.Check(Native.sl_world_create_client(Handle, viewer, out ulong c));
            return c;
        }

        public TickStats Tick()
        {
            Native.Check(Native.sl_world_tick(Handle, out TickStats s));
            return s;
        }

        /// <summary>The client's set after the last tick, sorted by index.</summary>
        public ulong[] InterestSet(ulong client)
        {
            Native.Check(Native.sl_world_interest_set(Handle, client, null, UIntPtr.Zero, out UIntPtr n));
            var out_ = new ulong[(int)n];
            Native.Check(Native.sl_world_interest_set(Handle, client, out_, n, out n));
            return out_;
        }

        public (bool held, string rule) Why(ulong client, ulong entity)
        {
            Native.Check(Native.sl_world_why(Handle, client, entity, out Why y));
            return (y.Held, Native.Text(Native.sl_rule_name(y.Rule)));
        }
    }

    /// <summary>A quantized range checked and divided once, for a range known only at run time:
    /// Stream.QuantizedRange writes and reads exactly the bits Stream.Quantized does with the same
    /// min, max and resolution. Immutable: a serializer on the World's workers may share one.</summary>
    public sealed class QuantizedRange : IDisposable
    {
        internal IntPtr Handle;

        /// <summary>Throws SightlineException (naming the argument) for what Quantized fails on: min or
        /// max not finite, min >= max, resolution not finite or <= 0, more than 2^32 - 1 steps.</summary>
        public QuantizedRange(float min, float max, float resolution)
        {
            Native.Check(Native.sl_quantized_range_create(min, max, resolution, out Handle));
            Min = min;
            Max = max;
            Resolution = resolution;
        }

        public float Min { get; }
        public float Max { get; }
        public float Resolution { get; }

        public void Dispose()
        {
            if (Handle != IntPtr.Zero) Native.sl_quantized_range_destroy(Handle);
            Handle = IntPtr.Zero;
        }
    }

    /// <summary>A payload being written (in a serializer) or read (Stream.Reader).</summary>
    public sealed class Stream : IDisposable
    {
        IntPtr handle;
        GCHandle pinned;  // a reader's bytes

        internal Stream(IntPtr h) { handle = h; }

        public static Stream Reader(byte[] payload)
        {
            var pin = GCHandle.Alloc(payload, GCHandleType.Pinned);
            Native.Check(Native.sl_stream_reader_create(pin.AddrOfPinnedObject(), (UIntPtr)payload.Length, out IntPtr h));
            return new Stream(h) { pinned = pin };
        }

        public void Dispose()
        {
            if (pinned.IsAllocated)
            {
                Native.sl_stream_destroy(handle);
                pinned.Free();
            }
        }

        /// <summary>Writes `value` or reads into it; false once the stream has failed.</summary>
        public bool Bits(ref uint value, int bits) => Native.sl_stream_bits(handle, ref value, bits);
        public bool Quantized(ref float value, float min, float max, float resolution) =>
            Native.sl_stream_quantized(handle, ref value, min, max, resolution);
        /// <summary>Quantized(ref value, range.Min, range.Max, range.Resolution), with a range made once.</summary>
        public bool QuantizedRange(ref float value, QuantizedRange range)
        {
            if (range.Handle == IntPtr.Zero) throw new ObjectDisposedException(nameof(QuantizedRange));
            return Native.sl_stream_quantized_range(handle, ref value, range.Handle);
        }
        public bool RestIsZero() => Native.sl_stream_rest_is_zero(handle);
    }

    /// <summary>Writes an entity's state part through the stream; false refuses the record.</summary>
    public delegate bool Serializer(Stream stream, ulong entity, Part part);

    /// <summary>Turns interest sets into packets.</summary>
    public sealed class Replicator : IDisposable
    {
        IntPtr handle;
        readonly SerializeFn trampoline;  // kept alive while the library holds its pointer
        Exception thrown;                  // by the serializer during a send: rethrown by Send()

        public Replicator(World world, Delivery delivery, Serializer serialize)
        {
            // An exception may not unwind through the library: kept, the record refused.
            trampoline = (stream, entity, part, context) =>
            {
                try
                {
                    return serialize(new Stream(stream), entity, (Part)part);
                }
                catch (Exception e)
                {
                    Interlocked.CompareExchange(ref thrown, e, null);  // the first, from any worker
                    return false;
                }
            };
            Native.sl_replicator_def_default(out ReplicatorDefNative d);
            d.Serialize = Marshal.GetFunctionPointerForDelegate(trampoline);
            d.Delivery = (int)delivery;
            Native.Check(Native.sl_replicator_create(world.Handle, ref d, out handle));
        }

        public void Dispose()
        {
            if (handle != IntPtr.Zero) Native.sl_replicator_destroy(handle);
            handle = IntPtr.Zero;
        }

        /// <summary>Writes every live client's packets; rethrows what the serializer threw.</summary>
        public void Send()
        {
            thrown = null;
            int status = Native.sl_replicator_send(handle);
            if (thrown != null) ExceptionDispatchInfo.Capture(thrown).Throw();
            Native.Check(status);
        }

        /// <summary>The client's packets of the last send, copied.</summary>
        public List<byte[]> Packets(ulong client)
        {
            Native.Check(Native.sl_replicator_packet_count(handle, client, out UIntPtr n));
            var packets = new List<byte[]>((int)n);
            for (ulong i = 0; i < (ulong)n; ++i)
            {
                Native.Check(Native.sl_replicator_packet(handle, client, (UIntPtr)i, out IntPtr bytes, out UIntPtr size));
                var packet = new byte[(int)size];
                Marshal.Copy(bytes, packet, 0, packet.Length);
                packets.Add(packet);
            }
            return packets;
        }

        public void ReceiveAck(ulong client, byte[] ack) =>
            Native.Check(Native.sl_replicator_receive_ack(handle, client, ack, (UIntPtr)ack.Length));

        public uint Pending(ulong client)
        {
            Native.Check(Native.sl_replicator_pending(handle, client, out uint p));
            return p;
        }
    }

    /// <summary>What a packet tells the game as a Mirror applies it.</summary>
    public interface IMirrorListener
    {
        void OnEnter(ulong entity, string reason, bool created, byte[] state, uint tick);
        void OnUpdate(ulong entity, byte[] state, uint tick);
        void OnExit(ulong entity, bool destroyed, string reason);
    }

    /// <summary>The client's side: applies packets and holds what they say is held.</summary>
    public sealed class Mirror : IDisposable
    {
        IntPtr handle;
        ListenerNative listener;
        readonly EnterFn onEnter;  // kept alive while the library may call them
        readonly UpdateFn onUpdate;
        readonly ExitFn onExit;

        public Mirror(Delivery delivery, IMirrorListener heard)
        {
            Native.sl_mirror_def_default(out MirrorDefNative d);
            d.Delivery = (int)delivery;
            Native.Check(Native.sl_mirror_create(ref d, out handle));
            // An exception may not unwind through the library: kept, and rethrown by Receive().
            onEnter = (c, e, reason, created, state, size, tick) => Guard(() =>
                heard.OnEnter(e, Native.Text(Native.sl_spawn_reason_name(reason)), created, Copy(state, size), tick));
            onUpdate = (c, e, state, size, tick) => Guard(() => heard.OnUpdate(e, Copy(state, size), tick));
            onExit = (c, e, kind, reason) =>
                Guard(() => heard.OnExit(e, kind == 1, Native.Text(Native.sl_despawn_reason_name(reason))));
            listener.OnEnter = Marshal.GetFunctionPointerForDelegate(onEnter);
            listener.OnUpdate = Marshal.GetFunctionPointerForDelegate(onUpdate);
            listener.OnExit = Marshal.GetFunctionPointerForDelegate(onExit);
        }

        Exception thrown;

        void Guard(Action call)
        {
            try
            {
                call();
            }
            catch (Exception e)
            {
                if (thrown == null) thrown = e;
            }
        }

        static byte[] Copy(IntPtr bytes, UIntPtr size)
        {
            var out_ = new byte[(int)size];
            if (out_.Length > 0) Marshal.Copy(bytes, out_, 0, out_.Length);
            return out_;
        }

        public void Dispose()
        {
            if (handle != IntPtr.Zero) Native.sl_mirror_destroy(handle);
            handle = IntPtr.Zero;
        }

        /// <summary>Applies one packet; rethrows what a listener threw (after the packet applied).</summary>
        public void Receive(byte[] packet)
        {
            thrown = null;
            int status = Native.sl_mirror_receive(handle, packet, (UIntPtr)packet.Length, ref listener);
            if (thrown != null) ExceptionDispatchInfo.Capture(thrown).Throw();
            Native.Check(status);
        }

        public ulong[] Held()
        {
            Native.Check(Native.sl_mirror_held(handle, null, UIntPtr.Zero, out UIntPtr n));
            var out_ = new ulong[(int)n];
            Native.Check(Native.sl_mirror_held(handle, out_, n, out n));
            return out_;
        }

        public (byte[] state, Part part, uint tick) State(ulong entity)
        {
            Native.Check(Native.sl_mirror_state(handle, entity, out IntPtr bytes, out UIntPtr size, out int part, out uint tick));
            return (Copy(bytes, size), (Part)part, tick);
        }

        public byte[] Ack()
        {
            var ack = new byte[14];  // SL_ACK_BYTES
            Native.Check(Native.sl_mirror_ack(handle, ack, (UIntPtr)ack.Length));
            return ack;
        }

        public ulong Anomalies
        {
            get { Native.sl_mirror_get_stats(handle, out MirrorStatsNative s); return s.Anomalies; }
        }
    }
}
