#include "ecsnet/server/checkpoint.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sodium.h>

namespace ecsnet::server {

namespace {

// Layout (docs/operations.md): header, body, BLAKE2b-256 of header and body. Integers little-endian.
constexpr std::array<char, 8> magic{'E', 'C', 'S', 'N', 'C', 'K', 'P', 'T'};
constexpr std::size_t header_bytes = 8 + 4 + 4 + 8 + 8 + 8 + 8;  // magic ... body size
constexpr std::size_t checksum_bytes = crypto_generichash_BYTES; // 32
// The largest body read: a bad size field must not make the reader allocate gigabytes.
constexpr std::uint64_t max_body_bytes = std::uint64_t{4} << 30;

class byte_writer {
public:
    explicit byte_writer(std::vector<std::byte>& out)
        : out_{out} {}
    void u32(std::uint32_t v) { little(v, 4); }
    void u64(std::uint64_t v) { little(v, 8); }
    void raw(const void* data, std::size_t size) {
        if (size == 0) {
            return;
        }
        const auto* p = static_cast<const std::byte*>(data);
        out_.insert(out_.end(), p, p + size);
    }
    void u32s(const std::vector<std::uint32_t>& values) {
        u32(static_cast<std::uint32_t>(values.size()));
        for (const auto v : values) {
            u32(v);
        }
    }

private:
    void little(std::uint64_t v, int bytes) {
        for (int b = 0; b < bytes; ++b) {
            out_.push_back(static_cast<std::byte>((v >> (8 * b)) & 0xFF));
        }
    }
    std::vector<std::byte>& out_;
};

// Reads a checked buffer; any read past its end sets failed() and returns zeros.
class byte_reader {
public:
    byte_reader(const std::byte* data, std::size_t size)
        : data_{data}
        , size_{size} {}
    std::uint32_t u32() { return static_cast<std::uint32_t>(little(4)); }
    std::uint64_t u64() { return little(8); }
    bool raw(void* to, std::size_t size) {
        if (!take(size)) {
            return false;
        }
        if (size != 0) { // an empty vector's data() may be null, which memcpy must not see
            std::memcpy(to, data_ + at_ - size, size);
        }
        return true;
    }
    // A count of items of `item_bytes` each: refused (0, failed) if they cannot all be in what is left.
    std::size_t count(std::size_t item_bytes) {
        const auto n = u32();
        if (item_bytes != 0 && n > (size_ - at_) / item_bytes) {
            failed_ = true;
            return 0;
        }
        return n;
    }
    void u32s(std::vector<std::uint32_t>& out) {
        const auto n = count(4);
        out.resize(n);
        for (auto& v : out) {
            v = u32();
        }
    }
    [[nodiscard]] bool failed() const noexcept { return failed_; }
    [[nodiscard]] std::size_t left() const noexcept { return size_ - at_; }

private:
    bool take(std::size_t n) {
        if (failed_ || n > size_ - at_) {
            failed_ = true;
            return false;
        }
        at_ += n;
        return true;
    }
    std::uint64_t little(int bytes) {
        if (!take(static_cast<std::size_t>(bytes))) {
            return 0;
        }
        std::uint64_t v = 0;
        for (int b = 0; b < bytes; ++b) {
            v |= std::uint64_t{std::to_integer<std::uint8_t>(
                     data_[at_ - static_cast<std::size_t>(bytes) + static_cast<std::size_t>(b)])}
                 << (8 * b);
        }
        return v;
    }
    const std::byte* data_;
    std::size_t size_;
    std::size_t at_{0};
    bool failed_{false};
};

std::array<std::byte, checksum_bytes> checksum_of(const std::byte* data, std::size_t size) {
    static const bool ready = sodium_init() >= 0;
    static_cast<void>(ready);
    std::array<std::byte, checksum_bytes> out{};
    crypto_generichash(reinterpret_cast<unsigned char*>(out.data()), out.size(),
                       reinterpret_cast<const unsigned char*>(data), size, nullptr, 0);
    return out;
}

std::string hex(std::uint64_t v) {
    char text[19];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
    return text;
}

checkpoint_refusal refuse(checkpoint_error error, std::string message) {
    return checkpoint_refusal{error, std::move(message)};
}

std::string errno_words(const std::string& step, const std::string& path) {
    return step + " '" + path + "': " + std::strerror(errno);
}

// Every index a component row names must be a live slot of the pool, once per component.
std::optional<std::string> check_indices(const std::vector<std::uint32_t>& indices,
                                         const entity_pool_image& pool,
                                         std::vector<std::uint32_t>& seen_stamp, std::uint32_t stamp,
                                         const std::string& what) {
    for (const auto index : indices) {
        if (index >= pool.slots.size() || to_index(pool.slots[index]) != index) {
            return what + ": row for entity index " + std::to_string(index) + ", which is not a live entity";
        }
        if (seen_stamp[index] == stamp) {
            return what + ": entity index " + std::to_string(index) + " appears twice";
        }
        seen_stamp[index] = stamp;
    }
    return std::nullopt;
}

// The header with a zero body size (finish_file sets it), then the body follows.
std::size_t start_file(std::vector<std::byte>& out, std::uint64_t schema_hash, std::uint64_t saveable_hash,
                       std::uint64_t tick) {
    byte_writer w{out};
    w.raw(magic.data(), magic.size());
    w.u32(checkpoint_format_version);
    w.u32(0); // flags, none yet
    w.u64(schema_hash);
    w.u64(saveable_hash);
    w.u64(tick);
    w.u64(0); // body size, set by finish_file
    return out.size();
}

// The body's size into the header, and the checksum of header and body after them.
void finish_file(std::vector<std::byte>& out, std::size_t body_start) {
    const std::uint64_t body = out.size() - body_start;
    for (int b = 0; b < 8; ++b) {
        out[body_start - 8 + static_cast<std::size_t>(b)] = static_cast<std::byte>((body >> (8 * b)) & 0xFF);
    }
    const auto sum = checksum_of(out.data(), out.size());
    out.insert(out.end(), sum.begin(), sum.end());
}

} // namespace

std::size_t checkpoint_image::entities() const noexcept {
    return live_entities(pool);
}

std::string_view to_string(checkpoint_error error) noexcept {
    switch (error) {
    case checkpoint_error::missing:
        return "missing";
    case checkpoint_error::bad_magic:
        return "bad magic";
    case checkpoint_error::other_version:
        return "other format version";
    case checkpoint_error::truncated:
        return "truncated";
    case checkpoint_error::checksum_mismatch:
        return "checksum mismatch";
    case checkpoint_error::other_schema:
        return "other schema";
    case checkpoint_error::malformed:
        return "malformed";
    }
    return "unknown";
}

checkpoint_image capture_checkpoint(game_world& world, const saveable_components& saveable,
                                    const proto::snapshot_history& history, proto::tick_type tick,
                                    checkpoint_image buffers, bool registry_as_captured) {
    const auto& schema = world.replicated_schema();
    auto& reg = world.registry();
    checkpoint_image image = std::move(buffers); // every field below is rewritten, in place
    image.schema_hash = schema.hash();
    image.saveable_hash = saveable.hash();
    image.tick = tick;
    reg.entity_pool(image.pool);
    image.generations.clear();

    if (!history.empty() && history.newest_tick() == tick && history.newest().flat_valid) {
        const auto& ids = history.newest().flat_entities;
        const auto generations = history.newest_generations();
        image.generations.reserve(ids.size());
        for (std::size_t i = 0; i < ids.size() && i < generations.size(); ++i) {
            // Only entities still there: those destroyed since the capture (avatars of clients that left
            // during a drain) take their generation with them.
            if (registry_as_captured) {
                image.generations.emplace_back(ids[i], generations[i]);
                continue;
            }
            const auto e = reg.current(ids[i]);
            if (e != null_entity && to_version(e) == (generations[i] & entity_traits::version_mask)) {
                image.generations.emplace_back(ids[i], generations[i]);
            }
        }
    }

    image.replicated.resize(schema.size());
    const bool from_history = registry_as_captured && !history.empty() && history.newest_tick() == tick;
    if (from_history) {
        // The history quantized these very pools this tick, and nothing changed them since: its columns are
        // what quantizing again would give (a periodic checkpoint's copy, half of it, saved).
        const auto& state = history.newest();
        thread_local std::vector<std::uint32_t> scratch;
        for (std::size_t c = 0; c < schema.size(); ++c) {
            const auto fields = schema.component_at(c).fields.size();
            const auto& column = state.components[c];
            const std::vector<std::uint32_t>* ids = &scratch;
            if (column.ids_are_entities) {
                ids = &state.flat(scratch);
            } else {
                proto::flatten(column.own_ids, scratch);
            }
            const auto& indices = *ids;
            auto& rows = image.replicated[c];
            rows.indices.assign(indices.begin(), indices.end());
            rows.values.resize(indices.size() * fields);
            for (std::size_t f = 0; f < fields; ++f) {
                const auto& values = column.fields[f];
                for (std::size_t r = 0; r < indices.size(); ++r) {
                    rows.values[r * fields + f] = values.get(r);
                }
            }
        }
    }
    for (std::size_t c = 0; c < schema.size() && !from_history; ++c) {
        const auto& codec = schema.codec(c);
        const auto fields = schema.component_at(c).fields.size();
        const auto entities = codec.pool_entities(reg);
        auto& rows = image.replicated[c];
        rows.indices.clear();
        rows.indices.reserve(entities.size());
        rows.values.resize(entities.size() * fields);
        for (std::size_t r = 0; r < entities.size(); ++r) {
            rows.indices.push_back(to_index(entities[r]));
            codec.quantize_one(reg, entities[r], rows.values.data() + r * fields);
        }
    }

    image.saved.resize(saveable.entries().size());
    thread_local std::vector<entity> entities; // scratch, kept between checkpoints (no fresh pages)
    for (std::size_t s = 0; s < saveable.entries().size(); ++s) {
        entities.clear();
        image.saved[s].indices.clear();
        image.saved[s].bytes.clear();
        saveable.entries()[s].copy(reg, entities, image.saved[s].bytes);
        image.saved[s].indices.reserve(entities.size());
        for (const auto e : entities) {
            image.saved[s].indices.push_back(to_index(e));
        }
    }
    image.world_state = world.save_state();
    return image;
}

std::vector<std::byte> encode_checkpoint(const checkpoint_image& image) {
    std::vector<std::byte> out;
    std::size_t estimate = header_bytes + checksum_bytes + 16 + image.pool.slots.size() * 4 +
                           image.generations.size() * 8 + image.world_state.size();
    for (const auto& rows : image.replicated) {
        estimate += 8 + rows.indices.size() * 4 + rows.values.size() * 4;
    }
    for (const auto& rows : image.saved) {
        estimate += 8 + rows.indices.size() * 4 + rows.bytes.size();
    }
    out.reserve(estimate);
    byte_writer w{out};
    const auto body_start = start_file(out, image.schema_hash, image.saveable_hash, image.tick);

    w.u32(static_cast<std::uint32_t>(image.pool.slots.size()));
    w.u32(image.pool.free_head);
    for (const auto slot : image.pool.slots) {
        w.u32(to_integral(slot));
    }
    w.u32(static_cast<std::uint32_t>(image.generations.size()));
    for (const auto& [index, generation] : image.generations) {
        w.u32(index);
        w.u32(generation);
    }
    w.u32(static_cast<std::uint32_t>(image.replicated.size()));
    for (const auto& rows : image.replicated) {
        w.u32s(rows.indices);
        w.u32s(rows.values);
    }
    w.u32(static_cast<std::uint32_t>(image.saved.size()));
    for (const auto& rows : image.saved) {
        w.u32s(rows.indices);
        w.u32(static_cast<std::uint32_t>(rows.bytes.size()));
        w.raw(rows.bytes.data(), rows.bytes.size());
    }
    w.u32(static_cast<std::uint32_t>(image.world_state.size()));
    w.raw(image.world_state.data(), image.world_state.size());

    finish_file(out, body_start);
    return out;
}

std::vector<std::byte> seal_checkpoint(std::uint64_t schema_hash, std::uint64_t saveable_hash,
                                       std::uint64_t tick, std::span<const std::byte> body) {
    std::vector<std::byte> out;
    out.reserve(header_bytes + body.size() + checksum_bytes);
    const auto body_start = start_file(out, schema_hash, saveable_hash, tick);
    out.insert(out.end(), body.begin(), body.end());
    finish_file(out, body_start);
    return out;
}

std::span<const std::byte> checkpoint_body(const std::vector<std::byte>& file) noexcept {
    if (file.size() < header_bytes + checksum_bytes) {
        return {};
    }
    return std::span<const std::byte>{file}.subspan(header_bytes,
                                                    file.size() - header_bytes - checksum_bytes);
}

std::optional<checkpoint_refusal> decode_checkpoint(const std::vector<std::byte>& bytes,
                                                    const proto::schema& schema,
                                                    const saveable_components& saveable,
                                                    checkpoint_image& out) {
    // 1. The header, in the order that names the first thing wrong: not ours, not our format, cut short,
    // changed, another game's.
    const auto prefix = std::min(bytes.size(), magic.size());
    if (prefix != 0 && std::memcmp(bytes.data(), magic.data(), prefix) != 0) {
        return refuse(checkpoint_error::bad_magic, "bad magic: not an ecsnet checkpoint");
    }
    if (bytes.size() < header_bytes) {
        return refuse(checkpoint_error::truncated, "truncated: " + std::to_string(bytes.size()) +
                                                       " bytes, shorter than the " +
                                                       std::to_string(header_bytes) + "-byte header");
    }
    byte_reader header{bytes.data() + magic.size(), header_bytes - magic.size()};
    const auto version = header.u32();
    const auto flags = header.u32();
    const auto schema_hash = header.u64();
    const auto saveable_hash = header.u64();
    const auto tick = header.u64();
    const auto body_size = header.u64();
    if (version != checkpoint_format_version) {
        return refuse(checkpoint_error::other_version,
                      "other format version: the file is version " + std::to_string(version) +
                          ", this server reads version " + std::to_string(checkpoint_format_version));
    }
    if (body_size > max_body_bytes) {
        return refuse(checkpoint_error::malformed, "malformed: body size " + std::to_string(body_size));
    }
    const auto expected = header_bytes + static_cast<std::size_t>(body_size) + checksum_bytes;
    if (bytes.size() < expected) {
        return refuse(checkpoint_error::truncated, "truncated: " + std::to_string(bytes.size()) +
                                                       " bytes, the header announces " +
                                                       std::to_string(expected));
    }
    if (bytes.size() > expected) {
        return refuse(checkpoint_error::checksum_mismatch,
                      "checksum mismatch: " + std::to_string(bytes.size() - expected) +
                          " bytes past the checksum");
    }
    const auto sum = checksum_of(bytes.data(), header_bytes + body_size);
    if (std::memcmp(sum.data(), bytes.data() + header_bytes + body_size, checksum_bytes) != 0) {
        return refuse(checkpoint_error::checksum_mismatch,
                      "checksum mismatch: the file changed after it was written (corrupt)");
    }
    if (schema_hash != schema.hash()) {
        return refuse(checkpoint_error::other_schema,
                      "other schema: the checkpoint's replicated schema hash is " + hex(schema_hash) +
                          ", this server's is " + hex(schema.hash()));
    }
    if (saveable_hash != saveable.hash()) {
        return refuse(checkpoint_error::other_schema,
                      "other schema: the checkpoint's saveable server-only components (hash " +
                          hex(saveable_hash) + ") differ from this server's (" + hex(saveable.hash()) + ")");
    }
    if (flags != 0 || tick > 0xFFFFFFFFULL) {
        return refuse(checkpoint_error::malformed, "malformed: unknown flags or tick");
    }

    // 2. The body, into a fresh image, every index and value checked.
    checkpoint_image image;
    image.schema_hash = schema_hash;
    image.saveable_hash = saveable_hash;
    image.tick = static_cast<proto::tick_type>(tick);
    byte_reader r{bytes.data() + header_bytes, static_cast<std::size_t>(body_size)};
    const auto slots = r.count(4);
    image.pool.free_head = r.u32();
    image.pool.slots.resize(slots);
    for (auto& slot : image.pool.slots) {
        slot = entity{r.u32()};
    }
    if (r.failed()) {
        return refuse(checkpoint_error::malformed, "malformed: entity slots");
    }
    if (auto wrong = entity_pool_image_error(image.pool, registry::max_entities())) {
        return refuse(checkpoint_error::malformed, "malformed: " + *wrong);
    }
    std::vector<std::uint32_t> stamp(slots, 0);
    std::uint32_t next_stamp = 1;

    const auto generations = r.count(8);
    image.generations.resize(generations);
    for (auto& [index, generation] : image.generations) {
        index = r.u32();
        generation = r.u32();
        if (!r.failed() &&
            (index >= slots || to_index(image.pool.slots[index]) != index ||
             (generation & entity_traits::version_mask) != to_version(image.pool.slots[index]))) {
            return refuse(checkpoint_error::malformed, "malformed: generation " + std::to_string(generation) +
                                                           " of entity index " + std::to_string(index) +
                                                           " does not match the entity slots");
        }
    }

    const auto components = r.u32();
    if (r.failed() || components != schema.size()) {
        return refuse(checkpoint_error::malformed, "malformed: " + std::to_string(components) +
                                                       " replicated components, the schema has " +
                                                       std::to_string(schema.size()));
    }
    image.replicated.resize(components);
    for (std::size_t c = 0; c < components; ++c) {
        const auto& info = schema.component_at(c);
        auto& rows = image.replicated[c];
        r.u32s(rows.indices);
        r.u32s(rows.values);
        if (r.failed() || rows.values.size() != rows.indices.size() * info.fields.size()) {
            return refuse(checkpoint_error::malformed, "malformed: component '" + info.name + "' rows");
        }
        if (auto wrong = check_indices(rows.indices, image.pool, stamp, next_stamp++,
                                       "component '" + info.name + "'")) {
            return refuse(checkpoint_error::malformed, "malformed: " + *wrong);
        }
        for (std::size_t v = 0; v < rows.values.size(); ++v) {
            const auto& field = info.fields[v % info.fields.size()];
            if (field.bits < 32 && rows.values[v] >> field.bits != 0) {
                return refuse(checkpoint_error::malformed,
                              "malformed: component '" + info.name + "' field '" + field.name +
                                  "' value out of its " + std::to_string(field.bits) + " bits");
            }
        }
    }

    const auto saved = r.u32();
    if (r.failed() || saved != saveable.entries().size()) {
        return refuse(checkpoint_error::malformed, "malformed: saveable component count");
    }
    image.saved.resize(saved);
    for (std::size_t s = 0; s < saved; ++s) {
        const auto& entry = saveable.entries()[s];
        auto& rows = image.saved[s];
        r.u32s(rows.indices);
        const auto size = r.count(1);
        rows.bytes.resize(size);
        r.raw(rows.bytes.data(), size);
        if (r.failed() || size != rows.indices.size() * entry.size) {
            return refuse(checkpoint_error::malformed, "malformed: component '" + entry.name + "' rows");
        }
        if (auto wrong = check_indices(rows.indices, image.pool, stamp, next_stamp++,
                                       "component '" + entry.name + "'")) {
            return refuse(checkpoint_error::malformed, "malformed: " + *wrong);
        }
    }
    const auto state = r.count(1);
    image.world_state.resize(state);
    r.raw(image.world_state.data(), state);
    if (r.failed() || r.left() != 0) {
        return refuse(checkpoint_error::malformed, "malformed: world state");
    }
    out = std::move(image);
    return std::nullopt;
}

std::optional<checkpoint_refusal> apply_checkpoint(const checkpoint_image& image, game_world& world,
                                                   const saveable_components& saveable,
                                                   proto::snapshot_history& history) {
    if (auto refused = world.load_state(image.world_state)) {
        return refuse(checkpoint_error::malformed, "the world refused its saved state: " + *refused);
    }
    auto& reg = world.registry();
    reg.clear();
    reg.restore_entity_pool(image.pool);
    const auto& schema = world.replicated_schema();
    for (std::size_t c = 0; c < image.replicated.size(); ++c) {
        const auto& codec = schema.codec(c);
        const auto fields = schema.component_at(c).fields.size();
        const auto& rows = image.replicated[c];
        for (std::size_t r = 0; r < rows.indices.size(); ++r) {
            codec.write(reg, reg.current(rows.indices[r]), rows.values.data() + r * fields);
        }
    }
    for (std::size_t s = 0; s < image.saved.size(); ++s) {
        const auto& entry = saveable.entries()[s];
        const auto& rows = image.saved[s];
        for (std::size_t r = 0; r < rows.indices.size(); ++r) {
            entry.paste(reg, reg.current(rows.indices[r]), rows.bytes.data() + r * entry.size);
        }
    }
    for (const auto& [index, generation] : image.generations) {
        history.restore_generation(reg.current(index), generation);
    }
    world.restored();
    return std::nullopt;
}

checkpoint_write_result write_checkpoint_file(const std::string& path, const std::vector<std::byte>& bytes,
                                              std::chrono::milliseconds pause_midway) {
    const std::filesystem::path target{path};
    auto directory = target.parent_path();
    if (directory.empty()) {
        directory = ".";
    }
    const auto temporary = path + ".tmp-" + std::to_string(::getpid());
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return {false, errno_words("cannot create", temporary)};
    }
    const auto fail = [&](const std::string& step) {
        checkpoint_write_result result{false, errno_words(step, temporary)};
        ::close(fd);
        ::unlink(temporary.c_str());
        return result;
    };
    const auto write_all = [fd](const std::byte* data, std::size_t size) {
        while (size > 0) {
            const auto n = ::write(fd, data, size);
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                return false;
            }
            data += n;
            size -= static_cast<std::size_t>(n);
        }
        return true;
    };
    const auto half = bytes.size() / 2;
    if (!write_all(bytes.data(), half)) {
        return fail("cannot write");
    }
    if (pause_midway.count() > 0) {
        std::this_thread::sleep_for(pause_midway); // tests: a kill lands here, mid-write
    }
    if (!write_all(bytes.data() + half, bytes.size() - half)) {
        return fail("cannot write");
    }
    if (::fsync(fd) != 0) {
        return fail("cannot fsync");
    }
    if (::close(fd) != 0) {
        checkpoint_write_result result{false, errno_words("cannot close", temporary)};
        ::unlink(temporary.c_str());
        return result;
    }
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        checkpoint_write_result result{false, errno_words("cannot rename over", path)};
        ::unlink(temporary.c_str());
        return result;
    }
    // The rename itself is durable only once the directory is.
    const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        return {false, errno_words("cannot open the directory", directory.string())};
    }
    const bool synced = ::fsync(dir) == 0;
    const auto words = synced ? std::string{} : errno_words("cannot fsync the directory", directory.string());
    ::close(dir);
    return {synced, words};
}

