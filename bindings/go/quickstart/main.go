// Sightline's quickstart from Go, in the shape of a Nakama match handler: MatchInit makes the
// World and the Replicator, MatchJoin gives each presence a client, and MatchLoop moves the
// walkers, ticks, sends, and hands each presence its packets (here straight to a ClientMirror,
// which acks back). Exits non-zero unless every mirror ends holding its client's interest set.
//
//	CGO_LDFLAGS="-L$PWD/build -Wl,-rpath,$PWD/build" go run ./quickstart   (in bindings/go)
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"
	"strings"

	"sightline.dev/sightline/sightline"
)

const (
	size     = 200.0
	walkers  = 400
	players  = 3
	ticks    = 60
	tickRate = 20
)

type match struct {
	world      *sightline.World
	replicator *sightline.Replicator
	entities   []sightline.Entity
	xs, zs     []float32
	heading    []float64
	presences  []presence
	// z's range, made once (x is written with the per-call form; the reader below reads both with
	// it, so the two forms must write the same bits).
	zRange *sightline.QuantizedRange
}

// A connected player: its client, and (standing in for its connection) its mirror.
type presence struct {
	client sightline.Client
	mirror *sightline.Mirror
	heard  *counts
}

type counts struct{ enters, updates, exits int }

func (c *counts) OnEnter(sightline.Entity, string, bool, []byte, uint32) { c.enters++ }
func (c *counts) OnUpdate(sightline.Entity, []byte, uint32)              { c.updates++ }
func (c *counts) OnExit(sightline.Entity, bool, string)                  { c.exits++ }

// arrivals is what a mirror heard of each entity's entry: whether it said created.
type arrivals map[sightline.Entity]bool

func (a arrivals) OnEnter(e sightline.Entity, _ string, created bool, _ []byte, _ uint32) {
	a[e] = created
}
func (arrivals) OnUpdate(sightline.Entity, []byte, uint32) {}
func (arrivals) OnExit(sightline.Entity, bool, string)     {}

type panicking struct{}

func (panicking) OnEnter(sightline.Entity, string, bool, []byte, uint32) { panic("listener failed") }
func (panicking) OnUpdate(sightline.Entity, []byte, uint32)              {}
func (panicking) OnExit(sightline.Entity, bool, string)                  {}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func (m *match) serialize(s *sightline.Stream, e sightline.Entity, part int) bool {
	x, z, err := m.world.Position(e)
	if err != nil {
		return false
	}
	if part == sightline.PartFull {
		if _, ok := s.Bits(uint32(e)&0xffff, 16); !ok {
			return false
		}
	}
	_, okx := s.Quantized(x, 0, size, 0.01)
	_, okz := s.QuantizedRange(z, m.zRange)
	return okx && okz
}

func matchInit() *match {
	def := sightline.DefaultWorldDef()
	def.EnterRadius, def.LeaveRadius, def.Threads = 25, 30, 2
	world, err := sightline.NewWorld(def)
	must(err)
	m := &match{world: world}
	m.zRange, err = sightline.NewQuantizedRange(0, size, 0.01)
	must(err)
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < walkers; i++ {
		x, z := float32(20+rng.Float64()*(size-40)), float32(20+rng.Float64()*(size-40))
		e, err := world.CreateEntity(x, z)
		must(err)
		m.entities, m.xs, m.zs = append(m.entities, e), append(m.xs, x), append(m.zs, z)
		m.heading = append(m.heading, rng.Float64()*2*math.Pi)
	}
	rdef := sightline.DefaultReplicatorDef()
	rdef.Delivery, rdef.TickSeconds = sightline.Unreliable, 1.0/tickRate
	m.replicator, err = sightline.NewReplicator(world, rdef, m.serialize)
	must(err)
	return m
}

