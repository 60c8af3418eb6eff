#include "ecsnet/server/envelope_decoder.hpp"

namespace ecsnet::server {

namespace {

google::protobuf::ArenaOptions options_on(char* block, std::size_t size) {
    google::protobuf::ArenaOptions options;
    options.initial_block = block;
    options.initial_block_size = size;
    return options;
}

} // namespace

envelope_decoder::envelope_decoder()
    : block_{}
    , arena_{options_on(block_.data(), block_.size())}
    , message_{google::protobuf::Arena::CreateMessage<v1::Envelope>(&arena_)} {}

proto::result<void> envelope_decoder::decode(std::string_view bytes) {
    // The previous message is no longer in use: the arena can be emptied (it keeps its first block).
    if (++decoded_ > messages_per_reset) {
        arena_.Reset();
        message_ = google::protobuf::Arena::CreateMessage<v1::Envelope>(&arena_);
        decoded_ = 1;
    }
    return proto::decode_envelope(bytes, *message_);
}

} // namespace ecsnet::server
