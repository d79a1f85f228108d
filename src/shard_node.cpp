// A shard: authority and copies decided from the region map in begin_tick, frames applied in a
// fixed order in tick. One copy per external id, owned or not; an entity changes hands by a flag
// and an epoch, never by leaving the World.
#include "sightline/shard_node.h"

#include <algorithm>
#include <string>

namespace sightline {

namespace {

bool contains(const std::vector<ShardId>& sorted, ShardId s) {
  return std::binary_search(sorted.begin(), sorted.end(), s);
}

std::string named(std::uint64_t id) { return "external id " + std::to_string(id); }

}  // namespace

Result<ShardNode> ShardNode::create(const ShardNodeDef& def, World& world, RegionMap map) {
  if (world.order_key() != OrderKey::external) {
    return Status{ErrorCode::invalid_argument,
                  "ShardNode: the World orders by slot: a shard's World needs WorldDef::order_key external"};
  }
  if (world.tick_count() != def.first_tick) {
    return Status{ErrorCode::invalid_argument,
                  "ShardNodeDef::first_tick is " + std::to_string(def.first_tick) +
                      ", the World's next tick is " + std::to_string(world.tick_count()) +
                      ": give both the same first tick"};
  }
  if (!std::binary_search(map.shards().begin(), map.shards().end(), def.self)) {
    return Status{ErrorCode::invalid_argument, "ShardNodeDef::self is " + std::to_string(def.self) +
                                                   ": the region map names no such shard"};
  }
  return ShardNode(def, world, std::move(map));
}

ShardNode::ShardNode(const ShardNodeDef& def, World& world, RegionMap map)
    : def_(def), world_(&world), map_(std::move(map)), tick_(def.first_tick) {
  for (const ShardId s : map_.shards()) {
    if (s != def_.self) peers_.push_back(s);
  }
  frames_.resize(peers_.size());
  next_seq_.assign(peers_.size(), 0);
}

ShardFrame& ShardNode::frame_to(ShardId peer) {
  const auto at = std::lower_bound(peers_.begin(), peers_.end(), peer);
  return frames_[static_cast<std::size_t>(at - peers_.begin())];
}

Status ShardNode::between_ticks(const char* call) const {
  if (!begun_) return {};
  return {ErrorCode::invalid_argument,
          std::string("ShardNode::") + call + ": tick " + std::to_string(tick_) +
              " has begun (its frames are written): call it before begin_tick() or after tick()"};
}

ShardNode::Copy* ShardNode::owned_copy(std::uint64_t id, const char* call, Status& refused) {
  if (Status s = between_ticks(call); !s) {
    refused = s;
    return nullptr;
  }
  const auto it = copies_.find(id);
  if (it == copies_.end() || !it->second.owned) {
    refused = {ErrorCode::invalid_argument,
               std::string("ShardNode::") + call + ": " + named(id) +
                   (it == copies_.end() ? " is not here"
                                        : " is a copy owned by shard " + std::to_string(it->second.owner))};
    return nullptr;
  }
  return &it->second;
}

// --- The game's inputs ----------------------------------------------------------------------

Result<EntityId> ShardNode::create_entity(const EntityDef& def) {
  if (Status s = between_ticks("create_entity"); !s) return s;
  if (copies_.contains(def.external_id)) {
    return Status{ErrorCode::invalid_argument,
                  "ShardNode::create_entity: " + named(def.external_id) + " is here"};
  }
  if (!def.space.is_null() && def.space != world_->default_space()) {
    return Status{
        ErrorCode::invalid_argument,
        "ShardNode::create_entity: EntityDef::space is not the default space (spaces are not carried yet)"};
  }
  Result<EntityId> e = world_->create_entity(def);
  if (!e) return e;
  copies_[def.external_id] = Copy{*e, true, def_.self, 0, {}};
  if (def.created) created_.push_back(def.external_id);
  return e;
}

Status ShardNode::destroy_entity(std::uint64_t id) {
  Status refused;
  Copy* copy = owned_copy(id, "destroy_entity", refused);
  if (copy == nullptr) return refused;
  if (Status s = world_->destroy_entity(copy->local); !s) return s;
  destroyed_.push_back(id);
  copies_.erase(id);
  std::erase(created_, id);
  std::erase(teleported_, id);
  return {};
}

Status ShardNode::set_position(std::uint64_t id, float x, float z) {
  Status refused;
  Copy* copy = owned_copy(id, "set_position", refused);
  return copy == nullptr ? refused : world_->set_position(copy->local, x, z);
}

Status ShardNode::teleport(std::uint64_t id, float x, float z) {
  Status refused;
  Copy* copy = owned_copy(id, "teleport", refused);
  if (copy == nullptr) return refused;
  if (Status s = world_->teleport(copy->local, x, z); !s) return s;
  teleported_.push_back(id);
  return {};
}

Status ShardNode::destroy_client(std::uint64_t client) {
  if (Status s = between_ticks("destroy_client"); !s) return s;
  const auto it = clients_.find(client);
  if (it == clients_.end()) {
    return {ErrorCode::invalid_argument,
            "ShardNode::destroy_client: client " + std::to_string(client) + " is not here"};
  }
  if (Status s = world_->destroy_client(it->second); !s) return s;
  clients_.erase(it);
  return {};
}

Result<ClientId> ShardNode::create_client(std::uint64_t client, std::uint64_t viewer) {
  if (Status s = between_ticks("create_client"); !s) return s;
  if (client == 0 || clients_.contains(client)) {
    return Status{ErrorCode::invalid_argument, "ShardNode::create_client: client " + std::to_string(client) +
                                                   (client == 0 ? " is 0" : " is here")};
  }
  Status refused;
  Copy* copy = owned_copy(viewer, "create_client", refused);
  if (copy == nullptr) return refused;
  Result<ClientId> c = world_->create_client(copy->local);
  if (c) clients_[client] = *c;
  return c;
}

Status ShardNode::set_always_relevant(std::uint64_t id, bool always_relevant) {
  Status refused;
  Copy* copy = owned_copy(id, "set_always_relevant", refused);
  return copy == nullptr ? refused : world_->set_always_relevant(copy->local, always_relevant);
}

Status ShardNode::set_presenter(std::uint64_t id, bool presenter) {
  Status refused;
  Copy* copy = owned_copy(id, "set_presenter", refused);
  return copy == nullptr ? refused : world_->set_presenter(copy->local, presenter);
}

namespace {

Status set_key(World& world, EntityId e, InterestKey key) {
  switch (key.type) {
    case InterestKeyType::global: return world.set_global_interest_key(e);
    case InterestKeyType::area: return world.set_area_interest_key(e, key.value);
    case InterestKeyType::user: return world.set_user_interest_key(e, key.value);
  }
  return {ErrorCode::invalid_argument,
          "interest key type " + std::to_string(static_cast<unsigned>(key.type))};
}

}  // namespace

Status ShardNode::set_interest_key(std::uint64_t id, InterestKey key) {
  Status refused;
  Copy* copy = owned_copy(id, "set_interest_key", refused);
  return copy == nullptr ? refused : set_key(*world_, copy->local, key);
}

Status ShardNode::set_owner(std::uint64_t id, std::uint64_t client) {
  Status refused;
  Copy* copy = owned_copy(id, "set_owner", refused);
  if (copy == nullptr) return refused;
  const ClientId local = this->client(client);
  if (Status s = local.is_null() ? world_->clear_owner(copy->local) : world_->set_owner(copy->local, local);
      !s) {
    return s;
  }
  copy->owner_client = client;
  return {};
}

Result<EventClassId> ShardNode::create_event_class(const EventClassDef& def) {
  Result<EventClassId> c = world_->create_event_class(def);
  if (c) classes_.push_back(*c);
  return c;
}

Result<std::uint32_t> ShardNode::emit_event(const EventDef& def) {
  if (Status s = between_ticks("emit_event"); !s) return s;
  if (!def.space.is_null() && def.space != world_->default_space()) {
    return Status{ErrorCode::invalid_argument,
                  "ShardNode::emit_event: an event outside the default space (spaces are not carried yet)"};
  }
  const auto number = std::find(classes_.begin(), classes_.end(), def.event_class);
  if (number == classes_.end()) {
    return Status{ErrorCode::invalid_argument,
                  "ShardNode::emit_event: a class not made with ShardNode::create_event_class"};
  }
  Result<std::uint32_t> index = world_->emit_event(def);
  if (!index) return index;
  RemoteEvent event;
  event.event_class = static_cast<std::uint32_t>(number - classes_.begin());
  event.x = def.x;
  event.z = def.z;
  event.subject = def.subject.is_null() ? 0 : *world_->external_id(def.subject);
  event.user_data = def.user_data;
  event.emit_order = *index;
  events_out_.push_back(event);
  return index;
}

// --- begin_tick -------------------------------------------------------------------------------

// Held by some client of any shard whatever the distance: copied to every shard.
bool ShardNode::everywhere(const Copy& copy) const {
  return copy.owner_client != 0 || *world_->always_relevant(copy.local) || *world_->presenter(copy.local) ||
         world_->interest_key(copy.local)->type != InterestKeyType::global;
}

EntityImage ShardNode::image_of(std::uint64_t id, const Copy& copy) const {
  EntityImage image;
  image.id = id;
  image.owner = copy.owner;
  image.owner_epoch = copy.epoch;
  const Position p = *world_->position(copy.local);
  const Velocity v = *world_->velocity(copy.local);
  image.x = p.x;
  image.z = p.z;
  image.vx = v.x;
  image.vz = v.z;
  image.bound_radius = *world_->bound_radius(copy.local);
  image.radius_scale = *world_->radius_scale(copy.local);
  image.always_relevant = *world_->always_relevant(copy.local);
  image.presenter = *world_->presenter(copy.local);
  image.key = *world_->interest_key(copy.local);
  image.owner_client = copy.owner_client;
  image.teleported = std::binary_search(teleported_.begin(), teleported_.end(), id);
  image.created = std::binary_search(created_.begin(), created_.end(), id);
  return image;
}

// Authority over `id` passes to `to`: its image and the handover, then the clients viewing from
// it; this shard keeps a copy while it lies in the new owner's audience.
void ShardNode::hand_over(std::uint64_t id, Copy& copy, ShardId to, bool& withdraw) {
  ++copy.epoch;
  copy.owner = to;
  copy.owned = false;
  const EntityImage image = image_of(id, copy);
  ShardFrame& frame = frame_to(to);
  frame.add(image);
  frame.add(EntityHandover{id, to, copy.epoch});
  ++stats_.images_sent;
  ++stats_.entity_handovers;
  for (auto it = clients_.begin(); it != clients_.end();) {
    const Result<EntityId> viewer = world_->viewer(it->second);
    if (!viewer || *viewer != copy.local) {
      ++it;
      continue;
    }
    ClientHandover handover;
    handover.client = it->first;
    handover.to = to;
    handover.world = *world_->export_client(it->second);
    // Its members go along, for the receiver to use where it holds no copy (the old neighbourhood
    // after a far teleport, which the client must see leave as one process would show it).
    for (const ClientImage::Member& m : handover.world.members) {
      const auto member = copies_.find(m.entity);
      if (member == copies_.end() || member->second.owner == to) continue;
      EntityImage carried = image_of(m.entity, member->second);
      carried.carried = true;
      carried.teleported = false;
      carried.created = false;
      frame.add(carried);
    }
    frame.add(handover);
    ++stats_.client_handovers;
    (void)world_->destroy_client(it->second);
    it = clients_.erase(it);
  }
  // The new owner's audience gets this tick's image from here (naming the new owner); the shards
  // that held a copy from here and are not in it let theirs go.
  if (everywhere(copy)) {
    scratch_.assign(map_.shards().begin(), map_.shards().end());
    std::erase(scratch_, to);
  } else {
    map_.audience(image.x, image.z, image.bound_radius, to, scratch_);
  }
  for (const ShardId peer : scratch_) {
    if (peer == def_.self) continue;
    frame_to(peer).add(image);
    ++stats_.images_sent;
  }
  for (const ShardId peer : copy.audience) {
    if (peer == to || contains(scratch_, peer)) continue;
    frame_to(peer).add(GhostOut{id, DespawnReason::left});
    ++stats_.ghost_outs_sent;
  }
  copy.audience.clear();
  withdraw = !contains(scratch_, def_.self);
}

Status ShardNode::begin_tick() {
  if (begun_)
    return {ErrorCode::invalid_argument,
            "ShardNode::begin_tick: called twice for tick " + std::to_string(tick_)};
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    frames_[i].clear();
    frames_[i].header = {ShardFrameKind::tick, def_.self, peers_[i], tick_, next_seq_[i]++, map_.def().epoch};
  }
  // A death goes to every shard, not only those holding a copy: one about to adopt a client
  // that held the entity must show it dying too.
  for (const std::uint64_t id : destroyed_) {
    for (const ShardId peer : peers_) {
      frame_to(peer).add(GhostOut{id, DespawnReason::destroyed});
      ++stats_.ghost_outs_sent;
    }
  }
  destroyed_.clear();
  std::sort(teleported_.begin(), teleported_.end());
  std::sort(created_.begin(), created_.end());
  std::vector<std::uint64_t> withdrawn;
  for (auto& [id, copy] : copies_) {
    if (!copy.owned) continue;
    const Position p = *world_->position(copy.local);
    const bool jumped = std::binary_search(teleported_.begin(), teleported_.end(), id);
    const ShardId owner = jumped ? map_.owner_at(p.x, p.z) : map_.authority(def_.self, p.x, p.z);
    if (owner != def_.self) {
      bool withdraw = false;
      hand_over(id, copy, owner, withdraw);
      if (withdraw) withdrawn.push_back(id);
      continue;
    }
    const EntityImage image = image_of(id, copy);
    if (everywhere(copy)) {
      scratch_ = peers_;
    } else {
      map_.audience(p.x, p.z, image.bound_radius, def_.self, scratch_);
    }
    for (const ShardId peer : scratch_) {
      frame_to(peer).add(image);
      ++stats_.images_sent;
    }
    for (const ShardId peer : copy.audience) {
      if (contains(scratch_, peer)) continue;
      frame_to(peer).add(GhostOut{id, DespawnReason::left});
      ++stats_.ghost_outs_sent;
    }
    copy.audience = scratch_;
  }
  for (const std::uint64_t id : withdrawn) withdraw_copy(id, false);
  // Events, to every shard whose clients may stand within the class's radius of them.
  for (const RemoteEvent& event : events_out_) {
    const float radius = world_->event_class(classes_[event.event_class])->radius;
    map_.audience(event.x, event.z, radius, def_.self, scratch_);
    for (const ShardId peer : scratch_) {
      frame_to(peer).add(event);
      ++stats_.events_sent;
    }
  }
  events_out_.clear();
  teleported_.clear();
  created_.clear();
  outgoing_.clear();
  while (!sent_.empty() && sent_.begin()->first.first + kResendTicks <= tick_) sent_.erase(sent_.begin());
  for (std::size_t i = 0; i < peers_.size(); ++i) {
    std::vector<std::uint8_t>& bytes = sent_[std::make_pair(tick_, peers_[i])];
    if (Status s = encode_shard_frame(frames_[i], bytes); !s) return s;
    outgoing_.push_back({peers_[i], bytes});
  }
  begun_ = true;
  return {};
}

