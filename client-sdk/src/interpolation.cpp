#include "ecsnet/client/interpolation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

namespace ecsnet::client {

namespace {

// Quantized units in a full turn of an angle field (at most 24 bits wide).
double full_turn(unsigned bits) noexcept {
    return static_cast<double>(std::uint64_t{1} << (bits & 63U));
}

} // namespace

void state_buffer::push(const proto::replicated_state& state) {
    if (capacity_ == 0) {
        return;
    }
    if (slots_.size() < capacity_ && size_ == slots_.size()) {
        // Growing: the ring is in order from slot 0 while it is not full.
        slots_.push_back(std::make_unique<proto::replicated_state>());
    }
    const auto slot = (first_ + size_) % slots_.size();
    if (size_ == slots_.size()) {
        first_ = (first_ + 1) % slots_.size(); // full: the oldest is overwritten
    } else {
        ++size_;
    }
    // Copy-assignment reuses the slot's memory (vectors and compact id columns keep their capacity).
    *slots_[slot] = state;
}

void state_buffer::clear() noexcept {
    first_ = 0;
    size_ = 0;
}

std::size_t state_buffer::memory_bytes() const noexcept {
    std::size_t bytes = 0;
    for (const auto& slot : slots_) {
        bytes += slot->memory_bytes();
    }
    return bytes;
}

interpolation_window find_window(const state_buffer& states, std::int64_t render_time_us) {
    interpolation_window window;
    // The newest state at or before the render time.
    std::size_t after = states.size();
    for (std::size_t i = states.size(); i-- > 0;) {
        if (static_cast<std::int64_t>(states[i].server_time_us) <= render_time_us) {
            window.before = &states[i];
            after = i + 1;
            break;
        }
        after = i;
    }
    if (after < states.size()) {
        window.after = &states[after];
    }
    if (window.before != nullptr && window.after != nullptr) {
        const auto from = static_cast<double>(window.before->server_time_us);
        const auto to = static_cast<double>(window.after->server_time_us);
        window.alpha = to > from ? (static_cast<double>(render_time_us) - from) / (to - from) : 0.0;
        window.alpha = window.alpha < 0.0 ? 0.0 : window.alpha > 1.0 ? 1.0 : window.alpha;
    } else {
        window.alpha = window.before != nullptr ? 0.0 : 1.0;
    }
    return window;
}

double decode_field(const proto::field_info& field, std::uint32_t quantized) noexcept {
    switch (field.encoding) {
    case proto::field_encoding::fixed_point:
        return field.min + static_cast<double>(quantized) * field.step;
    case proto::field_encoding::angle:
        return static_cast<double>(quantized) * (2.0 * std::numbers::pi / full_turn(field.bits));
    default:
        return static_cast<double>(quantized);
    }
}

double interpolate_field(const proto::field_info& field, std::uint32_t before, std::uint32_t after,
                         double alpha) noexcept {
    switch (field.encoding) {
    case proto::field_encoding::fixed_point: {
        const double from = decode_field(field, before);
        return from + (decode_field(field, after) - from) * alpha;
    }
    case proto::field_encoding::angle: {
        // The shorter arc, in quantized units (a full turn is 2^bits), then back to radians in [0, 2pi).
        const double turn = full_turn(field.bits);
        double delta = static_cast<double>(after) - static_cast<double>(before);
        if (delta >= turn / 2) {
            delta -= turn;
        } else if (delta < -turn / 2) {
            delta += turn;
        }
        double q = static_cast<double>(before) + delta * alpha;
        if (q < 0.0) {
            q += turn;
        } else if (q >= turn) {
            q -= turn;
        }
        return q * (2.0 * std::numbers::pi / turn);
    }
    default:
        // Integers and booleans hold the earlier snapshot's value until the later snapshot's time.
        return static_cast<double>(alpha >= 1.0 ? after : before);
    }
}

namespace {

// Position of `index` among the state's entities: a binary search of the flat form when the state has it
// (client states do), else a search of the compact ids.
std::size_t entity_position(const proto::replicated_state& state, std::uint32_t index) {
    if (state.flat_valid) {
        const auto& flat = state.flat_entities;
        const auto it = std::lower_bound(flat.begin(), flat.end(), index);
        return it != flat.end() && *it == index ? static_cast<std::size_t>(it - flat.begin())
                                                : proto::id_column::npos;
    }
    return state.entity_ids().find(index);
}

} // namespace

std::optional<std::size_t> find_row(const proto::replicated_state& state, std::size_t component,
                                    proto::net_entity id) {
    if (component >= state.components.size()) {
        return std::nullopt;
    }
    const auto& columns = state.components[component];
    const auto position = entity_position(state, id.index);
    if (position == proto::id_column::npos || position >= state.generations.size() ||
        state.generations[position] != id.generation) {
        return std::nullopt; // absent, or another occupant of the index
    }
    const auto row = columns.ids_are_entities ? position : columns.own_ids.find(id.index);
    if (row == proto::id_column::npos) {
        return std::nullopt;
    }
    return row;
}

bool sample_into(const proto::schema& schema, const interpolation_window& window, std::size_t component,
                 proto::net_entity id, void* out) {
    if (component >= schema.size()) {
        return false;
    }
    // Plain row numbers (npos: absent) rather than optionals, which g++ 12 misjudges as uninitialised here.
    constexpr auto absent = proto::id_column::npos;
    const auto row_in = [&](const proto::replicated_state* state) {
        const auto row = state != nullptr ? find_row(*state, component, id) : std::nullopt;
        return row ? *row : absent;
    };
    const auto from = row_in(window.before);
    const auto to = row_in(window.after);
    if (from == absent && to == absent) {
        return false;
    }
    const auto& fields = schema.component_at(component).fields;
    std::array<double, proto::max_fields_per_component> values{};
    for (std::size_t f = 0; f < fields.size(); ++f) {
        if (from != absent && to != absent) {
            values[f] =
                interpolate_field(fields[f], window.before->components[component].fields[f].get(from),
                                  window.after->components[component].fields[f].get(to), window.alpha);
        } else if (from != absent) {
            values[f] = decode_field(fields[f], window.before->components[component].fields[f].get(from));
        } else {
            values[f] = decode_field(fields[f], window.after->components[component].fields[f].get(to));
        }
    }
    schema.codec(component).assign(out, values.data());
    return true;
}

} // namespace ecsnet::client
