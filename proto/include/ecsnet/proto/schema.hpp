#pragma once

// Declaring the replicated components of a game, once, in a header its server and its client share:
//
//   struct Transform { float x, y, z, yaw; };
//   struct Health { std::uint16_t value; };
//
//   inline const ecsnet::proto::schema& game_schema() {
//       using namespace ecsnet::proto;
//       static const schema s{
//           component<Transform>("Transform",
//                                field<&Transform::x>("x", fixed_point<20>{-1024.0, 1.0 / 512}),
//                                field<&Transform::yaw>("yaw", angle<12>{})),
//           component<Health>("Health", field<&Health::value>("value", integer<>{}))};
//       return s;
//   }
//
// Members not declared are never sent (they keep the client's own values), nor are undeclared components.
// The name of a component or field is part of the wire contract (it enters the schema hash); the C++
// names are not. A component is numbered by its position in the declaration.
//
// schema_layout is the type-free half (names, encodings, widths): what a ComponentSchema message carries
// and all the codec needs to read and write snapshots. schema adds the typed glue (component_codec) that
// reads components out of a registry (server) and writes them into one (client).
//
// Schema hash (docs/protocol.md, "Schema hash"): FNV-1a 64 over a canonical byte string of each component,
// then over the components' hashes; equal layouts have equal hashes on every platform.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "candidates.hpp"
#include "ecsnet/ecs/entity.hpp"
#include "ecsnet/ecs/registry.hpp"
#include "ecsnet/ecs/type_info.hpp"
#include "ecsnet/v1/schema.pb.h"
#include "quantize.hpp"
#include "result.hpp"

namespace ecsnet::proto {

/// Limits a schema must respect (a peer's schema beyond them is refused).
inline constexpr std::size_t max_components = 256;
inline constexpr std::size_t max_fields_per_component = 32;
inline constexpr std::size_t max_name_length = 64;

struct field_info {
    std::string name;
    field_encoding encoding{};
    unsigned bits{};
    double min{};  // fixed_point only
    double step{}; // fixed_point only
    prediction predict{prediction::none};
    /// Bytes per value in a column: 1, 2 or 4 (the smallest holding `bits`).
    unsigned storage_bytes{};

    [[nodiscard]] std::uint32_t mask() const noexcept { return bit_mask(bits); }
    bool operator==(const field_info&) const = default;
};

struct component_info {
    std::string name;
    std::vector<field_info> fields;
    std::uint64_t hash{}; // of name and fields, set by schema_layout

    bool operator==(const component_info&) const = default;
};

/// The type-free description of a schema: components and their fields, with hashes.
class schema_layout {
public:
    schema_layout() = default;
    /// Computes the hashes. Throws std::invalid_argument on an invalid layout (for declarations, a
    /// programming error); use from_proto for a peer's layout.
    explicit schema_layout(std::vector<component_info> components);

    /// A peer's layout, validated (names, widths, encodings, limits): an error value if it is not valid.
    static result<schema_layout> from_proto(const v1::ComponentSchema& message);
    [[nodiscard]] v1::ComponentSchema to_proto() const;

    [[nodiscard]] std::size_t size() const noexcept { return components_.size(); }
    [[nodiscard]] const component_info& operator[](std::size_t i) const noexcept { return components_[i]; }
    [[nodiscard]] std::span<const component_info> components() const noexcept { return components_; }
    [[nodiscard]] std::uint64_t hash() const noexcept { return hash_; }
    /// Position of the component named `name`, if any.
    [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const noexcept;

    bool operator==(const schema_layout& other) const { return components_ == other.components_; }

private:
    std::vector<component_info> components_;
    std::uint64_t hash_{};
};

/// Hash of one component's description (name, fields, encodings, widths, ranges, predictions).
[[nodiscard]] std::uint64_t component_hash(const component_info& component) noexcept;
/// Hash of a whole schema from its components' hashes, in order.
[[nodiscard]] std::uint64_t schema_hash(std::span<const component_info> components) noexcept;
/// Checks one description; the message says what is wrong. Used on declarations and on peers' schemas.
result<void> validate(const component_info& component);

/// Rows of a replicated state's columns, to write into a registry (component_codec::write_rows): row k is
/// position positions[k] of the columns (field f's values at columns[f], of the field's storage type), and
/// its entity is local_of[ids[positions[k]]] (ids: the column's server indices; local_of: the local entity
/// of each server index, as a mirror keeps them).
struct row_batch {
    const entity* local_of{};
    const std::uint32_t* ids{};
    const std::uint32_t* positions{};
    std::size_t size{};
    const void* const* columns{};
};

/// The typed glue of one declared component: a schema holds one per component.
class component_codec {
public:
    component_codec() = default;
    component_codec(const component_codec&) = delete;
    component_codec& operator=(const component_codec&) = delete;
    virtual ~component_codec() = default;

