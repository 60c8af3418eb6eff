/*
 * The ecsnet client SDK as a flat C ABI (libecsnet_client.so), for engines and languages that can call C
 * but not a C++ template library: Unity (C#), Unreal, Godot, custom engines, Python's ctypes.
 *
 *   ecsnet_client_options options;
 *   ecsnet_client_options_init(&options);
 *   options.name = "player one";
 *   ecsnet_client* client = NULL;
 *   if (ecsnet_client_create(&options, &client) != ECSNET_OK) { ... }
 *   ecsnet_client_connect(client, "127.0.0.1", 7777);  // or ecsnet_client_connect_token()
 *   while (playing) {
 *       ecsnet_client_poll(client, NULL);  // never blocks; fires the entity callbacks
 *       size_t count = 0;
 *       ecsnet_client_entity_count(client, &count);
 *       for (size_t i = 0; i < count; ++i) {
 *           ecsnet_entity_id e;
 *           ecsnet_client_entity_at(client, i, &e);
 *           ...
 *       }
 *       ecsnet_client_send_move(client, dir_x, dir_y, 4.0f);
 *   }
 *   ecsnet_client_destroy(client);
 *
 * Rules of the whole API (docs/client.md, "C API"):
 *  - Every function returns an ecsnet_result (ECSNET_OK = 0, errors negative) and writes its results through
 *    out-pointers; on an error the out-values are left as they were, and ecsnet_client_last_error() says
 *    why. Nothing throws and nothing aborts: a null handle or pointer, an unknown id, a buffer too small or
 *    a call that needs a connection after it ended each give their error code.
 *  - A client is driven by ecsnet_client_poll() on the caller's thread (no thread of its own); one client
 *    is used by one thread at a time. Different clients may live on different threads.
 *  - The client mirrors the demo arena's replicated schema (components Transform, Health, Kind): read it
 *    at run time with ecsnet_schema_component_count() and friends rather than hard-coding ids.
 *  - Strings passed in are NUL-terminated UTF-8 and copied; strings given out are copied into the caller's
 *    buffer (with the size needed reported, NUL included), except ecsnet_version(), ecsnet_result_name()
 *    and the other *_name() functions, which return static strings.
 *  - Structs that may grow (options, stats) start with struct_size: set it to sizeof() of the struct your
 *    header declares (the *_init() functions do); a newer library reads or writes only that much.
 *
 * C99 and C++ compatible; no C++ type crosses this header.
 */
#ifndef ECSNET_CLIENT_H
#define ECSNET_CLIENT_H

#include <stddef.h>
#include <stdint.h>

/* The ABI this header describes: raised on any incompatible change (a function's signature or meaning, a
 * struct's existing fields). Compare with ecsnet_abi_version() at run time. */
#define ECSNET_CLIENT_ABI_VERSION 1

#if defined(_WIN32)
#if defined(ECSNET_BUILDING_SHARED)
#define ECSNET_API __declspec(dllexport)
#else
#define ECSNET_API __declspec(dllimport)
#endif
#else
#define ECSNET_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- results ---------------------------------------------------------------------------------------- */

typedef enum ecsnet_result {
    ECSNET_OK = 0,
    ECSNET_ERROR_NULL_HANDLE = -1,      /* the client handle is NULL */
    ECSNET_ERROR_INVALID_ARGUMENT = -2, /* a NULL pointer, a bad value, a struct_size too small */
    ECSNET_ERROR_NOT_FOUND = -3,        /* no such component, field, entity, or no avatar (yet) */
    ECSNET_ERROR_BUFFER_TOO_SMALL = -4, /* the size needed was written to the size out-pointer */
    ECSNET_ERROR_NOT_CONNECTED = -5,    /* the call needs an open connection */
    ECSNET_ERROR_BUSY = -6,             /* connect while a connection is opening or open */
    ECSNET_ERROR_REFUSED = -7,          /* the input was refused (too large, too many bytes unsent) */
    ECSNET_ERROR_UNSUPPORTED = -8,      /* not implemented by this library */
    ECSNET_ERROR_OUT_OF_MEMORY = -9,
    ECSNET_ERROR_INTERNAL = -10 /* an unexpected failure inside the SDK (the message says which) */
} ecsnet_result;

/* A stable name: "ECSNET_OK", "ECSNET_ERROR_NOT_FOUND"...; "ECSNET_UNKNOWN_RESULT" for other values. */
ECSNET_API const char* ecsnet_result_name(int result);

/* ---- versions --------------------------------------------------------------------------------------- */

