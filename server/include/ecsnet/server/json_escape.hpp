#pragma once

// Text as the inside of a JSON string (RFC 8259), whatever its bytes: the JSON log lines and the inspector's
// API both carry text a client chose (its name, a bad frame's description), and each must always parse.

#include <string>
#include <string_view>

namespace ecsnet::server {

/// Appends `text` to `out` as the inside of a JSON string (quotes not included), as nlohmann/json writes it:
/// '"' and '\\' escaped, control characters as \b, \f, \n, \r, \t or \u00XX, valid UTF-8 copied as is, and
/// each byte that is not part of valid UTF-8 (overlong forms, surrogates, code points above U+10FFFF) as
/// U+FFFD.
void append_json_escaped(std::string& out, std::string_view text);

} // namespace ecsnet::server
