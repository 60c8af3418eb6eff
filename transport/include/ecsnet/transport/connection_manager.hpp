#pragma once

// A server's connections, found by id, by remote address and by client id, with the slot limit. A removed
// connection leaves every index at once (its slot is free, its address unknown) but is destroyed only at
// collect(): it may still be in use further up the stack (a handler disconnecting a client from inside
// on_message, while its link is delivering).
//
// An id is a slot and the slot's generation, as an ECS entity is an index and a version (seeds 001): a
// connection is found by id several times per datagram, and an array access is one cache line where a hash
// table's bucket and node were two cold misses per lookup for each of a thousand clients every tick. The
// generation tells a connection from the earlier ones of its slot, so that ids are never reused (a
// slot would need 2^32 connections to wrap).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "address.hpp"
#include "address_table.hpp"
#include "server_connection.hpp"
#include "server_handler.hpp"

namespace ecsnet::transport {

class connection_manager {
public:
    explicit connection_manager(std::size_t max_connections)
        : max_{max_connections} {}

    [[nodiscard]] server_connection* find(connection_id id) const noexcept {
        const auto slot = connection_slot(id);
        return slot < slots_.size() && slots_[slot].id == id ? slots_[slot].connection.get() : nullptr;
    }
    [[nodiscard]] server_connection* find(const net_address& remote) const;
    [[nodiscard]] bool client_id_in_use(std::uint64_t client_id) const {
        return by_client_.contains(client_id);
    }
    [[nodiscard]] bool full() const noexcept { return all_.size() >= max_; }
    [[nodiscard]] std::size_t size() const noexcept { return all_.size(); }
    [[nodiscard]] std::size_t capacity() const noexcept { return max_; }

    /// The id the next add() must give its connection (a free slot's next generation). Not when full().
    [[nodiscard]] connection_id next_id() const noexcept;
    /// Takes a connection made with next_id(), when not full().
    server_connection& add(std::unique_ptr<server_connection> connection);
    /// Takes the connection out of every index; destroyed at the next collect().
    void remove(connection_id id);
    /// Destroys the removed connections.
    void collect() noexcept { removed_.clear(); }

    /// The current connections (a copy: the caller may remove connections while visiting; a removed one
    /// stays valid until collect() and says so by its `removed` flag).
    [[nodiscard]] std::vector<server_connection*> all() const { return all_; }

private:
    struct slot {
        connection_id id{}; // of its connection; once free, of the last one (its generation goes on)
        std::unique_ptr<server_connection> connection;
    };

    std::size_t max_;
    std::vector<slot> slots_;         // grown up to max_, never shrunk
    std::vector<std::uint32_t> free_; // free slots, the most recently freed last
    address_table<server_connection*> by_address_;
    std::unordered_map<std::uint64_t, connection_id> by_client_;
    // Dense, for the visits of every connection (the server's timer visits each a few hundred times a
    // second: walking the map's nodes cost more than the visits did).
    std::vector<server_connection*> all_;
    std::vector<std::unique_ptr<server_connection>> removed_;
};

} // namespace ecsnet::transport
