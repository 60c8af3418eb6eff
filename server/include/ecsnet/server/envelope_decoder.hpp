#pragma once

// Decodes messages into one reused Envelope without heap allocations for the messages themselves (the UDP
// listener's connections share one: udp_listener::borrow_decoder). Parsing into a plain reused Envelope
// frees its message (an Ack, an Input) when cleared and allocates the next, with an Input's payload string:
// malloc/free pairs on every datagram (~3% of the server's CPU at 500 clients). Here the Envelope lives on
// an arena whose first block is this object's own, emptied every few messages: steady Acks and Inputs stay
// in that block (only a payload longer than a std::string holds in place still has its own buffer, which
// the server keeps); a larger message (a ClientHello) borrows heap blocks that the next emptying returns.

#include <array>
#include <cstddef>
#include <string_view>

#include <google/protobuf/arena.h>

#include <ecsnet/proto/envelope.hpp>

namespace ecsnet::server {

class envelope_decoder {
public:
    envelope_decoder();
    envelope_decoder(const envelope_decoder&) = delete;
    envelope_decoder& operator=(const envelope_decoder&) = delete;

    /// Decodes as proto::decode_envelope does (the same message, the same errors) into message(), which
    /// stays valid until the next decode.
    [[nodiscard]] proto::result<void> decode(std::string_view bytes);
    [[nodiscard]] v1::Envelope& message() noexcept { return *message_; }

    /// Bytes the arena holds (its own block included): the block alone while the traffic is steady.
    [[nodiscard]] std::size_t arena_bytes() const noexcept { return arena_.SpaceAllocated(); }

    /// Messages decoded between two emptyings of the arena: an Ack or an Input takes under 150 bytes.
    static constexpr std::size_t messages_per_reset = 8;

private:
    static constexpr std::size_t block_bytes = 2048;

    alignas(16) std::array<char, block_bytes> block_;
    google::protobuf::Arena arena_;
    v1::Envelope* message_;
    std::size_t decoded_{0};
};

} // namespace ecsnet::server
