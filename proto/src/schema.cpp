#include "ecsnet/proto/schema.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <unordered_set>

namespace ecsnet::proto {

namespace {

// FNV-1a, 64 bits (docs/protocol.md, "Schema hash").
class fnv1a {
public:
    void bytes(const void* data, std::size_t size) noexcept {
        const auto* p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < size; ++i) {
            state_ = (state_ ^ p[i]) * 0x100000001b3ULL;
        }
    }
    void byte(std::uint8_t b) noexcept { bytes(&b, 1); }
    void text(std::string_view s) noexcept {
        bytes(s.data(), s.size());
        byte(0);
    }
    void u64(std::uint64_t v) noexcept {
        for (int i = 0; i < 8; ++i) {
            byte(static_cast<std::uint8_t>(v >> (8 * i)));
        }
    }
    void f64(double v) noexcept { u64(std::bit_cast<std::uint64_t>(v)); }
    [[nodiscard]] std::uint64_t value() const noexcept { return state_; }

private:
    std::uint64_t state_{0xcbf29ce484222325ULL};
};

unsigned storage_bytes_for(unsigned bits) noexcept {
    return bits <= 8 ? 1U : bits <= 16 ? 2U : 4U;
}

result<void> invalid(std::string message) {
    return make_error(errc::schema_mismatch, std::move(message));
}

result<void> validate_name(std::string_view what, std::string_view name) {
    if (name.empty() || name.size() > max_name_length) {
        return invalid(std::string{what} + " name must have 1 to 64 bytes");
    }
    if (name.find('\0') != std::string_view::npos) {
        return invalid(std::string{what} + " name contains a NUL byte");
    }
    return {};
}

} // namespace

std::uint64_t component_hash(const component_info& component) noexcept {
    fnv1a h;
    h.text(component.name);
    h.byte(static_cast<std::uint8_t>(component.fields.size()));
    for (const auto& field : component.fields) {
        h.text(field.name);
        h.byte(static_cast<std::uint8_t>(field.encoding));
        h.byte(static_cast<std::uint8_t>(field.bits));
        h.byte(static_cast<std::uint8_t>(field.predict));
        if (field.encoding == field_encoding::fixed_point) {
            h.f64(field.min);
            h.f64(field.step);
        }
    }
    return h.value();
}

std::uint64_t schema_hash(std::span<const component_info> components) noexcept {
    fnv1a h;
    h.byte(static_cast<std::uint8_t>(components.size() & 0xFFU));
    h.byte(static_cast<std::uint8_t>(components.size() >> 8));
    for (const auto& component : components) {
        h.u64(component_hash(component));
    }
    return h.value();
}

result<void> validate(const component_info& component) {
    if (auto ok = validate_name("component", component.name); !ok) {
        return ok;
    }
    const auto where = "component '" + component.name + "'";
    if (component.fields.empty() || component.fields.size() > max_fields_per_component) {
        return invalid(where + " must have 1 to 32 fields");
    }
    std::unordered_set<std::string_view> names;
    for (const auto& field : component.fields) {
        if (auto ok = validate_name(where + " field", field.name); !ok) {
            return ok;
        }
        const auto at = where + " field '" + field.name + "'";
        if (!names.insert(field.name).second) {
            return invalid(at + " is declared twice");
        }
        unsigned max_bits = 32;
        switch (field.encoding) {
        case field_encoding::fixed_point:
        case field_encoding::unsigned_integer:
        case field_encoding::signed_integer:
            break;
        case field_encoding::angle:
            max_bits = 24;
            break;
        case field_encoding::boolean:
            max_bits = 1;
            break;
        default:
            return invalid(at + " has an unknown encoding");
        }
        if (field.bits < 1 || field.bits > max_bits) {
            return invalid(at + " has " + std::to_string(field.bits) + " bits (1 to " +
                           std::to_string(max_bits) + " allowed)");
        }
        if (field.predict != prediction::none && field.predict != prediction::linear) {
            return invalid(at + " has an unknown prediction");
        }
        if (field.encoding == field_encoding::fixed_point) {
            const double top = field.min + static_cast<double>(bit_mask(field.bits)) * field.step;
            if (!std::isfinite(field.min) || !std::isfinite(field.step) || !(field.step > 0.0) ||
                !std::isfinite(top)) {
                return invalid(at + " needs a finite min and a finite positive step");
            }
        } else if (field.min != 0.0 || field.step != 0.0) {
            return invalid(at + " has a range but is not fixed-point");
        }
        if (field.storage_bytes != storage_bytes_for(field.bits)) {
            return invalid(at + " has an inconsistent storage width");
        }
    }
    return {};
}