// --- Frames in ----------------------------------------------------------------------------------

Status ShardNode::receive(std::span<const std::uint8_t> bytes) {
  ShardFrame frame;
  if (Status s = decode_shard_frame(bytes, frame); !s) return s;
  const ShardFrameHeader& h = frame.header;
  if (h.kind != ShardFrameKind::tick) {
    return {ErrorCode::invalid_argument, "ShardNode::receive: a keyframe from shard " +
                                             std::to_string(h.from) + " (keyframes are not taken yet)"};
  }
  if (h.region_epoch != map_.def().epoch) {
    return {ErrorCode::invalid_argument,
            "ShardNode::receive: a frame of region epoch " + std::to_string(h.region_epoch) + " from shard " +
                std::to_string(h.from) + ", this shard's map is epoch " + std::to_string(map_.def().epoch)};
  }
  if (h.to != def_.self) {
    return {ErrorCode::invalid_argument, "ShardNode::receive: a frame for shard " + std::to_string(h.to) +
                                             ", this is shard " + std::to_string(def_.self)};
  }
  if (!std::binary_search(peers_.begin(), peers_.end(), h.from)) {
    return {ErrorCode::invalid_argument, "ShardNode::receive: a frame from shard " + std::to_string(h.from) +
                                             ", which the region map does not name"};
  }
  if (h.tick < tick_) {
    return {ErrorCode::invalid_argument, "ShardNode::receive: a frame of tick " + std::to_string(h.tick) +
                                             " from shard " + std::to_string(h.from) +
                                             ", already run (next " + std::to_string(tick_) + ")"};
  }
  if (h.tick >= tick_ + kResendTicks) {
    return {ErrorCode::invalid_argument, "ShardNode::receive: a frame of tick " + std::to_string(h.tick) +
                                             " from shard " + std::to_string(h.from) + ", more than " +
                                             std::to_string(kResendTicks) + " ticks ahead of this shard's " +
                                             std::to_string(tick_)};
  }
  const auto key = std::make_pair(h.tick, h.from);
  if (inbox_.contains(key)) {
    ++stats_.duplicates_dropped;
    return {};
  }
  // Kept decoded, its spans pointing into its own copy of the bytes (a map node never moves).
  Inbound& in = inbox_[key];
  in.bytes.assign(bytes.begin(), bytes.end());
  (void)decode_shard_frame(in.bytes, in.frame);
  ++stats_.frames_received;
  return {};
}

