#include "ecsnet/server/inspector/api.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "ecsnet/server/inspector/json_out.hpp"

namespace ecsnet::server::inspector {

namespace {

const char* encoding_name(proto::field_encoding encoding) noexcept {
    switch (encoding) {
    case proto::field_encoding::fixed_point:
        return "fixed_point";
    case proto::field_encoding::angle:
        return "angle";
    case proto::field_encoding::unsigned_integer:
        return "unsigned";
    case proto::field_encoding::signed_integer:
        return "signed";
    case proto::field_encoding::boolean:
        return "boolean";
    }
    return "unknown";
}

std::optional<double> field_of(const frame& f, const proto::schema_layout& layout, std::size_t c,
                               std::size_t field, std::size_t at) {
    const auto row = f.row_of(c, at);
    if (!row) {
        return std::nullopt;
    }
    return dequantize(layout[c].fields[field], f.components[c].fields[field].get(*row));
}

const client_summary* client_of(const frame& f, std::uint32_t index) {
    for (const auto& c : f.clients) {
        if (c.avatar && *c.avatar == index) {
            return &c;
        }
    }
    return nullptr;
}

void write_client(json_out& out, const client_summary& c, const frame* f, const map_fields& map,
                  const proto::schema_layout& layout) {
    out.begin_object();
    out.member("id", c.id).member("name", c.name).member("remote", c.remote).member("transport", c.transport);
    out.member("playing", c.playing);
    out.key("avatar");
    c.avatar ? out.value(*c.avatar) : out.null();
    std::optional<double> x;
    std::optional<double> y;
    if (f != nullptr && c.avatar && map.position) {
        if (const auto at = f->find(*c.avatar)) {
            x = field_of(*f, layout, *map.position, map.x, *at);
            y = field_of(*f, layout, *map.position, map.y, *at);
        }
    }
    out.key("x");
    x ? out.value(*x) : out.null();
    out.key("y");
    y ? out.value(*y) : out.null();
    out.key("rtt_ms");
    c.rtt_ms ? out.value(*c.rtt_ms) : out.null();
    out.key("loss");
    c.loss ? out.value(*c.loss) : out.null();
    out.member("bytes_out", c.bytes_sent).member("bytes_in", c.bytes_received);
    out.key("ticks_behind");
    c.ticks_behind ? out.value(*c.ticks_behind) : out.null();
    out.member("full_state_requests", c.full_state_requests).member("inputs", c.inputs_received);
    out.member("unsent_bytes", c.unsent_bytes);
    out.end_object();
}

} // namespace

map_fields map_fields::of(const proto::schema_layout& layout) {
    map_fields out;
    if (const auto transform = layout.find("Transform")) {
        const auto& fields = layout[*transform].fields;
        const auto named = [&](std::string_view name) -> std::optional<std::size_t> {
            for (std::size_t f = 0; f < fields.size(); ++f) {
                if (fields[f].name == name) {
                    return f;
                }
            }
            return std::nullopt;
        };
        const auto x = named("x");
        const auto y = named("y");
        if (x && y) {
            out.position = transform;
            out.x = *x;
            out.y = *y;
        }
    }
    if (const auto kind = layout.find("Kind"); kind && !layout[*kind].fields.empty()) {
        out.kind = kind;
    }
    return out;
}

std::optional<std::size_t> parse_count(std::string_view text, std::size_t max) noexcept {
    if (text.empty() || text.size() > 9) {
        return std::nullopt;
    }
    std::size_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || value > max) {
        return std::nullopt;
    }
    return value;
}

std::string error_body(std::string_view message) {
    json_out out;
    out.begin_object().member("error", message).end_object();
    return out.take();
}

api_reply world_reply(const frame* current, const proto::schema_layout& layout) {
    json_out out;
    out.begin_object();
    if (current != nullptr) {
        out.member("tick", current->tick).member("entities", current->entities.size());
        out.member("clients", current->clients.size()).member("tick_rate", current->tick_rate);
        out.member("relevancy_radius", static_cast<double>(current->relevancy_radius));
        out.member("checksum", std::to_string(current->checksum)).member("unix_ms", current->unix_ms);
        out.member("copy_ms", current->copy_ms);
    } else {
        out.key("tick").null();
    }
    out.key("components").begin_array();
    for (const auto& component : layout.components()) {
        out.begin_object().member("name", component.name).key("fields").begin_array();
        for (const auto& field : component.fields) {
            out.begin_object().member("name", field.name).member("encoding", encoding_name(field.encoding));
            out.member("bits", field.bits).end_object();
        }
        out.end_array().end_object();
    }
    out.end_array().end_object();
    return {current != nullptr ? 200 : 503, out.take()};
}