func (m *match) matchJoin(viewer sightline.Entity) {
	client, err := m.world.CreateClient(viewer)
	must(err)
	heard := &counts{}
	mirror, err := sightline.NewMirror(sightline.Unreliable, heard)
	must(err)
	m.presences = append(m.presences, presence{client, mirror, heard})
}

func (m *match) matchLoop() {
	for i := range m.entities {
		m.xs[i] += float32(math.Cos(m.heading[i]))
		m.zs[i] += float32(math.Sin(m.heading[i]))
		if m.xs[i] < 10 || m.xs[i] > size-10 {
			m.heading[i] = math.Pi - m.heading[i]
		}
		if m.zs[i] < 10 || m.zs[i] > size-10 {
			m.heading[i] = -m.heading[i]
		}
	}
	must(m.world.SetPositions(m.entities, m.xs, m.zs))
	_, err := m.world.Tick()
	must(err)
	must(m.replicator.Send())
	for _, p := range m.presences {
		packets, err := m.replicator.Packets(p.client)
		must(err)
		for _, packet := range packets { // dispatcher.BroadcastMessage(opCode, packet, []presence{p}, ...)
			must(p.mirror.Receive(packet))
		}
		ack, err := p.mirror.Ack()
		must(err)
		must(m.replicator.ReceiveAck(p.client, ack))
	}
}