schema_layout::schema_layout(std::vector<component_info> components)
    : components_{std::move(components)} {
    if (components_.empty() || components_.size() > max_components) {
        throw std::invalid_argument("a schema declares 1 to 256 components");
    }
    std::unordered_set<std::string_view> names;
    for (auto& component : components_) {
        if (auto ok = validate(component); !ok) {
            throw std::invalid_argument(std::string{ok.message()});
        }
        if (!names.insert(component.name).second) {
            throw std::invalid_argument("component '" + component.name + "' is declared twice");
        }
        component.hash = component_hash(component);
    }
    hash_ = schema_hash(components_);
}

result<schema_layout> schema_layout::from_proto(const v1::ComponentSchema& message) {
    if (message.components_size() < 1 ||
        static_cast<std::size_t>(message.components_size()) > max_components) {
        return make_error(errc::schema_mismatch, "a schema declares 1 to 256 components, this one " +
                                                     std::to_string(message.components_size()));
    }
    std::vector<component_info> components;
    components.reserve(static_cast<std::size_t>(message.components_size()));
    std::unordered_set<std::string> names;
    for (const auto& descriptor : message.components()) {
        component_info info;
        info.name = descriptor.name().substr(0, max_name_length + 1);
        if (static_cast<std::size_t>(descriptor.fields_size()) > max_fields_per_component) {
            return make_error(errc::schema_mismatch, "component '" + info.name + "' has more than 32 fields");
        }
        for (const auto& f : descriptor.fields()) {
            field_info field;
            field.name = f.name().substr(0, max_name_length + 1);
            // Out-of-range enum values are kept as an invalid 0 (refused by validate below).
            const int encoding = f.encoding();
            field.encoding =
                encoding >= 1 && encoding <= 5 ? static_cast<field_encoding>(encoding) : field_encoding{};
            field.bits = f.bits() > 64 ? 64 : f.bits();
            field.min = f.min();
            field.step = f.step();
            const int predict = f.prediction();
            field.predict =
                predict == 0 || predict == 1 ? static_cast<prediction>(predict) : prediction{0xFF};
            field.storage_bytes = storage_bytes_for(field.bits);
            info.fields.push_back(std::move(field));
        }
        if (auto ok = validate(info); !ok) {
            return ok.error_value();
        }
        if (!names.insert(info.name).second) {
            return make_error(errc::schema_mismatch, "component '" + info.name + "' is declared twice");
        }
        info.hash = component_hash(info);
        components.push_back(std::move(info));
    }
    return schema_layout{std::move(components)};
}

v1::ComponentSchema schema_layout::to_proto() const {
    v1::ComponentSchema message;
    for (const auto& component : components_) {
        auto* descriptor = message.add_components();
        descriptor->set_name(component.name);
        descriptor->set_hash(component.hash);
        for (const auto& field : component.fields) {
            auto* f = descriptor->add_fields();
            f->set_name(field.name);
            f->set_encoding(static_cast<v1::FieldEncoding>(field.encoding));
            f->set_bits(field.bits);
            if (field.encoding == field_encoding::fixed_point) {
                f->set_min(field.min);
                f->set_step(field.step);
            }
            f->set_prediction(static_cast<v1::Prediction>(field.predict));
        }
    }
    return message;
}

std::optional<std::size_t> schema_layout::find(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < components_.size(); ++i) {
        if (components_[i].name == name) {
            return i;
        }
    }
    return std::nullopt;
}

} // namespace ecsnet::proto
