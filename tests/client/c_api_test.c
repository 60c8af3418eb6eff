/* The C API from C (compiled as C11, linked to libecsnet_client.so), against a live ecsnet-server started by
 * c_api_driver.py, which appends HOST PORT: connects, waits for the world, reads the schema, the entities and
 * the avatar's Transform by names and ids, walks the avatar with move inputs, reads the stats, sees the
 * callbacks fire, disconnects and reconnects. Every wait is bounded. Exit status 0 when all checks pass. */
#define _POSIX_C_SOURCE 199309L

#include <ecsnet/client.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures = 0;

#define CHECK(condition)                                                                                     \
    do {                                                                                                     \
        if (!(condition)) {                                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition);                    \
            ++failures;                                                                                      \
        }                                                                                                    \
    } while (0)

/* A call that must succeed: on an error, says which and why. */
#define CHECK_OK(client, call)                                                                               \
    do {                                                                                                     \
        const ecsnet_result result_ = (call);                                                                \
        if (result_ != ECSNET_OK) {                                                                          \
            fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, ecsnet_result_name(result_),  \
                    ecsnet_client_last_error(client));                                                       \
            ++failures;                                                                                      \
        }                                                                                                    \
    } while (0)

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

struct counters {
    size_t created, changed, destroyed;
    ecsnet_entity_id last_changed;
};

static void on_created(void* user_data, ecsnet_client* client, ecsnet_entity_id entity) {
    struct counters* counts = user_data;
    int exists = 0;
    /* the world may be read from a callback: the entity is there already */
    if (ecsnet_client_entity_exists(client, entity, &exists) == ECSNET_OK && exists) {
        ++counts->created;
    }
}

static void on_changed(void* user_data, ecsnet_client* client, ecsnet_entity_id entity) {
    struct counters* counts = user_data;
    (void)client;
    ++counts->changed;
    counts->last_changed = entity;
}

static void on_destroyed(void* user_data, ecsnet_client* client, ecsnet_entity_id entity) {
    struct counters* counts = user_data;
    (void)client;
    (void)entity;
    ++counts->destroyed;
}

/* Polls until the client is connected and its avatar mirrored, at most `seconds`. */
static int wait_for_avatar(ecsnet_client* client, double seconds, ecsnet_entity_id* avatar) {
    const double deadline = now_seconds() + seconds;
    while (now_seconds() < deadline) {
        CHECK_OK(client, ecsnet_client_poll(client, NULL));
        int32_t state = ECSNET_STATE_IDLE;
        CHECK_OK(client, ecsnet_client_get_state(client, &state));
        /* (after a reconnection the mirror holds the last state until the welcome: the old avatar too) */
        if (state == ECSNET_STATE_CONNECTED && ecsnet_client_own_entity(client, avatar) == ECSNET_OK) {
            return 1;
        }
        sleep_ms(5);
    }
    return 0;
}

static void check_versions(void) {
    CHECK(ecsnet_abi_version() == ECSNET_CLIENT_ABI_VERSION);
    CHECK(ecsnet_version() != NULL && strchr(ecsnet_version(), '.') != NULL);
    CHECK(strcmp(ecsnet_result_name(ECSNET_OK), "ECSNET_OK") == 0);
    CHECK(strcmp(ecsnet_result_name(ECSNET_ERROR_BUFFER_TOO_SMALL), "ECSNET_ERROR_BUFFER_TOO_SMALL") == 0);
    CHECK(strcmp(ecsnet_result_name(12345), "ECSNET_UNKNOWN_RESULT") == 0);
    CHECK(strcmp(ecsnet_client_state_name(ECSNET_STATE_CONNECTED), "connected") == 0);
    CHECK(strcmp(ecsnet_disconnect_reason_name(ECSNET_DISCONNECT_CLIENT_QUIT), "client_quit") == 0);
    CHECK(strcmp(ecsnet_disconnect_reason_name(ECSNET_DISCONNECT_CONNECT_FAILED), "connect_failed") == 0);
}

