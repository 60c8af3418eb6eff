#pragma once

// The fixed world the snapshot fuzzer applies its inputs to: a server history and a client mirror that has
// applied ticks 1 to 3 of a small world using every field encoding (tests/proto/replication_support.hpp's
// schema), so that an input can name baselines 1 to 3 and a second baseline.

#include <cstdint>
#include <memory>
#include <string>

#include "../proto/replication_support.hpp"
#include "ecsnet/proto/checksum.hpp"
#include "ecsnet/proto/encoder.hpp"
#include "ecsnet/proto/envelope.hpp"
#include "ecsnet/proto/mirror.hpp"

namespace ecsnet::fuzz {

struct fuzz_world {
    registry server;
    proto::snapshot_history history{proto::testing::test_schema(), server};
    proto::snapshot_encoder encoder{history};
    std::unique_ptr<proto::mirror> client;

    fuzz_world() {
        proto::testing::random_world world{server, 1234, 24};
        client = std::make_unique<proto::mirror>(proto::testing::test_schema());
        for (proto::tick_type tick = 1; tick <= 4; ++tick) {
            world.step();
            history.capture(tick, history.nominal_time_us(tick) + 250);
            if (tick <= 3) {
                const proto::baselines wanted = tick == 1   ? proto::baselines{}
                                                : tick == 2 ? proto::baselines{1, {}}
                                                            : proto::baselines{2, 1};
                if (!client->apply_envelope(encoder.encode(wanted)->envelope)) {
                    std::abort(); // the setup itself must work
                }
            }
        }
    }

    /// A snapshot of tick 4 whose header is consistent with `columns` (it passes the header check), so that
    /// the bytes reach the column decoder.
    static v1::Snapshot wrap(std::string columns, std::uint32_t baseline_gap, std::uint32_t extrapolation_gap,
                             bool full_state, std::uint64_t checksum) {
        v1::Snapshot s;
        s.set_tick(4);
        s.set_full_state(full_state);
        s.set_baseline_gap(full_state ? 0 : baseline_gap);
        s.set_extrapolation_gap(full_state ? 0 : extrapolation_gap);
        s.set_time_offset_us(250);
        s.set_columns(std::move(columns));
        s.set_checksum(checksum);
        proto::snapshot_header h;
        h.tick = 4;
        h.full_state = full_state;
        h.has_checksum = true;
        h.baseline_gap = s.baseline_gap();
        h.extrapolation_gap = s.extrapolation_gap();
        h.time_offset_us = 250;
        h.columns_size = static_cast<std::uint32_t>(s.columns().size());
        h.checksum = checksum;
        s.set_check(proto::header_check(h));
        return s;
    }
};

} // namespace ecsnet::fuzz
