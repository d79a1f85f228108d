// The World's side of a recording (recording.h): each call that changed the World is appended
// to a fixed buffer as a record of the format (recording_format.h), and the buffer goes to the
// game's sink at each tick and whenever it fills.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "recording_format.h"
#include "sightline/recording.h"

namespace sightline {

class Recorder {
 public:
  Recorder() = default;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  ~Recorder() { flush(); }

  // Starts recording to `sink` (when it has a function) with the header that describes `def`.
  void start(const RecordingSink& sink, const WorldDef& def);
  [[nodiscard]] bool on() const noexcept { return sink_.function != nullptr && quiet_ == 0; }

  // Appends one record: the call, then each argument as the format writes it.
  template <class... Fields>
  void record(recording::Op op, Fields... fields) {
    if (!on()) return;
    auto code = static_cast<std::uint8_t>(op);
    (void)recording::field(*this, code);
    (void)(recording::field(*this, fields) && ...);
  }
  // A set_positions record: the count, then each entity with its position.
  void record_positions(std::span<const EntityId> entities, std::span<const float> xs,
                        std::span<const float> zs);
  // Hands what is buffered to the sink.
  void flush();

  // While one lives, nothing is recorded: a call made by another call (teleport's set_position)
  // is the outer call's, which the replay makes again.
  class Quiet {
   public:
    explicit Quiet(Recorder& r) noexcept : r_(r) { ++r_.quiet_; }
    ~Quiet() { --r_.quiet_; }
    Quiet(const Quiet&) = delete;
    Quiet& operator=(const Quiet&) = delete;

   private:
    Recorder& r_;
  };

  // The Io of recording_format.h.
  [[nodiscard]] static constexpr bool writing() noexcept { return true; }
  bool bytes(std::uint8_t* p, std::size_t n);
  [[nodiscard]] static std::size_t remaining() noexcept { return 0; }
  static bool fail(const char*) noexcept { return false; }
  [[nodiscard]] static std::uint32_t version() noexcept;  // recording::kVersion

 private:
  RecordingSink sink_;
  std::vector<std::uint8_t> buffer_;
  std::size_t used_ = 0;
  int quiet_ = 0;
};

}  // namespace sightline