/* The library's version, "MAJOR.MINOR.PATCH" (static string). */
ECSNET_API const char* ecsnet_version(void);
/* ECSNET_CLIENT_ABI_VERSION of the library loaded: equal to the header's, or the header is not its. */
ECSNET_API int ecsnet_abi_version(void);

/* ---- creating a client ------------------------------------------------------------------------------ */

typedef struct ecsnet_client ecsnet_client;

typedef enum ecsnet_transport {
    ECSNET_TRANSPORT_UDP = 0, /* connect tokens, encryption, channels: the production path */
    ECSNET_TRANSPORT_TCP = 1  /* for networks that block UDP, and for debugging */
} ecsnet_transport;

typedef struct ecsnet_client_options {
    size_t struct_size;              /* sizeof(ecsnet_client_options) */
    const char* name;                /* shown in the server's logs; NULL: "ecsnet-client" */
    int32_t transport;               /* an ecsnet_transport */
    uint32_t connect_timeout_ms;     /* 0: the default (5,000) */
    uint32_t handshake_timeout_ms;   /* 0: the default (5,000) */
    uint32_t idle_timeout_ms;        /* 0: the default (10,000) */
    uint32_t interpolation_delay_ms; /* 0: the default (100) */
    uint64_t protocol_id;            /* of the development tokens the client makes; 0: the default */
    /* 1: predict the own avatar ahead of the server (docs/client.md, "Prediction"): ecsnet_client_send_move()
     * then sets the move that ecsnet_client_poll() sends for, and predicts, each tick, and
     * ecsnet_entity_get_predicted_double() reads the predicted avatar. 0 (the default): off. */
    int32_t prediction;
} ecsnet_client_options;

/* Fills *options with the defaults and struct_size. */
ECSNET_API ecsnet_result ecsnet_client_options_init(ecsnet_client_options* options);
/* A new client in *out (options NULL: the defaults). Release it with ecsnet_client_destroy(). */
ECSNET_API ecsnet_result ecsnet_client_create(const ecsnet_client_options* options, ecsnet_client** out);
/* Says CLIENT_QUIT to the server if connected, then frees the client. NULL is accepted (nothing happens).
 * The handle is invalid afterwards; never call it from a callback. */
ECSNET_API void ecsnet_client_destroy(ecsnet_client* client);

/* The message of this client's last error (valid until the client's next call), "" when none. With a NULL
 * client: the last error of this thread's calls that had no client (a NULL handle, a failed create). */
ECSNET_API const char* ecsnet_client_last_error(const ecsnet_client* client);

/* ---- the connection --------------------------------------------------------------------------------- */

/* Starts connecting to host:port (asynchronous: watch ecsnet_client_state()). Over UDP without a token the
 * client makes a development token, which only a server run with --insecure-dev accepts.
 * ECSNET_ERROR_BUSY while a connection is opening or open. */
ECSNET_API ecsnet_result ecsnet_client_connect(ecsnet_client* client, const char* host, uint16_t port);
/* Starts connecting with a connect token from the studio's backend: its base64 text or its 2,048 bytes
 * (`size` bytes at `token`), to the servers it names. A token that does not read ends the attempt at once
 * (state DISCONNECTED, reason CONNECT_FAILED, saying why). */
ECSNET_API ecsnet_result ecsnet_client_connect_token(ecsnet_client* client, const void* token, size_t size);
/* Ends the connection: CLIENT_QUIT and `message` (may be NULL) to the server. ECSNET_ERROR_NOT_CONNECTED
 * when no connection is opening or open. */
ECSNET_API ecsnet_result ecsnet_client_disconnect(ecsnet_client* client, const char* message);

/* Does all pending network work and applies the snapshots received, without blocking; then fires the
 * entity callbacks for what changed. *snapshots_applied (may be NULL) gets the number applied. */
ECSNET_API ecsnet_result ecsnet_client_poll(ecsnet_client* client, size_t* snapshots_applied);

typedef enum ecsnet_client_state {
    ECSNET_STATE_IDLE = 0,        /* never connected */
    ECSNET_STATE_CONNECTING = 1,  /* resolving, opening the connection */
    ECSNET_STATE_HANDSHAKING = 2, /* hello sent, waiting for the welcome */
    ECSNET_STATE_CONNECTED = 3,   /* welcomed: snapshots flow */
    ECSNET_STATE_DISCONNECTED = 4 /* ended: see ecsnet_client_disconnect_reason() */
} ecsnet_client_state;

ECSNET_API ecsnet_result ecsnet_client_get_state(ecsnet_client* client, int32_t* state);
/* "idle", "connecting", "handshaking", "connected", "disconnected"; "unknown" otherwise. */
ECSNET_API const char* ecsnet_client_state_name(int state);

