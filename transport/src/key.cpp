#include "ecsnet/transport/key.hpp"

#include <sodium.h>

#include "sodium_init.hpp"

namespace ecsnet::transport {

key generate_key() {
    ensure_sodium();
    key out{};
    randombytes_buf(out.data(), out.size());
    return out;
}

std::string to_hex(const key& k) {
    ensure_sodium();
    std::string out(k.size() * 2 + 1, '\0');
    sodium_bin2hex(out.data(), out.size(), k.data(), k.size());
    out.pop_back(); // the terminating zero sodium writes
    return out;
}

std::optional<key> key_from_hex(std::string_view text) {
    ensure_sodium();
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) {
        return std::nullopt;
    }
    text = text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
    if (text.size() != key_bytes * 2) {
        return std::nullopt;
    }
    key out{};
    std::size_t written = 0;
    const char* end = nullptr;
    if (sodium_hex2bin(out.data(), out.size(), text.data(), text.size(), nullptr, &written, &end) != 0 ||
        written != key_bytes || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return out;
}

} // namespace ecsnet::transport
