// A world that survives a restart, seen by a client: a server saves its world when it stops; another starts
// from the checkpoint (--restore) and an SDK client connecting to it mirrors exactly the saved world moved
// on by the ticks since (entity ids, generations, component values; the tick count continues from the
// saved tick). Stopping the second server tells the client SHUTDOWN with the retry hint. Over TCP and UDP.

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include <gtest/gtest.h>

#include "client_support.hpp"
#include "ecsnet/server/checkpoint.hpp"

namespace checkpoint_restore_test {

namespace {

using namespace ecsnet;
using namespace ecsnet::client::testing;
using ecsnet::client::transport_kind;

constexpr std::size_t npcs = 300;
constexpr std::uint32_t tick_rate = 30;

server::arena_options arena() {
    return server::arena_options{npcs, 42, tick_rate, 1};
}

// A server with its own options, recording its state checksum per tick.
class checkpointed_server {
public:
    explicit checkpointed_server(const std::string& save, const std::string& restore) {
        spdlog::set_level(spdlog::level::warn);
        server::server_options options;
        options.bind_address = "127.0.0.1";
        options.port = 0;
        options.admin_port = 0;
        options.npcs = npcs;
        options.workers = 1;
        options.relevancy_radius = 0.0F;
        options.insecure_dev = true;
        options.save_path = save;
        options.restore_path = restore;
        server_ =
            std::make_unique<server::game_server>(options, std::make_unique<server::arena_world>(arena()));
        server_->on_tick([this](proto::tick_type tick, const proto::snapshot_history& history) {
            std::lock_guard lock{mutex_};
            checksums_[tick] = history.newest().checksum;
        });
        server_->open();
        opened_at_tick_ = server_->current_tick();
        thread_ = std::thread{[this] { server_->run(false); }};
    }
    ~checkpointed_server() { stop(); }
    void stop() {
        if (thread_.joinable()) {
            server_->stop();
            thread_.join();
        }
    }
    [[nodiscard]] server::game_server& get() { return *server_; }
    [[nodiscard]] proto::tick_type opened_at_tick() const { return opened_at_tick_; }
    [[nodiscard]] std::optional<std::uint64_t> checksum(proto::tick_type tick) const {
        std::lock_guard lock{mutex_};
        const auto it = checksums_.find(tick);
        return it == checksums_.end() ? std::nullopt : std::optional{it->second};
    }
    [[nodiscard]] proto::tick_type newest_tick() const {
        std::lock_guard lock{mutex_};
        return checksums_.empty() ? 0 : checksums_.rbegin()->first;
    }

private:
    std::unique_ptr<server::game_server> server_;
    std::thread thread_;
    proto::tick_type opened_at_tick_{};
    mutable std::mutex mutex_;
    std::map<proto::tick_type, std::uint64_t> checksums_;
};

// One replicated entity as a client mirrors it.
struct mirrored {
    proto::net_entity id;
    arena::Transform transform;
    std::uint16_t health{};
    std::uint8_t kind{};
};

class CheckpointRestore : public ::testing::TestWithParam<transport_kind> {};

TEST_P(CheckpointRestore, AClientOfTheRestoredServerMirrorsTheSavedWorld) {
    const auto file =
        (std::filesystem::path{::testing::TempDir()} / ("ecsnet_restore_" + transport_name({GetParam(), 0})))
            .string();
    std::filesystem::remove(file);

    // 1. A server runs half a second and saves its world as it stops.
    proto::tick_type saved_tick = 0;
    std::uint64_t saved_checksum = 0;
    {
        checkpointed_server first{file, ""};
        ASSERT_TRUE(wait_until([&] { return first.newest_tick() >= 15; }, 5000ms));
        first.stop();
        EXPECT_EQ(first.get().exit_code(), 0);
        saved_tick = first.get().current_tick();
        const auto sum = first.checksum(saved_tick);
        ASSERT_TRUE(sum);
        saved_checksum = *sum;
    }
    std::vector<std::byte> bytes;
    ASSERT_FALSE(server::read_checkpoint_file(file, bytes));

    // 2. The reference: the checkpoint restored into a fresh world equals the saved one (captured as the
    // saved tick, its checksum is the first server's).
    server::arena_world reference{arena()};
    proto::snapshot_history history{reference.replicated_schema(), reference.registry(),
                                    proto::history_options{32, tick_rate}};
    server::saveable_components saveable;
    reference.declare_saveable(saveable);
    server::checkpoint_image image;
    ASSERT_FALSE(server::decode_checkpoint(bytes, reference.replicated_schema(), saveable, image));
    ASSERT_EQ(image.tick, saved_tick);
    ASSERT_FALSE(server::apply_checkpoint(image, reference, saveable, history));
    history.capture(saved_tick, 0);
    ASSERT_EQ(history.newest().checksum, saved_checksum);

    // 3. A second server starts from the checkpoint; a client connects and takes its first state.
    checkpointed_server second{"", file};
    EXPECT_EQ(second.opened_at_tick(), saved_tick) << "the tick continues from the saved one";
    ecsnet::client::client net{arena::replicated_schema(), over(GetParam(), "after-restart")};
    proto::tick_type first_tick = 0;
    std::uint64_t first_checksum = 0;
    std::vector<mirrored> seen;
    net.on_snapshot([&](const proto::applied_snapshot& applied) {
        if (first_tick != 0) {
            return;
        }
        first_tick = applied.tick;
        first_checksum = net.mirror().newest_state()->checksum;
        auto& reg = net.registry();
        reg.view<const arena::Transform>().each([&](entity e, const arena::Transform& t) {
            const auto id = net.mirror().net_of(e);
            if (id && reg.all_of<arena::Health, arena::Kind>(e)) {
                seen.push_back({*id, t, reg.get<arena::Health>(e).value, reg.get<arena::Kind>(e).value});
            }
        });
    });
    ASSERT_TRUE(net.connect("127.0.0.1", second.get().port()));
    ASSERT_TRUE(poll_until(
        net, [&] { return first_tick != 0; }, 5000ms));
    EXPECT_GT(first_tick, saved_tick);
    EXPECT_EQ(first_checksum, second.checksum(first_tick));

    // 4. The reference moved on to the client's tick is what the client mirrors, entity by entity. The
    // client's own avatar is new (it joined the restored server); every other entity is the saved world's.
    while (history.newest_tick() < first_tick) {
        reference.update(1.0 / tick_rate);
        history.capture(history.newest_tick() + 1, 0);
    }
    const auto own = net.own_net_entity();
    std::size_t compared = 0;
    auto& ref = reference.registry();
    for (const auto& m : seen) {
        if (own && m.id == *own) {
            continue;
        }
        const auto e = ref.current(m.id.index);
        ASSERT_TRUE(ref.valid(e)) << "entity " << m.id.index << " is not in the saved world";
        EXPECT_EQ(history.to_net(e), m.id) << "generation of entity " << m.id.index;
        const auto& t = ref.get<arena::Transform>(e);
        EXPECT_NEAR(m.transform.x, t.x, arena::position_step);
        EXPECT_NEAR(m.transform.y, t.y, arena::position_step);
        EXPECT_EQ(m.health, ref.get<arena::Health>(e).value);
        EXPECT_EQ(m.kind, ref.get<arena::Kind>(e).value);
        ++compared;
    }
    EXPECT_EQ(compared, ref.storage<arena::Transform>().size()) << "as many entities as the saved world";
    EXPECT_GT(compared, npcs / 2);

    // 5. The second server stops: the client is told SHUTDOWN, and when to come back.
    second.stop();
    ASSERT_TRUE(poll_until(
        net, [&] { return net.state() == ecsnet::client::client_state::disconnected; }, 5000ms));
    const auto info = net.last_disconnect();
    EXPECT_EQ(info.reason, ecsnet::client::disconnect_reason::shutdown);
    ASSERT_TRUE(info.retry_after.has_value()) << info.message;
    EXPECT_EQ(*info.retry_after, std::chrono::seconds{5});
}

INSTANTIATE_TEST_SUITE_P(Transports, CheckpointRestore,
                         ::testing::Values(transport_kind::tcp, transport_kind::udp), transport_name);

} // namespace

} // namespace checkpoint_restore_test
