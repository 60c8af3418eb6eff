#include "ecsnet/proto/handshake.hpp"

#include <cstdio>

#include "ecsnet/proto/envelope.hpp"

namespace ecsnet::proto {

namespace {

std::string_view cut_utf8(std::string_view text, std::size_t limit) noexcept {
    if (text.size() <= limit) {
        return text;
    }
    auto end = limit;
    // Back off continuation bytes (10xxxxxx) so as not to split a character.
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) {
        --end;
    }
    return text.substr(0, end);
}

std::string hex(std::uint64_t v) {
    char buffer[19];
    std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(v));
    return buffer;
}

std::string_view encoding_name(field_encoding e) noexcept {
    switch (e) {
    case field_encoding::fixed_point:
        return "fixed_point";
    case field_encoding::angle:
        return "angle";
    case field_encoding::unsigned_integer:
        return "unsigned";
    case field_encoding::signed_integer:
        return "signed";
    case field_encoding::boolean:
        return "boolean";
    }
    return "unknown";
}

std::string describe(const field_info& f) {
    std::string out{encoding_name(f.encoding)};
    out += '/';
    out += std::to_string(f.bits);
    out += " bits";
    if (f.encoding == field_encoding::fixed_point) {
        char buffer[96];
        std::snprintf(buffer, sizeof buffer, " from %.17g by %.17g", f.min, f.step);
        out += buffer;
    }
    out += f.predict == prediction::linear ? ", extrapolated" : "";
    return out;
}

} // namespace

v1::Envelope make_client_hello(const schema_layout& layout, std::string_view connect_token,
                               std::string_view name) {
    v1::Envelope envelope;
    auto* hello = envelope.mutable_client_hello();
    hello->set_protocol_version(protocol_version);
    hello->set_schema_hash(layout.hash());
    hello->set_connect_token(std::string{connect_token});
    hello->set_client_name(std::string{cut_utf8(name, max_client_name)});
    *hello->mutable_schema() = layout.to_proto();
    return envelope;
}

v1::Envelope make_server_welcome(const schema_layout& layout, const welcome_info& info) {
    v1::Envelope envelope;
    auto* welcome = envelope.mutable_server_welcome();
    welcome->set_protocol_version(protocol_version);
    welcome->set_client_id(info.client_id);
    welcome->set_tick_rate(info.tick_rate);
    welcome->set_current_tick(info.current_tick);
    *welcome->mutable_schema() = layout.to_proto();
    welcome->set_schema_hash(layout.hash());
    if (info.own_entity) {
        welcome->mutable_own_entity()->set_index(info.own_entity->index);
        welcome->mutable_own_entity()->set_generation(info.own_entity->generation);
    }
    welcome->set_server_epoch_unix_us(info.server_epoch_unix_us);
    welcome->set_history_ticks(info.history_ticks);
    return envelope;
}

v1::Envelope make_disconnect(v1::DisconnectReason reason, std::string_view message,
                             std::uint32_t retry_after_seconds) {
    v1::Envelope envelope;
    envelope.mutable_disconnect()->set_reason(reason);
    envelope.mutable_disconnect()->set_retry_after_seconds(retry_after_seconds);
    envelope.mutable_disconnect()->set_message(std::string{cut_utf8(message, 1024)});
    return envelope;
}

std::string describe_difference(const schema_layout& ours, const schema_layout& theirs,
                                std::string_view ours_name, std::string_view theirs_name) {
    const std::string on_ours = " on the " + std::string{ours_name};
    const std::string on_theirs = " on the " + std::string{theirs_name};
    for (const auto& component : ours.components()) {
        if (!theirs.find(component.name)) {
            return "component '" + component.name + "' is missing" + on_theirs;
        }
    }
    for (const auto& component : theirs.components()) {
        if (!ours.find(component.name)) {
            return "component '" + component.name + "' is unknown" + on_ours;
        }
    }
    for (std::size_t c = 0; c < ours.size(); ++c) {
        const auto& a = ours[c];
        const auto& b = theirs[*theirs.find(a.name)];
        if (a.hash == b.hash) {
            continue;
        }
        const std::string prefix = "component '" + a.name + "' differs: ";
        for (const auto& field : a.fields) {
            const auto it = std::find_if(b.fields.begin(), b.fields.end(),
                                         [&](const auto& other) { return other.name == field.name; });
            if (it == b.fields.end()) {
                return prefix + "field '" + field.name + "' is missing" + on_theirs;
            }
            if (!(field == *it)) {
                return prefix + "field '" + field.name + "' is " + describe(field) + on_ours + ", " +
                       describe(*it) + on_theirs;
            }
        }
        for (const auto& field : b.fields) {
            const auto it = std::find_if(a.fields.begin(), a.fields.end(),
                                         [&](const auto& other) { return other.name == field.name; });
            if (it == a.fields.end()) {
                return prefix + "field '" + field.name + "' is unknown" + on_ours;
            }
        }
        return prefix + "its fields are declared in another order";
    }
    for (std::size_t c = 0; c < ours.size(); ++c) {
        if (ours[c].name != theirs[c].name) {
            return "components are declared in another order: '" + ours[c].name + "' is #" +
                   std::to_string(c) + on_ours + ", '" + theirs[c].name + "' is #" + std::to_string(c) +
                   on_theirs;
        }
    }
    return {};
}

namespace {

result<void> check_peer(std::uint32_t version, std::uint64_t hash, const v1::ComponentSchema* schema,
                        bool has_schema, const schema_layout& ours, std::string_view ours_name,
                        std::string_view theirs_name) {
    if (version != protocol_version) {
        return make_error(errc::version_mismatch, "protocol version " + std::to_string(version) + " on the " +
                                                      std::string{theirs_name} + ", " +
                                                      std::to_string(protocol_version) + " on the " +
                                                      std::string{ours_name});
    }
    if (hash == ours.hash()) {
        return {};
    }
    std::string detail;
    if (has_schema) {
        auto theirs = schema_layout::from_proto(*schema);
        if (!theirs) {
            detail =
                "invalid schema on the " + std::string{theirs_name} + ": " + std::string{theirs.message()};
        } else {
            detail = describe_difference(ours, *theirs, ours_name, theirs_name);
            if (detail.empty()) {
                detail = "the " + std::string{theirs_name} + "'s schema hash does not match its own schema";
            }
        }
    } else {
        detail = "schema hash " + hex(hash) + " on the " + std::string{theirs_name} + ", " +
                 hex(ours.hash()) + " on the " + std::string{ours_name};
    }
    return make_error(errc::schema_mismatch, "schema mismatch: " + detail);
}

} // namespace

result<void> check_client_hello(const v1::ClientHello& hello, const schema_layout& server) {
    return check_peer(hello.protocol_version(), hello.schema_hash(), &hello.schema(), hello.has_schema(),
                      server, "server", "client");
}

result<void> check_server_welcome(const v1::ServerWelcome& welcome, const schema_layout& client) {
    return check_peer(welcome.protocol_version(), welcome.schema_hash(), &welcome.schema(),
                      welcome.has_schema(), client, "client", "server");
}

v1::DisconnectReason reason_for(const error& e) noexcept {
    switch (e.code) {
    case errc::version_mismatch:
        return v1::VERSION_MISMATCH;
    case errc::schema_mismatch:
        return v1::SCHEMA_MISMATCH;
    default:
        return v1::PROTOCOL_ERROR;
    }
}

std::string_view client_name(const v1::ClientHello& hello) noexcept {
    return cut_utf8(hello.client_name(), max_client_name);
}

} // namespace ecsnet::proto
