// The demo's WebSocket frames (docs/demo_protocol.md): what sightline-server, its page and
// sightline-bots exchange around the library's state packets. Little-endian, no padding.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sightline/handles.h"
#include "sightline/protocol.h"
#include "sightline/relevance.h"
#include "sightline/status.h"

namespace sightline::demo {

inline constexpr std::uint8_t kFrameVersion = 4;

// Server to client.
inline constexpr std::uint8_t kWelcomeFrame = 1;
inline constexpr std::uint8_t kTickFrame = 2;
inline constexpr std::uint8_t kResetFrame = 3;
inline constexpr std::uint8_t kDebugFrame = 4;
inline constexpr std::uint8_t kWhyAnswerFrame = 5;
/// UDP transports only (WebSocket has its own close frame): why the server ends the connection.
inline constexpr std::uint8_t kCloseFrame = 6;
/// WebSocket only: frames due to a connection at once, in one message so that they go out in
/// one write (read_bundle). Never inside another bundle.
inline constexpr std::uint8_t kBundleFrame = 7;
/// The bytes of a bundle's length field before each frame in it.
inline constexpr std::size_t kBundleLengthBytes = 4;
// Over ENet: the server's frames and the client's reliable ones (options, radius, why) on one
// channel (ENet delivers a channel's unreliable packets in order behind its reliable ones, so a
// tick frame never overtakes the reset before it); the client's unreliable inputs (acks, moves)
// on a second, where a resent reliable frame cannot hold them back.
inline constexpr std::uint8_t kEnetChannels = 2;
inline constexpr std::uint8_t kEnetStreamChannel = 0;
inline constexpr std::uint8_t kEnetInputChannel = 1;
/// The round trip ENet assumes of a peer before it has measured one, milliseconds. ENet's own
/// 500 ms spaces the first resends of a lost handshake or welcome 0.5, 1, 2 s apart; loopback and
/// LAN round trips are far shorter, so both ends start their peers here.
inline constexpr std::uint32_t kEnetFirstRoundTripMs = 100;
/// What a client passes to enet_peer_disconnect when it leaves (a timeout reads as 0).
inline constexpr std::uint32_t kClientGoodbye = 1;
/// The longest close reason, bytes (a WebSocket close frame's limit, for both transports).
inline constexpr std::size_t kMaxCloseReasonBytes = 123;

// Client to server, with their fixed sizes (type byte included).
inline constexpr std::uint8_t kMoveFrame = 1;
inline constexpr std::uint8_t kOptionsFrame = 2;
inline constexpr std::uint8_t kRadiusFrame = 3;
inline constexpr std::uint8_t kWhyFrame = 4;
inline constexpr std::uint8_t kAckFrame = 5;
inline constexpr std::size_t kMoveBytes = 9;
inline constexpr std::size_t kOptionsBytes = 2;
inline constexpr std::size_t kRadiusBytes = 5;
inline constexpr std::size_t kWhyBytes = 9;
/// The type byte, the stream's u32, then the library's ack packet (protocol.h, kAckBytes).
inline constexpr std::size_t kAckFrameBytes = 1 + 4 + kAckBytes;

inline constexpr std::size_t kWelcomeBytes = 37;
/// A tick frame's bytes before its first packet length.
inline constexpr std::size_t kTickHeaderBytes = 61;
inline constexpr std::size_t kResetBytes = 5;
inline constexpr std::size_t kDebugHeaderBytes = 13;
/// Bytes of one entity in a debug frame.
inline constexpr std::size_t kDebugEntryBytes = 12;
inline constexpr std::size_t kWhyAnswerBytes = 24;

/// Option bits (the `options` frame, and the tick frame's applied options).
inline constexpr std::uint8_t kOptionHysteresis = 1;
inline constexpr std::uint8_t kOptionInterest = 2;
inline constexpr std::uint8_t kOptionDebug = 4;
inline constexpr std::uint8_t kOptionBits = 7;
/// The options a connection starts with: hysteresis and interest on, no debug view.
inline constexpr std::uint8_t kDefaultOptions = kOptionHysteresis | kOptionInterest;

/// Welcome's server flags.
inline constexpr std::uint8_t kServerDebugViewAllowed = 1;
/// The stream is Delivery::unreliable (a UDP transport): run the mirror so and send `ack` frames.
inline constexpr std::uint8_t kServerUnreliable = 2;
inline constexpr std::uint8_t kServerFlagBits = kServerDebugViewAllowed | kServerUnreliable;

/// An entity payload's coordinates: x in [0, width] and z in [0, height] (the welcome's), each
/// quantized to this step (docs/demo_protocol.md, "Entity payload").
inline constexpr float kPositionStep = 1.0f / 256.0f;

/// Entity kinds in a spawn's full state.
inline constexpr std::uint32_t kKindWalker = 0;
inline constexpr std::uint32_t kKindViewer = 1;

struct Welcome {
  std::uint8_t version = kFrameVersion;
  std::uint32_t connection = 0;
  float width = 0.0f;
  float height = 0.0f;
  float enter_radius = 0.0f;
  float leave_radius = 0.0f;
  float cell_size = 0.0f;
  std::uint16_t tick_rate = 0;
  std::uint8_t server_flags = 0;
  float max_radius = 0.0f;
  std::uint32_t entity_count = 0;

