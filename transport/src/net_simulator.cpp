// The network simulator's draws (net_simulator.hpp).

#include "ecsnet/transport/net_simulator.hpp"

namespace ecsnet::transport {

sim_schedule::fate sim_schedule::next() noexcept {
    // Five draws per datagram whatever happens, so that one setting does not shift the others' draws.
    const double loss_draw = random_.uniform();
    const double jitter_draw = random_.uniform();
    const double reorder_draw = random_.uniform();
    const double duplicate_draw = random_.uniform();
    const double duplicate_delay_draw = random_.uniform();

    fate result;
    if (loss_draw < config_.loss) {
        return result;
    }
    const auto jitter = std::chrono::duration<double, std::micro>(config_.jitter) * (2.0 * jitter_draw - 1.0);
    auto delay = std::chrono::duration<double, std::micro>(config_.latency) + jitter;
    if (delay.count() < 0.0) {
        delay = delay.zero();
    }
    result.reordered = reorder_draw < config_.reorder;
    if (result.reordered) {
        delay += config_.reorder_delay;
    }
    result.copies = 1;
    result.delay[0] = std::chrono::duration_cast<clock::duration>(delay);
    if (duplicate_draw < config_.duplicate) {
        result.copies = 2;
        result.delay[1] =
            result.delay[0] +
            std::chrono::duration_cast<clock::duration>(
                std::chrono::duration<double, std::micro>(config_.duplicate_delay) * duplicate_delay_draw);
    }
    return result;
}

} // namespace ecsnet::transport
