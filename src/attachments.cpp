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
  for (std::uint32_t c = w.first_child[e]; c != WorldImpl::kNone; c = w.next_sibling[c]) {
    height = std::max(height, 1 + subtree_height(w, c));
  }
  return height;
}

}  // namespace

void WorldImpl::set_depths(std::uint32_t e, std::uint8_t d) {
  depth[e] = d;
  for (std::uint32_t c = first_child[e]; c != kNone; c = next_sibling[c]) {
    set_depths(c, static_cast<std::uint8_t>(d + 1));
  }
}

void WorldImpl::detach(std::uint32_t child) {
  const std::uint32_t p = parent[child];
  if (p == kNone) return;
  std::uint32_t* link = &first_child[p];
  while (*link != child) link = &next_sibling[*link];
  *link = next_sibling[child];
  next_sibling[child] = kNone;
  parent[child] = kNone;
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
  for (std::uint32_t a = p; a != WorldImpl::kNone; a = w.parent[a]) {
    if (a == c) return {ErrorCode::invalid_argument, what + ": the parent is attached to the child"};
  }
  const std::uint32_t deepest = w.depth[p] + 1u + subtree_height(w, c);
  if (deepest > kMaxAttachmentDepth) {
    return {ErrorCode::invalid_argument, what + ": the tree would be " + std::to_string(deepest) +
                                             " deep, beyond kMaxAttachmentDepth (" +
                                             std::to_string(kMaxAttachmentDepth) + ")"};
  }
  if (w.key[c] != 0) {
    return {ErrorCode::invalid_argument,
            what + ": the child has an interest key; keys belong to the root, set it back to Global first"};
  }
  if (w.presenter[c]) {
    return {ErrorCode::invalid_argument, what + ": the child is a presenter; presenting belongs to the root"};
  }
  if (w.space[c] != w.space[p]) {
    return {ErrorCode::invalid_argument, what + ": they are in different spaces"};
  }
  if (w.parent[c] == p) return {};
  w.detach(c);
  w.parent[c] = p;
  w.next_sibling[c] = w.first_child[p];
  w.first_child[p] = c;
  ++w.attached_entities;
  w.set_depths(c, static_cast<std::uint8_t>(w.depth[p] + 1));
  w.refresh_binning(c);
  w.refresh_traits(p);
  return {};
}

Status World::detach(EntityId child) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(child); !s) return s;
  w.detach(child.index);
  return {};
}

Result<EntityId> World::parent(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  const std::uint32_t p = w.parent[entity.index];
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