api_reply entities_reply(const frame& current, const proto::schema_layout& layout, std::string_view page,
                         std::string_view per_page, std::string_view query) {
    const auto page_number = page.empty() ? std::optional<std::size_t>{0} : parse_count(page, 1'000'000);
    const auto page_size =
        per_page.empty() ? std::optional<std::size_t>{100} : parse_count(per_page, per_page_max);
    if (!page_number || !page_size || *page_size == 0) {
        return {400, error_body("page must be a number >= 0 and per_page a number from 1 to " +
                                std::to_string(per_page_max))};
    }
    if (query.size() > 64) {
        return {400, error_body("q is at most 64 characters")};
    }
    const auto map = map_fields::of(layout);
    // q: digits match the start of an entity's index; other text a client's name (its avatar).
    const bool numeric = !query.empty() &&
                         std::all_of(query.begin(), query.end(), [](char c) { return c >= '0' && c <= '9'; });
    // Names: the matching clients' avatars, looked up by index (not every client for every entity).
    std::vector<std::uint32_t> named;
    if (!numeric && !query.empty()) {
        for (const auto& client : current.clients) {
            if (client.avatar && client.name.find(query) != std::string::npos) {
                named.push_back(*client.avatar);
            }
        }
        std::sort(named.begin(), named.end());
    }
    const auto matches_query = [&](std::size_t at) {
        if (query.empty()) {
            return true;
        }
        if (numeric) {
            char digits[12];
            const auto end = std::to_chars(digits, digits + sizeof digits, current.entities[at]).ptr;
            return std::string_view{digits, static_cast<std::size_t>(end - digits)}.starts_with(query);
        }
        return std::binary_search(named.begin(), named.end(), current.entities[at]);
    };
    const std::size_t first = *page_number * *page_size;
    std::size_t total = 0;
    json_out out;
    out.begin_object()
        .member("tick", current.tick)
        .member("page", *page_number)
        .member("per_page", *page_size);
    out.key("items").begin_array();
    for (std::size_t at = 0; at < current.entities.size(); ++at) {
        if (!matches_query(at)) {
            continue;
        }
        if (total >= first && total < first + *page_size) {
            out.begin_object()
                .member("index", current.entities[at])
                .member("generation", current.generations[at]);
            if (map.kind) {
                const auto kind = field_of(current, layout, *map.kind, map.kind_field, at);
                out.key("kind");
                kind ? out.value(*kind) : out.null();
            }
            if (map.position) {
                const auto x = field_of(current, layout, *map.position, map.x, at);
                const auto y = field_of(current, layout, *map.position, map.y, at);
                out.key("x");
                x ? out.value(*x) : out.null();
                out.key("y");
                y ? out.value(*y) : out.null();
            }
            if (const auto* client = client_of(current, current.entities[at])) {
                out.member("client", client->name);
            }
            out.end_object();
        }
        ++total;
    }
    out.end_array().member("total", total);
    out.member("pages", (total + *page_size - 1) / *page_size).end_object();
    return {200, out.take()};
}

api_reply entity_reply(const frame& current, const proto::schema_layout& layout, std::string_view index,
                       const server_only_view* server) {
    const auto wanted = parse_count(index, proto::max_net_index);
    if (!wanted) {
        return {400, error_body("an entity is named by its index, a number from 0 to " +
                                std::to_string(proto::max_net_index))};
    }
    const auto at = current.find(static_cast<std::uint32_t>(*wanted));
    if (!at) {
        return {404, error_body("no replicated entity " + std::to_string(*wanted) + " at tick " +
                                std::to_string(current.tick))};
    }
    json_out out;
    out.begin_object().member("index", current.entities[*at]).member("generation", current.generations[*at]);
    out.member("tick", current.tick);
    out.key("components").begin_array();
    for (std::size_t c = 0; c < current.components.size() && c < layout.size(); ++c) {
        const auto row = current.row_of(c, *at);
        if (!row) {
            continue;
        }
        out.begin_object().member("name", layout[c].name).key("fields").begin_array();
        for (std::size_t f = 0; f < layout[c].fields.size(); ++f) {
            const auto& field = layout[c].fields[f];
            const auto q = current.components[c].fields[f].get(*row);
            out.begin_object().member("name", field.name).member("encoding", encoding_name(field.encoding));
            out.member("quantized", q).member("real", dequantize(field, q)).end_object();
        }
        out.end_array().end_object();
    }
    out.end_array();
    out.key("client");
    if (const auto* client = client_of(current, current.entities[*at])) {
        out.begin_object().member("id", client->id).member("name", client->name).end_object();
    } else {
        out.null();
    }
    // Server-only components: read by the tick thread for this entity, when it answered in time and the
    // index still holds the same occupant (its entity version is the generation's low 12 bits).
    const bool same = server != nullptr && server->version &&
                      *server->version == (current.generations[*at] & entity_traits::version_mask);
    out.key("server_only");
    if (same) {
        out.begin_object().member("tick", server->tick).key("components").begin_array();
        for (const auto& component : server->components) {
            out.begin_object().member("name", component.name).key("fields").begin_array();
            for (const auto& [name, value] : component.fields) {
                out.begin_object().member("name", name).member("value", value).end_object();
            }
            out.end_array().end_object();
        }
        out.end_array().end_object();
    } else {
        out.null();
    }
    out.end_object();
    return {200, out.take()};
}