std::vector<ShardId> ShardNode::missing() const {
  std::vector<ShardId> out;
  for (const ShardId peer : peers_) {
    if (!inbox_.contains(std::make_pair(tick_, peer))) out.push_back(peer);
  }
  return out;
}

std::span<const std::uint8_t> ShardNode::resend(ShardId peer, std::uint64_t tick) {
  const auto it = sent_.find(std::make_pair(tick, peer));
  if (it == sent_.end()) return {};
  ++stats_.resends;
  return it->second;
}

bool ShardNode::ready() const {
  return std::all_of(peers_.begin(), peers_.end(),
                     [&](ShardId peer) { return inbox_.contains(std::make_pair(tick_, peer)); });
}

void ShardNode::withdraw_copy(std::uint64_t id, bool destroyed) {
  const auto it = copies_.find(id);
  if (it == copies_.end() || it->second.owned) return;
  const Result<std::uint32_t> holders = world_->holder_count(it->second.local);
  if (!destroyed && holders && *holders != 0) ++stats_.withdrawn_while_held;
  const Status removed =
      destroyed ? world_->destroy_entity(it->second.local) : world_->withdraw_entity(it->second.local);
  if (!removed) {
    ++stats_.records_refused;  // a client here views from the copy: it stays
    return;
  }
  copies_.erase(it);
}

