// The C API (include/ecsnet/client.h) over ecsnet::client::client: a handle owning a client in poll mode,
// its last error, and the entity events gathered during poll() to be handed to the C callbacks afterwards
// (never from inside the registry's signals, where a callback reading the world would see it half applied).
//
// Every entry point is a boundary: arguments are checked before use, and every exception is caught and
// turned into an error code with its message, since an exception crossing into C is undefined behaviour.

#include "ecsnet/client.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <iterator>
#include <memory>
#include <new>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ecsnet/arena/components.hpp"
#include "ecsnet/arena/input.hpp"
#include "ecsnet/arena/movement.hpp"
#include "ecsnet/client/client.hpp"
#include "ecsnet/client/prediction.hpp"

#ifndef ECSNET_VERSION_STRING
#error "ECSNET_VERSION_STRING is set by client-sdk/CMakeLists.txt"
#endif

namespace {

using ecsnet::client::client_state;

struct entity_callback {
    ecsnet_entity_callback function{};
    void* user_data{};
};

} // namespace

struct ecsnet_client {
    explicit ecsnet_client(ecsnet::client::client_options options)
        : sdk{ecsnet::arena::replicated_schema(), std::move(options)} {
        auto& reg = sdk.registry();
        reg.on_construct<ecsnet::proto::net_id>().connect([this](ecsnet::registry& r, ecsnet::entity e) {
            created.push_back(to_c(r.get<ecsnet::proto::net_id>(e)));
        });
        reg.on_destroy<ecsnet::proto::net_id>().connect([this](ecsnet::registry& r, ecsnet::entity e) {
            destroyed.push_back(to_c(r.get<ecsnet::proto::net_id>(e)));
        });
        // The schema's components, by their C++ types: the registry's signals are typed.
        watch_changes<ecsnet::arena::Transform>();
        watch_changes<ecsnet::arena::Health>();
        watch_changes<ecsnet::arena::Kind>();
        if (sdk.options().prediction) {
            predicted = std::make_unique<ecsnet::client::prediction<ecsnet::arena::Transform>>(
                sdk,
                ecsnet::client::prediction_rules<ecsnet::arena::Transform>{
                    &ecsnet::arena::predict_avatar, &ecsnet::arena::position_of, &ecsnet::arena::displace});
            // The arena's companion (server --companions), when the server marks it predicted for us.
            predicted->predict_marked(ecsnet::client::prediction_rules<ecsnet::arena::Transform>{
                &ecsnet::arena::predict_companion, &ecsnet::arena::position_of, &ecsnet::arena::displace});
        }
    }

    static ecsnet_entity_id to_c(const ecsnet::proto::net_id& id) noexcept {
        return (static_cast<std::uint64_t>(id.id.generation) << 32) | id.id.index;
    }

    std::string last_error;
    entity_callback on_created, on_changed, on_destroyed;
    // Gathered during poll(), handed to the callbacks after it (net ids: local entities may be gone).
    std::vector<ecsnet_entity_id> created, changed, destroyed;
    ~ecsnet_client() { predicted.reset(); } // it unhooks from sdk, which must still exist
    ecsnet_client(const ecsnet_client&) = delete;
    ecsnet_client& operator=(const ecsnet_client&) = delete;

    // Prediction (options.prediction): reconciles sdk's snapshots; destroyed first (the destructor).
    std::unique_ptr<ecsnet::client::prediction<ecsnet::arena::Transform>> predicted;
    std::string steering{ecsnet::arena::encode(ecsnet::arena::move_input{})}; // the newest move, predicting
    // Last: destroyed first, while the vectors its registry's signals write to still exist.
    ecsnet::client::client sdk;

private:
    template<typename Component>
    void watch_changes() {
        const auto note = [this](ecsnet::registry& r, ecsnet::entity e) {
            if (const auto* id = r.try_get<ecsnet::proto::net_id>(e); id != nullptr) {
                changed.push_back(to_c(*id));
            }
        };
        sdk.registry().on_construct<Component>().connect(note);
        sdk.registry().on_update<Component>().connect(note);
    }
};

