#include "recorder.h"

#include <algorithm>
#include <cstring>

namespace sightline {

namespace {
constexpr std::size_t kBufferBytes = std::size_t{64} << 10;
}  // namespace

void Recorder::start(const RecordingSink& sink, const WorldDef& def) {
  if (sink.function == nullptr) return;
  sink_ = sink;
  buffer_.resize(kBufferBytes);
  std::array<std::uint8_t, recording::kMagic.size()> magic = recording::kMagic;
  (void)bytes(magic.data(), magic.size());
  std::uint32_t version = recording::kVersion;
  WorldDef d = def;
  (void)recording::field(*this, version);
  (void)recording::field(*this, d);
  flush();
}

std::uint32_t Recorder::version() noexcept { return recording::kVersion; }

bool Recorder::bytes(std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    if (used_ == buffer_.size()) flush();
    const std::size_t take = std::min(n, buffer_.size() - used_);
    std::memcpy(buffer_.data() + used_, p, take);
    used_ += take;
    p += take;
    n -= take;
  }
  return true;
}

void Recorder::record_positions(std::span<const EntityId> entities, std::span<const float> xs,
                                std::span<const float> zs) {
  if (!on()) return;
  auto code = static_cast<std::uint8_t>(recording::Op::set_positions);
  auto n = static_cast<std::uint32_t>(entities.size());
  (void)recording::field(*this, code);
  (void)recording::field(*this, n);
  for (std::size_t i = 0; i < entities.size(); ++i) {
    EntityId e = entities[i];
    float x = xs[i];
    float z = zs[i];
    (void)(recording::field(*this, e) && recording::field(*this, x) && recording::field(*this, z));
  }
}

void Recorder::flush() {
  if (sink_.function == nullptr || used_ == 0) return;
  sink_.function(sink_.context, std::span<const std::uint8_t>(buffer_.data(), used_));
  used_ = 0;
}

}  // namespace sightline
