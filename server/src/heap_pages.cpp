#include "ecsnet/server/heap_pages.hpp"

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace ecsnet::server {

heap_pages read_heap_pages(const char* glibc_tunables, std::string_view thp_enabled) {
    heap_pages out;
    // "name=value:name=value"; the last setting of a name wins, as in glibc.
    std::string_view tunables = glibc_tunables == nullptr ? std::string_view{} : glibc_tunables;
    constexpr std::string_view key = "glibc.malloc.hugetlb=";
    while (!tunables.empty()) {
        const auto end = tunables.find(':');
        const auto item = tunables.substr(0, end);
        if (item.starts_with(key)) {
            const auto value = item.substr(key.size());
            out.asked = value == "1" || value == "2";
        }
        tunables = end == std::string_view::npos ? std::string_view{} : tunables.substr(end + 1);
    }
    const auto open = thp_enabled.find('[');
    const auto close = thp_enabled.find(']', open == std::string_view::npos ? 0 : open);
    if (open != std::string_view::npos && close != std::string_view::npos) {
        out.thp_mode = std::string{thp_enabled.substr(open + 1, close - open - 1)};
    }
    return out;
}

heap_pages this_process_heap_pages() {
    std::ifstream file{"/sys/kernel/mm/transparent_hugepage/enabled"};
    const std::string enabled{std::istreambuf_iterator<char>{file}, std::istreambuf_iterator<char>{}};
    return read_heap_pages(std::getenv("GLIBC_TUNABLES"), enabled);
}

std::string describe(const heap_pages& pages) {
    if (!pages.asked) {
        return "heap on 4 KiB pages: GLIBC_TUNABLES=glibc.malloc.hugetlb=1 puts it on huge pages, for less "
               "CPU per client (docs/operations.md, \"Huge pages\")";
    }
    if (pages.on()) {
        return "heap on transparent huge pages (glibc.malloc.hugetlb; the kernel's mode: " + pages.thp_mode +
               ")";
    }
    if (pages.thp_mode.empty()) {
        return "heap asks for huge pages (glibc.malloc.hugetlb); the kernel's transparent huge page mode is "
               "unknown (/sys/kernel/mm/transparent_hugepage/enabled unreadable)";
    }
    return "heap on 4 KiB pages: glibc.malloc.hugetlb is set, but the kernel's transparent huge pages are '" +
           pages.thp_mode + "'";
}

} // namespace ecsnet::server