/* Values of the wire's DisconnectReason, plus two decided by the client alone. */
typedef enum ecsnet_disconnect_reason {
    ECSNET_DISCONNECT_NONE = 0,
    ECSNET_DISCONNECT_SHUTDOWN = 1,
    ECSNET_DISCONNECT_PROTOCOL_ERROR = 2,
    ECSNET_DISCONNECT_SCHEMA_MISMATCH = 3,
    ECSNET_DISCONNECT_VERSION_MISMATCH = 4,
    ECSNET_DISCONNECT_HANDSHAKE_TIMEOUT = 5,
    ECSNET_DISCONNECT_TIMEOUT = 6,
    ECSNET_DISCONNECT_SERVER_FULL = 7,
    ECSNET_DISCONNECT_SLOW_CONSUMER = 8,
    ECSNET_DISCONNECT_KICKED = 9,
    ECSNET_DISCONNECT_CLIENT_QUIT = 10,
    ECSNET_DISCONNECT_AUTHENTICATION_FAILED = 11,
    ECSNET_DISCONNECT_BUDGET_TOO_SMALL = 12,
    ECSNET_DISCONNECT_CONNECT_FAILED = 100, /* the host did not resolve, refused, or never answered */
    ECSNET_DISCONNECT_CONNECTION_LOST = 101 /* closed without the server saying why */
} ecsnet_disconnect_reason;

/* Why the last connection ended (NONE while none has). *reason gets the code (may be NULL); the message is
 * copied into message[0..capacity) with its NUL, and *message_size (may be NULL) gets the size it needs
 * (NUL included). message may be NULL with capacity 0 to ask the size. A message longer than the buffer:
 * ECSNET_ERROR_BUFFER_TOO_SMALL, *reason and *message_size still set. */
ECSNET_API ecsnet_result ecsnet_client_disconnect_reason(ecsnet_client* client, int32_t* reason,
                                                         char* message, size_t capacity,
                                                         size_t* message_size);
/* When the server that ended the last connection said the client may try again (SHUTDOWN from a draining
 * server, `--retry-after-seconds`): *seconds gets it. ECSNET_ERROR_NOT_FOUND when it said nothing of the
 * kind (or no connection has ended). */
ECSNET_API ecsnet_result ecsnet_client_disconnect_retry_after(ecsnet_client* client, uint32_t* seconds);
/* "shutdown", "client_quit", "connect_failed"...; "unknown" for other values. */
ECSNET_API const char* ecsnet_disconnect_reason_name(int reason);

/* ---- the schema ------------------------------------------------------------------------------------- */

/* Component ids are positions in the schema (0..count); field ids positions in their component. */
ECSNET_API ecsnet_result ecsnet_schema_component_count(ecsnet_client* client, uint32_t* count);
/* Copies the name like ecsnet_client_disconnect_reason() copies its message. */
ECSNET_API ecsnet_result ecsnet_schema_component_name(ecsnet_client* client, uint32_t component, char* name,
                                                      size_t capacity, size_t* name_size);
ECSNET_API ecsnet_result ecsnet_schema_field_count(ecsnet_client* client, uint32_t component,
                                                   uint32_t* count);
ECSNET_API ecsnet_result ecsnet_schema_field_name(ecsnet_client* client, uint32_t component, uint32_t field,
                                                  char* name, size_t capacity, size_t* name_size);

typedef enum ecsnet_field_encoding {
    ECSNET_FIELD_FIXED_POINT = 1, /* a real value in metres or the like: min + quantized * step */
    ECSNET_FIELD_ANGLE = 2,       /* radians in [0, 2 pi) */
    ECSNET_FIELD_UNSIGNED = 3,
    ECSNET_FIELD_SIGNED = 4,
    ECSNET_FIELD_BOOLEAN = 5
} ecsnet_field_encoding;

/* The field's encoding (an ecsnet_field_encoding) and width in bits (either pointer may be NULL). */
ECSNET_API ecsnet_result ecsnet_schema_field_encoding(ecsnet_client* client, uint32_t component,
                                                      uint32_t field, int32_t* encoding, uint32_t* bits);
/* The id of the component named `name` ("Transform"): ECSNET_ERROR_NOT_FOUND when there is none. */
ECSNET_API ecsnet_result ecsnet_component_id(ecsnet_client* client, const char* name, uint32_t* component);
/* The id of the field named `name` ("x") in `component`. */
ECSNET_API ecsnet_result ecsnet_field_id(ecsnet_client* client, uint32_t component, const char* name,
                                         uint32_t* field);

