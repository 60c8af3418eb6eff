#pragma once

// The dependency DAG of a list of systems, built once at start-up (seed 001_9f36d8a5fef2b425.txt, "Compile-
// time breadth-first traversal", done here at run time on plain vectors).
//
// Input: systems in registration order, each with a phase, the component types it reads and writes, and
// the names of the systems it must run after. Output: the edges, the connected components ("chains") of
// each phase, a canonical order, and a text description.
//
// Rules, in order:
// 1. Names are unique; after<> names a registered system of the same or an earlier phase (an earlier phase
//    has finished anyway) and never the system itself.
// 2. The after<> edges alone must be acyclic; a cycle is an error naming its systems.
// 3. Two systems of a phase conflict when one writes a type the other reads or writes. A conflicting pair
//    that after<> does not already order (directly or through other systems) runs in registration order:
//    the earlier registered first. So registration order matters only between conflicting systems.
// 4. If 3 closes a cycle with the after<> edges, registration order contradicts them: an error naming the
//    cycle and the reason for each of its edges.
// 5. Edges implied by others are dropped (transitive reduction): fewer counters to update per tick, same
//    order.
// 6. Chains are the connected components of each phase's graph, found by breadth-first traversal; the
//    scheduler gives each its counter blocker sized with its node count (seed 001).
// 7. The canonical order is a topological order that picks, among the systems ready, the smallest name; it
//    depends on the graph, not on registration order. Command buffers are applied in that order.
//
// Complexity: O(n^2 * types) for the conflict pairs, O(n * edges / 64) for cycles, closure and reduction,
// with n systems; done once.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config.hpp"
#include "schedule_error.hpp"
#include "type_info.hpp"

namespace ecsnet {

/// A component type a system accesses: its process-wide id and its name.
struct component_access {
    id_type type{};
    std::string_view name;
};

/// One system as the graph sees it.
struct system_spec {
    std::string name;
    std::size_t phase{};
    std::vector<component_access> reads;  ///< read-only types
    std::vector<component_access> writes; ///< types written in place
    std::vector<std::string> after;       ///< systems that must finish first
};

class schedule_graph {
public:
    enum class edge_kind : std::uint8_t { after, conflict };

    /// `from` runs before `to`: declared with after<>, or because of a conflict on `types`.
    struct edge {
        std::uint32_t from{};
        std::uint32_t to{};
        edge_kind kind{};
        std::vector<std::string_view> types; // the conflicting types (conflict edges only)
    };

    struct node {
        std::size_t phase{};
        std::uint32_t rank{};                  ///< position in the canonical order (all phases)
        std::uint32_t chain{};                 ///< connected component within its phase
        std::uint32_t level{};                 ///< longest path from a root of its phase
        std::uint32_t predecessors{};          ///< direct predecessors after reduction
        std::vector<std::uint32_t> successors; ///< after reduction, by rank
    };

    struct phase {
        std::vector<std::uint32_t> order;               ///< canonical order
        std::vector<std::uint32_t> roots;               ///< nodes without predecessors, canonical order
        std::vector<std::vector<std::uint32_t>> chains; ///< each chain's nodes, canonical order
    };

    schedule_graph() = default;

    /// Builds the graph of `systems` (registration order) spread over `phase_count` phases. Throws
    /// schedule_error, naming the systems, when they cannot be scheduled.
    schedule_graph(std::vector<system_spec> systems, std::size_t phase_count)
        : specs_{std::move(systems)}
        , nodes_(specs_.size())
        , phases_(std::max<std::size_t>(phase_count, 1)) {
        const auto n = specs_.size();
        for (std::size_t i = 0; i < n; ++i) {
            ECSNET_ASSERT(specs_[i].phase < phases_.size(), "system in a phase that does not exist");
            nodes_[i].phase = specs_[i].phase;
        }
        index_names();
        auto declared = after_edges();
        check_acyclic(declared, "the after<> dependencies form a cycle: ");
        const auto declared_reach = closure(declared);
        auto all = declared;
        add_conflict_edges(all, declared_reach);
        check_acyclic(all, "registration order contradicts the after<> dependencies, in this cycle: ");
        canonical_order(all);
        reduce(all);
        find_chains();
        find_levels();
    }

    [[nodiscard]] std::size_t size() const noexcept { return specs_.size(); }
    [[nodiscard]] const std::vector<system_spec>& systems() const noexcept { return specs_; }
    [[nodiscard]] const std::vector<node>& nodes() const noexcept { return nodes_; }
    [[nodiscard]] const std::vector<phase>& phases() const noexcept { return phases_; }
    /// The edges that remain after transitive reduction.
    [[nodiscard]] const std::vector<edge>& edges() const noexcept { return edges_; }
    /// Systems by rank: the canonical order over all phases.
    [[nodiscard]] const std::vector<std::uint32_t>& canonical() const noexcept { return canonical_; }