// A new copy from an image, or null (counted) when the World refuses it.
ShardNode::Copy* ShardNode::create_copy(const EntityImage& image, bool created) {
  EntityDef def;
  def.x = image.x;
  def.z = image.z;
  def.bound_radius = image.bound_radius;
  def.radius_scale = image.radius_scale;
  def.external_id = image.id;
  def.created = created;
  const Result<EntityId> e = world_->create_entity(def);
  if (!e) {
    ++stats_.records_refused;
    return nullptr;
  }
  return &copies_.emplace(image.id, Copy{*e, false, image.owner, image.owner_epoch, {}}).first->second;
}

void ShardNode::apply(const EntityImage& image) {
  const auto it = copies_.find(image.id);
  Copy* copy = nullptr;
  if (image.carried) {
    // Only where no copy came from its owner: after every owner's images (the second pass).
    if (it != copies_.end() || destroyed_now(image.id)) return;
    if ((copy = create_copy(image, false)) == nullptr) return;
    carried_.push_back(image.id);
  } else if (it == copies_.end()) {
    if ((copy = create_copy(image, image.created)) == nullptr) return;
    if (image.teleported) (void)world_->teleport(copy->local, image.x, image.z);
  } else {
    copy = &it->second;
    if (copy->owned || image.owner_epoch < copy->epoch) return;  // an older owner's word
    copy->owner = image.owner;
    copy->epoch = image.owner_epoch;
    (void)(image.teleported ? world_->teleport(copy->local, image.x, image.z)
                            : world_->set_position(copy->local, image.x, image.z));
    (void)world_->set_bound_radius(copy->local, image.bound_radius);
    (void)world_->set_radius_scale(copy->local, image.radius_scale);
  }
  apply_traits(*copy, image);
  (void)world_->set_velocity(copy->local, image.vx, image.vz);
}

