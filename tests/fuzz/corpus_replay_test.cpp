// A fuzz target's corpus replayed as a test, in the ordinary and sanitizer builds (GCC: no libFuzzer). Each
// seed of the corpus folder (ECSNET_FUZZ_CORPUS, which ctest sets to corpus/<target>/) goes through the
// target's LLVMFuzzerTestOneInput, then a fixed number of mutants of the seeds made by a seeded generator
// (bit flips, overwritten bytes, truncations, insertions, splices) and plain random inputs: the same inputs
// in every run, so a failure reproduces. A target's own checks abort on a broken invariant, and ASan/UBSan
// stop on a memory error or undefined behaviour: either fails the test. scripts/fuzz runs the same targets
// under libFuzzer for as long as one wants.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using bytes = std::vector<std::uint8_t>;

constexpr std::size_t mutants_per_seed = 2000;
constexpr std::size_t random_inputs = 2000;
// A bound on the mutants' running time, so that a slow sanitizer build still ends in seconds.
constexpr auto mutants_deadline = std::chrono::seconds{20};

std::vector<bytes> read_seeds(const std::filesystem::path& dir) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator{dir}) {
        if (entry.is_regular_file()) {
            files.push_back(entry.path());
        }
    }
    std::sort(files.begin(), files.end()); // the same order, and so the same mutants, everywhere
    std::vector<bytes> seeds;
    for (const auto& file : files) {
        std::ifstream in{file, std::ios::binary};
        seeds.emplace_back(std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{});
    }
    return seeds;
}

void run(const bytes& input) {
    // A copy sized exactly: ASan then sees a read past the input's end.
    const auto copy = std::make_unique<std::uint8_t[]>(std::max<std::size_t>(input.size(), 1));
    std::copy(input.begin(), input.end(), copy.get());
    LLVMFuzzerTestOneInput(copy.get(), input.size());
}

bytes mutate(const std::vector<bytes>& seeds, const bytes& seed, std::mt19937_64& rng) {
    bytes out = seed;
    const auto pick = [&rng](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    const auto edits = 1 + pick(4);
    for (std::size_t e = 0; e < edits; ++e) {
        switch (pick(6)) {
        case 0: // flip a bit
            if (!out.empty()) {
                out[pick(out.size())] ^= static_cast<std::uint8_t>(1U << pick(8));
            }
            break;
        case 1: { // an interesting byte
            constexpr std::uint8_t interesting[] = {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff};
            if (!out.empty()) {
                out[pick(out.size())] = interesting[pick(std::size(interesting))];
            }
            break;
        }
        case 2: // truncate
            out.resize(out.empty() ? 0 : pick(out.size()));
            break;
        case 3: { // insert random bytes
            const auto at = out.empty() ? 0 : pick(out.size() + 1);
            const auto n = 1 + pick(16);
            bytes noise(n);
            for (auto& b : noise) {
                b = static_cast<std::uint8_t>(rng());
            }
            out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), noise.begin(), noise.end());
            break;
        }
        case 4: // overwrite a random byte
            if (!out.empty()) {
                out[pick(out.size())] = static_cast<std::uint8_t>(rng());
            }
            break;
        default: { // splice: this input's head, another seed's tail
            const auto& other = seeds[pick(seeds.size())];
            const auto head = out.empty() ? 0 : pick(out.size());
            const auto tail = other.empty() ? 0 : pick(other.size());
            out.resize(head);
            out.insert(out.end(), other.begin() + static_cast<std::ptrdiff_t>(tail), other.end());
            break;
        }
        }
    }
    return out;
}

TEST(CorpusReplay, SeedsMutantsAndRandomInputsRunClean) {
    const char* corpus = std::getenv("ECSNET_FUZZ_CORPUS");
    ASSERT_NE(corpus, nullptr) << "ECSNET_FUZZ_CORPUS names no corpus folder";
    const std::filesystem::path dir = corpus;
    ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
    const auto seeds = read_seeds(dir);
    ASSERT_FALSE(seeds.empty()) << "no seeds in " << dir;
    for (const auto& seed : seeds) {
        run(seed);
    }
    run({});

    std::mt19937_64 rng{0x65637336e6574ULL}; // fixed: the same mutants in every run
    const auto deadline = std::chrono::steady_clock::now() + mutants_deadline;
    std::size_t ran = 0;
    for (std::size_t round = 0; round < mutants_per_seed && std::chrono::steady_clock::now() < deadline;
         ++round) {
        for (const auto& seed : seeds) {
            run(mutate(seeds, seed, rng));
            ++ran;
        }
    }
    for (std::size_t i = 0; i < random_inputs && std::chrono::steady_clock::now() < deadline; ++i) {
        bytes input(rng() % 512);
        for (auto& b : input) {
            b = static_cast<std::uint8_t>(rng());
        }
        run(input);
        ++ran;
    }
    // Every seed was mutated at least once: a corpus replay that stopped at the seeds would test little.
    EXPECT_GE(ran, seeds.size());
    RecordProperty("inputs", static_cast<int>(ran + seeds.size() + 1));
}

} // namespace
