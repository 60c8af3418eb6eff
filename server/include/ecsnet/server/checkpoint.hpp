#pragma once

// Checkpoints: the authoritative world saved to a file and brought back (docs/operations.md, "Checkpoint
// file format").
//
// Taking one is split so that the tick never waits for a disk: capture_checkpoint copies the world on the
// tick thread (entity slots, quantized replicated components, saveable components' bytes, the world's own
// state: memory copies only); encode_checkpoint and write_checkpoint_file run on another thread
// (checkpoint_writer.hpp). The file is written atomically (a temporary file in the same directory, fsync,
// rename, fsync of the directory): a crash at any point leaves the previous checkpoint whole.
//
// Restoring is split so that a bad file changes nothing: read_checkpoint_file and decode_checkpoint check
// the whole file (magic, format version, size, BLAKE2b checksum, schema hashes, then every index, value and
// the free list) into a fresh checkpoint_image; only then does apply_checkpoint touch the world.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <ecsnet/ecs/entity_pool_image.hpp>
#include <ecsnet/proto/history.hpp>

#include "game_world.hpp"
#include "saveable_components.hpp"

namespace ecsnet::server {

inline constexpr std::uint32_t checkpoint_format_version = 1;

/// The world as a checkpoint holds it, in memory.
struct checkpoint_image {
    std::uint64_t schema_hash{};   // the replicated schema's (proto::schema::hash)
    std::uint64_t saveable_hash{}; // saveable_components::hash
    proto::tick_type tick{};
    entity_pool_image pool;
    /// Wire generations of the replicated entities (snapshot_history), by index.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> generations;
    /// Per replicated component (schema order): the entity indices holding it, and their quantized values,
    /// row after row (fields per row: the component's field count).
    struct replicated_rows {
        std::vector<std::uint32_t> indices;
        std::vector<std::uint32_t> values;
    };
    std::vector<replicated_rows> replicated;
    /// Per saveable component (declaration order): entity indices and their bytes.
    struct saved_rows {
        std::vector<std::uint32_t> indices;
        std::vector<std::byte> bytes;
    };
    std::vector<saved_rows> saved;
    std::string world_state;

    /// Live entities in the pool.
    [[nodiscard]] std::size_t entities() const noexcept;
};

/// Why a checkpoint is refused; each has its own words in the message.
enum class checkpoint_error : std::uint8_t {
    missing,           // no such file, or it cannot be read
    bad_magic,         // not a checkpoint
    other_version,     // a format version this build does not read
    truncated,         // shorter than its header says
    checksum_mismatch, // bytes changed since it was written
    other_schema,      // written by a game with other components
    malformed,         // checksum right but the content inconsistent (another writer's bug)
};

[[nodiscard]] std::string_view to_string(checkpoint_error error) noexcept;

struct checkpoint_refusal {
    checkpoint_error error{};
    std::string message; // what and where, for the log
};

/// Copies what a checkpoint needs from the world, on the tick thread, right after `history` captured
/// `tick` (the generations are the newest capture's). `buffers`: an earlier image whose memory the copy
/// reuses (checkpoint_writer::take_spare), so that a periodic checkpoint does not fault in fresh pages on
/// the tick; its contents do not matter. `registry_as_captured`: nothing changed the registry since
/// `history` captured `tick` (a periodic checkpoint, taken right after the capture), so the replicated
/// components are copied from the history's columns instead of quantized again; false (a drain, after the
/// clients' avatars left) quantizes the registry as it is.
[[nodiscard]] checkpoint_image capture_checkpoint(game_world& world, const saveable_components& saveable,
                                                  const proto::snapshot_history& history,
                                                  proto::tick_type tick, checkpoint_image buffers = {},
                                                  bool registry_as_captured = false);

/// The file's bytes: header, body, checksum.
[[nodiscard]] std::vector<std::byte> encode_checkpoint(const checkpoint_image& image);

/// A file around `body`: the header (this format version, no flags, the body's size) and the checksum, as
/// encode_checkpoint writes them. Tests and the fuzz target seal bodies of their own with it, so that what
/// they change reaches the checks behind the checksum.
[[nodiscard]] std::vector<std::byte> seal_checkpoint(std::uint64_t schema_hash, std::uint64_t saveable_hash,
                                                     std::uint64_t tick, std::span<const std::byte> body);

/// The body of a file as encode_checkpoint or seal_checkpoint writes it (what lies between the header and
/// the checksum; empty when the file is shorter than both). Nothing is checked.
[[nodiscard]] std::span<const std::byte> checkpoint_body(const std::vector<std::byte>& file) noexcept;

/// Checks `bytes` whole and decodes them; nothing is applied anywhere.
[[nodiscard]] std::optional<checkpoint_refusal> decode_checkpoint(const std::vector<std::byte>& bytes,
                                                                  const proto::schema& schema,
                                                                  const saveable_components& saveable,
                                                                  checkpoint_image& out);

/// Replaces the world's entities with the image's (decoded and checked by decode_checkpoint): the world's
/// load_state first (it may refuse, and then nothing else changed), then the registry is cleared and
/// refilled, the generations given to the history (which must not have captured yet), and the world told
/// (restored()). Returns why the world refused its state, if it did.
[[nodiscard]] std::optional<checkpoint_refusal> apply_checkpoint(const checkpoint_image& image,
                                                                 game_world& world,
                                                                 const saveable_components& saveable,
                                                                 proto::snapshot_history& history);

/// How write_checkpoint_file went.
struct checkpoint_write_result {
    bool ok{false};
    std::string error; // the failing step and errno's words
};

/// Writes `bytes` to `path` atomically: `path`.tmp-<pid> in the same directory, fsync, rename over `path`,
/// fsync of the directory. `pause_midway` (tests only) sleeps after half the bytes are written, so a test
/// can kill the process mid-write. On failure the temporary file is removed and `path` is untouched.
[[nodiscard]] checkpoint_write_result write_checkpoint_file(const std::string& path,
                                                            const std::vector<std::byte>& bytes,
                                                            std::chrono::milliseconds pause_midway = {});

/// Reads a whole file; a refusal (missing) when it cannot.
[[nodiscard]] std::optional<checkpoint_refusal> read_checkpoint_file(const std::string& path,
                                                                     std::vector<std::byte>& out);

/// Removes what writes cut short by a crash left next to `path` (`path`.tmp-<pid> files); returns how many.
std::size_t remove_stale_temporaries(const std::string& path);

/// Whether a checkpoint can be written in `path`'s directory (creates and removes a probe file); the
/// error's words when not.
[[nodiscard]] std::optional<std::string> check_checkpoint_directory(const std::string& path);

} // namespace ecsnet::server
