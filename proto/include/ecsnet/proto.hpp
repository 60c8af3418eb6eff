#pragma once

// The replication codec in one include: framing, envelopes, handshake, schema declaration, snapshot
// history and encoder (server), mirror (client). docs/protocol.md describes the wire format.

#include "proto/bitstream.hpp"
#include "proto/checksum.hpp"
#include "proto/delta.hpp"
#include "proto/encoder.hpp"
#include "proto/envelope.hpp"
#include "proto/framing.hpp"
#include "proto/handshake.hpp"
#include "proto/history.hpp"
#include "proto/mirror.hpp"
#include "proto/quantize.hpp"
#include "proto/result.hpp"
#include "proto/schema.hpp"
#include "proto/state.hpp"