namespace {

// The last error of calls without a client (null handle, failed create), per thread.
thread_local std::string no_client_error;

ecsnet_result fail(ecsnet_client* client, ecsnet_result code, std::string_view message) noexcept {
    try {
        (client != nullptr ? client->last_error : no_client_error).assign(message);
    } catch (...) { // out of memory while saying why: the code alone must do
    }
    return code;
}

ecsnet_result null_handle() noexcept {
    return fail(nullptr, ECSNET_ERROR_NULL_HANDLE, "the client handle is NULL");
}

ecsnet_result null_argument(ecsnet_client* client, const char* which) noexcept {
    try {
        return fail(client, ECSNET_ERROR_INVALID_ARGUMENT, std::string{which} + " is NULL");
    } catch (...) {
        return ECSNET_ERROR_INVALID_ARGUMENT;
    }
}

// Runs `body` for a non-null client, clearing its last error, turning exceptions into codes.
template<typename Body>
ecsnet_result guarded(ecsnet_client* client, Body&& body) noexcept {
    if (client == nullptr) {
        return null_handle();
    }
    client->last_error.clear();
    try {
        return body(*client);
    } catch (const std::bad_alloc&) {
        return fail(client, ECSNET_ERROR_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception& error) {
        return fail(client, ECSNET_ERROR_INTERNAL, error.what());
    } catch (...) {
        return fail(client, ECSNET_ERROR_INTERNAL, "unknown exception");
    }
}

// Copies `text` with its NUL into text_out[0..capacity) when it fits; *size gets what it needs.
ecsnet_result copy_text(ecsnet_client& client, std::string_view text, char* out, std::size_t capacity,
                        std::size_t* size) {
    if (size != nullptr) {
        *size = text.size() + 1;
    }
    if (out == nullptr) {
        // (NULL, 0) asks the size only.
        return capacity == 0 ? ECSNET_OK : null_argument(&client, "the buffer");
    }
    if (capacity < text.size() + 1) {
        return fail(&client, ECSNET_ERROR_BUFFER_TOO_SMALL,
                    "the buffer holds " + std::to_string(capacity) + " bytes, " +
                        std::to_string(text.size() + 1) + " are needed");
    }
    std::memcpy(out, text.data(), text.size());
    out[text.size()] = '\0';
    return ECSNET_OK;
}

const ecsnet::proto::schema& schema_of(const ecsnet_client& client) {
    return client.sdk.mirror().replicated_schema();
}

ecsnet_result check_component(ecsnet_client& client, std::uint32_t component) {
    const auto count = schema_of(client).size();
    if (component >= count) {
        return fail(&client, ECSNET_ERROR_NOT_FOUND,
                    "no component " + std::to_string(component) + " (the schema has " +
                        std::to_string(count) + ")");
    }
    return ECSNET_OK;
}

ecsnet_result check_field(ecsnet_client& client, std::uint32_t component, std::uint32_t field) {
    if (const auto checked = check_component(client, component); checked != ECSNET_OK) {
        return checked;
    }
    const auto& info = schema_of(client).component_at(component);
    if (field >= info.fields.size()) {
        return fail(&client, ECSNET_ERROR_NOT_FOUND,
                    "no field " + std::to_string(field) + " in " + info.name + " (it has " +
                        std::to_string(info.fields.size()) + ")");
    }
    return ECSNET_OK;
}

// The local entity of a C entity id, or null_entity (after fail()) when it is not mirrored.
ecsnet::entity local_entity(ecsnet_client& client, ecsnet_entity_id id) {
    const ecsnet::proto::net_entity net{static_cast<std::uint32_t>(id & 0xFFFFFFFFU),
                                        static_cast<std::uint32_t>(id >> 32)};
    const auto local = client.sdk.mirror().find(net);
    if (local == ecsnet::null_entity || !client.sdk.registry().valid(local)) {
        fail(&client, ECSNET_ERROR_NOT_FOUND,
             "no entity " + std::to_string(net.index) + " generation " + std::to_string(net.generation) +
                 " in the mirror");
        return ecsnet::null_entity;
    }
    return local;
}

// The quantized values of all the fields of a component of an entity.
ecsnet_result quantized_values(ecsnet_client& client, ecsnet_entity_id id, std::uint32_t component,
                               std::vector<std::uint32_t>& values) {
    if (const auto checked = check_component(client, component); checked != ECSNET_OK) {
        return checked;
    }
    const auto local = local_entity(client, id);
    if (local == ecsnet::null_entity) {
        return ECSNET_ERROR_NOT_FOUND;
    }
    const auto& schema = schema_of(client);
    if (!schema.codec(component).contained(client.sdk.registry(), local)) {
        return fail(&client, ECSNET_ERROR_NOT_FOUND,
                    "the entity has no " + schema.component_at(component).name + " component");
    }
    values.assign(schema.component_at(component).fields.size(), 0);
    schema.codec(component).quantize_one(client.sdk.registry(), local, values.data());
    return ECSNET_OK;
}

std::int64_t as_integer(const ecsnet::proto::field_info& field, std::uint32_t quantized) noexcept {
    if (field.encoding == ecsnet::proto::field_encoding::signed_integer && field.bits > 0 &&
        field.bits < 64) {
        const auto shift = 64U - field.bits;
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(quantized) << shift) >> shift;
    }
    return quantized;
}

double as_real(const ecsnet::proto::field_info& field, std::uint32_t quantized) noexcept {
    switch (field.encoding) {
    case ecsnet::proto::field_encoding::fixed_point:
        return field.min + static_cast<double>(quantized) * field.step;
    case ecsnet::proto::field_encoding::angle:
        return static_cast<double>(quantized) * 2.0 * std::numbers::pi /
               static_cast<double>(std::uint64_t{1} << field.bits);
    default:
        return static_cast<double>(as_integer(field, quantized));
    }
}

// One field of one entity, quantized, with its description.
ecsnet_result field_value(ecsnet_client& client, ecsnet_entity_id id, std::uint32_t component,
                          std::uint32_t field, const ecsnet::proto::field_info*& info,
                          std::uint32_t& quantized) {
    if (const auto checked = check_field(client, component, field); checked != ECSNET_OK) {
        return checked;
    }
    std::vector<std::uint32_t> values;
    if (const auto read = quantized_values(client, id, component, values); read != ECSNET_OK) {
        return read;
    }
    info = &schema_of(client).component_at(component).fields[field];
    quantized = values[field];
    return ECSNET_OK;
}

// One field of one entity into *value, converted from its quantized form by convert(info, quantized); the
// public getters differ only in that conversion.
template<typename T, typename Convert>
ecsnet_result read_field(ecsnet_client* client, ecsnet_entity_id entity, std::uint32_t component,
                         std::uint32_t field, T* value, Convert convert) noexcept {
    return guarded(client, [&](ecsnet_client& c) {
        if (value == nullptr) {
            return null_argument(&c, "value");
        }
        const ecsnet::proto::field_info* info = nullptr;
        std::uint32_t quantized = 0;
        if (const auto read = field_value(c, entity, component, field, info, quantized); read != ECSNET_OK) {
            return read;
        }
        *value = convert(*info, quantized);
        return ECSNET_OK;
    });
}

ecsnet_result set_callback(ecsnet_client* client, entity_callback ecsnet_client::*which,
                           ecsnet_entity_callback function, void* user_data) noexcept {
    return guarded(client, [&](ecsnet_client& c) {
        c.*which = entity_callback{function, user_data};
        return ECSNET_OK;
    });
}

void fire(ecsnet_client& client, const entity_callback& callback, const std::vector<ecsnet_entity_id>& ids) {
    if (callback.function == nullptr) {
        return;
    }
    for (const auto id : ids) {
        callback.function(callback.user_data, &client, id);
    }
}

} // namespace