    /// ecsnet::type_id of the declared struct.
    [[nodiscard]] virtual id_type type() const noexcept = 0;
    /// The packed entity array of the component's pool (empty if the registry never saw the type).
    [[nodiscard]] virtual std::span<const entity> pool_entities(const registry& reg) const noexcept = 0;
    /// Quantizes the components at packed positions positions[0..n) of the pool: field f's n values go to
    /// columns[f], an array of the field's storage type (1, 2 or 4 bytes per value).
    virtual void quantize_rows(const registry& reg, const std::uint32_t* positions, std::size_t n,
                               void* const* columns) const = 0;
    /// Quantizes the component of `e` (which has one) into values[0..fields).
    virtual void quantize_one(const registry& reg, entity e, std::uint32_t* values) const = 0;
    /// Writes quantized values into the component of `e`: emplace (on_construct) when it has none,
    /// otherwise patch (on_update). Undeclared members keep their values (or are value-initialised).
    virtual void write(registry& reg, entity e, const std::uint32_t* values) const = 0;
    /// write() for a batch of rows of a state's columns (row_batch). Invalid entities are skipped.
    /// `all_present`: every entity is known to have the component already (patch them without checking).
    virtual void write_rows(registry& reg, const row_batch& rows, bool all_present = false) const = 0;
    /// apply_delta's candidates pass (candidates.hpp) compiled for this component's storage types.
    [[nodiscard]] virtual candidate_kernel candidates_kernel() const noexcept = 0;
    /// Removes the component from `e` if it has one (on_destroy).
    virtual void remove(registry& reg, entity e) const = 0;
    [[nodiscard]] virtual bool contained(const registry& reg, entity e) const noexcept = 0;
    /// The registry's on_destroy signal of the component.
    [[nodiscard]] virtual registry::sink_type on_destroy(registry& reg) const = 0;
    /// Sets the declared members of `component`, an object of the declared type, from one value per field:
    /// the real value (metres, radians...) of fixed_point and angle fields, the quantized value of integer
    /// and boolean ones. Undeclared members are left as they are. The client SDK stores interpolated
    /// components with it.
    virtual void assign(void* component, const double* values) const = 0;
};

namespace detail {

template<typename>
struct member_pointer_traits;
template<typename Class, typename Member>
struct member_pointer_traits<Member Class::*> {
    using class_type = Class;
    using member_type = Member;
};

template<typename Quantizer, typename Member>
constexpr unsigned quantizer_bits() noexcept {
    if constexpr (requires { Quantizer::template bits_for<Member>(); }) {
        return Quantizer::template bits_for<Member>();
    } else {
        return Quantizer::bits;
    }
}

template<typename Quantizer, typename Member>
constexpr field_encoding quantizer_encoding() noexcept {
    if constexpr (requires { Quantizer::template encoding_for<Member>(); }) {
        return Quantizer::template encoding_for<Member>();
    } else {
        return Quantizer::encoding;
    }
}

} // namespace detail

/// One declared field: a data member of the component and its quantizer.
template<auto Member, typename Quantizer>
struct field_decl {
    static_assert(std::is_member_object_pointer_v<decltype(Member)>, "field<&Component::member>");
    using component_type = typename detail::member_pointer_traits<decltype(Member)>::class_type;
    using member_type = typename detail::member_pointer_traits<decltype(Member)>::member_type;
    using quantizer_type = Quantizer;