std::optional<checkpoint_refusal> read_checkpoint_file(const std::string& path, std::vector<std::byte>& out) {
    std::ifstream in{path, std::ios::binary};
    if (!in) {
        return refuse(checkpoint_error::missing,
                      "missing: cannot read '" + path + "': " + std::strerror(errno));
    }
    in.seekg(0, std::ios::end);
    const auto size = in.tellg();
    in.seekg(0, std::ios::beg);
    if (size < 0 || static_cast<std::uint64_t>(size) > max_body_bytes + header_bytes + checksum_bytes) {
        return refuse(checkpoint_error::malformed, "malformed: '" + path + "' is too large");
    }
    out.resize(static_cast<std::size_t>(size));
    if (!in.read(reinterpret_cast<char*>(out.data()), size)) {
        return refuse(checkpoint_error::missing, "missing: cannot read '" + path + "'");
    }
    return std::nullopt;
}

std::size_t remove_stale_temporaries(const std::string& path) {
    const std::filesystem::path target{path};
    auto directory = target.parent_path();
    if (directory.empty()) {
        directory = ".";
    }
    const auto prefix = target.filename().string() + ".tmp-";
    std::size_t removed = 0;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator{directory, ec}) {
        const auto name = entry.path().filename().string();
        if (name.starts_with(prefix) && entry.is_regular_file(ec) &&
            std::filesystem::remove(entry.path(), ec)) {
            ++removed;
        }
    }
    return removed;
}

std::optional<std::string> check_checkpoint_directory(const std::string& path) {
    std::filesystem::path directory = std::filesystem::path{path}.parent_path();
    if (directory.empty()) {
        directory = ".";
    }
    const auto probe = (directory / (".ecsnet-probe-" + std::to_string(::getpid()))).string();
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return "cannot write in '" + directory.string() + "': " + std::strerror(errno);
    }
    ::close(fd);
    ::unlink(probe.c_str());
    return std::nullopt;
}

} // namespace ecsnet::server