// The flags, key and owner of an image, on a copy.
void ShardNode::apply_traits(Copy& copy, const EntityImage& image) {
  const EntityId e = copy.local;
  if (*world_->always_relevant(e) != image.always_relevant)
    (void)world_->set_always_relevant(e, image.always_relevant);
  if (*world_->presenter(e) != image.presenter) (void)world_->set_presenter(e, image.presenter);
  if (*world_->interest_key(e) != image.key) (void)set_key(*world_, e, image.key);
  copy.owner_client = image.owner_client;
  const ClientId owner = client(image.owner_client);
  if (*world_->owner(e) != owner)
    (void)(owner.is_null() ? world_->clear_owner(e) : world_->set_owner(e, owner));
}

void ShardNode::apply(const EntityHandover& handover) {
  const auto it = copies_.find(handover.id);
  if (handover.to != def_.self || it == copies_.end() || handover.epoch < it->second.epoch) return;
  Copy& copy = it->second;
  copy.owned = true;
  copy.owner = def_.self;
  copy.epoch = handover.epoch;
  // Who holds a copy now: this shard's audience, which the old owner sent this tick's image
  // (the old owner among them if it kept one).
  if (everywhere(copy)) {
    copy.audience = peers_;
    return;
  }
  const Position p = *world_->position(copy.local);
  map_.audience(p.x, p.z, *world_->bound_radius(copy.local), def_.self, copy.audience);
}

