// libFuzzer target for the demo's frame readers: any bytes are a client frame and a why question
// (read with and without the server's debug view) and every server frame; none crashes, every refusal has a
// reason (a client frame's fits a WebSocket close frame), and whatever is accepted is the one
// encoding of what it decodes to (the writers give back the same bytes).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "frames.h"

namespace {

using namespace sightline::demo;
using Bytes = std::vector<std::uint8_t>;

void check(bool holds) {
  if (!holds) std::abort();
}

void client_frame(std::span<const std::uint8_t> bytes, bool debug_view_allowed) {
  const ClientLimits limits{.debug_view_allowed = debug_view_allowed};
  const auto frame = read_client_frame(bytes, limits);
  if (!frame) {
    check(!frame.status().message().empty() && frame.status().message().size() <= 123);
    return;
  }
  Bytes again;
  if (frame->type == kMoveFrame) again = encode_move(frame->x, frame->z);
  if (frame->type == kOptionsFrame) again = encode_options(frame->options);
  if (frame->type == kRadiusFrame) again = encode_radius(frame->enter_radius);
  check(again.size() == bytes.size() && std::equal(again.begin(), again.end(), bytes.begin()));
}

void why_question(std::span<const std::uint8_t> bytes, bool debug_view_allowed) {
  const ClientLimits limits{.debug_view_allowed = debug_view_allowed};
  const auto entity = read_why(bytes, limits);
  if (!entity) {
    check(!entity.status().message().empty() && entity.status().message().size() <= 123);
    return;
  }
  const Bytes again = encode_why(*entity);
  check(again.size() == bytes.size() && std::equal(again.begin(), again.end(), bytes.begin()));
}

// An ack frame views the library's ack packet: the frame again from what it decodes to.
void ack_frame(std::span<const std::uint8_t> bytes) {
  const auto frame = read_ack(bytes);
  if (!frame) {
    check(!frame.status().message().empty() && frame.status().message().size() <= 123);
    return;
  }
  check(frame->packet.size() == sightline::kAckBytes && frame->packet.data() == bytes.data() + 5);
  if (const auto ack = sightline::decode_ack(frame->packet)) {
    const Bytes again = encode_ack(frame->stream, *ack);
    check(again.size() == bytes.size() && std::equal(again.begin(), again.end(), bytes.begin()));
  }
}

void same(const Bytes& written, std::span<const std::uint8_t> bytes) {
  check(written.size() == bytes.size() && std::equal(written.begin(), written.end(), bytes.begin()));
}

void server_frames(std::span<const std::uint8_t> bytes) {
  if (const auto welcome = read_welcome(bytes)) {
    Bytes out;
    write_welcome(out, *welcome);
    same(out, bytes);
  } else {
    check(!welcome.status().message().empty());
  }
  if (const auto tick = read_tick(bytes)) {
    Bytes out;
    check(write_tick_header(out, *tick, tick->packets.size()).ok());
    for (const auto packet : tick->packets) check(append_tick_packet(out, packet).ok());
    same(out, bytes);
  } else {
    check(!tick.status().message().empty());
  }
  if (const auto reason = read_close(bytes)) {
    Bytes out;
    write_close(out, *reason);
    same(out, bytes);
  } else {
    check(!reason.status().message().empty());
  }
  if (const auto reset = read_reset(bytes)) {
    Bytes out;
    write_reset(out, *reset);
    same(out, bytes);
  } else {
    check(!reset.status().message().empty());
  }
  if (const auto answer = read_why_answer(bytes)) {
    Bytes out;
    write_why_answer(out, *answer);
    same(out, bytes);
  } else {
    check(!answer.status().message().empty());
  }
  // A bundle read is written back byte for byte, and each frame in it is a server frame again.
  std::vector<std::span<const std::uint8_t>> frames;
  if (const sightline::Status s = read_bundle(bytes, frames); s) {
    check(!frames.empty());
    Bytes out;
    begin_bundle(out);
    for (const auto frame : frames) {
      check(!frame.empty() && frame_type(frame) != kBundleFrame);
      append_to_bundle(out, frame);
    }
    same(out, bytes);
    for (const auto frame : frames) server_frames(frame);
  } else {
    check(frames.empty() || !s.message().empty());
    check(!s.message().empty());
  }
  std::uint32_t at_tick = 0;
  std::uint32_t members = 0;
  if (const auto debug = read_debug(bytes, &at_tick, &members)) {
    Bytes out;
    write_debug_header(out, at_tick, members, static_cast<std::uint32_t>(debug->size()));
    for (const DebugEntry& e : *debug) append_debug_entry(out, e);
    same(out, bytes);
  } else {
    check(!debug.status().message().empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  client_frame(bytes, false);
  client_frame(bytes, true);
  why_question(bytes, false);
  why_question(bytes, true);
  ack_frame(bytes);
  server_frames(bytes);
  return 0;
}
