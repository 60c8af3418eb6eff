// The C API given bad input (issue 17, "Bad input"): every function with a null handle, null out-pointers,
// wrong ids, buffers too small, and calls after a disconnect returns its error code, never crashes (also run
// under ASan and UBSan). Calls libecsnet_client.so, as a C program would; no server needed.

#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "ecsnet/client.h"

namespace {

constexpr ecsnet_entity_id no_such_entity = (ecsnet_entity_id{7} << 32) | 12345U;

struct client_handle {
    ecsnet_client* get{};
    client_handle() {
        ecsnet_client_options options;
        EXPECT_EQ(ecsnet_client_options_init(&options), ECSNET_OK);
        options.transport = ECSNET_TRANSPORT_TCP;
        options.connect_timeout_ms = 500;
        EXPECT_EQ(ecsnet_client_create(&options, &get), ECSNET_OK);
    }
    ~client_handle() { ecsnet_client_destroy(get); }
};

void ignore_entity(void*, ecsnet_client*, ecsnet_entity_id) {}

TEST(CApiBadInput, EveryFunctionIsExported) {
    for (const char* name : {"ecsnet_result_name",
                             "ecsnet_version",
                             "ecsnet_abi_version",
                             "ecsnet_client_options_init",
                             "ecsnet_client_create",
                             "ecsnet_client_destroy",
                             "ecsnet_client_last_error",
                             "ecsnet_client_connect",
                             "ecsnet_client_connect_token",
                             "ecsnet_client_disconnect",
                             "ecsnet_client_poll",
                             "ecsnet_client_get_state",
                             "ecsnet_client_state_name",
                             "ecsnet_client_disconnect_reason",
                             "ecsnet_client_disconnect_retry_after",
                             "ecsnet_disconnect_reason_name",
                             "ecsnet_schema_component_count",
                             "ecsnet_schema_component_name",
                             "ecsnet_schema_field_count",
                             "ecsnet_schema_field_name",
                             "ecsnet_schema_field_encoding",
                             "ecsnet_component_id",
                             "ecsnet_field_id",
                             "ecsnet_client_entity_count",
                             "ecsnet_client_entity_at",
                             "ecsnet_client_entity_exists",
                             "ecsnet_client_own_entity",
                             "ecsnet_entity_has_component",
                             "ecsnet_entity_get_quantized",
                             "ecsnet_entity_get_int64",
                             "ecsnet_entity_get_double",
                             "ecsnet_entity_get_float",
                             "ecsnet_entity_get_component",
                             "ecsnet_entity_get_double_by_name",
                             "ecsnet_entity_get_predicted_double",
                             "ecsnet_client_on_entity_created",
                             "ecsnet_client_on_entity_changed",
                             "ecsnet_client_on_entity_destroyed",
                             "ecsnet_client_send_input",
                             "ecsnet_arena_encode_move",
                             "ecsnet_client_send_move",
                             "ecsnet_client_send_fire",
                             "ecsnet_stats_init",
                             "ecsnet_client_get_stats"}) {
        EXPECT_NE(dlsym(RTLD_DEFAULT, name), nullptr) << name;
    }
    // The C++ inside is not exported.
    EXPECT_EQ(dlsym(RTLD_DEFAULT, "_ZN6ecsnet6client6clientD1Ev"), nullptr);
}

TEST(CApiBadInput, NullHandle) {
    const auto expect_null_handle = [](ecsnet_result result) {
        EXPECT_EQ(result, ECSNET_ERROR_NULL_HANDLE);
        EXPECT_STRNE(ecsnet_client_last_error(nullptr), "");
    };
    char text[64];
    std::size_t size = 0;
    std::int32_t i32 = 0;
    std::uint32_t u32 = 0;
    std::int64_t i64 = 0;
    double real = 0.0;
    float single = 0.0F;
    int flag = 0;
    ecsnet_entity_id entity = 0;
    ecsnet_stats stats;
    ecsnet_stats_init(&stats);
    const unsigned char payload[4]{};

    expect_null_handle(ecsnet_client_connect(nullptr, "127.0.0.1", 1));
    expect_null_handle(ecsnet_client_connect_token(nullptr, "token", 5));
    expect_null_handle(ecsnet_client_disconnect(nullptr, "bye"));
    expect_null_handle(ecsnet_client_poll(nullptr, &size));
    expect_null_handle(ecsnet_client_get_state(nullptr, &i32));
    expect_null_handle(ecsnet_client_disconnect_reason(nullptr, &i32, text, sizeof text, &size));
    std::uint32_t seconds = 0;
    expect_null_handle(ecsnet_client_disconnect_retry_after(nullptr, &seconds));
    expect_null_handle(ecsnet_schema_component_count(nullptr, &u32));
    expect_null_handle(ecsnet_schema_component_name(nullptr, 0, text, sizeof text, &size));
    expect_null_handle(ecsnet_schema_field_count(nullptr, 0, &u32));
    expect_null_handle(ecsnet_schema_field_name(nullptr, 0, 0, text, sizeof text, &size));
    expect_null_handle(ecsnet_schema_field_encoding(nullptr, 0, 0, &i32, &u32));
    expect_null_handle(ecsnet_component_id(nullptr, "Transform", &u32));
    expect_null_handle(ecsnet_field_id(nullptr, 0, "x", &u32));
    expect_null_handle(ecsnet_client_entity_count(nullptr, &size));
    expect_null_handle(ecsnet_client_entity_at(nullptr, 0, &entity));
    expect_null_handle(ecsnet_client_entity_exists(nullptr, 0, &flag));
    expect_null_handle(ecsnet_client_own_entity(nullptr, &entity));
    expect_null_handle(ecsnet_entity_has_component(nullptr, 0, 0, &flag));
    expect_null_handle(ecsnet_entity_get_quantized(nullptr, 0, 0, 0, &u32));
    expect_null_handle(ecsnet_entity_get_int64(nullptr, 0, 0, 0, &i64));
    expect_null_handle(ecsnet_entity_get_double(nullptr, 0, 0, 0, &real));
    expect_null_handle(ecsnet_entity_get_float(nullptr, 0, 0, 0, &single));
    expect_null_handle(ecsnet_entity_get_component(nullptr, 0, 0, &real, 1, &size));
    expect_null_handle(ecsnet_entity_get_double_by_name(nullptr, 0, "Transform", "x", &real));
    expect_null_handle(ecsnet_entity_get_predicted_double(nullptr, 0, 0, 0, &real));
    expect_null_handle(ecsnet_client_on_entity_created(nullptr, ignore_entity, nullptr));
    expect_null_handle(ecsnet_client_on_entity_changed(nullptr, ignore_entity, nullptr));
    expect_null_handle(ecsnet_client_on_entity_destroyed(nullptr, ignore_entity, nullptr));
    expect_null_handle(ecsnet_client_send_input(nullptr, payload, sizeof payload));
    expect_null_handle(ecsnet_client_send_move(nullptr, 1.0F, 0.0F, 1.0F));
    expect_null_handle(ecsnet_client_send_fire(nullptr, 1.0F, 0.0F, 1.0F, 1.0F, 0.0F));
    expect_null_handle(ecsnet_client_get_stats(nullptr, &stats));
    ecsnet_client_destroy(nullptr); // accepted, like free(NULL)
}

TEST(CApiBadInput, NullPointersAndBadValues) {
    EXPECT_EQ(ecsnet_client_options_init(nullptr), ECSNET_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ecsnet_client_create(nullptr, nullptr), ECSNET_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ecsnet_stats_init(nullptr), ECSNET_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ecsnet_arena_encode_move(0, 1.0F, 0.0F, 1.0F, nullptr, 16), ECSNET_ERROR_INVALID_ARGUMENT);

    ecsnet_client_options options;
    ecsnet_client_options_init(&options);
    ecsnet_client* client = nullptr;
    options.transport = 7;
    EXPECT_EQ(ecsnet_client_create(&options, &client), ECSNET_ERROR_INVALID_ARGUMENT);
    options.transport = ECSNET_TRANSPORT_UDP;
    options.struct_size = 1;
    EXPECT_EQ(ecsnet_client_create(&options, &client), ECSNET_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(client, nullptr);
    EXPECT_STRNE(ecsnet_client_last_error(nullptr), "");

    // An older caller's options: name only; the rest takes the defaults.
    options.struct_size = offsetof(ecsnet_client_options, transport);
    options.transport = 99; // beyond what that caller's struct holds: not read
    ASSERT_EQ(ecsnet_client_create(&options, &client), ECSNET_OK);
    ecsnet_client_destroy(client);
    ASSERT_EQ(ecsnet_client_create(nullptr, &client), ECSNET_OK); // the defaults
    ecsnet_client_destroy(client);

    client_handle handle;
    ecsnet_client* c = handle.get;
    ASSERT_NE(c, nullptr);
    EXPECT_STREQ(ecsnet_client_last_error(c), "");
    const auto expect_invalid = [&](ecsnet_result result) {
        EXPECT_EQ(result, ECSNET_ERROR_INVALID_ARGUMENT);
        EXPECT_STRNE(ecsnet_client_last_error(c), "");
    };
    expect_invalid(ecsnet_client_connect(c, nullptr, 1));
    expect_invalid(ecsnet_client_connect_token(c, nullptr, 5));
    expect_invalid(ecsnet_client_get_state(c, nullptr));
    expect_invalid(ecsnet_schema_component_count(c, nullptr));
    expect_invalid(ecsnet_schema_component_name(c, 0, nullptr, 8, nullptr));
    expect_invalid(ecsnet_schema_field_count(c, 0, nullptr));
    expect_invalid(ecsnet_schema_field_name(c, 0, 0, nullptr, 8, nullptr));
    expect_invalid(ecsnet_component_id(c, nullptr, nullptr));
    std::uint32_t id = 0;
    expect_invalid(ecsnet_component_id(c, nullptr, &id));
    expect_invalid(ecsnet_field_id(c, 0, nullptr, &id));
    expect_invalid(ecsnet_field_id(c, 0, "x", nullptr));
    expect_invalid(ecsnet_client_entity_count(c, nullptr));
    expect_invalid(ecsnet_client_entity_at(c, 0, nullptr));
    expect_invalid(ecsnet_client_entity_exists(c, 0, nullptr));
    expect_invalid(ecsnet_client_own_entity(c, nullptr));
    expect_invalid(ecsnet_entity_has_component(c, 0, 0, nullptr));
    expect_invalid(ecsnet_entity_get_quantized(c, 0, 0, 0, nullptr));
    expect_invalid(ecsnet_entity_get_int64(c, 0, 0, 0, nullptr));
    expect_invalid(ecsnet_entity_get_double(c, 0, 0, 0, nullptr));
    expect_invalid(ecsnet_entity_get_float(c, 0, 0, 0, nullptr));
    expect_invalid(ecsnet_entity_get_component(c, 0, 0, nullptr, 4, nullptr));
    expect_invalid(ecsnet_entity_get_double_by_name(c, 0, nullptr, "x", nullptr));
    expect_invalid(ecsnet_entity_get_double_by_name(c, 0, "Transform", nullptr, nullptr));
    expect_invalid(ecsnet_client_send_input(c, nullptr, 4));
    expect_invalid(ecsnet_client_get_stats(c, nullptr));
    ecsnet_stats stats{};
    expect_invalid(ecsnet_client_get_stats(c, &stats)); // struct_size 0
    // Out-pointers that may be NULL are optional.
    EXPECT_EQ(ecsnet_client_poll(c, nullptr), ECSNET_OK);
    EXPECT_EQ(ecsnet_schema_field_encoding(c, 0, 0, nullptr, nullptr), ECSNET_OK);
    EXPECT_EQ(ecsnet_client_disconnect_reason(c, nullptr, nullptr, 0, nullptr), ECSNET_OK);
    // Callbacks may be removed with NULL.
    EXPECT_EQ(ecsnet_client_on_entity_created(c, nullptr, nullptr), ECSNET_OK);

    EXPECT_STREQ(ecsnet_result_name(-99), "ECSNET_UNKNOWN_RESULT");
    EXPECT_STREQ(ecsnet_client_state_name(-1), "unknown");
    EXPECT_STREQ(ecsnet_client_state_name(5), "unknown");
    EXPECT_STREQ(ecsnet_disconnect_reason_name(13), "unknown");
    EXPECT_STREQ(ecsnet_disconnect_reason_name(-4), "unknown");
    EXPECT_STREQ(ecsnet_disconnect_reason_name(ECSNET_DISCONNECT_CONNECTION_LOST), "connection_lost");
}

TEST(CApiBadInput, WrongIds) {
    client_handle handle;
    ecsnet_client* c = handle.get;
    ASSERT_NE(c, nullptr);
    const auto expect_not_found = [&](ecsnet_result result) {
        EXPECT_EQ(result, ECSNET_ERROR_NOT_FOUND);
        EXPECT_STRNE(ecsnet_client_last_error(c), "");
    };
    char text[64];
    std::size_t size = 0;
    std::int32_t i32 = 0;
    std::uint32_t u32 = 0;
    std::int64_t i64 = 0;
    double real = 0.0;
    double values[8]{};
    float single = 0.0F;
    int flag = 0;
    ecsnet_entity_id entity = 0;

    expect_not_found(ecsnet_schema_component_name(c, 4, text, sizeof text, &size));
    expect_not_found(ecsnet_schema_component_name(c, 0xFFFFFFFFU, text, sizeof text, &size));
    expect_not_found(ecsnet_schema_field_count(c, 99, &u32));
    expect_not_found(ecsnet_schema_field_name(c, 0, 4, text, sizeof text, &size)); // Transform has 4 fields
    expect_not_found(ecsnet_schema_field_name(c, 99, 0, text, sizeof text, &size));
    expect_not_found(ecsnet_schema_field_encoding(c, 1, 1, &i32, &u32)); // Health has 1 field
    expect_not_found(ecsnet_component_id(c, "transform", &u32));         // names are case-sensitive
    expect_not_found(ecsnet_component_id(c, "", &u32));
    expect_not_found(ecsnet_field_id(c, 0, "w", &u32));
    expect_not_found(ecsnet_field_id(c, 99, "x", &u32));
    // Nothing mirrored yet: any entity is unknown, any position past the end.
    EXPECT_EQ(ecsnet_client_entity_count(c, &size), ECSNET_OK);
    EXPECT_EQ(size, 0U);
    expect_not_found(ecsnet_client_entity_at(c, 0, &entity));
    expect_not_found(ecsnet_client_entity_at(c, static_cast<std::size_t>(-1), &entity));
    EXPECT_EQ(ecsnet_client_entity_exists(c, no_such_entity, &flag), ECSNET_OK);
    EXPECT_EQ(flag, 0);
    expect_not_found(ecsnet_client_own_entity(c, &entity));
    expect_not_found(ecsnet_entity_has_component(c, no_such_entity, 0, &flag));
    expect_not_found(ecsnet_entity_has_component(c, no_such_entity, 99, &flag));
    expect_not_found(ecsnet_entity_get_quantized(c, no_such_entity, 0, 0, &u32));
    expect_not_found(ecsnet_entity_get_quantized(c, no_such_entity, 0, 99, &u32));
    expect_not_found(ecsnet_entity_get_int64(c, no_such_entity, 99, 0, &i64));
    expect_not_found(ecsnet_entity_get_double(c, no_such_entity, 0, 0, &real));
    expect_not_found(ecsnet_entity_get_float(c, ~ecsnet_entity_id{0}, 0, 0, &single));
    expect_not_found(ecsnet_entity_get_component(c, no_such_entity, 0, values, 8, &size));
    expect_not_found(ecsnet_entity_get_component(c, no_such_entity, 42, values, 8, &size));
    expect_not_found(ecsnet_entity_get_double_by_name(c, no_such_entity, "Transform", "x", &real));
    expect_not_found(ecsnet_entity_get_double_by_name(c, no_such_entity, "Nope", "x", &real));
    expect_not_found(ecsnet_entity_get_double_by_name(c, no_such_entity, "Transform", "nope", &real));
    expect_not_found(ecsnet_entity_get_predicted_double(c, no_such_entity, 0, 0, &real));
    EXPECT_EQ(real, 0.0); // out-values untouched on errors
    EXPECT_EQ(single, 0.0F);
}

TEST(CApiBadInput, BuffersTooSmall) {
    client_handle handle;
    ecsnet_client* c = handle.get;
    ASSERT_NE(c, nullptr);
    char text[4] = "abc";
    std::size_t size = 0;
    EXPECT_EQ(ecsnet_schema_component_name(c, 0, text, sizeof text, &size), ECSNET_ERROR_BUFFER_TOO_SMALL);
    EXPECT_EQ(size, sizeof "Transform");
    EXPECT_STREQ(text, "abc"); // nothing written
    EXPECT_STRNE(ecsnet_client_last_error(c), "");
    EXPECT_EQ(ecsnet_schema_component_name(c, 0, text, 0, &size), ECSNET_ERROR_BUFFER_TOO_SMALL);
    EXPECT_EQ(ecsnet_schema_field_name(c, 0, 3, text, 3, &size), ECSNET_ERROR_BUFFER_TOO_SMALL); // "yaw"
    EXPECT_EQ(size, 4U);
    EXPECT_EQ(ecsnet_schema_field_name(c, 0, 3, text, 4, &size), ECSNET_OK);
    EXPECT_STREQ(text, "yaw");
    // The size query (NULL, 0) is not an error.
    EXPECT_EQ(ecsnet_schema_field_name(c, 0, 0, nullptr, 0, &size), ECSNET_OK);
    EXPECT_EQ(size, 2U);

    unsigned char move[ECSNET_ARENA_MOVE_INPUT_SIZE]{};
    EXPECT_EQ(ecsnet_arena_encode_move(0, 1.0F, 0.0F, 1.0F, move, sizeof move - 1),
              ECSNET_ERROR_BUFFER_TOO_SMALL);
    ASSERT_EQ(ecsnet_arena_encode_move(3, 1.0F, 0.0F, 2.0F, move, sizeof move), ECSNET_OK);
    EXPECT_EQ(move[0], 3);                                       // u32 target, little-endian
    EXPECT_EQ(std::memcmp(move + 4, "\x00\x00\x80\x3f", 4), 0);  // 1.0f
    EXPECT_EQ(std::memcmp(move + 12, "\x00\x00\x00\x40", 4), 0); // 2.0f

    // The disconnect message into a small buffer: the reason still given.
    ASSERT_EQ(ecsnet_client_connect(c, "127.0.0.1", 9), ECSNET_OK);
    ASSERT_EQ(ecsnet_client_disconnect(c, "a goodbye longer than the buffer"), ECSNET_OK);
    ecsnet_client_poll(c, nullptr);
    std::int32_t reason = -1;
    EXPECT_EQ(ecsnet_client_disconnect_reason(c, &reason, text, sizeof text, &size),
              ECSNET_ERROR_BUFFER_TOO_SMALL);
    EXPECT_EQ(reason, ECSNET_DISCONNECT_CLIENT_QUIT);
    EXPECT_GT(size, sizeof text);
}

TEST(CApiBadInput, AfterDisconnect) {
    client_handle handle;
    ecsnet_client* c = handle.get;
    ASSERT_NE(c, nullptr);
    const unsigned char payload[16]{};
    EXPECT_EQ(ecsnet_client_send_input(c, payload, sizeof payload),
              ECSNET_ERROR_NOT_CONNECTED); // never connected
    EXPECT_EQ(ecsnet_client_disconnect(c, nullptr), ECSNET_ERROR_NOT_CONNECTED);

    // A TCP connection nobody accepts (port 1 on 127.0.0.1): connect_failed, at once or within 500 ms.
    ASSERT_EQ(ecsnet_client_connect(c, "127.0.0.1", 1), ECSNET_OK);
    EXPECT_EQ(ecsnet_client_connect(c, "127.0.0.1", 1), ECSNET_ERROR_BUSY);
    std::int32_t state = -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{3};
    while (std::chrono::steady_clock::now() < deadline) {
        ASSERT_EQ(ecsnet_client_poll(c, nullptr), ECSNET_OK);
        ASSERT_EQ(ecsnet_client_get_state(c, &state), ECSNET_OK);
        if (state == ECSNET_STATE_DISCONNECTED) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds{5});
    }
    ASSERT_EQ(state, ECSNET_STATE_DISCONNECTED);
    std::int32_t reason = -1;
    std::size_t size = 0;
    EXPECT_EQ(ecsnet_client_disconnect_reason(c, &reason, nullptr, 0, &size), ECSNET_OK);
    EXPECT_EQ(reason, ECSNET_DISCONNECT_CONNECT_FAILED);
    EXPECT_GT(size, 1U);
    // Nobody said when to come back.
    std::uint32_t seconds = 7;
    EXPECT_EQ(ecsnet_client_disconnect_retry_after(c, &seconds), ECSNET_ERROR_NOT_FOUND);
    EXPECT_EQ(seconds, 7U);
    EXPECT_EQ(ecsnet_client_disconnect_retry_after(c, nullptr), ECSNET_ERROR_INVALID_ARGUMENT);

    // Everything still answers: what needs a connection says so, reads find nothing.
    EXPECT_EQ(ecsnet_client_send_input(c, payload, sizeof payload), ECSNET_ERROR_NOT_CONNECTED);
    EXPECT_EQ(ecsnet_client_send_input(c, nullptr, 0), ECSNET_ERROR_NOT_CONNECTED);
    EXPECT_EQ(ecsnet_client_send_move(c, 1.0F, 0.0F, 1.0F), ECSNET_ERROR_NOT_CONNECTED);
    EXPECT_EQ(ecsnet_client_send_fire(c, 1.0F, 0.0F, 1.0F, 1.0F, 0.0F), ECSNET_ERROR_NOT_CONNECTED);
    EXPECT_EQ(ecsnet_client_disconnect(c, "again"), ECSNET_ERROR_NOT_CONNECTED);
    EXPECT_EQ(ecsnet_client_poll(c, &size), ECSNET_OK);
    EXPECT_EQ(size, 0U);
    ecsnet_entity_id entity = 0;
    EXPECT_EQ(ecsnet_client_own_entity(c, &entity), ECSNET_ERROR_NOT_FOUND);
    EXPECT_EQ(ecsnet_client_entity_at(c, 0, &entity), ECSNET_ERROR_NOT_FOUND);
    double real = 0.0;
    EXPECT_EQ(ecsnet_entity_get_double(c, no_such_entity, 0, 0, &real), ECSNET_ERROR_NOT_FOUND);
    ecsnet_stats stats;
    ecsnet_stats_init(&stats);
    EXPECT_EQ(ecsnet_client_get_stats(c, &stats), ECSNET_OK);
    EXPECT_EQ(stats.snapshots_applied, 0U);
    EXPECT_EQ(stats.newest_tick, -1);
    std::uint32_t components = 0;
    EXPECT_EQ(ecsnet_schema_component_count(c, &components), ECSNET_OK);
    EXPECT_EQ(components, 4U);

    // A token that does not read ends the next attempt at once, saying why.
    ASSERT_EQ(ecsnet_client_connect_token(c, "not a token", 11), ECSNET_OK);
    ecsnet_client_poll(c, nullptr);
    ASSERT_EQ(ecsnet_client_get_state(c, &state), ECSNET_OK);
    EXPECT_EQ(state, ECSNET_STATE_DISCONNECTED);
    char message[256];
    EXPECT_EQ(ecsnet_client_disconnect_reason(c, &reason, message, sizeof message, nullptr), ECSNET_OK);
    EXPECT_EQ(reason, ECSNET_DISCONNECT_CONNECT_FAILED);
    EXPECT_NE(std::string{message}.find("token"), std::string::npos) << message;
}

} // namespace
