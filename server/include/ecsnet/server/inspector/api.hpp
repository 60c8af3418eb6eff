#pragma once

// The inspector's JSON API (docs/inspector.md, "API"): pure functions from a published frame (and the
// feed's rings) to a status and a body, so they are tested without HTTP and never touch the world.
//
//   GET /api/world                     summary: tick, entities, schema, tick rate, relevancy radius
//   GET /api/entities?page=&per_page=&q=   the entity list, paged (per_page at most 500)
//   GET /api/entity/<index>            one entity: every replicated component, quantized and real
//   GET /api/clients                   connected clients and the recent disconnects
//   GET /api/series                    one sample a second, the last 10 minutes
//   GET /api/stream                    text/event-stream of stream_event() (admin_server.cpp)
//
// Bad input (an id or page that is not a number, out of range, too long) is a 400 with a JSON
// {"error": "..."}; an entity that is not there a 404.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <ecsnet/proto/schema.hpp>

#include "inspector_feed.hpp"

namespace ecsnet::server::inspector {

struct api_reply {
    int status{200};
    std::string body;
};

/// Where the map finds positions and kinds: Transform.x / .y and Kind.value when the schema has them.
struct map_fields {
    std::optional<std::size_t> position;
    std::size_t x{};
    std::size_t y{};
    std::optional<std::size_t> kind;
    std::size_t kind_field{};

    static map_fields of(const proto::schema_layout& layout);
};

/// The largest numbers of entities a map event and a list page carry.
inline constexpr std::size_t map_points_max = 20'000;
inline constexpr std::size_t per_page_max = 500;

/// A non-negative decimal number no larger than `max`, or nothing (empty, signs, garbage, overflow).
[[nodiscard]] std::optional<std::size_t> parse_count(std::string_view text, std::size_t max) noexcept;

[[nodiscard]] api_reply world_reply(const frame* current, const proto::schema_layout& layout);
[[nodiscard]] api_reply entities_reply(const frame& current, const proto::schema_layout& layout,
                                       std::string_view page, std::string_view per_page,
                                       std::string_view query);
/// `server`: the entity's server-only components, if the tick thread answered in time.
[[nodiscard]] api_reply entity_reply(const frame& current, const proto::schema_layout& layout,
                                     std::string_view index, const server_only_view* server = nullptr);
[[nodiscard]] api_reply clients_reply(const frame* current, const proto::schema_layout& layout,
                                      std::span<const disconnect_record> disconnects);
[[nodiscard]] api_reply series_reply(std::span<const series_sample> samples);
/// The event stream's payload for one frame: tick, entity count, a sample of at most `map_points`
/// positions and kinds (every n-th entity, avatars always), and the clients.
[[nodiscard]] std::string stream_event(const frame& current, const proto::schema_layout& layout,
                                       std::size_t map_points);
[[nodiscard]] std::string error_body(std::string_view message);

} // namespace ecsnet::server::inspector