    /// Whether `from` must finish before `to` starts, directly or not (same phase only).
    [[nodiscard]] bool precedes(std::size_t from, std::size_t to) const noexcept {
        return from < reach_.size() && test(reach_[from], to);
    }

    /// The types on which two systems conflict (empty if they do not).
    [[nodiscard]] static std::vector<std::string_view> conflicts(const system_spec& a, const system_spec& b) {
        std::vector<std::string_view> types;
        const auto add = [&types](const component_access& access) {
            if (std::find(types.begin(), types.end(), access.name) == types.end()) {
                types.push_back(access.name);
            }
        };
        const auto touches = [](const system_spec& s, id_type type) {
            const auto same = [type](const component_access& access) { return access.type == type; };
            return std::any_of(s.reads.begin(), s.reads.end(), same) ||
                   std::any_of(s.writes.begin(), s.writes.end(), same);
        };
        for (const auto& w : a.writes) {
            if (touches(b, w.type)) {
                add(w);
            }
        }
        for (const auto& w : b.writes) {
            if (touches(a, w.type)) {
                add(w);
            }
        }
        return types;
    }

    /// The graph as text: per phase, its chains; in each, the systems by level (L0: no predecessor; Ln: the
    /// longest path from L0 has n edges) with their signature and their direct predecessors, each with the
    /// reason of the edge (after<>, or the conflicting types).
    [[nodiscard]] std::string describe() const {
        std::string out;
        std::size_t width = 0;
        for (const auto& s : specs_) {
            width = std::max(width, s.name.size());
        }
        const auto list = [](const std::vector<component_access>& types) {
            std::string text;
            for (const auto& t : types) {
                if (!text.empty()) {
                    text += ", ";
                }
                text += t.name;
            }
            return text.empty() ? std::string{"-"} : text;
        };
        out += std::to_string(specs_.size()) + " systems, " + std::to_string(phases_.size()) +
               (phases_.size() == 1 ? " phase" : " phases") + "\n";
        for (std::size_t p = 0; p < phases_.size(); ++p) {
            const auto& ph = phases_[p];
            std::uint32_t depth = 0;
            for (const auto i : ph.order) {
                depth = std::max(depth, nodes_[i].level + 1);
            }
            out += "phase " + std::to_string(p + 1) + ": " + std::to_string(ph.order.size()) +
                   (ph.order.size() == 1 ? " system, " : " systems, ") + std::to_string(ph.chains.size()) +
                   (ph.chains.size() == 1 ? " chain" : " chains") + ", longest path " +
                   std::to_string(depth) + "\n";
            for (std::size_t c = 0; c < ph.chains.size(); ++c) {
                out += "  chain " + std::to_string(c + 1) + " (" + std::to_string(ph.chains[c].size()) +
                       (ph.chains[c].size() == 1 ? " system)\n" : " systems)\n");
                auto by_level = ph.chains[c];
                std::stable_sort(by_level.begin(), by_level.end(), [this](std::uint32_t l, std::uint32_t r) {
                    return nodes_[l].level < nodes_[r].level;
                });
                for (const auto i : by_level) {
                    const auto& s = specs_[i];
                    std::string line = "    L" + std::to_string(nodes_[i].level) + "  " + s.name;
                    line.append(width + 2 - s.name.size(), ' ');
                    line += "reads " + list(s.reads) + "; writes " + list(s.writes);
                    std::string before;
                    for (const auto& e : edges_) {
                        if (e.to != i) {
                            continue;
                        }
                        if (!before.empty()) {
                            before += ", ";
                        }
                        before += specs_[e.from].name;
                        before += " (";
                        if (e.kind == edge_kind::after) {
                            before += "after";
                        } else {
                            for (std::size_t t = 0; t < e.types.size(); ++t) {
                                if (t != 0) {
                                    before += ' ';
                                }
                                before += e.types[t];
                            }
                        }
                        before += ')';
                    }
                    if (!before.empty()) {
                        line += "  <- " + before;
                    }
                    out += line + "\n";
                }
            }
        }
        return out;
    }

private:
    using bitset = std::vector<std::uint64_t>;
    using adjacency = std::vector<std::vector<std::uint32_t>>;

    [[nodiscard]] bitset make_bitset() const { return bitset((specs_.size() + 63) / 64, 0); }
    static bool test(const bitset& bits, std::size_t at) noexcept {
        return ((bits[at / 64] >> (at % 64)) & 1U) != 0;
    }
    static void set(bitset& bits, std::size_t at) noexcept { bits[at / 64] |= std::uint64_t{1} << (at % 64); }