  friend constexpr bool operator==(const Welcome&, const Welcome&) noexcept = default;
};

/// A tick frame's fields; `packets` view the decoded bytes.
struct TickFrame {
  std::uint32_t tick = 0;
  float viewer_x = 0.0f;
  float viewer_z = 0.0f;
  float enter_radius = 0.0f;
  float leave_radius = 0.0f;
  std::uint8_t options = 0;
  /// Milliseconds since the Unix epoch when the server began this tick.
  double server_time_ms = 0.0;
  /// The library's grid at this tick (World::grid_scan): the low corner of cell (0, 0) and the
  /// cell size, world units, and, when `scanned` is 1, the cells [x0, x1] x [z0, z1] that the
  /// connection's enter scan read (0 with interest off: nothing is scanned, the fields are 0).
  float grid_origin_x = 0.0f;
  float grid_origin_z = 0.0f;
  float cell_size = 1.0f;
  std::uint8_t scanned = 0;
  std::uint32_t scan_x0 = 0;
  std::uint32_t scan_x1 = 0;
  std::uint32_t scan_z0 = 0;
  std::uint32_t scan_z1 = 0;
  std::vector<std::span<const std::uint8_t>> packets;

  /// Equal fields and packets of equal bytes, wherever each packet lies.
  friend bool operator==(const TickFrame& a, const TickFrame& b) noexcept;
};

struct DebugEntry {
  std::uint32_t index = 0;
  float x = 0.0f;
  float z = 0.0f;

  friend constexpr bool operator==(const DebugEntry&, const DebugEntry&) noexcept = default;
};

/// How a `why_answer` frame answers.
enum class WhyOutcome : std::uint8_t {
  answered = 0,  ///< World::why answered: held, rule and root are its answer.
  stale = 1,     ///< No live entity under that handle (destroyed, its slot reused, or none at the index).
};

/// World::why for one entity of the connection's stream, right after a tick (the `why_answer`
/// frame). `entity` is the question's index with the generation asked, or, for a question of
/// generation 0, that of the entity then at the index (0 when there is none).
struct WhyAnswer {
  std::uint32_t tick = 0;
  EntityId entity;
  WhyOutcome outcome = WhyOutcome::answered;
  std::uint8_t held = 0;     ///< 1: the connection holds it. 0 in a stale answer.
  Rule rule = Rule::viewer;  ///< The rule that decided (relevance.h). Rule::viewer (0) in a stale answer.
  EntityId root;             ///< The root of its attachment tree, whose rule decided. Null in a stale answer.

