// input_buffer against a plain model (a list of waiting inputs with their due ticks), over random offers and
// takes: the same verdicts, the same inputs applied in the same order with the same payloads, the same
// repeats. Payloads are long or short enough to live on the heap or inline, and the caller's bytes are
// overwritten after each offer: what is applied (and repeated) is always what was offered.

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ecsnet/server/input_buffer.hpp"

namespace ecsnet::server::input_buffer_test {
namespace {

using verdict = input_buffer::verdict;

struct model_input {
    proto::tick_type due{};
    std::uint32_t sequence{};
    std::string payload;
};

// What input_buffer.hpp says, with nothing reused.
class model {
public:
    verdict offer(std::uint32_t client_tick, std::uint32_t sequence, const std::string& payload,
                  proto::tick_type next_tick) {
        const auto slack = static_cast<std::int64_t>(client_tick) - static_cast<std::int64_t>(next_tick);
        if (slack > input_buffer::max_lead) {
            return verdict::future;
        }
        const proto::tick_type due = slack < 0 ? next_tick : client_tick;
        std::size_t same = 0;
        for (const auto& w : waiting_) {
            same += w.due == due ? 1 : 0;
        }
        if (same >= input_buffer::max_per_tick) {
            return verdict::flood;
        }
        waiting_.push_back({due, sequence, payload});
        return slack < 0 ? verdict::late : verdict::kept;
    }

    /// The applied inputs as "sequence:payload", a repeat marked "*".
    bool take(proto::tick_type tick, std::vector<std::string>& applied) {
        std::vector<model_input> rest;
        std::optional<model_input> last;
        for (auto& w : waiting_) {
            if (w.due <= tick) {
                applied.push_back(std::to_string(w.sequence) + ":" + w.payload);
                last = w;
            } else {
                rest.push_back(w);
            }
        }
        waiting_ = std::move(rest);
        if (last) {
            newest_ = last;
            return false;
        }
        if (!newest_) {
            return false;
        }
        applied.push_back(std::to_string(newest_->sequence) + ":" + newest_->payload + "*");
        return true;
    }

    [[nodiscard]] std::size_t waiting() const noexcept { return waiting_.size(); }

private:
    std::vector<model_input> waiting_;
    std::optional<model_input> newest_;
};

TEST(InputBuffer, AgreesWithThePlainModelOverRandomOffersAndTakes) {
    for (std::uint32_t seed = 1; seed <= 20; ++seed) {
        std::mt19937 random{seed};
        input_buffer buffer;
        model reference;
        proto::tick_type tick = 1000;
        std::uint32_t sequence = 0;
        std::string wire; // the decoder's bytes, overwritten after every offer
        for (int step = 0; step < 3000; ++step) {
            if (random() % 3 != 0) {
                // An input for a tick around the next one: late, on time, early, or too far ahead.
                const auto offset = static_cast<std::int64_t>(random() % 48) - 10;
                const auto client_tick =
                    static_cast<std::uint32_t>(static_cast<std::int64_t>(tick) + 1 + offset);
                const auto length = random() % 48; // up to three times a short string's inline size
                wire.assign(length, '\0');
                for (auto& c : wire) {
                    c = static_cast<char>('a' + random() % 26);
                }
                const std::string offered = wire;
                ++sequence;
                const auto expected = reference.offer(client_tick, sequence, offered, tick + 1);
                ASSERT_EQ(buffer.offer({client_tick, sequence, {}}, wire, tick + 1, 30), expected)
                    << "seed " << seed << ", step " << step;
                wire.assign(wire.size(), '#');
            } else {
                ++tick;
                std::vector<std::string> applied;
                std::vector<std::string> expected;
                const bool dry = buffer.take(tick, [&](const client_input& in) {
                    applied.push_back(std::to_string(in.sequence) + ":" + std::string{in.payload} +
                                      (in.repeated ? "*" : ""));
                });
                ASSERT_EQ(dry, reference.take(tick, expected)) << "seed " << seed << ", step " << step;
                ASSERT_EQ(applied, expected) << "seed " << seed << ", step " << step;
                ASSERT_EQ(buffer.waiting(), reference.waiting());
            }
        }
    }
}

} // namespace
} // namespace ecsnet::server::input_buffer_test