    void index_names() {
        for (std::size_t i = 0; i < specs_.size(); ++i) {
            const auto& name = specs_[i].name;
            if (name.empty()) {
                throw schedule_error("system #" + std::to_string(i + 1) + " has an empty name");
            }
            if (!by_name_.emplace(name, static_cast<std::uint32_t>(i)).second) {
                throw schedule_error("two systems are named '" + name +
                                     "': names identify systems, they must be unique");
            }
        }
    }

    // The after<> edges, from -> to, deduplicated; across phases they are satisfied by the phase order.
    adjacency after_edges() {
        adjacency out(specs_.size());
        for (std::size_t to = 0; to < specs_.size(); ++to) {
            for (const auto& name : specs_[to].after) {
                const auto found = by_name_.find(name);
                if (found == by_name_.end()) {
                    throw schedule_error("system '" + specs_[to].name + "' runs after '" + name +
                                         "', which is not registered");
                }
                const auto from = found->second;
                if (from == to) {
                    throw schedule_error("system '" + specs_[to].name + "' is declared to run after itself");
                }
                if (specs_[from].phase > specs_[to].phase) {
                    throw schedule_error(
                        "system '" + specs_[to].name + "' (phase " + std::to_string(specs_[to].phase + 1) +
                        ") runs after '" + name + "' (phase " + std::to_string(specs_[from].phase + 1) +
                        "): a system can only run after systems of its phase or an earlier one");
                }
                if (specs_[from].phase < specs_[to].phase) {
                    continue;
                }
                auto& targets = out[from];
                if (std::find(targets.begin(), targets.end(), to) == targets.end()) {
                    targets.push_back(static_cast<std::uint32_t>(to));
                    edges_.push_back(edge{from, static_cast<std::uint32_t>(to), edge_kind::after, {}});
                }
            }
        }
        return out;
    }

    // Depth-first search; on a back edge, throws `what` followed by the cycle, each edge with its reason.
    void check_acyclic(const adjacency& graph, const std::string& what) const {
        enum class mark : std::uint8_t { fresh, open, closed };
        std::vector<mark> marks(specs_.size(), mark::fresh);
        std::vector<std::uint32_t> path;
        std::vector<std::size_t> next_child;
        for (std::uint32_t start = 0; start < specs_.size(); ++start) {
            if (marks[start] != mark::fresh) {
                continue;
            }
            path.assign(1, start);
            next_child.assign(1, 0);
            marks[start] = mark::open;
            while (!path.empty()) {
                const auto at = path.back();
                if (next_child.back() == graph[at].size()) {
                    marks[at] = mark::closed;
                    path.pop_back();
                    next_child.pop_back();
                    continue;
                }
                const auto to = graph[at][next_child.back()++];
                if (marks[to] == mark::open) {
                    const auto first = std::find(path.begin(), path.end(), to);
                    std::vector<std::uint32_t> cycle(first, path.end());
                    cycle.push_back(to);
                    throw schedule_error(what + cycle_text(cycle));
                }
                if (marks[to] == mark::fresh) {
                    marks[to] = mark::open;
                    path.push_back(to);
                    next_child.push_back(0);
                }
            }
        }
    }

    [[nodiscard]] std::string cycle_text(const std::vector<std::uint32_t>& cycle) const {
        std::string text;
        for (std::size_t k = 1; k < cycle.size(); ++k) {
            const auto from = cycle[k - 1];
            const auto to = cycle[k];
            std::string reason = "after<>";
            for (const auto& e : edges_) {
                if (e.from == from && e.to == to && e.kind == edge_kind::conflict) {
                    reason = "registered first, conflict on";
                    for (const auto type : e.types) {
                        reason += ' ';
                        reason += type;
                    }
                }
            }
            text += k == 1 ? "'" : ", '";
            text += specs_[from].name;
            text += "' -> '";
            text += specs_[to].name;
            text += "' [";
            text += reason;
            text += ']';
        }
        return text + " (a -> b: a must run before b)";
    }

    // Reachability of an acyclic graph: reach[u] holds every node reachable from u.
    [[nodiscard]] std::vector<bitset> closure(const adjacency& graph) const {
        const auto order = topological(graph);
        std::vector<bitset> reach(specs_.size(), make_bitset());
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            for (const auto to : graph[*it]) {
                set(reach[*it], to);
                for (std::size_t word = 0; word < reach[*it].size(); ++word) {
                    reach[*it][word] |= reach[to][word];
                }
            }
        }
        return reach;
    }

