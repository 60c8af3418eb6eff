#pragma once

// A connect token as a game hands it to the SDK (client_options::connect_token, client::connect(token)):
// its 2,048-byte serialized form, or its base64 text (whitespace ignored).

#include <string>
#include <string_view>

#include <ecsnet/transport/connect_token.hpp>

namespace ecsnet::client::detail {

/// Reads either form; the transport's token_error when neither reads.
[[nodiscard]] transport::outcome<transport::connect_token, transport::token_error>
read_any_token(std::string_view bytes_or_text);

/// What ClientHello.connect_token carries over TCP: the token's 2,048 bytes when it reads (whichever form
/// it was given in), else the bytes as given (opaque credentials for the server to judge); empty for none.
[[nodiscard]] std::string hello_token_bytes(std::string_view bytes_or_text);

} // namespace ecsnet::client::detail
