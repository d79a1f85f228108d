// Package sightline is Sightline from Go: the World, the Replicator and the ClientMirror over the
// C API (sightline_c.h) through cgo. Build with CGO_LDFLAGS naming the folder of
// libsightline_c.so (-L<dir> -Wl,-rpath,<dir>); the header is found in this checkout.
//
// Handles are uint64 values: the slot index in the low 32 bits, the generation in the high 32. A
// refused call returns an *Error with the library's code name and message. Objects are used from
// one goroutine at a time; Close frees them (a Replicator before its World).
package sightline

/*
#cgo CFLAGS: -I${SRCDIR}/../../../include
#cgo LDFLAGS: -lsightline_c
#include <stdlib.h>
#include "sightline/sightline_c.h"

extern bool slGoSerialize(sl_stream*, sl_entity, int, void*);
extern void slGoEnter(void*, sl_entity, uint8_t, bool, uint8_t*, size_t, uint32_t);
extern void slGoUpdate(void*, sl_entity, uint8_t*, size_t, uint32_t);
extern void slGoExit(void*, sl_entity, uint8_t, uint8_t);
extern void slGoRecord(void*, uint8_t*, size_t);

static sl_status sl_go_world_create_recording(const sl_world_def* def, void* context, sl_world** out) {
  return sl_world_create_recording(def, (sl_recording_fn)slGoRecord, context, out);
}

static sl_status sl_go_replicator_create(sl_world* world, sl_replicator_def* def, void* context,
                                         sl_replicator** out) {
  def->serialize = slGoSerialize;
  def->serialize_context = context;
  return sl_replicator_create(world, def, out);
}

static sl_status sl_go_mirror_receive(sl_mirror* mirror, const uint8_t* bytes, size_t size, void* context) {
  sl_mirror_listener listener = {0};
  listener.context = context;
  listener.on_enter = (void (*)(void*, sl_entity, uint8_t, bool, const uint8_t*, size_t, uint32_t))slGoEnter;
  listener.on_update = (void (*)(void*, sl_entity, const uint8_t*, size_t, uint32_t))slGoUpdate;
  listener.on_exit = slGoExit;
  return sl_mirror_receive(mirror, bytes, size, context == NULL ? NULL : &listener);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// Entity and Client are the C API's handles.
type Entity = uint64
type Client = uint64

// State parts and deliveries, as the C API numbers them.
const (
	PartFull   = int(C.SL_PART_FULL)
	PartUpdate = int(C.SL_PART_UPDATE)
	Reliable   = int(C.SL_DELIVERY_RELIABLE)
	Unreliable = int(C.SL_DELIVERY_UNRELIABLE)
)

// Error is a refused call: Code is the status name ("stale_handle", "invalid_def", ...).
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// call runs one C API call and reads its message on the same OS thread (sl_last_error is the
// calling thread's; a goroutine may otherwise move between the two).
func call(f func() C.sl_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	status := f()
	if status == C.SL_OK {
		return nil
	}
	return &Error{Code: C.GoString(C.sl_status_name(status)), Message: C.GoString(C.sl_last_error())}
}

// Version is the library's "MAJOR.MINOR.PATCH".
func Version() string { return C.GoString(C.sl_version()) }

// OrderKey is what ranks entities where a rule must choose among equals (the crowd cap's ties, the
// update stagger): OrderKeySlot (the default) or OrderKeyExternal, their external ids, which every
// entity then needs (docs/relevance.md). Another value is refused by NewWorld (invalid_def).
type OrderKey uint8

const (
	OrderKeySlot     OrderKey = 0
	OrderKeyExternal OrderKey = 1
)

// WorldDef is the World's settings (world_def.h); DefaultWorldDef gives the documented defaults.
type WorldDef struct {
	EnterRadius, LeaveRadius, CellSize float32
	Threads, CrowdCap                  uint32
	OrderKey                           OrderKey
}

func DefaultWorldDef() WorldDef {
	var d C.sl_world_def
	C.sl_world_def_default(&d)
	return WorldDef{float32(d.enter_radius), float32(d.leave_radius), float32(d.cell_size), uint32(d.threads),
		uint32(d.crowd_cap), OrderKey(d.order_key)}
}

// EntityDef is an entity's settings; DefaultEntityDef gives the documented defaults (Created true).
type EntityDef struct {
	X, Z float32
	// ExternalID is the game's id for it (0: none), unique among live entities; every entity
	// needs one under OrderKeyExternal. A duplicate or a missing one is refused (invalid_argument).
	ExternalID uint64
	// Created says its first spawns are its appearance; false for one that existed elsewhere (a
	// copy, one handed back after WithdrawEntity).
	Created bool
}

func DefaultEntityDef() EntityDef {
	var d C.sl_entity_def
	C.sl_entity_def_default(&d)
	return EntityDef{float32(d.x), float32(d.z), uint64(d.external_id), bool(d.created)}
}

// World: entities with positions, clients that view from one, and a tick that turns positions
// into per-client spawns, updates and despawns.
type World struct {
	ptr       *C.sl_world
	recording unsafe.Pointer // C memory holding the recording sink's handle, when there is one
}

// native is the C API's def: its defaults, with these fields set.
func (def WorldDef) native() C.sl_world_def {
	var d C.sl_world_def
	C.sl_world_def_default(&d)
	d.enter_radius, d.leave_radius, d.cell_size = C.float(def.EnterRadius), C.float(def.LeaveRadius), C.float(def.CellSize)
	d.threads, d.crowd_cap = C.uint32_t(def.Threads), C.uint32_t(def.CrowdCap)
	d.order_key = C.uint8_t(def.OrderKey)
	return d
}

func NewWorld(def WorldDef) (*World, error) {
	d := def.native()
	var w *C.sl_world
	if err := call(func() C.sl_status { return C.sl_world_create(&d, &w) }); err != nil {
		return nil, err
	}
	return &World{ptr: w}, nil
}

// NewRecordingWorld is NewWorld, and the world hands `record` each chunk of its recording
// (docs/recording.md) as it is written, the last when it is closed; OpenReplay re-runs the
// chunks joined.
func NewRecordingWorld(def WorldDef, record func([]byte)) (*World, error) {
	d := def.native()
	context := C.malloc(C.size_t(unsafe.Sizeof(cgo.Handle(0))))
	*(*cgo.Handle)(context) = cgo.NewHandle(record)
	var w *C.sl_world
	if err := call(func() C.sl_status { return C.sl_go_world_create_recording(&d, context, &w) }); err != nil {
		(*(*cgo.Handle)(context)).Delete()
		C.free(context)
		return nil, err
	}
	return &World{ptr: w, recording: context}, nil
}

//export slGoRecord
func slGoRecord(context unsafe.Pointer, bytes *C.uint8_t, size C.size_t) {
	(*(*cgo.Handle)(context)).Value().(func([]byte))(C.GoBytes(unsafe.Pointer(bytes), C.int(size)))
}

// Close destroys the world (a recording gets its last chunk); a replay's world is its Replay's.
func (w *World) Close() {
	C.sl_world_destroy(w.ptr)
	w.ptr = nil
	if w.recording != nil {
		(*(*cgo.Handle)(w.recording)).Delete()
		C.free(w.recording)
		w.recording = nil
	}
}

// HistoryEntry is one spawn or despawn a client's history keeps.
type HistoryEntry struct {
	Tick     uint64
	Entity   Entity
	Spawned  bool
	Reason   string  // the spawn or despawn reason's name
	Distance float32 // from the client's nearest origin; +Inf when none is in its space
	Rule     string  // why()'s rule right after that tick; "" for an entity destroyed then
}

// SetHistoryCapacity makes the client keep its last `capacity` spawns and despawns (0: none).
func (w *World) SetHistoryCapacity(c Client, capacity uint32) error {
	return call(func() C.sl_status {
		return C.sl_world_set_history_capacity(w.ptr, C.sl_client(c), C.uint32_t(capacity))
	})
}

// History is the client's kept transitions of the entity (0: of every entity), oldest first.
func (w *World) History(c Client, e Entity) ([]HistoryEntry, error) {
	var n C.size_t
	if err := call(func() C.sl_status { return C.sl_world_history(w.ptr, C.sl_client(c), C.sl_entity(e), nil, 0, &n) }); err != nil || n == 0 {
		return nil, err
	}
	raw := make([]C.sl_history_entry, n)
	if err := call(func() C.sl_status { return C.sl_world_history(w.ptr, C.sl_client(c), C.sl_entity(e), &raw[0], n, &n) }); err != nil {
		return nil, err
	}
	out := make([]HistoryEntry, 0, n)
	for _, h := range raw[:n] {
		entry := HistoryEntry{Tick: uint64(h.tick), Entity: Entity(h.entity), Spawned: bool(h.spawned), Distance: float32(h.distance)}
		if entry.Spawned {
			entry.Reason = C.GoString(C.sl_spawn_reason_name(h.reason))
		} else {
			entry.Reason = C.GoString(C.sl_despawn_reason_name(h.reason))
		}
		if bool(h.rule_known) {
			entry.Rule = C.GoString(C.sl_rule_name(h.rule))
		}
		out = append(out, entry)
	}
	return out, nil
}

// Replay re-runs a recording tick by tick on a world of its own (docs/recording.md).
type Replay struct {
	ptr   *C.sl_replay
	world *World
}

// OpenReplay reads a recording; every client it creates keeps `historyCapacity` transitions.
func OpenReplay(data []byte, historyCapacity uint32) (*Replay, error) {
	var d C.sl_replay_def
	C.sl_replay_def_default(&d)
	d.history_capacity = C.uint32_t(historyCapacity)
	var bytes *C.uint8_t
	if len(data) > 0 {
		bytes = (*C.uint8_t)(unsafe.Pointer(&data[0]))
	}
	var r *C.sl_replay
	if err := call(func() C.sl_status { return C.sl_replay_open(bytes, C.size_t(len(data)), &d, &r) }); err != nil {
		return nil, err
	}
	return &Replay{ptr: r, world: &World{ptr: (*C.sl_world)(unsafe.Pointer(C.sl_replay_world(r)))}}, nil
}

// Done says whether no tick is left to replay.
func (r *Replay) Done() bool { return bool(C.sl_replay_done(r.ptr)) }

// NextTick applies the recorded calls up to the next tick and runs it: the index of the tick run.
func (r *Replay) NextTick() (uint64, error) {
	var s C.sl_tick_stats
	err := call(func() C.sl_status { return C.sl_replay_next_tick(r.ptr, &s) })
	return uint64(s.tick), err
}

// World is the replay's world, read-only (a change is refused), valid until Close.
func (r *Replay) World() *World { return r.world }

func (r *Replay) Close() { C.sl_replay_destroy(r.ptr); r.ptr = nil }

// CreateEntity is CreateEntityDef with DefaultEntityDef at (x, z).
func (w *World) CreateEntity(x, z float32) (Entity, error) {
	def := DefaultEntityDef()
	def.X, def.Z = x, z
	return w.CreateEntityDef(def)
}

// CreateEntityDef creates an entity as def says (start from DefaultEntityDef).
func (w *World) CreateEntityDef(def EntityDef) (Entity, error) {
	var d C.sl_entity_def
	C.sl_entity_def_default(&d)
	d.x, d.z = C.float(def.X), C.float(def.Z)
	d.external_id, d.created = C.uint64_t(def.ExternalID), C.bool(def.Created)
	var e C.sl_entity
	err := call(func() C.sl_status { return C.sl_world_create_entity(w.ptr, &d, &e) })
	return Entity(e), err
}

func (w *World) DestroyEntity(e Entity) error {
	return call(func() C.sl_status { return C.sl_world_destroy_entity(w.ptr, C.sl_entity(e)) })
}

// WithdrawEntity is DestroyEntity (refused the same way: entity_is_viewer, stale_handle,
// null_handle) for an entity that goes on existing elsewhere: its holders despawn with reason
// "left", not "destroyed", at the next tick.
func (w *World) WithdrawEntity(e Entity) error {
	return call(func() C.sl_status { return C.sl_world_withdraw_entity(w.ptr, C.sl_entity(e)) })
}

// ExternalID is the entity's external id (0 for none).
func (w *World) ExternalID(e Entity) (uint64, error) {
	var id C.uint64_t
	err := call(func() C.sl_status { return C.sl_world_external_id(w.ptr, C.sl_entity(e), &id) })
	return uint64(id), err
}

// FindExternal is the live entity holding external id `id`; 0 (the null handle) when none does,
// and for 0.
func (w *World) FindExternal(id uint64) Entity {
	return Entity(C.sl_world_find_external(w.ptr, C.uint64_t(id)))
}

func (w *World) SetPosition(e Entity, x, z float32) error {
	return call(func() C.sl_status { return C.sl_world_set_position(w.ptr, C.sl_entity(e), C.float(x), C.float(z)) })
}

// SetPositions moves entities[i] to (xs[i], zs[i]); the slices are read in place.
func (w *World) SetPositions(entities []Entity, xs, zs []float32) error {
	if len(entities) != len(xs) || len(xs) != len(zs) {
		return &Error{"invalid_argument", fmt.Sprintf("%d entities, %d xs and %d zs", len(entities), len(xs), len(zs))}
	}
	if len(entities) == 0 {
		return nil
	}
	return call(func() C.sl_status {
		return C.sl_world_set_positions(w.ptr, (*C.sl_entity)(unsafe.Pointer(&entities[0])),
			(*C.float)(unsafe.Pointer(&xs[0])), (*C.float)(unsafe.Pointer(&zs[0])), C.size_t(len(entities)))
	})
}

func (w *World) Position(e Entity) (x, z float32, err error) {
	var cx, cz C.float
	err = call(func() C.sl_status { return C.sl_world_position(w.ptr, C.sl_entity(e), &cx, &cz) })
	return float32(cx), float32(cz), err
}

func (w *World) CreateClient(viewer Entity) (Client, error) {
	var c C.sl_client
	err := call(func() C.sl_status { return C.sl_world_create_client(w.ptr, C.sl_entity(viewer), &c) })
	return Client(c), err
}

func (w *World) DestroyClient(c Client) error {
	return call(func() C.sl_status { return C.sl_world_destroy_client(w.ptr, C.sl_client(c)) })
}

// Tick runs one tick and returns the index of the tick run.
func (w *World) Tick() (uint64, error) {
	var s C.sl_tick_stats
	err := call(func() C.sl_status { return C.sl_world_tick(w.ptr, &s) })
	return uint64(s.tick), err
}

// InterestSet is the client's set after the last tick, sorted by index.
func (w *World) InterestSet(c Client) ([]Entity, error) {
	var n C.size_t
	if err := call(func() C.sl_status { return C.sl_world_interest_set(w.ptr, C.sl_client(c), nil, 0, &n) }); err != nil || n == 0 {
		return nil, err
	}
	out := make([]Entity, n)
	err := call(func() C.sl_status {
		return C.sl_world_interest_set(w.ptr, C.sl_client(c), (*C.sl_entity)(unsafe.Pointer(&out[0])), n, &n)
	})
	return out, err
}

// Why says whether the client holds the entity and by which rule ("near", "out_of_range", ...).
func (w *World) Why(c Client, e Entity) (held bool, rule string, err error) {
	var y C.sl_why
	err = call(func() C.sl_status { return C.sl_world_why(w.ptr, C.sl_client(c), C.sl_entity(e), &y) })
	return bool(y.held), C.GoString(C.sl_rule_name(y.rule)), err
}

// Stream writes (in a serializer) or reads (NewReader) a payload; each call returns the value
// written or read, and false once the stream has failed.
type Stream struct {
	ptr   *C.sl_stream
	bytes unsafe.Pointer // a reader's copy of its payload
}

func (s *Stream) Bits(v uint32, bits int) (uint32, bool) {
	c := C.uint32_t(v)
	ok := C.sl_stream_bits(s.ptr, &c, C.int(bits))
	return uint32(c), bool(ok)
}

func (s *Stream) Quantized(v, lo, hi, resolution float32) (float32, bool) {
	c := C.float(v)
	ok := C.sl_stream_quantized(s.ptr, &c, C.float(lo), C.float(hi), C.float(resolution))
	return float32(c), bool(ok)
}

// QuantizedRange is Quantized(v, r.Min, r.Max, r.Resolution) with a range made once (NewQuantizedRange).
func (s *Stream) QuantizedRange(v float32, r *QuantizedRange) (float32, bool) {
	c := C.float(v)
	ok := C.sl_stream_quantized_range(s.ptr, &c, r.ptr)
	return float32(c), bool(ok)
}

func (s *Stream) Float(v float32) (float32, bool) {
	c := C.float(v)
	ok := C.sl_stream_float(s.ptr, &c)
	return float32(c), bool(ok)
}

func (s *Stream) Ok() bool         { return bool(C.sl_stream_ok(s.ptr)) }
func (s *Stream) RestIsZero() bool { return bool(C.sl_stream_rest_is_zero(s.ptr)) }
func (s *Stream) Error() string    { return C.GoString(C.sl_stream_error(s.ptr)) }

// QuantizedRange is a quantized range checked and divided once, for a range known only at run time:
// Stream.QuantizedRange writes and reads exactly the bits Stream.Quantized does with the same min,
// max and resolution. Immutable: a serializer on the World's workers may share one. Close frees it.
type QuantizedRange struct {
	ptr                  *C.sl_quantized_range
	Min, Max, Resolution float32
}

// NewQuantizedRange refuses (an *Error naming the argument) what Quantized fails on: min or max not
// finite, min >= max, resolution not finite or <= 0, more than 2^32 - 1 steps.
func NewQuantizedRange(min, max, resolution float32) (*QuantizedRange, error) {
	var r *C.sl_quantized_range
	if err := call(func() C.sl_status {
		return C.sl_quantized_range_create(C.float(min), C.float(max), C.float(resolution), &r)
	}); err != nil {
		return nil, err
	}
	return &QuantizedRange{r, min, max, resolution}, nil
}

// Close frees the range; Stream.QuantizedRange with it afterwards returns false.
func (r *QuantizedRange) Close() { C.sl_quantized_range_destroy(r.ptr); r.ptr = nil }

// NewReader reads a payload a Mirror handed out; Close frees it.
func NewReader(payload []byte) (*Stream, error) {
	bytes := C.CBytes(payload)
	var s *C.sl_stream
	if err := call(func() C.sl_status { return C.sl_stream_reader_create((*C.uint8_t)(bytes), C.size_t(len(payload)), &s) }); err != nil {
		C.free(bytes)
		return nil, err
	}
	return &Stream{s, bytes}, nil
}

func (s *Stream) Close() { C.sl_stream_destroy(s.ptr); C.free(s.bytes) }

// Serializer writes an entity's state part (PartFull or PartUpdate) through s; false refuses the
// record. It may be called from the World's worker threads.
type Serializer func(s *Stream, e Entity, part int) bool

// A callback and what it panicked with: a panic may not unwind through the library, so it is
// recovered, and the call that ran the callback (Send, Receive) returns it as an error.
type callback struct {
	fn       interface{}
	mu       sync.Mutex // the serializer runs on the World's workers at once
	panicked interface{}
}

func (c *callback) keep(r interface{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.panicked == nil {
		c.panicked = r
	}
}

// recover keeps a panic of the callback running (deferred in it).
func (c *callback) recover() {
	if r := recover(); r != nil {
		c.keep(r)
	}
}

func (c *callback) recovered() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.panicked == nil {
		return nil
	}
	p := c.panicked
	c.panicked = nil
	return fmt.Errorf("sightline: a callback panicked: %v", p)
}

//export slGoSerialize
func slGoSerialize(stream *C.sl_stream, entity C.sl_entity, part C.int, context unsafe.Pointer) (ok C.bool) {
	box := (*(*cgo.Handle)(context)).Value().(*callback)
	defer func() {
		if r := recover(); r != nil {
			box.keep(r)
			ok = false
		}
	}()
	return C.bool(box.fn.(Serializer)(&Stream{ptr: stream}, Entity(entity), int(part)))
}

// ReplicatorDef is the Replicator's settings; DefaultReplicatorDef gives the documented defaults.
type ReplicatorDef struct {
	Delivery                 int
	PacketBytes, BudgetBytes uint32
	TickSeconds              float32
}

func DefaultReplicatorDef() ReplicatorDef {
	var d C.sl_replicator_def
	C.sl_replicator_def_default(&d)
	return ReplicatorDef{int(d.delivery), uint32(d.packet_bytes), uint32(d.budget_bytes), float32(d.tick_seconds)}
}

// Replicator turns interest sets into packets.
type Replicator struct {
	ptr     *C.sl_replicator
	context unsafe.Pointer // C memory holding the serializer's handle
	box     *callback
}

func NewReplicator(w *World, def ReplicatorDef, serialize Serializer) (*Replicator, error) {
	var d C.sl_replicator_def
	C.sl_replicator_def_default(&d)
	d.delivery, d.packet_bytes, d.budget_bytes = C.int(def.Delivery), C.uint32_t(def.PacketBytes), C.uint32_t(def.BudgetBytes)
	d.tick_seconds = C.float(def.TickSeconds)
	box := &callback{fn: serialize}
	context := C.malloc(C.size_t(unsafe.Sizeof(cgo.Handle(0))))
	*(*cgo.Handle)(context) = cgo.NewHandle(box)
	var r *C.sl_replicator
	if err := call(func() C.sl_status { return C.sl_go_replicator_create(w.ptr, &d, context, &r) }); err != nil {
		(*(*cgo.Handle)(context)).Delete()
		C.free(context)
		return nil, err
	}
	return &Replicator{r, context, box}, nil
}

func (r *Replicator) Close() {
	C.sl_replicator_destroy(r.ptr)
	(*(*cgo.Handle)(r.context)).Delete()
	C.free(r.context)
}

// Send writes every live client's packets; a serializer's panic comes back as its error.
func (r *Replicator) Send() error {
	err := call(func() C.sl_status { return C.sl_replicator_send(r.ptr) })
	if p := r.box.recovered(); p != nil {
		return p
	}
	return err
}

// Packets are the client's packets of the last send, copied.
func (r *Replicator) Packets(c Client) ([][]byte, error) {
	var n C.size_t
	if err := call(func() C.sl_status { return C.sl_replicator_packet_count(r.ptr, C.sl_client(c), &n) }); err != nil {
		return nil, err
	}
	out := make([][]byte, 0, n)
	for i := C.size_t(0); i < n; i++ {
		var bytes *C.uint8_t
		var size C.size_t
		if err := call(func() C.sl_status { return C.sl_replicator_packet(r.ptr, C.sl_client(c), i, &bytes, &size) }); err != nil {
			return nil, err
		}
		out = append(out, C.GoBytes(unsafe.Pointer(bytes), C.int(size)))
	}
	return out, nil
}

func (r *Replicator) ReceiveAck(c Client, ack []byte) error {
	if len(ack) == 0 {
		return call(func() C.sl_status { return C.sl_replicator_receive_ack(r.ptr, C.sl_client(c), nil, 0) })
	}
	return call(func() C.sl_status {
		return C.sl_replicator_receive_ack(r.ptr, C.sl_client(c), (*C.uint8_t)(unsafe.Pointer(&ack[0])), C.size_t(len(ack)))
	})
}

func (r *Replicator) Pending(c Client) (uint32, error) {
	var p C.uint32_t
	err := call(func() C.sl_status { return C.sl_replicator_pending(r.ptr, C.sl_client(c), &p) })
	return uint32(p), err
}

// Listener hears what a packet tells the game as a Mirror applies it.
type Listener interface {
	OnEnter(e Entity, reason string, created bool, state []byte, tick uint32)
	OnUpdate(e Entity, state []byte, tick uint32)
	OnExit(e Entity, destroyed bool, reason string)
}

//export slGoEnter
func slGoEnter(context unsafe.Pointer, e C.sl_entity, reason C.uint8_t, created C.bool, state *C.uint8_t, size C.size_t, tick C.uint32_t) {
	box := (*(*cgo.Handle)(context)).Value().(*callback)
	defer box.recover()
	box.fn.(Listener).OnEnter(Entity(e), C.GoString(C.sl_spawn_reason_name(reason)), bool(created), C.GoBytes(unsafe.Pointer(state), C.int(size)), uint32(tick))
}

//export slGoUpdate
func slGoUpdate(context unsafe.Pointer, e C.sl_entity, state *C.uint8_t, size C.size_t, tick C.uint32_t) {
	box := (*(*cgo.Handle)(context)).Value().(*callback)
	defer box.recover()
	box.fn.(Listener).OnUpdate(Entity(e), C.GoBytes(unsafe.Pointer(state), C.int(size)), uint32(tick))
}

//export slGoExit
func slGoExit(context unsafe.Pointer, e C.sl_entity, kind C.uint8_t, reason C.uint8_t) {
	box := (*(*cgo.Handle)(context)).Value().(*callback)
	defer box.recover()
	box.fn.(Listener).OnExit(Entity(e), kind == 1, C.GoString(C.sl_despawn_reason_name(reason)))
}

// Mirror is the client's side: it applies packets and holds what they say is held.
type Mirror struct {
	ptr     *C.sl_mirror
	context unsafe.Pointer // C memory holding the listener's handle, or nil
	box     *callback
}

func NewMirror(delivery int, listener Listener) (*Mirror, error) {
	var d C.sl_mirror_def
	C.sl_mirror_def_default(&d)
	d.delivery = C.int(delivery)
	var m *C.sl_mirror
	if err := call(func() C.sl_status { return C.sl_mirror_create(&d, &m) }); err != nil {
		return nil, err
	}
	mirror := &Mirror{ptr: m}
	if listener != nil {
		mirror.box = &callback{fn: listener}
		mirror.context = C.malloc(C.size_t(unsafe.Sizeof(cgo.Handle(0))))
		*(*cgo.Handle)(mirror.context) = cgo.NewHandle(mirror.box)
	}
	return mirror, nil
}

func (m *Mirror) Close() {
	C.sl_mirror_destroy(m.ptr)
	if m.context != nil {
		(*(*cgo.Handle)(m.context)).Delete()
		C.free(m.context)
	}
}

// Receive applies one packet; a listener's panic comes back as its error (after the packet applied).
func (m *Mirror) Receive(packet []byte) error {
	var bytes *C.uint8_t
	if len(packet) != 0 {
		bytes = (*C.uint8_t)(unsafe.Pointer(&packet[0]))
	}
	err := call(func() C.sl_status { return C.sl_go_mirror_receive(m.ptr, bytes, C.size_t(len(packet)), m.context) })
	if m.box != nil {
		if p := m.box.recovered(); p != nil {
			return p
		}
	}
	return err
}

// Held is the held entities, sorted by index.
func (m *Mirror) Held() ([]Entity, error) {
	var n C.size_t
	if err := call(func() C.sl_status { return C.sl_mirror_held(m.ptr, nil, 0, &n) }); err != nil || n == 0 {
		return nil, err
	}
	out := make([]Entity, n)
	err := call(func() C.sl_status { return C.sl_mirror_held(m.ptr, (*C.sl_entity)(unsafe.Pointer(&out[0])), n, &n) })
	return out, err
}

// State is the entity's latest state, its part and its tick.
func (m *Mirror) State(e Entity) (state []byte, part int, tick uint32, err error) {
	var bytes *C.uint8_t
	var size C.size_t
	var p C.int
	var t C.uint32_t
	if err = call(func() C.sl_status { return C.sl_mirror_state(m.ptr, C.sl_entity(e), &bytes, &size, &p, &t) }); err != nil {
		return nil, 0, 0, err
	}
	return C.GoBytes(unsafe.Pointer(bytes), C.int(size)), int(p), uint32(t), nil
}

// Ack is the ack to send back to the server.
func (m *Mirror) Ack() ([]byte, error) {
	out := make([]byte, C.SL_ACK_BYTES)
	err := call(func() C.sl_status {
		return C.sl_mirror_ack(m.ptr, (*C.uint8_t)(unsafe.Pointer(&out[0])), C.size_t(len(out)))
	})
	return out, err
}

// Anomalies counts well-formed records that disagreed with what the mirror held.
func (m *Mirror) Anomalies() uint64 {
	var s C.sl_mirror_stats
	C.sl_mirror_get_stats(m.ptr, &s)
	return uint64(s.anomalies)
}