    // Kahn's algorithm; among the ready nodes, the smallest name first.
    [[nodiscard]] std::vector<std::uint32_t> topological(const adjacency& graph) const {
        std::vector<std::uint32_t> incoming(specs_.size(), 0);
        for (const auto& targets : graph) {
            for (const auto to : targets) {
                ++incoming[to];
            }
        }
        const auto later = [this](std::uint32_t l, std::uint32_t r) {
            return specs_[l].phase != specs_[r].phase ? specs_[l].phase > specs_[r].phase
                                                      : specs_[l].name > specs_[r].name;
        };
        std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, decltype(later)> ready{later};
        for (std::uint32_t i = 0; i < specs_.size(); ++i) {
            if (incoming[i] == 0) {
                ready.push(i);
            }
        }
        std::vector<std::uint32_t> order;
        order.reserve(specs_.size());
        while (!ready.empty()) {
            const auto at = ready.top();
            ready.pop();
            order.push_back(at);
            for (const auto to : graph[at]) {
                if (--incoming[to] == 0) {
                    ready.push(to);
                }
            }
        }
        ECSNET_ASSERT(order.size() == specs_.size(), "topological order of a cyclic graph");
        return order;
    }

    void add_conflict_edges(adjacency& graph, const std::vector<bitset>& declared_reach) {
        for (std::uint32_t first = 0; first < specs_.size(); ++first) {
            for (std::uint32_t second = first + 1; second < specs_.size(); ++second) {
                if (specs_[first].phase != specs_[second].phase || test(declared_reach[first], second) ||
                    test(declared_reach[second], first)) {
                    continue;
                }
                auto types = conflicts(specs_[first], specs_[second]);
                if (types.empty()) {
                    continue;
                }
                graph[first].push_back(second);
                edges_.push_back(edge{first, second, edge_kind::conflict, std::move(types)});
            }
        }
    }

    void canonical_order(const adjacency& graph) {
        canonical_ = topological(graph); // phases come out in order: the comparator sorts by phase first
        for (std::uint32_t rank = 0; rank < canonical_.size(); ++rank) {
            const auto i = canonical_[rank];
            nodes_[i].rank = rank;
            phases_[specs_[i].phase].order.push_back(i);
        }
        reach_ = closure(graph);
    }

    // Keeps u -> v only if no other successor w of u reaches v.
    void reduce(const adjacency& graph) {
        std::vector<edge> kept;
        for (auto& e : edges_) {
            bool implied = false;
            for (const auto w : graph[e.from]) {
                if (w != e.to && test(reach_[w], e.to)) {
                    implied = true;
                    break;
                }
            }
            if (!implied) {
                kept.push_back(std::move(e));
            }
        }
        edges_ = std::move(kept);
        std::sort(edges_.begin(), edges_.end(), [this](const edge& l, const edge& r) {
            return nodes_[l.from].rank != nodes_[r.from].rank ? nodes_[l.from].rank < nodes_[r.from].rank
                                                              : nodes_[l.to].rank < nodes_[r.to].rank;
        });
        for (const auto& e : edges_) {
            nodes_[e.from].successors.push_back(e.to);
            ++nodes_[e.to].predecessors;
        }
    }

    // Connected components of each phase, ignoring edge direction: breadth-first traversal (seed 001).
    void find_chains() {
        adjacency neighbours(specs_.size());
        for (const auto& e : edges_) {
            neighbours[e.from].push_back(e.to);
            neighbours[e.to].push_back(e.from);
        }
        std::vector<bool> visited(specs_.size(), false);
        for (auto& ph : phases_) {
            for (const auto start : ph.order) {
                if (visited[start]) {
                    continue;
                }
                const auto chain = static_cast<std::uint32_t>(ph.chains.size());
                std::vector<std::uint32_t> members;
                std::deque<std::uint32_t> queue{start};
                visited[start] = true;
                while (!queue.empty()) {
                    const auto at = queue.front();
                    queue.pop_front();
                    members.push_back(at);
                    nodes_[at].chain = chain;
                    for (const auto next : neighbours[at]) {
                        if (!visited[next]) {
                            visited[next] = true;
                            queue.push_back(next);
                        }
                    }
                }
                std::sort(members.begin(), members.end(), [this](std::uint32_t l, std::uint32_t r) {
                    return nodes_[l].rank < nodes_[r].rank;
                });
                ph.chains.push_back(std::move(members));
            }
            for (const auto i : ph.order) {
                if (nodes_[i].predecessors == 0) {
                    ph.roots.push_back(i);
                }
            }
        }
    }

    void find_levels() {
        for (const auto i : canonical_) { // a topological order: predecessors come first
            for (const auto next : nodes_[i].successors) {
                nodes_[next].level = std::max(nodes_[next].level, nodes_[i].level + 1);
            }
        }
    }

    std::vector<system_spec> specs_;
    std::vector<node> nodes_;
    std::vector<phase> phases_;
    std::vector<edge> edges_;
    std::vector<std::uint32_t> canonical_;
    std::vector<bitset> reach_;
    std::unordered_map<std::string, std::uint32_t> by_name_;
};

} // namespace ecsnet
