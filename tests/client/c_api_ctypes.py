#!/usr/bin/env python3
"""The C API from Python's ctypes, as an engine binding would use it: loads libecsnet_client.so, connects
to a live server (c_api_driver.py passes HOST PORT), waits for the world, reads the entities and the
avatar's Transform, disconnects.

  c_api_ctypes.py LIBRARY HOST PORT
"""
import ctypes
import sys
import time

ECSNET_OK = 0
ECSNET_CLIENT_ABI_VERSION = 1
ECSNET_STATE_CONNECTED = 3


class Options(ctypes.Structure):  # ecsnet_client_options
    _fields_ = [("struct_size", ctypes.c_size_t), ("name", ctypes.c_char_p), ("transport", ctypes.c_int32),
                ("connect_timeout_ms", ctypes.c_uint32), ("handshake_timeout_ms", ctypes.c_uint32),
                ("idle_timeout_ms", ctypes.c_uint32), ("interpolation_delay_ms", ctypes.c_uint32),
                ("protocol_id", ctypes.c_uint64)]


class Stats(ctypes.Structure):  # the leading fields of ecsnet_stats: struct_size tells the library so
    _fields_ = [("struct_size", ctypes.c_size_t), ("rtt_us", ctypes.c_int64), ("rtt_smoothed_us", ctypes.c_int64),
                ("bytes_in_per_second", ctypes.c_double), ("bytes_out_per_second", ctypes.c_double),
                ("snapshots_per_second", ctypes.c_double), ("bytes_received", ctypes.c_uint64),
                ("bytes_sent", ctypes.c_uint64), ("snapshots_received", ctypes.c_uint64),
                ("snapshots_applied", ctypes.c_uint64)]


def bind(lib: ctypes.CDLL) -> None:
    client_p = ctypes.c_void_p
    signatures = {
        "ecsnet_version": ([], ctypes.c_char_p),
        "ecsnet_abi_version": ([], ctypes.c_int),
        "ecsnet_result_name": ([ctypes.c_int], ctypes.c_char_p),
        "ecsnet_client_options_init": ([ctypes.POINTER(Options)], ctypes.c_int),
        "ecsnet_client_create": ([ctypes.POINTER(Options), ctypes.POINTER(client_p)], ctypes.c_int),
        "ecsnet_client_destroy": ([client_p], None),
        "ecsnet_client_last_error": ([client_p], ctypes.c_char_p),
        "ecsnet_client_connect": ([client_p, ctypes.c_char_p, ctypes.c_uint16], ctypes.c_int),
        "ecsnet_client_poll": ([client_p, ctypes.POINTER(ctypes.c_size_t)], ctypes.c_int),
        "ecsnet_client_get_state": ([client_p, ctypes.POINTER(ctypes.c_int32)], ctypes.c_int),
        "ecsnet_client_own_entity": ([client_p, ctypes.POINTER(ctypes.c_uint64)], ctypes.c_int),
        "ecsnet_client_entity_count": ([client_p, ctypes.POINTER(ctypes.c_size_t)], ctypes.c_int),
        "ecsnet_client_entity_at": ([client_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint64)], ctypes.c_int),
        "ecsnet_entity_get_double_by_name": ([client_p, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_char_p,
                                              ctypes.POINTER(ctypes.c_double)], ctypes.c_int),
        "ecsnet_client_get_stats": ([client_p, ctypes.POINTER(Stats)], ctypes.c_int),
        "ecsnet_client_send_move": ([client_p, ctypes.c_float, ctypes.c_float, ctypes.c_float], ctypes.c_int),
        "ecsnet_client_disconnect": ([client_p, ctypes.c_char_p], ctypes.c_int),
    }
    for name, (arguments, result) in signatures.items():
        function = getattr(lib, name)
        function.argtypes = arguments
        function.restype = result


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    started = time.monotonic()
    lib = ctypes.CDLL(sys.argv[1])
    bind(lib)
    host, port = sys.argv[2].encode(), int(sys.argv[3])
    assert lib.ecsnet_abi_version() == ECSNET_CLIENT_ABI_VERSION
    print("ecsnet", lib.ecsnet_version().decode())

    def ok(client, result: int) -> None:
        if result != ECSNET_OK:
            raise RuntimeError(f"{lib.ecsnet_result_name(result).decode()}: "
                               f"{lib.ecsnet_client_last_error(client).decode()}")

    options = Options()
    ok(None, lib.ecsnet_client_options_init(ctypes.byref(options)))
    options.name = b"python-ctypes"
    client = ctypes.c_void_p()
    ok(None, lib.ecsnet_client_create(ctypes.byref(options), ctypes.byref(client)))
    try:
        ok(client, lib.ecsnet_client_connect(client, host, port))
        avatar = ctypes.c_uint64()
        deadline = time.monotonic() + 5.0
        while lib.ecsnet_client_own_entity(client, ctypes.byref(avatar)) != ECSNET_OK:
            if time.monotonic() > deadline:
                raise RuntimeError("no avatar within 5 s: " + lib.ecsnet_client_last_error(client).decode())
            ok(client, lib.ecsnet_client_poll(client, None))
            time.sleep(0.005)
        state = ctypes.c_int32()
        ok(client, lib.ecsnet_client_get_state(client, ctypes.byref(state)))
        assert state.value == ECSNET_STATE_CONNECTED, state.value

        count = ctypes.c_size_t()
        ok(client, lib.ecsnet_client_entity_count(client, ctypes.byref(count)))
        assert count.value > 1, count.value
        entities = []
        for position in range(count.value):
            entity = ctypes.c_uint64()
            ok(client, lib.ecsnet_client_entity_at(client, position, ctypes.byref(entity)))
            entities.append(entity.value)
        assert avatar.value in entities

        position = {}
        for field in (b"x", b"y", b"z", b"yaw"):
            value = ctypes.c_double()
            ok(client, lib.ecsnet_entity_get_double_by_name(client, avatar, b"Transform", field,
                                                            ctypes.byref(value)))
            position[field.decode()] = value.value
        assert -1024.0 <= position["x"] < 1024.0 and -1024.0 <= position["y"] < 1024.0, position
        ok(client, lib.ecsnet_client_send_move(client, 1.0, 0.0, 2.0))

        stats = Stats()
        stats.struct_size = ctypes.sizeof(Stats)  # fewer fields than the library knows: it writes only these
        ok(client, lib.ecsnet_client_get_stats(client, ctypes.byref(stats)))
        assert stats.snapshots_applied > 0 and stats.bytes_received > 0
        print(f"{count.value} entities; avatar {avatar.value & 0xFFFFFFFF} at {position}; "
              f"{stats.snapshots_applied} snapshots applied")
        ok(client, lib.ecsnet_client_disconnect(client, b"bye from Python"))
    finally:
        lib.ecsnet_client_destroy(client)
    print(f"c_api_ctypes: ok in {time.monotonic() - started:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
