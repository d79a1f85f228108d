// Attachments: trees of entities that are held as a whole, decided by their root.
#include <algorithm>
#include <string>

#include "format_value.h"
#include "world_impl.h"

namespace sightline {

namespace {

// Depth of the deepest entity below e, counting e's children as 1.
std::uint32_t subtree_height(const WorldImpl& w, std::uint32_t e) {
  std::uint32_t height = 0;
  for (std::uint32_t c = w.cold[e].first_child; c != WorldImpl::kNone; c = w.cold[c].next_sibling) {
    height = std::max(height, 1 + subtree_height(w, c));
  }
  return height;
}

}  // namespace

void WorldImpl::set_depths(std::uint32_t e, std::uint8_t d) {
  cold[e].depth = d;
  for (std::uint32_t c = cold[e].first_child; c != kNone; c = cold[c].next_sibling) {
    set_depths(c, static_cast<std::uint8_t>(d + 1));
  }
}

void WorldImpl::detach(std::uint32_t child) {
  const std::uint32_t p = cold[child].parent;
  if (p == kNone) return;
  std::uint32_t* link = &cold[p].first_child;
  while (*link != child) link = &cold[*link].next_sibling;
  *link = cold[child].next_sibling;
  cold[child].next_sibling = kNone;
  cold[child].parent = kNone;
  --attached_entities;
  set_depths(child, 0);
  refresh_binning(child);
  refresh_traits(p);
}

Status World::attach(EntityId child, EntityId parent) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(child); !s) return s;
  if (Status s = w.check(parent); !s) return s;
  const std::uint32_t c = child.index;
  const std::uint32_t p = parent.index;
  const std::string what = "cannot attach " + describe(child) + " to " + describe(parent);
  if (c == p) return {ErrorCode::invalid_argument, what + ": an entity cannot be attached to itself"};
  for (std::uint32_t a = p; a != WorldImpl::kNone; a = w.cold[a].parent) {
    if (a == c) return {ErrorCode::invalid_argument, what + ": the parent is attached to the child"};
  }
  const std::uint32_t deepest = w.cold[p].depth + 1u + subtree_height(w, c);
  if (deepest > kMaxAttachmentDepth) {
    return {ErrorCode::invalid_argument, what + ": the tree would be " + std::to_string(deepest) +
                                             " deep, beyond kMaxAttachmentDepth (" +
                                             std::to_string(kMaxAttachmentDepth) + ")"};
  }
  if (w.cold[c].key != 0) {
    return {ErrorCode::invalid_argument,
            what + ": the child has an interest key; keys belong to the root, set it back to Global first"};
  }
  if (w.cold[c].presenter) {
    return {ErrorCode::invalid_argument, what + ": the child is a presenter; presenting belongs to the root"};
  }
  if (w.cold[c].space != w.cold[p].space) {
    return {ErrorCode::invalid_argument, what + ": they are in different spaces"};
  }
  if (w.cold[c].parent == p) return {};
  w.detach(c);
  w.cold[c].parent = p;
  w.cold[c].next_sibling = w.cold[p].first_child;
  w.cold[p].first_child = c;
  ++w.attached_entities;
  w.set_depths(c, static_cast<std::uint8_t>(w.cold[p].depth + 1));
  w.refresh_binning(c);
  w.refresh_traits(p);
  w.recorder.record(recording::Op::attach, child, parent);
  return {};
}

Status World::detach(EntityId child) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(child); !s) return s;
  w.detach(child.index);
  w.recorder.record(recording::Op::detach, child);
  return {};
}

Result<EntityId> World::parent(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  const std::uint32_t p = w.cold[entity.index].parent;
  if (p == WorldImpl::kNone) return EntityId{};
  return EntityId{p, w.generation[p]};
}

Result<EntityId> World::root(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  const std::uint32_t r = w.root_of(entity.index);
  return EntityId{r, w.generation[r]};
}

}  // namespace sightline