  friend constexpr bool operator==(const WhyAnswer&, const WhyAnswer&) noexcept = default;
};

// --- Writing (server) ---------------------------------------------------------------------
// Each appends one whole frame to `out`.

void write_welcome(std::vector<std::uint8_t>& out, const Welcome& welcome);
/// Writes the header of a tick frame with its packet count; append the packets with
/// append_tick_packet. Refused (invalid_argument) above 65535 packets.
[[nodiscard]] Status write_tick_header(std::vector<std::uint8_t>& out, const TickFrame& tick,
                                       std::size_t packets);
/// Refused (invalid_argument) for a packet longer than 65535 bytes.
[[nodiscard]] Status append_tick_packet(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> packet);
void write_reset(std::vector<std::uint8_t>& out, std::uint32_t tick);
/// The header of a debug frame: `members`, the size of the connection's interest set at `tick`
/// (its viewer excluded); append `count` entries with append_debug_entry.
void write_debug_header(std::vector<std::uint8_t>& out, std::uint32_t tick, std::uint32_t members,
                        std::uint32_t count);
void append_debug_entry(std::vector<std::uint8_t>& out, const DebugEntry& entry);
void write_why_answer(std::vector<std::uint8_t>& out, const WhyAnswer& answer);
/// A close frame: the reason's first kMaxCloseReasonBytes bytes.
void write_close(std::vector<std::uint8_t>& out, std::string_view reason);
/// Starts a bundle in `out`, which it clears; append its frames with append_to_bundle.
void begin_bundle(std::vector<std::uint8_t>& out);
/// Appends one whole frame, not a bundle, to the bundle in `out`.
void append_to_bundle(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> frame);
/// Appends the length field that goes before a frame of `size` bytes in a bundle: for a writer
/// that gathers the frames from where they lie (the bundle is then begin_bundle's byte, and each
/// frame behind its length field).
void append_bundle_length(std::vector<std::uint8_t>& out, std::size_t size);

// --- Reading (bots, tests) ----------------------------------------------------------------
// Each checks the whole frame: its type, its exact size, finite floats, known bits; a refusal is
// malformed_packet naming the frame, the byte and the reason.

/// The type byte of a non-empty frame, or 0 for an empty one.
[[nodiscard]] std::uint8_t frame_type(std::span<const std::uint8_t> frame) noexcept;
[[nodiscard]] Result<Welcome> read_welcome(std::span<const std::uint8_t> frame);
/// The packets view `frame`, which must outlive them.
[[nodiscard]] Result<TickFrame> read_tick(std::span<const std::uint8_t> frame);
[[nodiscard]] Result<std::uint32_t> read_reset(std::span<const std::uint8_t> frame);
/// `tick` and `members` (the header's) may be null.
[[nodiscard]] Result<std::vector<DebugEntry>> read_debug(std::span<const std::uint8_t> frame,
                                                         std::uint32_t* tick,
                                                         std::uint32_t* members = nullptr);
/// Also checks the fields together: answer 0 or 1, held 0 or 1, a rule of relevance.h, an
/// answered question names a live generation and root, and a stale answer holds nothing.
[[nodiscard]] Result<WhyAnswer> read_why_answer(std::span<const std::uint8_t> frame);
/// The reason of a close frame; refused above kMaxCloseReasonBytes.
[[nodiscard]] Result<std::string> read_close(std::span<const std::uint8_t> frame);
/// The frames of a bundle, in order, into `frames` (cleared first; they view `bundle`, which must
/// outlive them). Refused without a frame, for a length of 0 or past the end, and for a bundle
/// inside it; each frame is still to be read by its own type.
[[nodiscard]] Status read_bundle(std::span<const std::uint8_t> bundle,
                                 std::vector<std::span<const std::uint8_t>>& frames);

// --- Client frames --------------------------------------------------------------------------

/// What the server accepts from its clients (docs/demo_protocol.md, "Client to server").
struct ClientLimits {
  float width = 12.0f;  ///< Moves must land in [0, width] x [0, height].
  float height = 7.5f;
  float min_radius = 0.4f;  ///< Radius frames must ask for [min_radius, max_radius].
  float max_radius = 6.4f;
  bool debug_view_allowed = false;
};

struct ClientFrame {
  std::uint8_t type = 0;
  float x = 0.0f;             ///< move
  float z = 0.0f;             ///< move
  std::uint8_t options = 0;   ///< options
  float enter_radius = 0.0f;  ///< radius

  friend constexpr bool operator==(const ClientFrame&, const ClientFrame&) noexcept = default;
};

/// Decodes and checks one of the client's inputs (move, options, radius). Refused
/// (invalid_argument) with a reason fit for a WebSocket close frame (at most 123 bytes), naming
/// the frame, the field and its value: an empty frame, an unknown type, a `why` frame (a
/// question, not an input: read_why reads it), a size other than the type's, a move that is not
/// finite or lands outside the world, unknown option bits, debug view on a server without it, a
/// radius out of bounds.
[[nodiscard]] Result<ClientFrame> read_client_frame(std::span<const std::uint8_t> frame,
                                                    const ClientLimits& limits);

/// Decodes and checks a `why` frame: the entity it asks about (generation 0: whichever entity is
/// at the index). Refused (invalid_argument) like read_client_frame: another type, a size other
/// than kWhyBytes, a server without the debug view. Whether the connection has its debug view on
/// is the server's to check.
[[nodiscard]] Result<EntityId> read_why(std::span<const std::uint8_t> frame, const ClientLimits& limits);

std::vector<std::uint8_t> encode_move(float x, float z);
std::vector<std::uint8_t> encode_options(std::uint8_t flags);
std::vector<std::uint8_t> encode_radius(float enter_radius);
/// A `why` frame asking about `entity` (generation 0: whichever entity is at its index).
std::vector<std::uint8_t> encode_why(EntityId entity);
/// An `ack` frame carrying the mirror's ack (ClientMirror::ack) for the stream that began at
/// tick `stream` (its `reset` frame's tick; 0 for the connection's first stream).
std::vector<std::uint8_t> encode_ack(std::uint32_t stream, const AckPacket& ack);

/// An `ack` frame's stream and the library's ack packet in it (viewing `frame`), for
/// Replicator::receive_ack, which decodes and checks the packet.
struct AckFrame {
  std::uint32_t stream = 0;
  std::span<const std::uint8_t> packet;
};
/// Refused (invalid_argument) like read_client_frame: another type, a size other than
/// kAckFrameBytes.
[[nodiscard]] Result<AckFrame> read_ack(std::span<const std::uint8_t> frame);

}  // namespace sightline::demo