api_reply clients_reply(const frame* current, const proto::schema_layout& layout,
                        std::span<const disconnect_record> disconnects) {
    const auto map = map_fields::of(layout);
    json_out out;
    out.begin_object().key("clients").begin_array();
    if (current != nullptr) {
        for (const auto& c : current->clients) {
            write_client(out, c, current, map, layout);
        }
    }
    out.end_array().key("disconnects").begin_array();
    for (auto it = disconnects.rbegin(); it != disconnects.rend(); ++it) {
        out.begin_object().member("id", it->id).member("name", it->name).member("remote", it->remote);
        out.member("reason", it->reason).member("message", it->message).member("unix_ms", it->unix_ms);
        out.member("bytes_out", it->bytes_sent).member("bytes_in", it->bytes_received).end_object();
    }
    out.end_array().end_object();
    return {200, out.take()};
}

api_reply series_reply(std::span<const series_sample> samples) {
    json_out out;
    out.reserve(samples.size() * 140 + 64);
    out.begin_object().key("samples").begin_array();
    for (const auto& s : samples) {
        out.begin_object().member("unix_ms", s.unix_ms).member("tick_ms_mean", s.tick_ms_mean);
        out.member("tick_ms_max", s.tick_ms_max).member("ticks", s.ticks).member("clients", s.clients);
        out.member("bytes_out_per_s", s.bytes_out_per_s).member("bytes_in_per_s", s.bytes_in_per_s);
        out.member("entities", s.entities).end_object();
    }
    out.end_array().end_object();
    return {200, out.take()};
}

std::string stream_event(const frame& current, const proto::schema_layout& layout, std::size_t map_points) {
    const auto map = map_fields::of(layout);
    const std::size_t n = current.entities.size();
    const std::size_t points = std::max<std::size_t>(1, std::min(map_points, map_points_max));
    const std::size_t stride = std::max<std::size_t>(1, (n + points - 1) / points);
    json_out out;
    out.reserve(n / stride * 24 + 1024);
    out.begin_object().member("tick", current.tick).member("unix_ms", current.unix_ms);
    out.member("entities", n).member("copy_ms", current.copy_ms);
    out.member("relevancy_radius", static_cast<double>(current.relevancy_radius));
    out.key("map").begin_object().member("stride", stride);
    // Columns of whole metres (the map draws 2 km on a canvas: a metre is below a pixel), kinds, indices.
    const auto column = [&](std::string_view name, auto&& value_at) {
        out.key(name).begin_array();
        if (map.position) {
            for (std::size_t at = 0; at < n; at += stride) {
                value_at(at);
            }
        }
        out.end_array();
    };
    column("i", [&](std::size_t at) { out.value(current.entities[at]); });
    column("x", [&](std::size_t at) {
        out.value(std::lround(field_of(current, layout, *map.position, map.x, at).value_or(0.0)));
    });
    column("y", [&](std::size_t at) {
        out.value(std::lround(field_of(current, layout, *map.position, map.y, at).value_or(0.0)));
    });
    column("k", [&](std::size_t at) {
        out.value(map.kind
                      ? std::lround(field_of(current, layout, *map.kind, map.kind_field, at).value_or(0.0))
                      : 0L);
    });
    out.end_object();
    out.key("clients").begin_array();
    for (const auto& c : current.clients) {
        write_client(out, c, &current, map, layout);
    }
    out.end_array().end_object();
    return out.take();
}

} // namespace ecsnet::server::inspector
