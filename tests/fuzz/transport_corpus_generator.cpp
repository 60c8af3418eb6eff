// Writes the seed corpora of token_fuzz and handshake_fuzz: valid tokens (bytes and base64), a private
// part's plaintext, and one datagram of each packet type, built with the development key and the fuzz
// targets' fixed times.
//   transport_fuzz_corpus_generator <tests/fuzz/corpus>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "ecsnet/transport/connect_token.hpp"
#include "ecsnet/transport/dev_key.hpp"
#include "ecsnet/transport/packet_crypto.hpp"
#include "ecsnet/transport/packets.hpp"

namespace {

using namespace ecsnet::transport;

void write(const std::filesystem::path& path, std::span<const std::uint8_t> bytes) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out{path, std::ios::binary};
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> with_selector(std::uint8_t selector, std::span<const std::uint8_t> datagram) {
    std::vector<std::uint8_t> out{selector};
    out.insert(out.end(), datagram.begin(), datagram.end());
    return out;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: transport_fuzz_corpus_generator <corpus dir>\n";
        return 2;
    }
    const std::filesystem::path root{argv[1]};
    token_params params;
    params.protocol_id = 0xEC5E7;
    params.client_id = 1;
    params.server_addresses = {*net_address::parse("127.0.0.1:7777"), *net_address::parse("[::1]:7777")};
    params.now_unix = 1'700'000'000;
    params.expire_seconds = 3600;
    params.user_data[0] = 0xAB;
    const auto token = *issue_token(params, dev_private_key);

    const auto bytes = serialize(token);
    write(root / "token_fuzz" / "token-bytes", bytes);
    const auto text = to_base64(token);
    write(root / "token_fuzz" / "token-base64",
          std::span{reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
    std::vector<std::uint8_t> plaintext(1008, 0);
    plaintext[8] = 10; // timeout
    plaintext[12] = 1; // one IPv4 address: 127.0.0.1:7777
    plaintext[16] = 1;
    plaintext[17] = 127;
    plaintext[20] = 1;
    plaintext[21] = 0x61;
    plaintext[22] = 0x1E;
    write(root / "token_fuzz" / "private-plaintext", plaintext);

    const auto request = write_connection_request(token);
    write(root / "handshake_fuzz" / "request", with_selector(0x01, request));
    const auto k = generate_key();
    std::vector<std::uint8_t> packet(max_datagram_bytes);
    const auto response = write_response({3, {}});
    packet.resize(
        seal_clear_packet(packet_type::response, handshake_sequence_bit | 5, response, k, 0xEC5E7, packet));
    write(root / "handshake_fuzz" / "response", with_selector(0x01, packet));
    packet.assign(max_datagram_bytes, 0);
    packet.resize(seal_packet(packet_type::keep_alive, 1, {}, k, 0xEC5E7, packet));
    write(root / "handshake_fuzz" / "keep-alive", with_selector(0x02, packet));
    const std::vector<std::uint8_t> body(200, 0x42);
    packet.assign(max_datagram_bytes, 0);
    packet.resize(seal_packet(packet_type::payload, 1000, body, k, 0xEC5E7, packet));
    write(root / "handshake_fuzz" / "payload", with_selector(0x03, packet));
    std::array<std::uint8_t, 2 + max_disconnect_message_bytes> reason{};
    const auto reason_size = write_disconnect(9, "kicked", reason);
    packet.assign(max_datagram_bytes, 0);
    packet.resize(
        seal_packet(packet_type::disconnect, 7, std::span{reason}.first(reason_size), k, 0xEC5E7, packet));
    write(root / "handshake_fuzz" / "disconnect", with_selector(0x04, packet));
    // To the client: a challenge and a denial, sealed with the fixed server-to-client key of handshake_fuzz's
    // client token, so that they open.
    key fuzz_server_to_client{};
    fuzz_server_to_client.fill(0x22);
    const auto challenge = write_challenge({9, {}, {}});
    packet.assign(max_datagram_bytes, 0);
    packet.resize(seal_packet(packet_type::challenge, handshake_sequence_bit | 77, challenge,
                              fuzz_server_to_client, 0xEC5E7, packet));
    write(root / "handshake_fuzz" / "client-challenge", with_selector(0x80, packet));
    const std::array<std::uint8_t, 1> denied{1};
    packet.assign(max_datagram_bytes, 0);
    packet.resize(seal_packet(packet_type::connection_denied, handshake_sequence_bit | 78, denied,
                              fuzz_server_to_client, 0xEC5E7, packet));
    write(root / "handshake_fuzz" / "client-denied", with_selector(0x80, packet));
    std::cout << "wrote the seeds under " << root << "\n";
    return 0;
}
