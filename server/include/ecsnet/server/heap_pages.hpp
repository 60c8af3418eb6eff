#pragma once

// Whether the server's heap is on transparent huge pages (docs/operations.md, "Huge pages"). glibc reads
// GLIBC_TUNABLES once, as a process starts: with glibc.malloc.hugetlb=1 it asks the kernel (madvise) for
// huge pages under everything malloc takes from it, which the kernel grants when its THP mode is "always"
// or "madvise". A server's per-client state (views, encoders, links) is spread over ~100 MB at 1,000
// clients: on 4 KiB pages its reads miss the TLB, and under a VM's nested paging each miss walks two page
// tables. The image and scripts/run set the tunable; this says at startup whether it holds.

#include <string>
#include <string_view>

namespace ecsnet::server {

struct heap_pages {
    bool asked{};         // GLIBC_TUNABLES holds glibc.malloc.hugetlb=1 (or 2: hugetlbfs pages)
    std::string thp_mode; // the kernel's: "always", "madvise", "never", or "" when unknown
    [[nodiscard]] bool on() const noexcept {
        return asked && (thp_mode == "always" || thp_mode == "madvise");
    }
};

/// From GLIBC_TUNABLES's value (nullptr when unset) and the text of
/// /sys/kernel/mm/transparent_hugepage/enabled ("always [madvise] never": the mode in brackets).
[[nodiscard]] heap_pages read_heap_pages(const char* glibc_tunables, std::string_view thp_enabled);

/// This process's: its environment and the kernel's file.
[[nodiscard]] heap_pages this_process_heap_pages();

/// The startup log line: on, or why not and what to set.
[[nodiscard]] std::string describe(const heap_pages& pages);

} // namespace ecsnet::server