    static constexpr unsigned bits = detail::quantizer_bits<Quantizer, member_type>();
    static constexpr field_encoding encoding = detail::quantizer_encoding<Quantizer, member_type>();
    using storage_type = storage_for_bits_t<bits>;

    std::string_view name;
    Quantizer quantizer;

    [[nodiscard]] std::uint32_t quantize(const component_type& c) const noexcept {
        return quantizer.quantize(c.*Member);
    }
    void dequantize(component_type& c, std::uint32_t q) const noexcept {
        c.*Member = quantizer.template dequantize<member_type>(q);
    }
    /// Stores a decoded value (component_codec::assign): the real value itself for fixed_point and angle
    /// fields, the quantized value for the others (out-of-range values store quantized 0).
    void assign(component_type& c, double value) const noexcept {
        if constexpr (encoding == field_encoding::fixed_point || encoding == field_encoding::angle) {
            c.*Member = static_cast<member_type>(value);
        } else {
            dequantize(c, value >= 0.0 && value <= 4294967295.0 ? static_cast<std::uint32_t>(value) : 0U);
        }
    }

    [[nodiscard]] field_info info() const {
        field_info out;
        out.name = std::string{name};
        out.encoding = encoding;
        out.bits = bits;
        if constexpr (encoding == field_encoding::fixed_point) {
            out.min = quantizer.min;
            out.step = quantizer.step;
        }
        out.predict = quantizer.predict;
        out.storage_bytes = static_cast<unsigned>(sizeof(storage_type));
        return out;
    }
};

template<auto Member, typename Quantizer>
[[nodiscard]] constexpr field_decl<Member, Quantizer> field(std::string_view name, Quantizer quantizer) {
    return {name, quantizer};
}

/// One declared component: its struct, its stable name and its fields.
template<typename Component, typename... Fields>
struct component_decl {
    static_assert(sizeof...(Fields) >= 1, "a replicated component declares at least one field");
    static_assert(sizeof...(Fields) <= max_fields_per_component, "at most 32 fields per component");
    static_assert((std::is_same_v<Component, typename Fields::component_type> && ...),
                  "every field must be a member of the component");
    static_assert(std::is_default_constructible_v<Component>,
                  "replicated components are default-constructible");

    std::string_view name;
    std::tuple<Fields...> fields;
};

template<typename Component, typename... Fields>
[[nodiscard]] constexpr component_decl<Component, Fields...> component(std::string_view name,
                                                                       Fields... fields) {
    return {name, std::tuple<Fields...>{fields...}};
}

template<typename>
inline constexpr bool is_component_decl_v = false;
template<typename Component, typename... Fields>
inline constexpr bool is_component_decl_v<component_decl<Component, Fields...>> = true;

namespace detail {

template<typename Component, typename... Fields>
class typed_component_codec final : public component_codec {
public:
    explicit typed_component_codec(const component_decl<Component, Fields...>& decl)
        : fields_{decl.fields} {}

    [[nodiscard]] id_type type() const noexcept override { return type_id<Component>(); }

    [[nodiscard]] std::span<const entity> pool_entities(const registry& reg) const noexcept override {
        const auto* pool = reg.try_storage<Component>();
        return pool == nullptr ? std::span<const entity>{}
                               : std::span<const entity>{pool->data(), pool->size()};
    }

    void quantize_rows(const registry& reg, const std::uint32_t* positions, std::size_t n,
                       void* const* columns) const override {
        const auto* pool = reg.try_storage<Component>();
        if (pool == nullptr || n == 0) {
            return;
        }
        const Component* raw = pool->raw();
        quantize_rows_impl(raw, positions, n, columns, std::index_sequence_for<Fields...>{});
    }

    void quantize_one(const registry& reg, entity e, std::uint32_t* values) const override {
        const auto& c = reg.get<Component>(e);
        std::apply(
            [&](const auto&... field) {
                std::size_t at = 0;
                ((values[at++] = field.quantize(c)), ...);
            },
            fields_);
    }

    void write(registry& reg, entity e, const std::uint32_t* values) const override {
        const auto assign = [&](Component& c) {
            std::apply(
                [&](const auto&... field) {
                    std::size_t at = 0;
                    (field.dequantize(c, values[at++]), ...);
                },
                fields_);
        };
        if (reg.all_of<Component>(e)) {
            reg.patch<Component>(e, assign);
        } else {
            Component c{};
            assign(c);
            reg.emplace<Component>(e, std::move(c));
        }
    }