func main() {
	m := matchInit()
	for i := 0; i < players; i++ {
		m.matchJoin(m.entities[i])
	}
	for t := 0; t < ticks; t++ {
		m.matchLoop()
	}
	failed := false
	for i, p := range m.presences {
		held, err := p.mirror.Held()
		must(err)
		wanted, err := m.world.InterestSet(p.client)
		must(err)
		sort.Slice(held, func(a, b int) bool { return held[a] < held[b] })
		sort.Slice(wanted, func(a, b int) bool { return wanted[a] < wanted[b] })
		same := len(held) == len(wanted)
		for k := 0; same && k < len(held); k++ {
			same = held[k] == wanted[k]
		}
		pending, err := m.replicator.Pending(p.client)
		must(err)
		state, part, _, err := p.mirror.State(wanted[0])
		must(err)
		reader, err := sightline.NewReader(state)
		must(err)
		if part == sightline.PartFull {
			reader.Bits(0, 16)
		}
		x, okx := reader.Quantized(0, 0, size, 0.01)
		z, okz := reader.Quantized(0, 0, size, 0.01)
		readOk := okx && okz && reader.RestIsZero() && x >= 0 && z <= size
		reader.Close()
		// The same bytes read through the range made once.
		again, err := sightline.NewReader(state)
		must(err)
		if part == sightline.PartFull {
			again.Bits(0, 16)
		}
		x2, okx := again.QuantizedRange(0, m.zRange)
		z2, okz := again.QuantizedRange(0, m.zRange)
		readOk = readOk && okx && okz && x2 == x && z2 == z && again.RestIsZero()
		again.Close()
		ok := same && pending == 0 && p.mirror.Anomalies() == 0 && readOk && p.heard.enters >= len(wanted)
		mark := ""
		if !ok {
			mark, failed = "  MISMATCH", true
		}
		fmt.Printf("player %d: holds %d of %d in its interest set, %d enters, %d exits, %d updates, %d anomalies%s\n",
			i, len(held), len(wanted), p.heard.enters, p.heard.exits, p.heard.updates, p.mirror.Anomalies(), mark)
	}
	gone := m.entities[walkers-1]
	must(m.world.DestroyEntity(gone))
	if err, ok := m.world.SetPosition(gone, 1, 1).(*sightline.Error); !ok || err.Code != "stale_handle" {
		fmt.Println("a destroyed entity was not refused as stale")
		failed = true
	} else {
		fmt.Printf("refused as expected: %s\n", err.Code)
	}
	ack := make([]byte, 4)
	binary.LittleEndian.PutUint32(ack, 0xdeadbeef)
	if err := m.replicator.ReceiveAck(m.presences[0].client, ack); err == nil {
		fmt.Println("a malformed ack was accepted")
		failed = true
	}
	failed = !quantizedRanges() || failed
	failed = !withdrawn() || failed
	failed = !externalIDs() || failed
	// What the game's callbacks panic with comes back from the call that ran them.
	small, err := sightline.NewWorld(sightline.DefaultWorldDef())
	must(err)
	watched, err := small.CreateEntity(0, 0)
	must(err)
	_, err = small.CreateEntity(1, 0)
	must(err)
	watcher, err := small.CreateClient(watched)
	must(err)
	broken, err := sightline.NewReplicator(small, sightline.DefaultReplicatorDef(),
		func(*sightline.Stream, sightline.Entity, int) bool { panic("no state") })
	must(err)
	_, err = small.Tick()
	must(err)
	if err := broken.Send(); err == nil {
		fmt.Println("a serializer's panic was lost")
		failed = true
	} else {
		fmt.Printf("a serializer's panic comes back from Send(): %v\n", err)
	}
	broken.Close()
	shown, err := sightline.NewReplicator(small, sightline.DefaultReplicatorDef(),
		func(s *sightline.Stream, e sightline.Entity, part int) bool {
			x, z, err := small.Position(e)
			_, okx := s.Float(x)
			_, okz := s.Float(z)
			return err == nil && okx && okz
		})
	must(err)
	_, err = small.Tick()
	must(err)
	must(shown.Send())
	listening, err := sightline.NewMirror(sightline.Reliable, panicking{})
	must(err)
	packets, err := shown.Packets(watcher)
	must(err)
	var received error
	for _, packet := range packets {
		if err := listening.Receive(packet); err != nil {
			received = err
		}
	}
	if received == nil {
		fmt.Println("a listener's panic was lost")
		failed = true
	} else {
		fmt.Printf("a listener's panic comes back from Receive(): %v\n", received)
	}
	listening.Close()
	shown.Close()
	small.Close()
	// Recorded, then replayed: the replay keeps the same history of a walker that left.
	var recording []byte
	recorded, err := sightline.NewRecordingWorld(sightline.DefaultWorldDef(), func(chunk []byte) {
		recording = append(recording, chunk...)
	})
	must(err)
	eye, err := recorded.CreateEntity(0, 0)
	must(err)
	walker, err := recorded.CreateEntity(1, 0)
	must(err)
	viewer, err := recorded.CreateClient(eye)
	must(err)
	must(recorded.SetHistoryCapacity(viewer, 16))
	for t := 0; t < 6; t++ {
		must(recorded.SetPosition(walker, 1+0.5*float32(t), 0))
		_, err = recorded.Tick()
		must(err)
	}
	live, err := recorded.History(viewer, walker)
	must(err)
	recorded.Close()
	replay, err := sightline.OpenReplay(recording, 0)
	must(err)
	ticks := 0
	for !replay.Done() {
		_, err = replay.NextTick()
		must(err)
		ticks++
	}
	replayed, err := replay.World().History(viewer, walker)
	must(err)
	_, readOnly := replay.World().Tick()
	replay.Close()
	same := ticks == 6 && len(replayed) == len(live) && len(live) == 2 && readOnly != nil
	for k := 0; same && k < len(live); k++ {
		same = replayed[k] == live[k]
	}
	if !same || live[1].Reason != "left" {
		fmt.Printf("the replay differs: %v against %v (%d ticks)\n", replayed, live, ticks)
		failed = true
	} else {
		fmt.Printf("replay: %d ticks; the walker %s then %s at %.2f (%s)\n", ticks, live[0].Reason, live[1].Reason,
			live[1].Distance, live[1].Rule)
	}
	fmt.Printf("sightline %s\n", sightline.Version())
	for _, p := range m.presences {
		p.mirror.Close()
	}
	m.replicator.Close()
	m.world.Close()
	m.zRange.Close()
	if failed {
		os.Exit(1)
	}
}