/* The arena's schema, as a binding would discover it. */
static void check_schema(ecsnet_client* client, uint32_t* transform, uint32_t* x, uint32_t* y) {
    uint32_t components = 0;
    CHECK_OK(client, ecsnet_schema_component_count(client, &components));
    CHECK(components == 4); /* Transform, Health, Kind, LastHit (the hit report) */
    int saw_transform = 0;
    for (uint32_t c = 0; c < components; ++c) {
        char name[64];
        size_t size = 0;
        CHECK_OK(client, ecsnet_schema_component_name(client, c, name, sizeof name, &size));
        CHECK(size == strlen(name) + 1);
        uint32_t fields = 0;
        CHECK_OK(client, ecsnet_schema_field_count(client, c, &fields));
        CHECK(fields >= 1);
        for (uint32_t f = 0; f < fields; ++f) {
            char field_name[64];
            CHECK_OK(client, ecsnet_schema_field_name(client, c, f, field_name, sizeof field_name, NULL));
            uint32_t found = 99;
            CHECK_OK(client, ecsnet_field_id(client, c, field_name, &found));
            CHECK(found == f);
        }
        uint32_t id = 99;
        CHECK_OK(client, ecsnet_component_id(client, name, &id));
        CHECK(id == c);
        saw_transform |= strcmp(name, "Transform") == 0;
    }
    CHECK(saw_transform);
    CHECK_OK(client, ecsnet_component_id(client, "Transform", transform));
    CHECK_OK(client, ecsnet_field_id(client, *transform, "x", x));
    CHECK_OK(client, ecsnet_field_id(client, *transform, "y", y));
    /* Lag compensation's hit report, on the shooter's avatar: read by name like any component. */
    uint32_t last_hit = 99;
    uint32_t hits = 99;
    CHECK_OK(client, ecsnet_component_id(client, "LastHit", &last_hit));
    CHECK_OK(client, ecsnet_field_id(client, last_hit, "hits", &hits));
    CHECK(hits == 2);
    int32_t encoding = 0;
    uint32_t bits = 0;
    CHECK_OK(client, ecsnet_schema_field_encoding(client, *transform, *x, &encoding, &bits));
    CHECK(encoding == ECSNET_FIELD_FIXED_POINT && bits == 20);
    uint32_t yaw = 0;
    CHECK_OK(client, ecsnet_field_id(client, *transform, "yaw", &yaw));
    CHECK_OK(client, ecsnet_schema_field_encoding(client, *transform, yaw, &encoding, &bits));
    CHECK(encoding == ECSNET_FIELD_ANGLE && bits == 12);
    /* asking the size first, then a buffer too small */
    size_t size = 0;
    CHECK_OK(client, ecsnet_schema_component_name(client, *transform, NULL, 0, &size));
    CHECK(size == sizeof "Transform");
    char tiny[4];
    CHECK(ecsnet_schema_component_name(client, *transform, tiny, sizeof tiny, &size) ==
          ECSNET_ERROR_BUFFER_TOO_SMALL);
    CHECK(ecsnet_component_id(client, "NoSuchComponent", transform) == ECSNET_ERROR_NOT_FOUND);
    CHECK_OK(client, ecsnet_component_id(client, "Transform", transform));
}