/* ---- entities (the mirror of the server's world) ---------------------------------------------------- */

/* A replicated entity, by its server identity: (generation << 32) | server index. Stable while the entity
 * lives; an index reused by the server comes with another generation. */
typedef uint64_t ecsnet_entity_id;

#define ECSNET_ENTITY_INDEX(id) ((uint32_t)((id)&0xFFFFFFFFu))
#define ECSNET_ENTITY_GENERATION(id) ((uint32_t)((id) >> 32))

/* The entities mirrored now, and the one at a position in 0..count (the order is unspecified and holds
 * until the next poll). After a disconnect the mirror keeps the last state. */
ECSNET_API ecsnet_result ecsnet_client_entity_count(ecsnet_client* client, size_t* count);
ECSNET_API ecsnet_result ecsnet_client_entity_at(ecsnet_client* client, size_t position,
                                                 ecsnet_entity_id* entity);
/* Whether the entity is mirrored now (*exists 1 or 0). */
ECSNET_API ecsnet_result ecsnet_client_entity_exists(ecsnet_client* client, ecsnet_entity_id entity,
                                                     int* exists);
/* The avatar the server gave this client: ECSNET_ERROR_NOT_FOUND until its first snapshot has arrived. */
ECSNET_API ecsnet_result ecsnet_client_own_entity(ecsnet_client* client, ecsnet_entity_id* entity);

/* Whether a mirrored entity has a component (*has 1 or 0). ECSNET_ERROR_NOT_FOUND: no such entity. */
ECSNET_API ecsnet_result ecsnet_entity_has_component(ecsnet_client* client, ecsnet_entity_id entity,
                                                     uint32_t component, int* has);
/* A field's quantized value, as on the wire (fixed point: steps above min; angle: 2 pi / 2^bits units). */
ECSNET_API ecsnet_result ecsnet_entity_get_quantized(ecsnet_client* client, ecsnet_entity_id entity,
                                                     uint32_t component, uint32_t field, uint32_t* value);
/* A field as an integer: signed fields sign-extended, others their quantized value. */
ECSNET_API ecsnet_result ecsnet_entity_get_int64(ecsnet_client* client, ecsnet_entity_id entity,
                                                 uint32_t component, uint32_t field, int64_t* value);
/* A field's real value: metres (fixed point), radians (angle), the integer or 0/1 otherwise. */
ECSNET_API ecsnet_result ecsnet_entity_get_double(ecsnet_client* client, ecsnet_entity_id entity,
                                                  uint32_t component, uint32_t field, double* value);
ECSNET_API ecsnet_result ecsnet_entity_get_float(ecsnet_client* client, ecsnet_entity_id entity,
                                                 uint32_t component, uint32_t field, float* value);
/* All the fields of a component as real values, in field order, into values[0..capacity); *count (may be
 * NULL) gets the field count. Fewer than that: ECSNET_ERROR_BUFFER_TOO_SMALL (*count still set). */
ECSNET_API ecsnet_result ecsnet_entity_get_component(ecsnet_client* client, ecsnet_entity_id entity,
                                                     uint32_t component, double* values, size_t capacity,
                                                     size_t* count);
/* ecsnet_entity_get_double() by names: ("Transform", "x"). */
ECSNET_API ecsnet_result ecsnet_entity_get_double_by_name(ecsnet_client* client, ecsnet_entity_id entity,
                                                          const char* component, const char* field,
                                                          double* value);
/* A field's value as the player should see it: for the Transform of the own avatar, or of an entity the
 * server marks predicted for this client (the arena's companion, server --companions), with prediction on
 * (ecsnet_client_options.prediction), the predicted value, with a misprediction's correction being smoothed
 * away; for anything else (and before the first prediction), the mirror's value, as
 * ecsnet_entity_get_double(). Errors as ecsnet_entity_get_double(). */
ECSNET_API ecsnet_result ecsnet_entity_get_predicted_double(ecsnet_client* client, ecsnet_entity_id entity,
                                                            uint32_t component, uint32_t field,
                                                            double* value);

/* ---- callbacks, fired from ecsnet_client_poll() after the snapshots are applied --------------------- */

/* `entity` was created, changed (a replicated component written) or destroyed. During the call the client
 * may be read (a destroyed entity no longer can), not destroyed. */
typedef void (*ecsnet_entity_callback)(void* user_data, ecsnet_client* client, ecsnet_entity_id entity);