void ShardNode::apply(const GhostOut& out) {
  const bool destroyed = out.reason == DespawnReason::destroyed;
  if (destroyed) destroyed_now_.push_back(out.id);
  withdraw_copy(out.id, destroyed);
}

bool ShardNode::destroyed_now(std::uint64_t id) const {
  return std::find(destroyed_now_.begin(), destroyed_now_.end(), id) != destroyed_now_.end();
}

void ShardNode::apply(const ClientHandover& handover) {
  if (handover.to != def_.self || clients_.contains(handover.client)) return;
  ClientImage image = handover.world;
  // A member destroyed at this tick stands in for a moment, so that the client sees it die.
  std::vector<EntityId> dying;
  const EntityId viewer = world_->find_external(image.viewer);
  std::erase_if(image.members, [&](const ClientImage::Member& m) {
    if (!world_->find_external(m.entity).is_null()) return false;
    if (destroyed_now(m.entity) && !viewer.is_null()) {
      EntityDef def;
      const Position at = *world_->position(viewer);
      def.x = at.x;
      def.z = at.z;
      def.external_id = m.entity;
      def.created = false;
      if (const Result<EntityId> e = world_->create_entity(def)) {
        dying.push_back(*e);
        return false;
      }
    }
    ++stats_.members_missing;
    return true;
  });
  const Result<ClientId> c = world_->adopt_client(image);
  if (c) {
    clients_[handover.client] = *c;
  } else {
    ++stats_.records_refused;
  }
  for (const EntityId e : dying) (void)world_->destroy_entity(e);
}

