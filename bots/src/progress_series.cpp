#include "ecsnet/bots/progress_series.hpp"

#include <algorithm>

namespace ecsnet::bots {

progress_series::progress_series(std::size_t capacity)
    : capacity_{std::max<std::size_t>(2, capacity + capacity % 2)} {}

void progress_series::add(const progress_sample& sample) {
    // Kept: the offers whose index is a multiple of the stride. An even capacity keeps that true across a
    // compaction (offer capacity x stride is a multiple of the doubled stride).
    if (offered_++ % stride_ != 0) {
        return;
    }
    if (samples_.capacity() < capacity_) {
        samples_.reserve(capacity_);
    }
    samples_.push_back(sample);
    if (samples_.size() == capacity_) {
        for (std::size_t i = 0; 2 * i < samples_.size(); ++i) {
            samples_[i] = samples_[2 * i];
        }
        samples_.resize(capacity_ / 2);
        stride_ *= 2;
    }
}

} // namespace ecsnet::bots
