// The server's table of connections against a plain reference (seeded random operations): ids are a slot
// and a generation, found in one array access; an id once removed is never found again nor issued again,
// and the address and client-id indexes follow every add and remove.

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "ecsnet/transport/connection_manager.hpp"

namespace connection_manager_test {

namespace {

using namespace ecsnet::transport;
using namespace std::chrono_literals;

net_address address_of(std::uint32_t n) {
    return net_address::ipv4({127, 0, static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)},
                             static_cast<std::uint16_t>(40000 + n % 1000));
}

std::unique_ptr<server_connection> connection(connection_id id, std::uint64_t client_id,
                                              const net_address& remote) {
    challenge_contents handshake;
    handshake.client_id = client_id;
    return std::make_unique<server_connection>(id, handshake, remote, 10s, link_config{},
                                               clock::time_point{});
}

// What the table must answer, as plainly as it can be written.
struct reference {
    struct entry {
        std::uint64_t client_id;
        net_address remote;
    };
    std::map<connection_id, entry> live;
};

TEST(ConnectionManager, IdsAreSlotAndGenerationNeverReused) {
    connection_manager table{3};
    const auto a = table.next_id();
    table.add(connection(a, 1, address_of(1)));
    const auto b = table.next_id();
    table.add(connection(b, 2, address_of(2)));
    EXPECT_EQ(connection_slot(a), 0U);
    EXPECT_EQ(connection_slot(b), 1U);
    EXPECT_EQ(connection_generation(a), 1U);
    EXPECT_NE(a, 0U);

    table.remove(a);
    EXPECT_EQ(table.find(a), nullptr);
    const auto c = table.next_id();
    EXPECT_EQ(connection_slot(c), 0U) << "the freed slot serves again";
    EXPECT_EQ(connection_generation(c), 2U) << "under its next generation";
    table.add(connection(c, 1, address_of(1)));
    EXPECT_EQ(table.find(a), nullptr) << "the old id does not find the slot's new connection";
    ASSERT_NE(table.find(c), nullptr);
    EXPECT_EQ(table.find(c)->id(), c);
    EXPECT_EQ(table.find(address_of(1)), table.find(c));
    EXPECT_EQ(table.find(make_connection_id(7, 1)), nullptr) << "a slot never used";
}

TEST(ConnectionManager, ARemovedConnectionLivesUntilCollect) {
    connection_manager table{2};
    const auto id = table.next_id();
    auto& added = table.add(connection(id, 9, address_of(9)));
    table.remove(id);
    EXPECT_TRUE(added.removed);
    EXPECT_EQ(added.client_id(), 9U) << "still readable: a caller up the stack may be using it";
    EXPECT_EQ(table.size(), 0U);
    EXPECT_FALSE(table.client_id_in_use(9));
    EXPECT_EQ(table.find(address_of(9)), nullptr);
    table.collect();
    table.remove(id); // twice: nothing
    EXPECT_EQ(table.size(), 0U);
}

TEST(ConnectionManager, MatchesTheReferenceOnRandomOperations) {
    for (std::uint32_t seed = 1; seed <= 20; ++seed) {
        std::mt19937 rng{seed};
        const std::size_t capacity = 1 + rng() % 40;
        connection_manager table{capacity};
        reference model;
        std::set<connection_id> issued;
        std::vector<connection_id> ended;
        std::uint32_t next_client = 1;
        for (int step = 0; step < 3000; ++step) {
            const auto op = rng() % 10;
            if (op < 4) {
                ASSERT_EQ(table.full(), model.live.size() >= capacity);
                if (table.full()) {
                    continue;
                }
                const auto id = table.next_id();
                ASSERT_TRUE(issued.insert(id).second) << "id " << id << " issued twice, seed " << seed;
                ASSERT_LT(connection_slot(id), capacity);
                ASSERT_GE(connection_generation(id), 1U);
                const auto client = next_client++;
                table.add(connection(id, client, address_of(client)));
                model.live.emplace(id, reference::entry{client, address_of(client)});
            } else if (op < 7 && !model.live.empty()) {
                auto it = model.live.begin();
                std::advance(it, static_cast<std::ptrdiff_t>(rng() % model.live.size()));
                table.remove(it->first);
                ended.push_back(it->first);
                model.live.erase(it);
            } else if (op == 7 && !ended.empty()) {
                table.remove(ended[rng() % ended.size()]); // an ended id: nothing happens
            } else if (op == 8) {
                table.collect();
            }
            ASSERT_EQ(table.size(), model.live.size());
            for (const auto& [id, e] : model.live) {
                const auto* found = table.find(id);
                ASSERT_NE(found, nullptr) << "seed " << seed << " step " << step;
                ASSERT_EQ(found->id(), id);
                ASSERT_EQ(found->client_id(), e.client_id);
                ASSERT_EQ(table.find(e.remote), found);
                ASSERT_TRUE(table.client_id_in_use(e.client_id));
            }
            for (const auto id : ended) {
                ASSERT_EQ(table.find(id), nullptr) << "seed " << seed << " step " << step;
            }
            auto all = table.all();
            ASSERT_EQ(all.size(), model.live.size());
            std::vector<connection_id> ids;
            for (const auto* c : all) {
                ids.push_back(c->id());
            }
            std::sort(ids.begin(), ids.end());
            ASSERT_TRUE(std::equal(ids.begin(), ids.end(), model.live.begin(), model.live.end(),
                                   [](connection_id id, const auto& kv) { return id == kv.first; }));
        }
    }
}

} // namespace

} // namespace connection_manager_test
