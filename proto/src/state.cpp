#include "ecsnet/proto/state.hpp"

namespace ecsnet::proto {

void replicated_state::reset(const schema_layout& layout) {
    tick = 0;
    checksum = 0;
    server_time_us = 0;
    entities.clear();
    entities_stale = false;
    generations.clear();
    flat_entities.clear();
    flat_valid = false;
    written_since.reset();
    continuing.clear();
    written.resize(layout.size());
    for (auto& list : written) {
        list.clear();
    }
    components.resize(layout.size());
    for (std::size_t c = 0; c < layout.size(); ++c) {
        auto& component = components[c];
        component.ids_are_entities = true;
        component.own_ids.clear();
        const auto& fields = layout[c].fields;
        if (component.fields.size() != fields.size()) {
            component.fields.clear();
            for (const auto& field : fields) {
                component.fields.emplace_back(field.storage_bytes);
            }
        } else {
            for (std::size_t f = 0; f < fields.size(); ++f) {
                if (component.fields[f].width() != fields[f].storage_bytes) {
                    component.fields[f] = field_column{fields[f].storage_bytes};
                } else {
                    component.fields[f].clear();
                }
            }
        }
    }
}

const id_column& replicated_state::entity_ids() const {
    if (entities_stale) {
        entities.clear();
        entities.append(flat_entities.begin(), flat_entities.end());
        entities_stale = false;
    }
    return entities;
}

const std::vector<std::uint32_t>& replicated_state::flat(std::vector<std::uint32_t>& scratch) const {
    if (flat_valid) {
        return flat_entities;
    }
    flatten(entities, scratch);
    return scratch;
}

std::size_t replicated_state::memory_bytes() const noexcept {
    std::size_t bytes = entities.memory_bytes() + generations.capacity() * sizeof(std::uint32_t) +
                        flat_entities.capacity() * sizeof(std::uint32_t);
    for (const auto& list : written) {
        bytes += list.capacity() * sizeof(std::uint32_t);
    }
    bytes += continuing.capacity() * sizeof(aligned_run);
    for (const auto& component : components) {
        bytes += component.own_ids.memory_bytes();
        for (const auto& field : component.fields) {
            bytes += field.memory_bytes();
        }
    }
    return bytes;
}

bool replicated_state::same_contents(const replicated_state& other, bool compare_generations) const {
    if (!(entity_ids() == other.entity_ids()) || components.size() != other.components.size()) {
        return false;
    }
    if (compare_generations && !generations.empty() && !other.generations.empty() &&
        generations != other.generations) {
        return false;
    }
    for (std::size_t c = 0; c < components.size(); ++c) {
        if (!(ids(c) == other.ids(c)) || components[c].fields.size() != other.components[c].fields.size()) {
            return false;
        }
        for (std::size_t f = 0; f < components[c].fields.size(); ++f) {
            if (!(components[c].fields[f] == other.components[c].fields[f])) {
                return false;
            }
        }
    }
    return true;
}

std::string replicated_state::first_difference(const replicated_state& other, const schema_layout& layout,
                                               bool compare_generations) const {
    std::vector<std::uint32_t> a;
    std::vector<std::uint32_t> b;
    a = flat(a);
    b = other.flat(b);
    if (a != b) {
        for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
            if (i >= a.size() || i >= b.size() || a[i] != b[i]) {
                return "entities differ at position " + std::to_string(i) + " (" +
                       (i < a.size() ? std::to_string(a[i]) : "end") + " vs " +
                       (i < b.size() ? std::to_string(b[i]) : "end") + "), sizes " +
                       std::to_string(a.size()) + " vs " + std::to_string(b.size());
            }
        }
    }
    if (compare_generations && !generations.empty() && !other.generations.empty()) {
        for (std::size_t i = 0; i < std::min(generations.size(), other.generations.size()); ++i) {
            if (generations[i] != other.generations[i]) {
                return "generation of entity " + std::to_string(a[i]) +
                       " differs: " + std::to_string(generations[i]) + " vs " +
                       std::to_string(other.generations[i]);
            }
        }
    }
    for (std::size_t c = 0; c < components.size() && c < layout.size(); ++c) {
        flatten(ids(c), a);
        flatten(other.ids(c), b);
        if (a != b) {
            return "ids of component '" + layout[c].name + "' differ (sizes " + std::to_string(a.size()) +
                   " vs " + std::to_string(b.size()) + ")";
        }
        for (std::size_t f = 0; f < layout[c].fields.size(); ++f) {
            const auto& x = components[c].fields[f];
            const auto& y = other.components[c].fields[f];
            for (std::size_t i = 0; i < a.size(); ++i) {
                if (x.get(i) != y.get(i)) {
                    return "component '" + layout[c].name + "' field '" + layout[c].fields[f].name +
                           "' of entity " + std::to_string(a[i]) + " differs: " + std::to_string(x.get(i)) +
                           " vs " + std::to_string(y.get(i));
                }
            }
        }
    }
    return {};
}

void flatten(const id_column& column, std::vector<std::uint32_t>& out) {
    out.resize(column.size());
    auto* at = out.data();
    column.for_each([&at](std::uint32_t v) { *at++ = v; });
}

} // namespace ecsnet::proto
