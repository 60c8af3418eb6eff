// The server's list of client links: visited in the order they opened, without copying the list; a link
// closed during a visit (by itself or by another link's handler) is not visited after, stays alive until
// the visit ends, and leaves the count at once. Checked against a plain list on random operations, with
// and without asking for the links ahead (for_each_ahead).

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ecsnet/server/connection_manager.hpp"

namespace server_connection_manager_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::server;

class fake_link final : public client_link {
public:
    explicit fake_link(int id, std::shared_ptr<int> destroyed)
        : id{id}
        , destroyed_{std::move(destroyed)} {}
    ~fake_link() override { ++*destroyed_; }
    [[nodiscard]] std::string_view transport() const noexcept override { return "fake"; }
    void send(const v1::Envelope&) override {}
    void want_snapshot() override {}
    void disconnect(v1::DisconnectReason, std::string) override {}
    void abort() override {}
    void handshake_done() override {}
    [[nodiscard]] link_measures measures() const override { return {}; }
    [[nodiscard]] std::size_t wire_bytes(const outgoing_snapshot&) const noexcept override { return 0; }

    int id;

private:
    std::shared_ptr<int> destroyed_;
};

TEST(ServerConnectionManager, ALinkClosingItselfDuringAVisitLivesUntilTheVisitEnds) {
    connection_manager links;
    auto destroyed = std::make_shared<int>(0);
    for (int i = 0; i < 4; ++i) {
        links.add(std::make_shared<fake_link>(i, destroyed));
    }
    std::vector<int> visited;
    links.for_each([&](client_link& c) {
        auto& link = static_cast<fake_link&>(c);
        visited.push_back(link.id);
        if (link.id == 1) {
            links.remove(link); // as on_closed does, from inside the link's own call
            EXPECT_EQ(*destroyed, 0) << "destroyed while its own call runs";
            EXPECT_EQ(link.id, 1);
            EXPECT_EQ(links.size(), 3U) << "the count leaves at once";
        }
        if (link.id == 2) {
            links.for_each([&](client_link& other) { // a nested visit does not drop it either
                EXPECT_NE(static_cast<fake_link&>(other).id, 1);
            });
            EXPECT_EQ(*destroyed, 0);
        }
    });
    EXPECT_EQ(visited, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(*destroyed, 1) << "dropped when the outermost visit ended";
    visited.clear();
    links.for_each([&](client_link& c) { visited.push_back(static_cast<fake_link&>(c).id); });
    EXPECT_EQ(visited, (std::vector<int>{0, 2, 3}));
}

TEST(ServerConnectionManager, AVisitAheadAsksForEachLinkBeforeItsTurnAndVisitsAsAPlainOne) {
    connection_manager links;
    auto destroyed = std::make_shared<int>(0);
    std::vector<std::shared_ptr<fake_link>> held;
    for (int i = 0; i < 10; ++i) {
        held.push_back(std::make_shared<fake_link>(i, destroyed));
        links.add(held.back());
    }
    std::vector<std::string> log;
    links.for_each_ahead(
        2,
        [&](const client_link& c) {
            log.push_back("ask " + std::to_string(static_cast<const fake_link&>(c).id));
        },
        [&](client_link& c) {
            const int id = static_cast<fake_link&>(c).id;
            log.push_back("visit " + std::to_string(id));
            if (id == 3) {
                links.remove(*held[6]); // asked for never (closed before its asking), visited never
            }
            if (id == 4) {
                links.add(std::make_shared<fake_link>(10, destroyed)); // opened during the visit: not in it
            }
        });
    const std::vector<std::string> want{"ask 2", "visit 0", "ask 3",   "visit 1", "ask 4",   "visit 2",
                                        "ask 5", "visit 3", "visit 4", "ask 7",   "visit 5", "ask 8",
                                        "ask 9", "visit 7", "visit 8", "visit 9"};
    EXPECT_EQ(log, want);
    EXPECT_EQ(links.size(), 10U);
}

TEST(ServerConnectionManager, MatchesAPlainListOnRandomOperations) {
    for (std::uint32_t seed = 1; seed <= 20; ++seed) {
        std::mt19937 rng{seed};
        connection_manager links;
        std::vector<std::shared_ptr<fake_link>> held; // the reference: open links, in order
        auto destroyed = std::make_shared<int>(0);
        int next = 0;
        int closed = 0;
        for (int step = 0; step < 400; ++step) {
            const auto op = rng() % 4;
            if (op < 2 || held.empty()) {
                auto link = std::make_shared<fake_link>(next++, destroyed);
                held.push_back(link);
                links.add(link);
            } else if (op == 2) {
                const auto at = rng() % held.size();
                links.remove(*held[at]);
                held.erase(held.begin() + static_cast<std::ptrdiff_t>(at));
                ++closed;
            } else {
                // A visit whose handlers close links, ahead of or behind the one visited, and open others.
                std::vector<int> visited;
                const auto open_at_start = held;
                std::vector<bool> closed_now(open_at_start.size(), false);
                std::mt19937 decide{seed * 1000U + static_cast<std::uint32_t>(step)};
                // Asking ahead (or not: distance 0) changes nothing of the visit.
                const auto distance = static_cast<std::size_t>(step % 4);
                const auto ask = [&](const client_link& c) {
                    const auto found =
                        std::find_if(held.begin(), held.end(), [&](const auto& l) { return l.get() == &c; });
                    EXPECT_NE(found, held.end()) << "asked for a link not open";
                };
                links.for_each_ahead(distance, ask, [&](client_link& c) {
                    auto& link = static_cast<fake_link&>(c);
                    visited.push_back(link.id);
                    if (decide() % 4 == 0) {
                        const auto victim = decide() % open_at_start.size();
                        if (!closed_now[victim]) {
                            closed_now[victim] = true;
                            links.remove(*open_at_start[victim]);
                            ++closed;
                        }
                    }
                    if (decide() % 8 == 0) {
                        auto opened = std::make_shared<fake_link>(next++, destroyed);
                        held.push_back(opened);
                        links.add(opened);
                    }
                });
                // Every link open at the start and not closed before its turn was visited, in order.
                std::vector<int> must;
                std::vector<bool> closed_before(open_at_start.size(), false);
                std::mt19937 again{seed * 1000U + static_cast<std::uint32_t>(step)};
                for (std::size_t k = 0; k < open_at_start.size(); ++k) {
                    if (closed_before[k]) {
                        continue;
                    }
                    must.push_back(open_at_start[k]->id);
                    if (again() % 4 == 0) {
                        const auto victim = again() % open_at_start.size();
                        closed_before[victim] = true;
                    }
                    again(); // the open decision
                }
                ASSERT_EQ(visited, must) << "seed " << seed << " step " << step;
                std::erase_if(held, [&](const std::shared_ptr<fake_link>& l) {
                    const auto found = std::find(open_at_start.begin(), open_at_start.end(), l);
                    return found != open_at_start.end() && closed_now[found - open_at_start.begin()];
                });
            }
            ASSERT_EQ(links.size(), held.size());
            std::vector<int> now;
            links.for_each([&](client_link& c) { now.push_back(static_cast<fake_link&>(c).id); });
            std::vector<int> want;
            for (const auto& l : held) {
                want.push_back(l->id);
            }
            ASSERT_EQ(now, want) << "seed " << seed << " step " << step;
        }
        held.clear();
        EXPECT_EQ(*destroyed, closed) << "every closed link destroyed once, and no open one";
    }
}

} // namespace

} // namespace server_connection_manager_test