// withdrawn checks WithdrawEntity: the World has no despawn list in this binding, so the client's
// history tells the reason of its despawn, which says "left" (handed elsewhere), not
// "destroyed"; the handle is then stale, and a client's viewer is refused.
func withdrawn() bool {
	ok := true
	world, err := sightline.NewWorld(sightline.DefaultWorldDef())
	must(err)
	defer world.Close()
	eye, err := world.CreateEntity(0, 0)
	must(err)
	keeper, err := world.CreateClient(eye)
	must(err)
	must(world.SetHistoryCapacity(keeper, 16))
	traveller, err := world.CreateEntity(1, 0)
	must(err)
	_, err = world.Tick()
	must(err)
	must(world.WithdrawEntity(traveller))
	_, err = world.Tick()
	must(err)
	history, err := world.History(keeper, traveller)
	must(err)
	if len(history) != 2 || !history[0].Spawned || history[1].Spawned || history[1].Entity != traveller ||
		history[1].Reason != "left" || history[1].Rule != "" {
		fmt.Printf("the withdrawn entity's history: %+v\n", history)
		ok = false
	} else {
		fmt.Printf("withdrawn: %s then %s\n", history[0].Reason, history[1].Reason)
	}
	for _, refused := range []struct {
		e    sightline.Entity
		code string
	}{{traveller, "stale_handle"}, {eye, "entity_is_viewer"}} {
		if err, is := world.WithdrawEntity(refused.e).(*sightline.Error); !is || err.Code != refused.code {
			fmt.Printf("withdrawing %d was not refused as %s\n", refused.e, refused.code)
			ok = false
		} else {
			fmt.Printf("withdrawing refused as expected: %s\n", err.Code)
		}
	}
	return ok
}

// externalIDs checks external ids under OrderKeyExternal: every entity needs one, unique among live
// entities (a missing one and a duplicate are refused, naming external_id); ExternalID reads it back
// and FindExternal finds the entity until it is withdrawn (then 0); one that existed elsewhere
// (Created false) spawns without created. The binding has no list of the World's spawns, so the
// client's mirror tells what each entry said.
func externalIDs() bool {
	ok := true
	def := sightline.DefaultWorldDef()
	def.EnterRadius, def.LeaveRadius, def.OrderKey = 10, 10, sightline.OrderKeyExternal
	world, err := sightline.NewWorld(def)
	must(err)
	defer world.Close()
	refused := func(what string, d sightline.EntityDef, naming string) {
		_, err := world.CreateEntityDef(d)
		if e, is := err.(*sightline.Error); !is || e.Code != "invalid_argument" || !strings.Contains(e.Message, naming) {
			fmt.Printf("%s was not refused naming %q: %v\n", what, naming, err)
			ok = false
		} else {
			fmt.Printf("%s refused as expected: %v\n", what, err)
		}
	}
	refused("an entity without an external id", sightline.DefaultEntityDef(), "external_id is 0")
	const farID = 1<<32 + 5 // beyond 32 bits
	eyeDef := sightline.DefaultEntityDef()
	eyeDef.ExternalID = farID
	eye, err := world.CreateEntityDef(eyeDef)
	must(err)
	refused("a duplicate external id", eyeDef, fmt.Sprintf("external_id %d is held", uint64(farID)))
	copyDef := sightline.DefaultEntityDef()
	copyDef.X, copyDef.ExternalID, copyDef.Created = 1, 7, false
	copied, err := world.CreateEntityDef(copyDef)
	must(err)
	freshDef := sightline.DefaultEntityDef()
	freshDef.X, freshDef.ExternalID = 2, 8
	fresh, err := world.CreateEntityDef(freshDef)
	must(err)
	eyeID, err := world.ExternalID(eye)
	must(err)
	copyID, err := world.ExternalID(copied)
	must(err)
	found := []sightline.Entity{world.FindExternal(farID), world.FindExternal(7), world.FindExternal(8),
		world.FindExternal(9), world.FindExternal(0)}
	if eyeID != farID || copyID != 7 || found[0] != eye || found[1] != copied || found[2] != fresh || found[3] != 0 ||
		found[4] != 0 {
		fmt.Printf("external ids %d and %d; found %v\n", eyeID, copyID, found)
		ok = false
	} else {
		fmt.Printf("external ids: %d, %d; found %v\n", eyeID, copyID, found)
	}
	client, err := world.CreateClient(eye)
	must(err)
	replicator, err := sightline.NewReplicator(world, sightline.DefaultReplicatorDef(),
		func(s *sightline.Stream, e sightline.Entity, part int) bool {
			_, written := s.Float(0)
			return written
		})
	must(err)
	defer replicator.Close()
	heard := arrivals{}
	mirror, err := sightline.NewMirror(sightline.Reliable, heard)
	must(err)
	defer mirror.Close()
	_, err = world.Tick()
	must(err)
	must(replicator.Send())
	packets, err := replicator.Packets(client)
	must(err)
	for _, packet := range packets {
		must(mirror.Receive(packet))
	}
	if copyCreated, in := heard[copied]; len(heard) != 2 || !in || copyCreated || !heard[fresh] {
		fmt.Printf("the mirror heard entries (entity: created) %v\n", heard)
		ok = false
	} else {
		fmt.Printf("entries: the copy created %v, the new one %v\n", heard[copied], heard[fresh])
	}
	must(world.WithdrawEntity(copied))
	gone := world.FindExternal(7)
	back, err := world.CreateEntityDef(copyDef) // handed back: its id is free again
	must(err)
	if gone != 0 || world.FindExternal(7) != back {
		fmt.Printf("after withdrawing, FindExternal(7) is %d, then %d (not %d)\n", gone, world.FindExternal(7), back)
		ok = false
	} else {
		fmt.Printf("after withdrawing: FindExternal(7) %d, then the entity handed back\n", gone)
	}
	return ok
}

