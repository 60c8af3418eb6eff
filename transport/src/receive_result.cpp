// Names of the refusal reasons (for metrics labels and logs).

#include "ecsnet/transport/receive_result.hpp"

namespace ecsnet::transport {

std::string_view to_string(receive_error error) noexcept {
    switch (error) {
    case receive_error::none:
        return "none";
    case receive_error::body_too_big:
        return "body_too_big";
    case receive_error::duplicate:
        return "duplicate";
    case receive_error::stale:
        return "stale";
    case receive_error::truncated:
        return "truncated";
    case receive_error::bad_header:
        return "bad_header";
    case receive_error::bad_varint:
        return "bad_varint";
    case receive_error::sequence_out_of_window:
        return "sequence_out_of_window";
    case receive_error::ack_out_of_window:
        return "ack_out_of_window";
    case receive_error::unknown_chunk:
        return "unknown_chunk";
    case receive_error::empty_run:
        return "empty_run";
    case receive_error::length_past_end:
        return "length_past_end";
    case receive_error::message_too_big:
        return "message_too_big";
    case receive_error::bad_fragment:
        return "bad_fragment";
    case receive_error::inconsistent_fragments:
        return "inconsistent_fragments";
    case receive_error::too_many_fragments:
        return "too_many_fragments";
    case receive_error::message_id_out_of_window:
        return "message_id_out_of_window";
    case receive_error::reliable_buffer_full:
        return "reliable_buffer_full";
    case receive_error::block_conflict:
        return "block_conflict";
    case receive_error::bad_fragment_ack:
        return "bad_fragment_ack";
    }
    return "unknown";
}

} // namespace ecsnet::transport