    void write_rows(registry& reg, const row_batch& rows, bool all_present) const override {
        if (all_present) {
            patch_rows_impl(reg, rows, std::index_sequence_for<Fields...>{});
        } else {
            write_rows_impl(reg, rows, std::index_sequence_for<Fields...>{});
        }
    }

    void assign(void* component, const double* values) const override {
        auto& c = *static_cast<Component*>(component);
        std::apply(
            [&](const auto&... field) {
                std::size_t at = 0;
                (field.assign(c, values[at++]), ...);
            },
            fields_);
    }

    [[nodiscard]] candidate_kernel candidates_kernel() const noexcept override {
        return &typed_candidates<typename Fields::storage_type...>;
    }

    void remove(registry& reg, entity e) const override { reg.remove<Component>(e); }

    [[nodiscard]] bool contained(const registry& reg, entity e) const noexcept override {
        const auto* pool = reg.try_storage<Component>();
        return pool != nullptr && pool->contains(e);
    }

    [[nodiscard]] registry::sink_type on_destroy(registry& reg) const override {
        return reg.on_destroy<Component>();
    }

private:
    template<std::size_t... I>
    void quantize_rows_impl(const Component* raw, const std::uint32_t* positions, std::size_t n,
                            void* const* columns, std::index_sequence<I...>) const {
        std::tuple<typename Fields::storage_type*...> out{
            static_cast<typename Fields::storage_type*>(columns[I])...};
        for (std::size_t k = 0; k < n; ++k) {
            const Component& c = raw[positions[k]];
            ((std::get<I>(out)[k] =
                  static_cast<typename Fields::storage_type>(std::get<I>(fields_).quantize(c))),
             ...);
        }
    }

    template<std::size_t... I>
    void patch_rows_impl(registry& reg, const row_batch& rows, std::index_sequence<I...>) const {
        std::tuple<const typename Fields::storage_type*...> in{
            static_cast<const typename Fields::storage_type*>(rows.columns[I])...};
        // One pool lookup for all the rows (registry.hpp, pool_handle_type); try_patch skips an entity
        // that lost the component or is no longer valid (one sparse lookup tells both).
        auto pool = reg.pool_handle<Component>();
        if (pool.on_update().empty()) {
            assign_rows(pool, rows, in, std::index_sequence<I...>{});
            return;
        }
        for (std::size_t k = 0; k < rows.size; ++k) {
            const auto pos = rows.positions[k];
            pool.try_patch(rows.local_of[rows.ids[pos]], [&](Component& c) {
                (std::get<I>(fields_).dequantize(c, std::uint32_t{std::get<I>(in)[pos]}), ...);
            });
        }
    }

    // Nobody listens to the pool's updates: patching is writing in place. Without a (possible) signal call
    // in the loop, the pool's arrays and the fields' constants stay in registers.
    template<typename Pool, typename In, std::size_t... I>
    [[gnu::flatten]] void assign_rows(Pool& pool, const row_batch& rows, const In& in,
                                      std::index_sequence<I...>) const {
        const auto* local_of = rows.local_of;
        const auto* ids = rows.ids;
        const auto* positions = rows.positions;
        for (std::size_t k = 0; k < rows.size; ++k) {
            const auto pos = positions[k];
            if (auto* c = pool.try_get(local_of[ids[pos]]); c != nullptr) {
                (std::get<I>(fields_).dequantize(*c, std::uint32_t{std::get<I>(in)[pos]}), ...);
            }
        }
    }

    template<std::size_t... I>
    void write_rows_impl(registry& reg, const row_batch& rows, std::index_sequence<I...>) const {
        std::tuple<const typename Fields::storage_type*...> in{
            static_cast<const typename Fields::storage_type*>(rows.columns[I])...};
        auto pool = reg.pool_handle<Component>();
        for (std::size_t k = 0; k < rows.size; ++k) {
            const auto pos = rows.positions[k];
            const auto e = rows.local_of[rows.ids[pos]];
            if (!reg.valid(e)) {
                continue;
            }
            const auto assign = [&](Component& c) {
                (std::get<I>(fields_).dequantize(c, std::uint32_t{std::get<I>(in)[pos]}), ...);
            };
            if (pool.try_patch(e, assign) == nullptr) {
                Component c{};
                assign(c);
                pool.emplace(e, std::move(c));
            }
        }
    }