// Pass 0: everything but what comes with a client handover; pass 1: carried members, then the
// clients, so that an owner's image always wins over a carried one whatever the shard order.
void ShardNode::apply(const RemoteEvent& event) {
  if (event.event_class >= classes_.size()) {
    ++stats_.records_refused;
    return;
  }
  EventDef def;
  def.event_class = classes_[event.event_class];
  def.x = event.x;
  def.z = event.z;
  def.user_data = event.user_data;
  if (event.subject != 0) {
    def.subject = world_->find_external(event.subject);
    // No copy here: no client here holds the subject, so the class's policy holds for all.
    if (def.subject.is_null() && world_->event_class(def.event_class)->when_absent == AbsentSubject::drop)
      return;
  }
  if (world_->emit_event(def)) {
    ++stats_.events_received;
  } else {
    ++stats_.records_refused;
  }
}

void ShardNode::apply(const ShardFrame& frame, int pass) {
  for (const ShardFrame::Entry e : frame.order) {
    switch (e.type) {
      case ShardRecordType::entity_image:
        if (frame.images[e.index].carried == (pass == 1)) apply(frame.images[e.index]);
        break;
      case ShardRecordType::entity_handover:
        if (pass == 0) apply(frame.entity_handovers[e.index]);
        break;
      case ShardRecordType::ghost_out:
        if (pass == 0) apply(frame.ghost_outs[e.index]);
        break;
      case ShardRecordType::client_handover:
        if (pass == 1) apply(frame.client_handovers[e.index]);
        break;
      case ShardRecordType::remote_event:
        if (pass == 1) apply(frame.events[e.index]);
        break;
      case ShardRecordType::holder_count: break;  // not carried yet (shard_node.h)
    }
  }
}

Result<TickStats> ShardNode::tick() {
  if (!begun_) return Status{ErrorCode::invalid_argument, "ShardNode::tick: begin_tick() first"};
  if (!ready()) {
    return Status{ErrorCode::invalid_argument,
                  "ShardNode::tick: the frames of tick " + std::to_string(tick_) + " have not all arrived"};
  }
  for (const int pass : {0, 1}) {
    for (const ShardId peer : peers_) apply(inbox_.at(std::make_pair(tick_, peer)).frame, pass);
  }
  for (const ShardId peer : peers_) inbox_.erase(std::make_pair(tick_, peer));
  const TickStats stats = world_->tick();
  // Carried copies served their tick; one a client still holds stays until none does (the band
  // was too narrow: no owner updates it).
  std::erase_if(carried_, [&](std::uint64_t id) {
    const auto it = copies_.find(id);
    if (it == copies_.end() || it->second.owned) return true;
    const Result<std::uint32_t> holders = world_->holder_count(it->second.local);
    if (holders && *holders != 0) {
      ++stats_.carried_held;
      return false;
    }
    if (world_->withdraw_entity(it->second.local)) copies_.erase(it);
    return true;
  });
  destroyed_now_.clear();
  begun_ = false;
  ++tick_;
  stats_.owned = 0;
  stats_.copies = 0;
  for (const auto& [id, copy] : copies_) ++(copy.owned ? stats_.owned : stats_.copies);
  return stats;
}

bool ShardNode::owns(std::uint64_t id) const {
  const auto it = copies_.find(id);
  return it != copies_.end() && it->second.owned;
}

ClientId ShardNode::client(std::uint64_t client) const {
  const auto it = clients_.find(client);
  return it == clients_.end() ? ClientId{} : it->second;
}

}  // namespace sightline
