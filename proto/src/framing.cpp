#include "ecsnet/proto/framing.hpp"

namespace ecsnet::proto {

void append_length_prefix(std::string& out, std::size_t size) {
    auto value = static_cast<std::uint64_t>(size);
    while (value >= 0x80U) {
        out.push_back(static_cast<char>((value & 0x7FU) | 0x80U));
        value >>= 7;
    }
    out.push_back(static_cast<char>(value));
}

result<void> append_frame(std::string& out, std::string_view payload, std::size_t max_frame_size) {
    if (payload.size() > max_frame_size || payload.size() > 0xFFFFFFFFU) {
        return make_error(errc::frame_too_large, "frame of " + std::to_string(payload.size()) +
                                                     " bytes exceeds the limit of " +
                                                     std::to_string(max_frame_size) + " bytes");
    }
    append_length_prefix(out, payload.size());
    out.append(payload);
    return {};
}

std::size_t framed_size(std::size_t payload_size) noexcept {
    std::size_t prefix = 1;
    for (auto value = payload_size; value >= 0x80U; value >>= 7) {
        ++prefix;
    }
    return prefix + payload_size;
}

void frame_decoder::reset() noexcept {
    payload_.clear();
    expected_ = 0;
    prefix_value_ = 0;
    prefix_size_ = 0;
    in_payload_ = false;
    failed_ = false;
}

bool frame_decoder::push_prefix_byte(std::uint8_t byte, result<void>& status) {
    prefix_value_ |= std::uint64_t{byte & 0x7FU} << (7 * prefix_size_);
    ++prefix_size_;
    if ((byte & 0x80U) != 0) {
        if (prefix_size_ == max_length_prefix_size) {
            status = fail(errc::bad_length_prefix, "frame length prefix longer than 5 bytes");
            return false;
        }
        return true;
    }
    if (prefix_value_ > 0xFFFFFFFFU) {
        status = fail(errc::bad_length_prefix, "frame length prefix above 2^32-1");
        return false;
    }
    if (prefix_value_ > max_frame_size_) {
        status = fail(errc::frame_too_large, too_large_message(prefix_value_));
        return false;
    }
    expected_ = prefix_value_;
    in_payload_ = true;
    return true;
}

std::string frame_decoder::too_large_message(std::uint64_t length) const {
    const auto limit = max_frame_size_ % (1U << 20) == 0 && max_frame_size_ != 0
                           ? std::to_string(max_frame_size_ >> 20) + " MiB"
                           : std::to_string(max_frame_size_) + " bytes";
    return "frame of " + std::to_string(length) + " bytes exceeds the " + limit + " limit";
}

result<void> frame_decoder::fail(errc code, std::string message) {
    failed_ = true;
    payload_.clear();
    payload_.shrink_to_fit();
    prefix_size_ = 0;
    prefix_value_ = 0;
    expected_ = 0;
    in_payload_ = false;
    return make_error(code, std::move(message));
}

} // namespace ecsnet::proto