    std::tuple<Fields...> fields_;
};

} // namespace detail

/// A game's replicated components: the layout plus the typed glue. Not copyable (its codecs are
/// referenced by histories and mirrors, which must not outlive it); a function-local static is the usual
/// home, as in the example above.
class schema {
public:
    template<typename... Decls>
    requires(sizeof...(Decls) >= 1 &&
             (is_component_decl_v<Decls> && ...)) explicit schema(const Decls&... decls);

    schema(schema&&) noexcept = default;
    schema& operator=(schema&&) noexcept = default;

    [[nodiscard]] const schema_layout& layout() const noexcept { return layout_; }
    [[nodiscard]] std::uint64_t hash() const noexcept { return layout_.hash(); }
    [[nodiscard]] std::size_t size() const noexcept { return codecs_.size(); }
    [[nodiscard]] const component_info& component_at(std::size_t i) const noexcept { return layout_[i]; }
    [[nodiscard]] const component_codec& codec(std::size_t i) const noexcept { return *codecs_[i]; }

    /// Position of the declared component of C++ type Component, if it is declared.
    template<typename Component>
    [[nodiscard]] std::optional<std::size_t> index_of() const noexcept {
        const auto id = type_id<Component>();
        for (std::size_t i = 0; i < codecs_.size(); ++i) {
            if (codecs_[i]->type() == id) {
                return i;
            }
        }
        return std::nullopt;
    }

private:
    template<typename Component, typename... Fields>
    static std::unique_ptr<component_codec> make_codec(const component_decl<Component, Fields...>& decl) {
        return std::make_unique<detail::typed_component_codec<Component, Fields...>>(decl);
    }

    template<typename Component, typename... Fields>
    static component_info describe(const component_decl<Component, Fields...>& decl) {
        component_info info;
        info.name = std::string{decl.name};
        std::apply([&](const auto&... field) { (info.fields.push_back(field.info()), ...); }, decl.fields);
        // A float member must represent every dequantized value exactly enough to re-quantize to the same
        // integer: checked here, once, rather than discovered as a desync.
        std::size_t at = 0;
        std::apply([&](const auto&... field) { (check_precision(field, info.fields[at++]), ...); },
                   decl.fields);
        return info;
    }

    template<typename Field>
    static void check_precision(const Field&, const field_info& info) {
        using member = typename Field::member_type;
        if constexpr (std::is_floating_point_v<member>) {
            constexpr int digits = std::numeric_limits<member>::digits; // 24 for float, 53 for double
            double extent = static_cast<double>(bit_mask(info.bits));
            if (info.encoding == field_encoding::fixed_point) {
                extent = std::max(std::fabs(info.min / info.step), std::fabs(info.min / info.step + extent));
            }
            if (extent >= std::ldexp(1.0, digits - 2)) {
                throw std::invalid_argument("field '" + info.name + "': " + std::to_string(info.bits) +
                                            " bits over this range do not fit the member's floating-point "
                                            "precision; use fewer bits or a double");
            }
        }
    }

    schema_layout layout_;
    std::vector<std::unique_ptr<component_codec>> codecs_;
};

template<typename... Decls>
requires(sizeof...(Decls) >= 1 && (is_component_decl_v<Decls> && ...)) schema::schema(const Decls&... decls)
    : layout_{std::vector<component_info>{describe(decls)...}} {
    (codecs_.push_back(make_codec(decls)), ...);
    for (std::size_t i = 0; i < codecs_.size(); ++i) {
        for (std::size_t j = i + 1; j < codecs_.size(); ++j) {
            if (codecs_[i]->type() == codecs_[j]->type()) {
                throw std::invalid_argument("component '" + layout_[j].name +
                                            "' declares a C++ type already declared");
            }
        }
    }
}

} // namespace ecsnet::proto