/* Every entity listed exists and reads; the avatar's Transform agrees across the ways of reading it. */
static void check_world(ecsnet_client* client, ecsnet_entity_id avatar, uint32_t transform, uint32_t x) {
    size_t count = 0;
    CHECK_OK(client, ecsnet_client_entity_count(client, &count));
    CHECK(count > 1); /* the avatar and NPCs */
    int saw_avatar = 0;
    size_t with_transform = 0;
    for (size_t i = 0; i < count; ++i) {
        ecsnet_entity_id entity = 0;
        CHECK_OK(client, ecsnet_client_entity_at(client, i, &entity));
        int exists = 0;
        int has = 0;
        CHECK_OK(client, ecsnet_client_entity_exists(client, entity, &exists));
        CHECK(exists == 1);
        CHECK_OK(client, ecsnet_entity_has_component(client, entity, transform, &has));
        with_transform += (size_t)has;
        saw_avatar |= entity == avatar;
    }
    CHECK(saw_avatar);
    CHECK(with_transform == count);
    ecsnet_entity_id past_end = 0;
    CHECK(ecsnet_client_entity_at(client, count, &past_end) == ECSNET_ERROR_NOT_FOUND);

    double by_name = 0.0;
    double by_id = 0.0;
    float as_float = 0.0f;
    uint32_t quantized = 0;
    int64_t as_int = 0;
    CHECK_OK(client, ecsnet_entity_get_double_by_name(client, avatar, "Transform", "x", &by_name));
    CHECK_OK(client, ecsnet_entity_get_double(client, avatar, transform, x, &by_id));
    CHECK_OK(client, ecsnet_entity_get_float(client, avatar, transform, x, &as_float));
    CHECK_OK(client, ecsnet_entity_get_quantized(client, avatar, transform, x, &quantized));
    CHECK_OK(client, ecsnet_entity_get_int64(client, avatar, transform, x, &as_int));
    CHECK(by_name == by_id);
    CHECK(fabs((double)as_float - by_id) < 1e-3);
    /* Transform.x: fixed point, min -1024, 1/512 m */
    CHECK(fabs(-1024.0 + quantized / 512.0 - by_id) < 1e-9);
    CHECK(as_int == (int64_t)quantized);
    CHECK(by_id >= -1024.0 && by_id < 1024.0);

    double values[4] = {0};
    size_t fields = 0;
    CHECK_OK(client, ecsnet_entity_get_component(client, avatar, transform, values, 4, &fields));
    CHECK(fields == 4 && values[x] == by_id);
    CHECK(values[3] >= 0.0 && values[3] < 2.0 * 3.14159266); /* yaw in [0, 2 pi) */
    CHECK(ecsnet_entity_get_component(client, avatar, transform, values, 2, &fields) ==
          ECSNET_ERROR_BUFFER_TOO_SMALL);
    CHECK(fields == 4);
    double predicted = 0.0; /* prediction off: the mirror's value */
    CHECK_OK(client, ecsnet_entity_get_predicted_double(client, avatar, transform, x, &predicted));
    CHECK(predicted == by_id);
}

/* Walks the avatar along +x or -x (away from the nearer edge) for 1 s: it must move at least 3 m. */
static void check_inputs_move_the_avatar(ecsnet_client* client, ecsnet_entity_id avatar, uint32_t transform,
                                         uint32_t x, struct counters* counts) {
    double start = 0.0;
    CHECK_OK(client, ecsnet_entity_get_double(client, avatar, transform, x, &start));
    const float direction = start > 0.0 ? -1.0f : 1.0f;
    unsigned char move[ECSNET_ARENA_MOVE_INPUT_SIZE];
    CHECK_OK(NULL, ecsnet_arena_encode_move(0, direction, 0.0f, 8.0f, move, sizeof move));
    const size_t changed_before = counts->changed;
    const double deadline = now_seconds() + 1.0;
    int sent_raw = 0;
    while (now_seconds() < deadline) {
        CHECK_OK(client, ecsnet_client_poll(client, NULL));
        /* both ways of sending: the raw payload and the helper */
        if (!sent_raw) {
            CHECK_OK(client, ecsnet_client_send_input(client, move, sizeof move));
            sent_raw = 1;
        } else {
            CHECK_OK(client, ecsnet_client_send_move(client, direction, 0.0f, 8.0f));
        }
        sleep_ms(33);
    }
    /* the last inputs' effects arrive within a few ticks */
    const double settle = now_seconds() + 0.3;
    while (now_seconds() < settle) {
        CHECK_OK(client, ecsnet_client_poll(client, NULL));
        sleep_ms(10);
    }
    double end = 0.0;
    CHECK_OK(client, ecsnet_entity_get_double(client, avatar, transform, x, &end));
    printf("avatar x: %.3f -> %.3f m\n", start, end);
    CHECK((end - start) * direction > 3.0);
    CHECK(counts->changed > changed_before);
}

