#include "frames.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace sightline::demo {
namespace {

std::string text(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

template <class T>
void put(std::vector<std::uint8_t>& out, T value) {
  std::uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // x86-64: the host order is little-endian
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

/// A bounds-checked cursor over one untrusted frame; the first failure names the frame, the
/// field, its byte and the reason.
class Reader {
 public:
  Reader(std::span<const std::uint8_t> bytes, const char* frame) : bytes_(bytes), frame_(frame) {}

  template <class T>
  bool get(T& value, const char* what) {
    if (bytes_.size() - pos_ < sizeof(T)) return fail(what, "ends before it");
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  template <class F>
  bool finite(F& value, const char* what) {
    const std::size_t at = pos_;
    if (!get(value, what)) return false;
    if (!std::isfinite(value)) return fail_at(at, what, "is " + text(value) + ": not finite");
    return true;
  }
  bool positive(float& value, const char* what) {
    const std::size_t at = pos_;
    if (!finite(value, what)) return false;
    if (!(value > 0.0f)) return fail_at(at, what, "is " + text(value) + ": must be > 0");
    return true;
  }
  bool bytes(std::span<const std::uint8_t>& out, std::size_t count, const char* what) {
    if (bytes_.size() - pos_ < count) {
      return fail(what, "of " + std::to_string(count) + " bytes runs past the end");
    }
    out = bytes_.subspan(pos_, count);
    pos_ += count;
    return true;
  }
  [[nodiscard]] std::size_t pos() const noexcept { return pos_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return bytes_.size() - pos_; }

  bool fail(const char* what, const std::string& why) { return fail_at(pos_, what, why); }
  bool fail_at(std::size_t at, const char* what, const std::string& why) {
    if (error_.empty())
      error_ = std::string(frame_) + " frame: " + what + " at byte " + std::to_string(at) + " " + why;
    return false;
  }
  /// The frame as a whole (its size, its type).
  bool fail_frame(const std::string& why) {
    if (error_.empty()) error_ = std::string(frame_) + " frame " + why;
    return false;
  }
  [[nodiscard]] Status status() const { return {ErrorCode::malformed_packet, error_}; }

 private:
  std::span<const std::uint8_t> bytes_;
  const char* frame_;
  std::size_t pos_ = 0;
  std::string error_;
};

bool check_type(Reader& in, std::uint8_t expected) {
  std::uint8_t type = 0;
  if (!in.get(type, "type")) return false;
  if (type != expected) {
    return in.fail_at(0, "type", "is " + std::to_string(type) + ", expected " + std::to_string(expected));
  }
  return true;
}

bool exact_size(Reader& in, std::size_t size, std::size_t expected) {
  if (size == expected) return true;
  return in.fail_frame("is " + std::to_string(size) + " bytes, expected " + std::to_string(expected));
}

bool at_least(Reader& in, std::size_t size, std::size_t header) {
  if (size >= header) return true;
  return in.fail_frame("is " + std::to_string(size) + " bytes, shorter than its " + std::to_string(header) +
                       "-byte header");
}

Status refuse(std::string message) { return {ErrorCode::invalid_argument, std::move(message)}; }

const char* client_frame_name(std::uint8_t type) {
  switch (type) {
    case kMoveFrame: return "move";
    case kOptionsFrame: return "options";
    default: return "radius";
  }
}

std::string hex(std::uint8_t value) {
  constexpr char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[value >> 4] + kDigits[value & 15];
}

}  // namespace

void write_welcome(std::vector<std::uint8_t>& out, const Welcome& welcome) {
  put(out, kWelcomeFrame);
  put(out, welcome.version);
  put(out, welcome.connection);
  put(out, welcome.width);
  put(out, welcome.height);
  put(out, welcome.enter_radius);
  put(out, welcome.leave_radius);
  put(out, welcome.cell_size);
  put(out, welcome.tick_rate);
  put(out, welcome.server_flags);
  put(out, welcome.max_radius);
  put(out, welcome.entity_count);
}

Status write_tick_header(std::vector<std::uint8_t>& out, const TickFrame& tick, std::size_t packets) {
  if (packets > 0xffff) {
    return {ErrorCode::invalid_argument,
            "tick frame: packet count is " + std::to_string(packets) + ": must be <= 65535"};
  }
  put(out, kTickFrame);
  put(out, tick.tick);
  put(out, tick.viewer_x);
  put(out, tick.viewer_z);
  put(out, tick.enter_radius);
  put(out, tick.leave_radius);
  put(out, tick.options);
  put(out, tick.server_time_ms);
  put(out, static_cast<std::uint16_t>(packets));
  return {};
}

Status append_tick_packet(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> packet) {
  if (packet.size() > 0xffff) {
    return {ErrorCode::invalid_argument,
            "tick frame: packet length is " + std::to_string(packet.size()) + " bytes: must be <= 65535"};
  }
  put(out, static_cast<std::uint16_t>(packet.size()));
  out.insert(out.end(), packet.begin(), packet.end());
  return {};
}

void write_reset(std::vector<std::uint8_t>& out, std::uint32_t tick) {
  put(out, kResetFrame);
  put(out, tick);
}

void write_debug_header(std::vector<std::uint8_t>& out, std::uint32_t tick, std::uint32_t count) {
  put(out, kDebugFrame);
  put(out, tick);
  put(out, count);
}

void append_debug_entry(std::vector<std::uint8_t>& out, const DebugEntry& entry) {
  put(out, entry.index);
  put(out, entry.x);
  put(out, entry.z);
}

std::uint8_t frame_type(std::span<const std::uint8_t> frame) noexcept { return frame.empty() ? 0 : frame[0]; }

Result<Welcome> read_welcome(std::span<const std::uint8_t> frame) {
  Reader in(frame, "welcome");
  Welcome w;
  if (!check_type(in, kWelcomeFrame) || !exact_size(in, frame.size(), kWelcomeBytes)) return in.status();
  if (!in.get(w.version, "frame version")) return in.status();
  if (w.version != kFrameVersion) {
    in.fail_at(1, "frame version",
               "is " + std::to_string(w.version) + ", expected " + std::to_string(kFrameVersion));
    return in.status();
  }
  const bool read = in.get(w.connection, "connection id") && in.positive(w.width, "world width") &&
                    in.positive(w.height, "world height") && in.positive(w.enter_radius, "enter radius") &&
                    in.finite(w.leave_radius, "leave radius") && in.positive(w.cell_size, "cell size") &&
                    in.get(w.tick_rate, "tick rate") && in.get(w.server_flags, "server flags") &&
                    in.finite(w.max_radius, "largest radius") && in.get(w.entity_count, "entity count");
  if (!read) return in.status();
  if (w.leave_radius < w.enter_radius) {
    in.fail_at(18, "leave radius",
               "is " + text(w.leave_radius) + ": below the enter radius " + text(w.enter_radius));
  } else if (w.tick_rate == 0) {
    in.fail_at(26, "tick rate", "is 0");
  } else if ((w.server_flags & ~kServerDebugViewAllowed) != 0) {
    in.fail_at(28, "server flags", "are " + hex(w.server_flags) + ": unknown bits set");
  } else if (w.max_radius < w.enter_radius) {
    in.fail_at(29, "largest radius",
               "is " + text(w.max_radius) + ": below the enter radius " + text(w.enter_radius));
  } else {
    return w;
  }
  return in.status();
}

Result<TickFrame> read_tick(std::span<const std::uint8_t> frame) {
  Reader in(frame, "tick");
  TickFrame t;
  if (!check_type(in, kTickFrame) || !at_least(in, frame.size(), kTickHeaderBytes)) return in.status();
  std::uint16_t count = 0;
  const bool read = in.get(t.tick, "tick") && in.finite(t.viewer_x, "viewer x") &&
                    in.finite(t.viewer_z, "viewer z") && in.finite(t.enter_radius, "enter radius") &&
                    in.finite(t.leave_radius, "leave radius") && in.get(t.options, "options");
  if (!read) return in.status();
  if ((t.options & ~kOptionBits) != 0) {
    in.fail_at(21, "options", "are " + hex(t.options) + ": unknown bits set");
    return in.status();
  }
  if (!in.finite(t.server_time_ms, "server time") || !in.get(count, "packet count")) return in.status();
  t.packets.reserve(count);
  for (std::uint16_t i = 0; i < count; ++i) {
    std::uint16_t length = 0;
    std::span<const std::uint8_t> packet;
    if (!in.get(length, "packet length") || !in.bytes(packet, length, "packet")) return in.status();
    t.packets.push_back(packet);
  }
  if (in.remaining() != 0) {
    in.fail_frame("has " + std::to_string(in.remaining()) + " bytes after its last packet, from byte " +
                  std::to_string(in.pos()));
    return in.status();
  }
  return t;
}

Result<std::uint32_t> read_reset(std::span<const std::uint8_t> frame) {
  Reader in(frame, "reset");
  std::uint32_t tick = 0;
  if (!check_type(in, kResetFrame) || !exact_size(in, frame.size(), kResetBytes) || !in.get(tick, "tick")) {
    return in.status();
  }
  return tick;
}

Result<std::vector<DebugEntry>> read_debug(std::span<const std::uint8_t> frame, std::uint32_t* tick) {
  Reader in(frame, "debug");
  std::uint32_t at_tick = 0;
  std::uint32_t count = 0;
  if (!check_type(in, kDebugFrame) || !at_least(in, frame.size(), kDebugHeaderBytes) ||
      !in.get(at_tick, "tick") || !in.get(count, "count")) {
    return in.status();
  }
  if (std::uint64_t{count} * kDebugEntryBytes != in.remaining()) {
    in.fail_at(5, "count",
               "is " + std::to_string(count) + ": needs " +
                   std::to_string(std::uint64_t{count} * kDebugEntryBytes) + " bytes, " +
                   std::to_string(in.remaining()) + " follow");
    return in.status();
  }
  std::vector<DebugEntry> entries(count);
  for (DebugEntry& e : entries) {
    if (!in.get(e.index, "entity index") || !in.finite(e.x, "x") || !in.finite(e.z, "z")) return in.status();
  }
  if (tick != nullptr) *tick = at_tick;
  return entries;
}

Result<ClientFrame> read_client_frame(std::span<const std::uint8_t> frame, const ClientLimits& limits) {
  if (frame.empty()) return refuse("empty frame: no type byte");
  ClientFrame f;
  f.type = frame[0];
  std::size_t size = 0;
  switch (f.type) {
    case kMoveFrame: size = kMoveBytes; break;
    case kOptionsFrame: size = kOptionsBytes; break;
    case kRadiusFrame: size = kRadiusBytes; break;
    default:
      return refuse("frame type " + std::to_string(f.type) + " is unknown (move 1, options 2, radius 3)");
  }
  const char* name = client_frame_name(f.type);
  if (frame.size() != size) {
    return refuse(std::string(name) + " frame is " + std::to_string(frame.size()) + " bytes, expected " +
                  std::to_string(size));
  }
  const auto f32_at = [&](std::size_t offset) {
    float v = 0.0f;
    std::memcpy(&v, frame.data() + offset, sizeof v);
    return v;
  };
  switch (f.type) {
    case kMoveFrame: {
      f.x = f32_at(1);
      f.z = f32_at(5);
      const auto inside = [](float v, float top) { return v >= 0.0f && v <= top; };  // false for NaN
      if (!std::isfinite(f.x) || !inside(f.x, limits.width)) {
        return refuse("move frame: x is " + text(f.x) + ": outside the world [0, " + text(limits.width) +
                      "]");
      }
      if (!std::isfinite(f.z) || !inside(f.z, limits.height)) {
        return refuse("move frame: z is " + text(f.z) + ": outside the world [0, " + text(limits.height) +
                      "]");
      }
      break;
    }
    case kOptionsFrame:
      f.options = frame[1];
      if ((f.options & ~kOptionBits) != 0) {
        return refuse("options frame: flags are " + hex(f.options) +
                      ": unknown bits set (only bits 0..2 exist)");
      }
      if ((f.options & kOptionDebug) != 0 && !limits.debug_view_allowed) {
        return refuse("options frame: flags " + hex(f.options) +
                      " ask for debug view (bit 2): the server runs without --debug-view");
      }
      break;
    default:
      f.enter_radius = f32_at(1);
      if (!(f.enter_radius >= limits.min_radius && f.enter_radius <= limits.max_radius)) {
        return refuse("radius frame: enter radius is " + text(f.enter_radius) + ": must be in [" +
                      text(limits.min_radius) + ", " + text(limits.max_radius) + "]");
      }
      break;
  }
  return f;
}

std::vector<std::uint8_t> encode_move(float x, float z) {
  std::vector<std::uint8_t> out;
  out.reserve(kMoveBytes);
  put(out, kMoveFrame);
  put(out, x);
  put(out, z);
  return out;
}

std::vector<std::uint8_t> encode_options(std::uint8_t flags) { return {kOptionsFrame, flags}; }

std::vector<std::uint8_t> encode_radius(float enter_radius) {
  std::vector<std::uint8_t> out;
  out.reserve(kRadiusBytes);
  put(out, kRadiusFrame);
  put(out, enter_radius);
  return out;
}

}  // namespace sightline::demo