// A range made once reads what the per-call form reads (255 steps: every 8 bits is a value), and is
// refused as that form fails, naming the argument.
func quantizedRanges() bool {
	ok := true
	eighths, err := sightline.NewQuantizedRange(-8, 7.9375, 1.0/16)
	must(err)
	payload := []byte{0x5a, 0xc3, 0x17, 0xe8}
	perCall, err := sightline.NewReader(payload)
	must(err)
	made, err := sightline.NewReader(payload)
	must(err)
	seen := map[float32]bool{}
	for range payload {
		a, okA := perCall.Quantized(0, -8, 7.9375, 1.0/16)
		b, okB := made.QuantizedRange(0, eighths)
		if !okA || !okB || a != b {
			fmt.Printf("the range made once reads %v (%v), the per-call form %v (%v)\n", b, okB, a, okA)
			ok = false
		}
		seen[b] = true
	}
	ok = ok && len(seen) == len(payload)
	perCall.Close()
	made.Close()
	eighths.Close()
	refusals := []struct {
		min, max, resolution float32
		argument             string
	}{{1, 1, 0.5, "max"}, {0, 1, 0, "resolution"}, {0, 1, float32(math.Inf(1)), "resolution"}}
	for _, bad := range refusals {
		r, err := sightline.NewQuantizedRange(bad.min, bad.max, bad.resolution)
		e, isError := err.(*sightline.Error)
		if r != nil || !isError || e.Code != "invalid_argument" || !strings.Contains(e.Message, bad.argument) {
			fmt.Printf("NewQuantizedRange(%v, %v, %v) was not refused naming %s: %v\n", bad.min, bad.max, bad.resolution,
				bad.argument, err)
			ok = false
		} else {
			fmt.Printf("NewQuantizedRange(%v, %v, %v) refused: %v\n", bad.min, bad.max, bad.resolution, err)
		}
	}
	return ok
}