/* Sets (or, with NULL, removes) a callback; user_data is handed back as it is. */
ECSNET_API ecsnet_result ecsnet_client_on_entity_created(ecsnet_client* client,
                                                         ecsnet_entity_callback callback, void* user_data);
ECSNET_API ecsnet_result ecsnet_client_on_entity_changed(ecsnet_client* client,
                                                         ecsnet_entity_callback callback, void* user_data);
ECSNET_API ecsnet_result ecsnet_client_on_entity_destroyed(ecsnet_client* client,
                                                           ecsnet_entity_callback callback, void* user_data);

/* ---- inputs ----------------------------------------------------------------------------------------- */

/* Sends one input carrying the game's payload (`size` bytes; at most 238 over UDP, 1,024 over TCP).
 * ECSNET_ERROR_NOT_CONNECTED when not connected, ECSNET_ERROR_REFUSED when the SDK refuses it. */
ECSNET_API ecsnet_result ecsnet_client_send_input(ecsnet_client* client, const void* payload, size_t size);

/* The demo arena's move input: 16 bytes (u32 target, f32 dir_x, f32 dir_y, f32 speed, little-endian). */
#define ECSNET_ARENA_MOVE_INPUT_SIZE 16
/* Encodes a move input into out[0..capacity) (ECSNET_ERROR_BUFFER_TOO_SMALL below 16 bytes). target 0 is
 * the sender's own avatar; speed is clamped by the server to [0, 8] m/s; (0, 0) stops. */
ECSNET_API ecsnet_result ecsnet_arena_encode_move(uint32_t target, float dir_x, float dir_y, float speed,
                                                  void* out, size_t capacity);
/* Encodes and sends a move of the own avatar. */
ECSNET_API ecsnet_result ecsnet_client_send_move(ecsnet_client* client, float dir_x, float dir_y,
                                                 float speed);
/* The arena input with an action: the move, then u8 flags (bit 0: fire), 3 reserved bytes, f32 aim_x, f32
 * aim_y and i64 render_time_us (docs/protocol.md, section 13). */
#define ECSNET_ARENA_ACTION_INPUT_SIZE 36
/* Encodes and sends a move of the own avatar that also fires along (aim_x, aim_y), at the render time the
 * client draws now: the server evaluates the shot against the world as it was then (lag compensation,
 * docs/lag_compensation.md). A hit shows as the component "LastHit" (target, tick, hits) on the own
 * entity. ECSNET_ERROR_NOT_CONNECTED when not connected. */
ECSNET_API ecsnet_result ecsnet_client_send_fire(ecsnet_client* client, float dir_x, float dir_y, float speed,
                                                 float aim_x, float aim_y);

/* ---- stats ------------------------------------------------------------------------------------------ */

typedef struct ecsnet_stats {
    size_t struct_size; /* sizeof(ecsnet_stats), set by the caller (ecsnet_stats_init) */
    int64_t rtt_us;     /* round trip (UDP: the transport's smoothed RTT); 0 until measured */
    int64_t rtt_smoothed_us;
    double bytes_in_per_second; /* over the last 2 s */
    double bytes_out_per_second;
    double snapshots_per_second;
    uint64_t bytes_received;
    uint64_t bytes_sent;
    uint64_t snapshots_received;
    uint64_t snapshots_applied; /* ticks applied */
    uint64_t snapshots_refused;
    uint64_t checksum_mismatches; /* desyncs (a full state is then requested) */
    uint64_t full_states_received;
    uint64_t inputs_sent;
    uint64_t inputs_refused;
    int64_t newest_tick;       /* the newest applied tick, -1 before the first */
    double packet_loss;        /* UDP: smoothed fraction of packets never acked (0..1) */
    uint64_t packets_sent;     /* UDP */
    uint64_t packets_received; /* UDP */
    uint64_t packets_lost;     /* UDP */
    /* Prediction (ecsnet_client_options.prediction): server states compared with the prediction of their
     * tick, those that differed, per minute of compared game time, the largest correction (metres), and how
     * many ticks ahead of the newest server tick the client runs. */
    uint64_t prediction_ticks_compared;
    uint64_t mispredictions;
    double mispredictions_per_minute;
    double correction_max;
    int64_t predicted_ticks_ahead;
} ecsnet_stats;

/* Zeroes *stats and sets struct_size. */
ECSNET_API ecsnet_result ecsnet_stats_init(ecsnet_stats* stats);
/* The connection's measures (counters restart at each connect). Writes stats->struct_size bytes at most. */
ECSNET_API ecsnet_result ecsnet_client_get_stats(ecsnet_client* client, ecsnet_stats* stats);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ECSNET_CLIENT_H */