static void check_stats(ecsnet_client* client) {
    ecsnet_stats stats;
    CHECK_OK(client, ecsnet_stats_init(&stats));
    CHECK_OK(client, ecsnet_client_get_stats(client, &stats));
    printf("stats: rtt %lld us, %.0f B/s in, %.0f B/s out, %llu snapshots applied, tick %lld, %llu inputs\n",
           (long long)stats.rtt_us, stats.bytes_in_per_second, stats.bytes_out_per_second,
           (unsigned long long)stats.snapshots_applied, (long long)stats.newest_tick,
           (unsigned long long)stats.inputs_sent);
    CHECK(stats.struct_size == sizeof stats);
    CHECK(stats.snapshots_applied > 10);
    CHECK(stats.bytes_received > 0 && stats.bytes_sent > 0);
    CHECK(stats.inputs_sent >= 20 && stats.inputs_refused == 0);
    CHECK(stats.newest_tick > 0);
    CHECK(stats.checksum_mismatches == 0);
    CHECK(stats.full_states_received >= 1);
    CHECK(stats.packets_received > 0); /* over UDP */

    /* An older caller's shorter struct: only its fields are written. */
    ecsnet_stats older;
    memset(&older, 0xAB, sizeof older);
    older.struct_size = offsetof(ecsnet_stats, bytes_in_per_second);
    CHECK_OK(client, ecsnet_client_get_stats(client, &older));
    CHECK(older.struct_size == offsetof(ecsnet_stats, bytes_in_per_second));
    CHECK(older.rtt_smoothed_us >= 0);
    unsigned char untouched[sizeof(double)];
    memset(untouched, 0xAB, sizeof untouched);
    CHECK(memcmp(&older.bytes_in_per_second, untouched, sizeof untouched) == 0);
}

/* A second client that predicts (options.prediction): it walks for 1.5 s with ecsnet_client_send_move; its
 * predicted avatar runs ahead of the mirror's, nothing is mispredicted, and the stats say so. */