extern "C" {

const char* ecsnet_result_name(int result) {
    switch (result) {
    case ECSNET_OK:
        return "ECSNET_OK";
    case ECSNET_ERROR_NULL_HANDLE:
        return "ECSNET_ERROR_NULL_HANDLE";
    case ECSNET_ERROR_INVALID_ARGUMENT:
        return "ECSNET_ERROR_INVALID_ARGUMENT";
    case ECSNET_ERROR_NOT_FOUND:
        return "ECSNET_ERROR_NOT_FOUND";
    case ECSNET_ERROR_BUFFER_TOO_SMALL:
        return "ECSNET_ERROR_BUFFER_TOO_SMALL";
    case ECSNET_ERROR_NOT_CONNECTED:
        return "ECSNET_ERROR_NOT_CONNECTED";
    case ECSNET_ERROR_BUSY:
        return "ECSNET_ERROR_BUSY";
    case ECSNET_ERROR_REFUSED:
        return "ECSNET_ERROR_REFUSED";
    case ECSNET_ERROR_UNSUPPORTED:
        return "ECSNET_ERROR_UNSUPPORTED";
    case ECSNET_ERROR_OUT_OF_MEMORY:
        return "ECSNET_ERROR_OUT_OF_MEMORY";
    case ECSNET_ERROR_INTERNAL:
        return "ECSNET_ERROR_INTERNAL";
    default:
        return "ECSNET_UNKNOWN_RESULT";
    }
}

const char* ecsnet_version(void) {
    return ECSNET_VERSION_STRING;
}

int ecsnet_abi_version(void) {
    return ECSNET_CLIENT_ABI_VERSION;
}

ecsnet_result ecsnet_client_options_init(ecsnet_client_options* options) {
    if (options == nullptr) {
        return null_argument(nullptr, "options");
    }
    *options = ecsnet_client_options{};
    options->struct_size = sizeof(ecsnet_client_options);
    options->transport = ECSNET_TRANSPORT_UDP;
    return ECSNET_OK;
}

ecsnet_result ecsnet_client_create(const ecsnet_client_options* options, ecsnet_client** out) {
    if (out == nullptr) {
        return null_argument(nullptr, "out");
    }
    // An older caller's shorter struct: the fields it has, the defaults for the rest.
    ecsnet_client_options given;
    ecsnet_client_options_init(&given);
    if (options != nullptr) {
        if (options->struct_size < offsetof(ecsnet_client_options, name) + sizeof(options->name)) {
            return fail(nullptr, ECSNET_ERROR_INVALID_ARGUMENT, "options->struct_size is too small");
        }
        std::memcpy(&given, options, std::min(options->struct_size, sizeof(given)));
    }
    if (given.transport != ECSNET_TRANSPORT_UDP && given.transport != ECSNET_TRANSPORT_TCP) {
        return fail(nullptr, ECSNET_ERROR_INVALID_ARGUMENT,
                    "options->transport is neither ECSNET_TRANSPORT_UDP nor ECSNET_TRANSPORT_TCP");
    }
    try {
        ecsnet::client::client_options sdk_options;
        if (given.name != nullptr) {
            sdk_options.name = given.name;
        }
        sdk_options.transport = given.transport == ECSNET_TRANSPORT_TCP ? ecsnet::client::transport_kind::tcp
                                                                        : ecsnet::client::transport_kind::udp;
        using std::chrono::milliseconds;
        if (given.connect_timeout_ms != 0) {
            sdk_options.connect_timeout = milliseconds{given.connect_timeout_ms};
        }
        if (given.handshake_timeout_ms != 0) {
            sdk_options.handshake_timeout = milliseconds{given.handshake_timeout_ms};
        }
        if (given.idle_timeout_ms != 0) {
            sdk_options.idle_timeout = milliseconds{given.idle_timeout_ms};
        }
        if (given.interpolation_delay_ms != 0) {
            sdk_options.interpolation_delay = milliseconds{given.interpolation_delay_ms};
        }
        if (given.protocol_id != 0) {
            sdk_options.protocol_id = given.protocol_id;
        }
        sdk_options.prediction = given.prediction != 0;
        sdk_options.mode = ecsnet::client::threading::poll; // a C caller drives it with ecsnet_client_poll()
        *out = new ecsnet_client{std::move(sdk_options)};
        return ECSNET_OK;
    } catch (const std::bad_alloc&) {
        return fail(nullptr, ECSNET_ERROR_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception& error) {
        return fail(nullptr, ECSNET_ERROR_INTERNAL, error.what());
    } catch (...) {
        return fail(nullptr, ECSNET_ERROR_INTERNAL, "unknown exception");
    }
}

void ecsnet_client_destroy(ecsnet_client* client) {
    try {
        delete client;
    } catch (...) { // a destructor that throws: nothing the caller could do about it
    }
}

const char* ecsnet_client_last_error(const ecsnet_client* client) {
    return client != nullptr ? client->last_error.c_str() : no_client_error.c_str();
}

ecsnet_result ecsnet_client_connect(ecsnet_client* client, const char* host, uint16_t port) {
    return guarded(client, [&](ecsnet_client& c) {
        if (host == nullptr) {
            return null_argument(&c, "host");
        }
        if (!c.sdk.connect(host, port)) {
            return fail(&c, ECSNET_ERROR_BUSY, "a connection is opening or open");
        }
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_client_connect_token(ecsnet_client* client, const void* token, size_t size) {
    return guarded(client, [&](ecsnet_client& c) {
        if (token == nullptr) {
            return null_argument(&c, "token");
        }
        if (!c.sdk.connect(std::string_view{static_cast<const char*>(token), size})) {
            return fail(&c, ECSNET_ERROR_BUSY, "a connection is opening or open");
        }
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_client_disconnect(ecsnet_client* client, const char* message) {
    return guarded(client, [&](ecsnet_client& c) {
        const auto state = c.sdk.state();
        if (state == client_state::idle || state == client_state::disconnected) {
            return fail(&c, ECSNET_ERROR_NOT_CONNECTED, "no connection is opening or open");
        }
        c.sdk.close(message != nullptr ? std::string{message} : std::string{});
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_client_poll(ecsnet_client* client, size_t* snapshots_applied) {
    return guarded(client, [&](ecsnet_client& c) {
        c.created.clear();
        c.changed.clear();
        c.destroyed.clear();
        const auto applied = c.sdk.poll();
        if (c.predicted) {
            c.predicted->update(c.steering); // each new tick: the newest move sent for it, and predicted
        }
        if (snapshots_applied != nullptr) {
            *snapshots_applied = applied;
        }
        // One "changed" per entity and poll, none for an entity created in the same poll.
        std::sort(c.changed.begin(), c.changed.end());
        c.changed.erase(std::unique(c.changed.begin(), c.changed.end()), c.changed.end());
        std::erase_if(c.changed, [&](ecsnet_entity_id id) {
            return std::find(c.created.begin(), c.created.end(), id) != c.created.end();
        });
        // Copies: a callback may poll again (not advised, but not a crash either).
        const auto created = std::exchange(c.created, {});
        const auto changed = std::exchange(c.changed, {});
        const auto destroyed = std::exchange(c.destroyed, {});
        fire(c, c.on_created, created);
        fire(c, c.on_changed, changed);
        fire(c, c.on_destroyed, destroyed);
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_client_get_state(ecsnet_client* client, int32_t* state) {
    return guarded(client, [&](ecsnet_client& c) {
        if (state == nullptr) {
            return null_argument(&c, "state");
        }
        *state = static_cast<int32_t>(c.sdk.state()); // the same numbering as ecsnet_client_state
        return ECSNET_OK;
    });
}

const char* ecsnet_client_state_name(int state) {
    if (state < 0 || state > static_cast<int>(client_state::disconnected)) {
        return "unknown";
    }
    // to_string() gives views of string literals: NUL-terminated.
    return ecsnet::client::to_string(static_cast<client_state>(state)).data();
}

ecsnet_result ecsnet_client_disconnect_reason(ecsnet_client* client, int32_t* reason, char* message,
                                              size_t capacity, size_t* message_size) {
    return guarded(client, [&](ecsnet_client& c) {
        const auto last = c.sdk.last_disconnect();
        if (reason != nullptr) {
            *reason = static_cast<int32_t>(last.reason);
        }
        return copy_text(c, last.message, message, capacity, message_size);
    });
}

ecsnet_result ecsnet_client_disconnect_retry_after(ecsnet_client* client, uint32_t* seconds) {
    return guarded(client, [&](ecsnet_client& c) {
        if (seconds == nullptr) {
            return null_argument(&c, "seconds");
        }
        const auto last = c.sdk.last_disconnect();
        if (!last.retry_after) {
            return fail(&c, ECSNET_ERROR_NOT_FOUND, "the last disconnect carried no retry hint");
        }
        *seconds = static_cast<uint32_t>(last.retry_after->count());
        return ECSNET_OK;
    });
}

const char* ecsnet_disconnect_reason_name(int reason) {
    using ecsnet::client::disconnect_reason;
    const bool known = (reason >= 0 && reason <= ecsnet::client::last_wire_reason) ||
                       reason == static_cast<int>(disconnect_reason::connect_failed) ||
                       reason == static_cast<int>(disconnect_reason::connection_lost);
    return known ? ecsnet::client::to_string(static_cast<disconnect_reason>(reason)).data() : "unknown";
}

ecsnet_result ecsnet_schema_component_count(ecsnet_client* client, uint32_t* count) {
    return guarded(client, [&](ecsnet_client& c) {
        if (count == nullptr) {
            return null_argument(&c, "count");
        }
        *count = static_cast<uint32_t>(schema_of(c).size());
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_schema_component_name(ecsnet_client* client, uint32_t component, char* name,
                                           size_t capacity, size_t* name_size) {
    return guarded(client, [&](ecsnet_client& c) {
        if (const auto checked = check_component(c, component); checked != ECSNET_OK) {
            return checked;
        }
        return copy_text(c, schema_of(c).component_at(component).name, name, capacity, name_size);
    });
}

ecsnet_result ecsnet_schema_field_count(ecsnet_client* client, uint32_t component, uint32_t* count) {
    return guarded(client, [&](ecsnet_client& c) {
        if (count == nullptr) {
            return null_argument(&c, "count");
        }
        if (const auto checked = check_component(c, component); checked != ECSNET_OK) {
            return checked;
        }
        *count = static_cast<uint32_t>(schema_of(c).component_at(component).fields.size());
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_schema_field_name(ecsnet_client* client, uint32_t component, uint32_t field, char* name,
                                       size_t capacity, size_t* name_size) {
    return guarded(client, [&](ecsnet_client& c) {
        if (const auto checked = check_field(c, component, field); checked != ECSNET_OK) {
            return checked;
        }
        return copy_text(c, schema_of(c).component_at(component).fields[field].name, name, capacity,
                         name_size);
    });
}

ecsnet_result ecsnet_schema_field_encoding(ecsnet_client* client, uint32_t component, uint32_t field,
                                           int32_t* encoding, uint32_t* bits) {
    return guarded(client, [&](ecsnet_client& c) {
        if (const auto checked = check_field(c, component, field); checked != ECSNET_OK) {
            return checked;
        }
        const auto& info = schema_of(c).component_at(component).fields[field];
        if (encoding != nullptr) {
            *encoding = static_cast<int32_t>(info.encoding); // the same numbering as ecsnet_field_encoding
        }
        if (bits != nullptr) {
            *bits = info.bits;
        }
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_component_id(ecsnet_client* client, const char* name, uint32_t* component) {
    return guarded(client, [&](ecsnet_client& c) {
        if (name == nullptr || component == nullptr) {
            return null_argument(&c, name == nullptr ? "name" : "component");
        }
        const auto found = schema_of(c).layout().find(name);
        if (!found) {
            return fail(&c, ECSNET_ERROR_NOT_FOUND, std::string{"no component named '"} + name + "'");
        }
        *component = static_cast<uint32_t>(*found);
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_field_id(ecsnet_client* client, uint32_t component, const char* name, uint32_t* field) {
    return guarded(client, [&](ecsnet_client& c) {
        if (name == nullptr || field == nullptr) {
            return null_argument(&c, name == nullptr ? "name" : "field");
        }
        if (const auto checked = check_component(c, component); checked != ECSNET_OK) {
            return checked;
        }
        const auto& fields = schema_of(c).component_at(component).fields;
        for (std::size_t i = 0; i < fields.size(); ++i) {
            if (fields[i].name == name) {
                *field = static_cast<uint32_t>(i);
                return ECSNET_OK;
            }
        }
        return fail(&c, ECSNET_ERROR_NOT_FOUND,
                    std::string{"no field named '"} + name + "' in " +
                        schema_of(c).component_at(component).name);
    });
}

ecsnet_result ecsnet_client_entity_count(ecsnet_client* client, size_t* count) {
    return guarded(client, [&](ecsnet_client& c) {
        if (count == nullptr) {
            return null_argument(&c, "count");
        }
        const auto* ids = c.sdk.registry().try_storage<ecsnet::proto::net_id>();
        *count = ids == nullptr ? 0 : ids->size();
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_client_entity_at(ecsnet_client* client, size_t position, ecsnet_entity_id* entity) {
    return guarded(client, [&](ecsnet_client& c) {
        if (entity == nullptr) {
            return null_argument(&c, "entity");
        }
        const auto* ids = c.sdk.registry().try_storage<ecsnet::proto::net_id>();
        const std::size_t count = ids == nullptr ? 0 : ids->size();
        if (position >= count) {
            return fail(&c, ECSNET_ERROR_NOT_FOUND,
                        "no entity at position " + std::to_string(position) + " (" + std::to_string(count) +
                            " mirrored)");
        }
        *entity = ecsnet_client::to_c(ids->raw()[position]);
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_client_entity_exists(ecsnet_client* client, ecsnet_entity_id entity, int* exists) {
    return guarded(client, [&](ecsnet_client& c) {
        if (exists == nullptr) {
            return null_argument(&c, "exists");
        }
        const ecsnet::proto::net_entity net{static_cast<std::uint32_t>(entity & 0xFFFFFFFFU),
                                            static_cast<std::uint32_t>(entity >> 32)};
        const auto local = c.sdk.mirror().find(net);
        *exists = local != ecsnet::null_entity && c.sdk.registry().valid(local) ? 1 : 0;
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_client_own_entity(ecsnet_client* client, ecsnet_entity_id* entity) {
    return guarded(client, [&](ecsnet_client& c) {
        if (entity == nullptr) {
            return null_argument(&c, "entity");
        }
        const auto local = c.sdk.own_entity();
        const auto* id =
            local == ecsnet::null_entity ? nullptr : c.sdk.registry().try_get<ecsnet::proto::net_id>(local);
        if (id == nullptr) {
            return fail(&c, ECSNET_ERROR_NOT_FOUND, "no avatar mirrored (not connected, or no snapshot yet)");
        }
        *entity = ecsnet_client::to_c(*id);
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_entity_has_component(ecsnet_client* client, ecsnet_entity_id entity, uint32_t component,
                                          int* has) {
    return guarded(client, [&](ecsnet_client& c) {
        if (has == nullptr) {
            return null_argument(&c, "has");
        }
        if (const auto checked = check_component(c, component); checked != ECSNET_OK) {
            return checked;
        }
        const auto local = local_entity(c, entity);
        if (local == ecsnet::null_entity) {
            return ECSNET_ERROR_NOT_FOUND;
        }
        *has = schema_of(c).codec(component).contained(c.sdk.registry(), local) ? 1 : 0;
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_entity_get_quantized(ecsnet_client* client, ecsnet_entity_id entity, uint32_t component,
                                          uint32_t field, uint32_t* value) {
    return read_field(client, entity, component, field, value,
                      [](const ecsnet::proto::field_info&, std::uint32_t quantized) { return quantized; });
}

ecsnet_result ecsnet_entity_get_int64(ecsnet_client* client, ecsnet_entity_id entity, uint32_t component,
                                      uint32_t field, int64_t* value) {
    return read_field(client, entity, component, field, value,
                      [](const ecsnet::proto::field_info& info, std::uint32_t quantized) {
                          return as_integer(info, quantized);
                      });
}

ecsnet_result ecsnet_entity_get_double(ecsnet_client* client, ecsnet_entity_id entity, uint32_t component,
                                       uint32_t field, double* value) {
    return read_field(client, entity, component, field, value,
                      [](const ecsnet::proto::field_info& info, std::uint32_t quantized) {
                          return as_real(info, quantized);
                      });
}

ecsnet_result ecsnet_entity_get_float(ecsnet_client* client, ecsnet_entity_id entity, uint32_t component,
                                      uint32_t field, float* value) {
    if (value == nullptr) {
        return client == nullptr ? null_handle() : null_argument(client, "value");
    }
    double real = 0.0;
    const auto read = ecsnet_entity_get_double(client, entity, component, field, &real);
    if (read == ECSNET_OK) {
        *value = static_cast<float>(real);
    }
    return read;
}

ecsnet_result ecsnet_entity_get_component(ecsnet_client* client, ecsnet_entity_id entity, uint32_t component,
                                          double* values, size_t capacity, size_t* count) {
    return guarded(client, [&](ecsnet_client& c) {
        if (values == nullptr && capacity != 0) {
            return null_argument(&c, "values");
        }
        std::vector<std::uint32_t> quantized;
        if (const auto read = quantized_values(c, entity, component, quantized); read != ECSNET_OK) {
            return read;
        }
        if (count != nullptr) {
            *count = quantized.size();
        }
        if (capacity < quantized.size()) {
            return fail(&c, ECSNET_ERROR_BUFFER_TOO_SMALL,
                        "the buffer holds " + std::to_string(capacity) + " values, the component has " +
                            std::to_string(quantized.size()) + " fields");
        }
        const auto& fields = schema_of(c).component_at(component).fields;
        for (std::size_t i = 0; i < quantized.size(); ++i) {
            values[i] = as_real(fields[i], quantized[i]);
        }
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_entity_get_double_by_name(ecsnet_client* client, ecsnet_entity_id entity,
                                               const char* component, const char* field, double* value) {
    if (client == nullptr) {
        return null_handle();
    }
    uint32_t component_id = 0;
    uint32_t field_id = 0;
    if (const auto found = ecsnet_component_id(client, component, &component_id); found != ECSNET_OK) {
        return found;
    }
    if (const auto found = ecsnet_field_id(client, component_id, field, &field_id); found != ECSNET_OK) {
        return found;
    }
    return ecsnet_entity_get_double(client, entity, component_id, field_id, value);
}

ecsnet_result ecsnet_entity_get_predicted_double(ecsnet_client* client, ecsnet_entity_id entity,
                                                 uint32_t component, uint32_t field, double* value) {
    double server = 0.0;
    if (const auto read = ecsnet_entity_get_double(client, entity, component, field, &server);
        read != ECSNET_OK) {
        return read;
    }
    return guarded(client, [&](ecsnet_client& c) {
        *value = server;
        std::uint32_t transform = 0;
        if (!c.predicted || ecsnet_component_id(&c, "Transform", &transform) != ECSNET_OK ||
            component != transform) {
            return ECSNET_OK;
        }
        // The own avatar, or an entity the server marks predicted for this client (else the mirror's).
        const auto local = c.sdk.mirror().find(ecsnet::proto::net_entity{
            static_cast<std::uint32_t>(entity & 0xFFFFFFFFU), static_cast<std::uint32_t>(entity >> 32)});
        if (const auto visible = c.predicted->visible(local)) {
            const double fields[] = {visible->x, visible->y, visible->z, visible->yaw};
            if (field < std::size(fields)) {
                *value = fields[field];
            }
        }
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_client_on_entity_created(ecsnet_client* client, ecsnet_entity_callback callback,
                                              void* user_data) {
    return set_callback(client, &ecsnet_client::on_created, callback, user_data);
}

ecsnet_result ecsnet_client_on_entity_changed(ecsnet_client* client, ecsnet_entity_callback callback,
                                              void* user_data) {
    return set_callback(client, &ecsnet_client::on_changed, callback, user_data);
}

ecsnet_result ecsnet_client_on_entity_destroyed(ecsnet_client* client, ecsnet_entity_callback callback,
                                                void* user_data) {
    return set_callback(client, &ecsnet_client::on_destroyed, callback, user_data);
}

ecsnet_result ecsnet_client_send_input(ecsnet_client* client, const void* payload, size_t size) {
    return guarded(client, [&](ecsnet_client& c) {
        if (payload == nullptr && size != 0) {
            return null_argument(&c, "payload");
        }
        if (c.sdk.state() != client_state::connected) {
            return fail(&c, ECSNET_ERROR_NOT_CONNECTED, "not connected");
        }
        const std::string_view bytes =
            size == 0 ? std::string_view{} : std::string_view{static_cast<const char*>(payload), size};
        if (!c.sdk.send_input(bytes)) {
            return fail(&c, ECSNET_ERROR_REFUSED,
                        "the input was refused (" + std::to_string(size) +
                            " bytes: too large for the transport, or too many bytes wait to be sent)");
        }
        return ECSNET_OK;
    });
}

ecsnet_result ecsnet_arena_encode_move(uint32_t target, float dir_x, float dir_y, float speed, void* out,
                                       size_t capacity) {
    if (out == nullptr) {
        return null_argument(nullptr, "out");
    }
    if (capacity < ECSNET_ARENA_MOVE_INPUT_SIZE) {
        return fail(nullptr, ECSNET_ERROR_BUFFER_TOO_SMALL, "a move input takes 16 bytes");
    }
    try {
        const auto bytes = ecsnet::arena::encode(ecsnet::arena::move_input{target, dir_x, dir_y, speed});
        std::memcpy(out, bytes.data(), bytes.size());
        return ECSNET_OK;
    } catch (...) {
        return fail(nullptr, ECSNET_ERROR_OUT_OF_MEMORY, "out of memory");
    }
}

ecsnet_result ecsnet_client_send_move(ecsnet_client* client, float dir_x, float dir_y, float speed) {
    unsigned char bytes[ECSNET_ARENA_MOVE_INPUT_SIZE];
    ecsnet_arena_encode_move(0, dir_x, dir_y, speed, bytes, sizeof bytes);
    if (client != nullptr && client->predicted &&
        client->sdk.state() == ecsnet::client::client_state::connected) {
        // Predicting: ecsnet_client_poll() sends it for each tick it predicts.
        client->steering.assign(reinterpret_cast<const char*>(bytes), sizeof bytes);
        return ECSNET_OK;
    }
    return ecsnet_client_send_input(client, bytes, sizeof bytes);
}

ecsnet_result ecsnet_client_send_fire(ecsnet_client* client, float dir_x, float dir_y, float speed,
                                      float aim_x, float aim_y) {
    if (client == nullptr) {
        return ecsnet_client_send_input(client, nullptr, 0); // the null-handle error
    }
    try {
        const auto bytes =
            ecsnet::arena::encode(ecsnet::arena::move_input{0, dir_x, dir_y, speed},
                                  ecsnet::arena::action_input{ecsnet::arena::action_fire, aim_x, aim_y,
                                                              client->sdk.render_time_us()});
        return ecsnet_client_send_input(client, bytes.data(), bytes.size());
    } catch (...) {
        return fail(client, ECSNET_ERROR_OUT_OF_MEMORY, "out of memory");
    }
}

ecsnet_result ecsnet_stats_init(ecsnet_stats* stats) {
    if (stats == nullptr) {
        return null_argument(nullptr, "stats");
    }
    *stats = ecsnet_stats{};
    stats->struct_size = sizeof(ecsnet_stats);
    stats->newest_tick = -1;
    return ECSNET_OK;
}

ecsnet_result ecsnet_client_get_stats(ecsnet_client* client, ecsnet_stats* stats) {
    return guarded(client, [&](ecsnet_client& c) {
        if (stats == nullptr) {
            return null_argument(&c, "stats");
        }
        if (stats->struct_size < sizeof(stats->struct_size)) {
            return fail(&c, ECSNET_ERROR_INVALID_ARGUMENT, "stats->struct_size is too small");
        }
        const auto sdk = c.sdk.stats();
        ecsnet_stats full{};
        full.struct_size = stats->struct_size;
        full.rtt_us = sdk.rtt.count();
        full.rtt_smoothed_us = sdk.rtt_smoothed.count();
        full.bytes_in_per_second = sdk.bytes_in_per_second;
        full.bytes_out_per_second = sdk.bytes_out_per_second;
        full.snapshots_per_second = sdk.snapshots_per_second;
        full.bytes_received = sdk.bytes_received;
        full.bytes_sent = sdk.bytes_sent;
        full.snapshots_received = sdk.snapshots_received;
        full.snapshots_applied = sdk.snapshots_applied;
        full.snapshots_refused = sdk.snapshots_refused;
        full.checksum_mismatches = sdk.checksum_mismatches;
        full.full_states_received = sdk.full_states_received;
        full.inputs_sent = sdk.inputs_sent;
        full.inputs_refused = sdk.inputs_refused;
        full.newest_tick = sdk.newest_tick ? static_cast<int64_t>(*sdk.newest_tick) : -1;
        full.packet_loss = sdk.packet_loss;
        full.packets_sent = sdk.packets_sent;
        full.packets_received = sdk.packets_received;
        full.packets_lost = sdk.packets_lost;
        full.prediction_ticks_compared = sdk.prediction.ticks_compared;
        full.mispredictions = sdk.prediction.mispredictions;
        full.mispredictions_per_minute = sdk.prediction.mispredictions_per_minute;
        full.correction_max = sdk.prediction.correction_max;
        full.predicted_ticks_ahead = sdk.prediction.ticks_ahead;
        // An older caller's shorter struct gets the fields it knows.
        std::memcpy(stats, &full, std::min(stats->struct_size, sizeof(full)));
        return ECSNET_OK;
    });
}

} // extern "C"
