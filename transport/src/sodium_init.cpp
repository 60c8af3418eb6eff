#include "sodium_init.hpp"

#include <sodium.h>

#include <stdexcept>

namespace ecsnet::transport {

void ensure_sodium() {
    // A function-local static's initializer runs once, even with threads racing to it.
    static const bool ready = [] { return sodium_init() >= 0; }();
    if (!ready) {
        throw std::runtime_error{"libsodium could not be initialized"};
    }
}

} // namespace ecsnet::transport
