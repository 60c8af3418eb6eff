#include "ecsnet/proto/bit_lists.hpp"

#include <algorithm>

#include "cpu_clones.hpp"
#include "ecsnet/proto/eg_order.hpp"

namespace ecsnet::proto {

static_assert(max_eg_order == (1U << eg_order_bits) - 1, "the order field holds every order");

// A strictly increasing list (entity indices or column positions): its length, then the first value and
// the gaps minus one, all exp-Golomb with one order chosen for the list.
ECSNET_CPU_CLONES void write_ascending(bit_writer& out, const std::vector<std::uint32_t>& list,
                                       std::vector<std::uint32_t>& gaps) {
    out.put_eg(list.size(), 0);
    if (list.empty()) {
        return;
    }
    gaps.resize(list.size());
    eg_order_finder order;
    std::uint32_t previous = ~std::uint32_t{0}; // so that the first "gap" is the first value
    for (std::size_t i = 0; i < list.size(); ++i) {
        gaps[i] = list[i] - previous - 1;
        previous = list[i];
        order.add(gaps[i]);
    }
    const unsigned k = order.best();
    out.put(k, eg_order_bits);
    auto at = out.cursor();
    for (const auto gap : gaps) {
        out.put_eg(at, gap, k);
    }
    out.seek(at);
}

// Resizes without zeroing what is new (every element is written next): a std::vector<uint32_t> has no
// such resize, so the elements are value-initialised only when the capacity grows.
void resize_for_overwrite(std::vector<std::uint32_t>& v, std::size_t n) {
    if (n > v.capacity()) {
        v.clear();
        v.reserve(std::max(n, 2 * v.capacity()));
    }
    v.resize(n); // within the capacity: zeroes the new tail only, a memset of n - size() elements
}

// Reads a strictly increasing list whose values are at most `max_value`.
ECSNET_CPU_CLONES bool read_ascending(bit_reader& in, std::vector<std::uint32_t>& list, std::size_t max_count,
                                      std::uint64_t max_value) {
    const auto count = in.get_eg(0);
    // Every element takes at least one bit: a count above what is left is a lie, refused before allocating.
    if (!in.ok() || count > in.remaining() || count > max_count) {
        in.fail();
        return false;
    }
    resize_for_overwrite(list, static_cast<std::size_t>(count));
    if (count == 0) {
        return true;
    }
    const auto k = static_cast<unsigned>(in.get(eg_order_bits));
    eg_order_check order{k};
    // Values grow by at least 1 and each gap has at most 40 bits: no overflow of 64 bits. The list is
    // increasing, so checking the last value bounds them all; a failed read only yields zeros.
    std::uint64_t value = ~std::uint64_t{0}; // the first "gap" is the first value
    auto* out = list.data();
    auto at = in.cursor();
    for (std::size_t i = 0; i < count; ++i) {
        const auto gap = in.get_eg(at, k);
        value += 1 + gap;
        order.add(gap);
        out[i] = static_cast<std::uint32_t>(value);
    }
    in.seek(at);
    if (!in.ok() || value > max_value) {
        in.fail();
        return false;
    }
    // One encoding per list: the order must be the one the writer picks (else a flipped bit of k could
    // read the same values out of the padding).
    if (!order.canonical(count)) {
        in.fail();
        return false;
    }
    return true;
}

} // namespace ecsnet::proto