static void check_prediction(const char* host, uint16_t port) {
    ecsnet_client_options options;
    CHECK_OK(NULL, ecsnet_client_options_init(&options));
    options.name = "c-api-predicting";
    options.prediction = 1;
    ecsnet_client* client = NULL;
    CHECK_OK(NULL, ecsnet_client_create(&options, &client));
    if (client == NULL) {
        return;
    }
    CHECK_OK(client, ecsnet_client_connect(client, host, port));
    ecsnet_entity_id avatar = 0;
    CHECK(wait_for_avatar(client, 5.0, &avatar));
    uint32_t transform = 0;
    uint32_t y = 0;
    CHECK_OK(client, ecsnet_component_id(client, "Transform", &transform));
    CHECK_OK(client, ecsnet_field_id(client, transform, "y", &y));
    double server_start = 0.0;
    CHECK_OK(client, ecsnet_entity_get_double(client, avatar, transform, y, &server_start));
    const float direction = server_start > 0.0 ? -1.0f : 1.0f;
    const double deadline = now_seconds() + 1.5;
    while (now_seconds() < deadline) {
        CHECK_OK(client, ecsnet_client_send_move(client, 0.0f, direction, 4.0f));
        CHECK_OK(client, ecsnet_client_poll(client, NULL));
        sleep_ms(5);
    }
    double server_y = 0.0;
    double predicted_y = 0.0;
    CHECK_OK(client, ecsnet_entity_get_double(client, avatar, transform, y, &server_y));
    CHECK_OK(client, ecsnet_entity_get_predicted_double(client, avatar, transform, y, &predicted_y));
    CHECK((server_y - server_start) * direction > 2.0); /* it walked */
    CHECK((predicted_y - server_y) * direction > 0.0);  /* and the prediction is ahead of the server */
    ecsnet_stats stats;
    CHECK_OK(NULL, ecsnet_stats_init(&stats));
    CHECK_OK(client, ecsnet_client_get_stats(client, &stats));
    CHECK(stats.prediction_ticks_compared > 20);
    CHECK(stats.mispredictions == 0);
    CHECK(stats.predicted_ticks_ahead > 0);
    printf("prediction: %llu ticks compared, %llu mispredictions, %lld ticks ahead\n",
           (unsigned long long)stats.prediction_ticks_compared, (unsigned long long)stats.mispredictions,
           (long long)stats.predicted_ticks_ahead);
    ecsnet_client_destroy(client);
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s HOST PORT (c_api_driver.py passes them)\n", argv[0]);
        return 2;
    }
    const char* host = argv[1];
    const uint16_t port = (uint16_t)atoi(argv[2]);
    const double started = now_seconds();

    check_versions();

    ecsnet_client_options options;
    CHECK_OK(NULL, ecsnet_client_options_init(&options));
    options.name = "c-api-test";
    options.transport = ECSNET_TRANSPORT_UDP;
    options.connect_timeout_ms = 3000;
    ecsnet_client* client = NULL;
    CHECK_OK(NULL, ecsnet_client_create(&options, &client));
    if (client == NULL) {
        return 1;
    }

    struct counters counts = {0, 0, 0, 0};
    CHECK_OK(client, ecsnet_client_on_entity_created(client, on_created, &counts));
    CHECK_OK(client, ecsnet_client_on_entity_changed(client, on_changed, &counts));
    CHECK_OK(client, ecsnet_client_on_entity_destroyed(client, on_destroyed, &counts));

    uint32_t transform = 0;
    uint32_t x = 0;
    uint32_t y = 0;
    check_schema(client, &transform, &x, &y);

    int32_t state = -1;
    CHECK_OK(client, ecsnet_client_get_state(client, &state));
    CHECK(state == ECSNET_STATE_IDLE);
    CHECK_OK(client, ecsnet_client_connect(client, host, port));
    CHECK(ecsnet_client_connect(client, host, port) == ECSNET_ERROR_BUSY);

    ecsnet_entity_id avatar = 0;
    const int arrived = wait_for_avatar(client, 5.0, &avatar);
    CHECK(arrived);
    if (!arrived) {
        char message[256] = "";
        int32_t reason = 0;
        ecsnet_client_disconnect_reason(client, &reason, message, sizeof message, NULL);
        fprintf(stderr, "no avatar within 5 s: %s (%s)\n", ecsnet_disconnect_reason_name(reason), message);
        ecsnet_client_destroy(client);
        return 1;
    }
    CHECK_OK(client, ecsnet_client_get_state(client, &state));
    CHECK(state == ECSNET_STATE_CONNECTED);
    CHECK(counts.created > 1);
    printf("connected: avatar index %u generation %u, %zu entities created\n", ECSNET_ENTITY_INDEX(avatar),
           ECSNET_ENTITY_GENERATION(avatar), counts.created);

    check_world(client, avatar, transform, x);
    check_inputs_move_the_avatar(client, avatar, transform, x, &counts);
    check_stats(client);

    /* Leaving: CLIENT_QUIT, the message kept; inputs then refused as not connected. */
    CHECK_OK(client, ecsnet_client_disconnect(client, "bye from C"));
    CHECK_OK(client, ecsnet_client_poll(client, NULL));
    CHECK_OK(client, ecsnet_client_get_state(client, &state));
    CHECK(state == ECSNET_STATE_DISCONNECTED);
    int32_t reason = -1;
    char message[128];
    size_t message_size = 0;
    CHECK_OK(client,
             ecsnet_client_disconnect_reason(client, &reason, message, sizeof message, &message_size));
    CHECK(reason == ECSNET_DISCONNECT_CLIENT_QUIT);
    CHECK(message_size == strlen(message) + 1);
    CHECK(ecsnet_client_send_move(client, 1.0f, 0.0f, 1.0f) == ECSNET_ERROR_NOT_CONNECTED);
    CHECK(strlen(ecsnet_client_last_error(client)) > 0);
    CHECK(ecsnet_client_disconnect(client, NULL) == ECSNET_ERROR_NOT_CONNECTED);

    /* Reconnecting: the new welcome clears the mirror (every entity destroyed), then a full state. */
    const size_t created_before = counts.created;
    CHECK_OK(client, ecsnet_client_connect(client, host, port));
    CHECK(wait_for_avatar(client, 5.0, &avatar));
    CHECK(counts.destroyed > 0);
    CHECK(counts.created > created_before);

    ecsnet_client_destroy(client);
    check_prediction(host, port);
    printf("c_api_test: %d failure(s) in %.2f s\n", failures, now_seconds() - started);
    return failures == 0 ? 0 : 1;
}
