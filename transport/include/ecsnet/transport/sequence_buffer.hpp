#pragma once

// A window of the most recent N sequence numbers, each with an entry of type T, in a fixed ring: the
// structure of Glenn Fiedler's reliable.io "sequence buffer", written for this project. Slot `seq % N` holds
// the entry of `seq` together with the sequence it belongs to, so finding an entry is one index and one
// compare, and inserting a newer sequence forgets (in O(gap), at most N) the sequences it skipped and the
// one N behind it. The link keeps one of these of its sent packets (what each carried, to act on its ack).
//
// N is a power of two at most 32,768 (so that it divides 2^16 and the window stays within half the sequence
// space). Entries are never destroyed, only marked free, so buffers inside T keep their capacity.

#include <array>
#include <cstddef>
#include <cstdint>

#include "sequence.hpp"

namespace ecsnet::transport {

template<typename T, std::size_t N>
class sequence_buffer {
    static_assert(N > 0 && (N & (N - 1)) == 0 && N <= 32768, "N must be a power of two up to 32768");

public:
    static constexpr std::size_t capacity = N;

    /// The entry of `seq`, or nullptr when it is not held (never inserted, removed, or pushed out).
    [[nodiscard]] T* find(sequence_t seq) noexcept {
        return tags_[index(seq)] == seq ? &entries_[index(seq)] : nullptr;
    }
    [[nodiscard]] const T* find(sequence_t seq) const noexcept {
        return tags_[index(seq)] == seq ? &entries_[index(seq)] : nullptr;
    }
    [[nodiscard]] bool contains(sequence_t seq) const noexcept { return tags_[index(seq)] == seq; }

    /// The entry held in the slot `seq` would take, whatever sequence it belongs to (nullptr when free), and
    /// that sequence: what insert(seq) is about to push out.
    [[nodiscard]] T* occupant(sequence_t seq, sequence_t& held) noexcept {
        const auto tag = tags_[index(seq)];
        if (tag == free_tag) {
            return nullptr;
        }
        held = static_cast<sequence_t>(tag);
        return &entries_[index(seq)];
    }

    /// Makes `seq` held and returns its entry (left as it was, for the caller to overwrite), or nullptr when
    /// `seq` is N or more older than the newest inserted sequence (too old for the window). Inserting a
    /// sequence newer than the newest frees the slots of the sequences in between.
    T* insert(sequence_t seq) noexcept {
        if (has_newest_) {
            if (sequence_less_than(seq, newest_)) {
                if (sequence_distance(newest_, seq) >= N) {
                    return nullptr;
                }
            } else if (seq != newest_) {
                const auto gap = sequence_distance(seq, newest_);
                if (gap >= N) {
                    tags_.fill(free_tag);
                } else {
                    for (std::uint32_t s = 1; s < gap; ++s) {
                        tags_[index(static_cast<sequence_t>(newest_ + s))] = free_tag;
                    }
                }
                newest_ = seq;
            }
        } else {
            has_newest_ = true;
            newest_ = seq;
        }
        tags_[index(seq)] = seq;
        return &entries_[index(seq)];
    }

    /// Asks for the lines of the slot `seq` takes (its tag and its entry) without waiting for them.
    void prefetch(sequence_t seq) const noexcept {
        const auto* entry = reinterpret_cast<const char*>(&entries_[index(seq)]);
        __builtin_prefetch(&tags_[index(seq)]);
        __builtin_prefetch(entry);
        __builtin_prefetch(entry + sizeof(T) - 1);
    }

    void remove(sequence_t seq) noexcept {
        if (contains(seq)) {
            tags_[index(seq)] = free_tag;
        }
    }

    /// The newest sequence inserted (meaningless while empty()).
    [[nodiscard]] sequence_t newest() const noexcept { return newest_; }
    [[nodiscard]] bool empty() const noexcept { return !has_newest_; }

    void reset() noexcept {
        tags_.fill(free_tag);
        has_newest_ = false;
        newest_ = 0;
    }

private:
    static constexpr std::uint32_t free_tag = 0xFFFFFFFFU;
    [[nodiscard]] static constexpr std::size_t index(sequence_t seq) noexcept { return seq % N; }

    std::array<std::uint32_t, N> tags_ = make_free_tags();
    std::array<T, N> entries_{};
    sequence_t newest_{0};
    bool has_newest_{false};

    static constexpr std::array<std::uint32_t, N> make_free_tags() noexcept {
        std::array<std::uint32_t, N> tags{};
        tags.fill(free_tag);
        return tags;
    }
};

} // namespace ecsnet::transport
