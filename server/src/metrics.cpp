#include "ecsnet/server/metrics.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace ecsnet::server {

namespace {

void add_relaxed(std::atomic<double>& target, double amount) noexcept {
    double current = target.load(std::memory_order_relaxed);
    while (!target.compare_exchange_weak(current, current + amount, std::memory_order_relaxed)) {
    }
}

// The bucket of `value`: the first upper bound at or above it, or +Inf's (the last).
std::size_t bucket_of(const std::vector<double>& bounds, double value) noexcept {
    return static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin());
}

// HELP text escapes backslash and newline; label values also escape the double quote.
std::string escape(std::string_view text, bool quotes) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else if (quotes && c == '"') {
            out += "\\\"";
        } else {
            out += c;
        }
    }
    return out;
}

void header(std::string& out, const std::string& name, const std::string& help, std::string_view type) {
    out += "# HELP " + name + ' ' + escape(help, false) + '\n';
    out += "# TYPE " + name + ' ' + std::string{type} + '\n';
}

} // namespace

std::string format_metric_value(double value) {
    if (std::isnan(value)) {
        return "NaN";
    }
    if (std::isinf(value)) {
        return value > 0 ? "+Inf" : "-Inf";
    }
    char buffer[64];
    const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return error == std::errc{} ? std::string(buffer, end) : std::string{"NaN"};
}

void gauge::add(double amount) noexcept {
    add_relaxed(value_, amount);
}

histogram::histogram(std::vector<double> upper_bounds)
    : bounds_{std::move(upper_bounds)}
    , buckets_{std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)} {
    if (!std::is_sorted(bounds_.begin(), bounds_.end()) ||
        std::adjacent_find(bounds_.begin(), bounds_.end()) != bounds_.end()) {
        throw std::invalid_argument("histogram bounds must be strictly increasing");
    }
}

void histogram::observe(double value) noexcept {
    buckets_[bucket_of(bounds_, value)].fetch_add(1, std::memory_order_relaxed);
    add_relaxed(sum_, value);
    count_.fetch_add(1, std::memory_order_relaxed);
}

void histogram::add(histogram_tally& tally) noexcept {
    if (tally.count_ == 0) {
        return;
    }
    for (std::size_t i = tally.lowest_; i <= tally.highest_; ++i) {
        if (tally.buckets_[i] != 0) {
            buckets_[i].fetch_add(tally.buckets_[i], std::memory_order_relaxed);
            tally.buckets_[i] = 0;
        }
    }
    tally.lowest_ = tally.buckets_.size();
    tally.highest_ = 0;
    add_relaxed(sum_, tally.sum_);
    count_.fetch_add(tally.count_, std::memory_order_relaxed);
    tally.sum_ = 0.0;
    tally.count_ = 0;
}

histogram_tally::histogram_tally(const histogram& of)
    : of_{&of}
    , buckets_(of.upper_bounds().size() + 1, 0)
    , lowest_{buckets_.size()} {}

void histogram_tally::observe(double value) noexcept {
    const auto bucket = bucket_of(of_->upper_bounds(), value);
    ++buckets_[bucket];
    lowest_ = std::min(lowest_, bucket);
    highest_ = std::max(highest_, bucket);
    sum_ += value;
    ++count_;
}

std::vector<std::uint64_t> histogram::cumulative_counts() const {
    std::vector<std::uint64_t> counts(bounds_.size() + 1);
    std::uint64_t running = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        running += buckets_[i].load(std::memory_order_relaxed);
        counts[i] = running;
    }
    return counts;
}

double histogram::quantile(double q) const {
    const auto counts = cumulative_counts();
    const auto total = counts.back();
    if (total == 0) {
        return 0.0;
    }
    const double rank = std::clamp(q, 0.0, 1.0) * static_cast<double>(total);
    for (std::size_t i = 0; i < counts.size(); ++i) {
        if (static_cast<double>(counts[i]) >= rank) {
            if (i == bounds_.size()) {
                return bounds_.empty() ? 0.0 : bounds_.back(); // in +Inf: the highest finite bound
            }
            const double lower = i == 0 ? 0.0 : bounds_[i - 1];
            const double below = i == 0 ? 0.0 : static_cast<double>(counts[i - 1]);
            const double in_bucket = static_cast<double>(counts[i]) - below;
            return in_bucket == 0 ? bounds_[i] : lower + (bounds_[i] - lower) * (rank - below) / in_bucket;
        }
    }
    return bounds_.empty() ? 0.0 : bounds_.back();
}

std::vector<double> histogram::exponential_bounds(double start, double factor, std::size_t count) {
    std::vector<double> bounds;
    bounds.reserve(count);
    for (double bound = start; bounds.size() < count; bound *= factor) {
        bounds.push_back(bound);
    }
    return bounds;
}

counter_family::counter_family(std::string label, const std::vector<std::string>& values, double scale)
    : label_{std::move(label)}
    , values_{values}
    , scale_{scale}
    , counters_{} {
    values_.emplace_back("other");
    counters_ = std::make_unique<counter[]>(values_.size());
}

counter& counter_family::with(std::string_view value) noexcept {
    for (std::size_t i = 0; i + 1 < values_.size(); ++i) {
        if (values_[i] == value) {
            return counters_[i];
        }
    }
    return counters_[values_.size() - 1];
}

counter_grid::counter_grid(std::string row_label, std::vector<std::string> rows, std::string column_label,
                           std::vector<std::string> columns)
    : row_label_{std::move(row_label)}
    , rows_{std::move(rows)}
    , column_label_{std::move(column_label)}
    , columns_{std::move(columns)}
    , counters_{std::make_unique<counter[]>(rows_.size() * columns_.size())} {}

counter& counter_grid::with(std::string_view row, std::string_view column) noexcept {
    const auto index_of = [](const std::vector<std::string>& values, std::string_view value) {
        std::size_t i = 0;
        while (i + 1 < values.size() && values[i] != value) {
            ++i;
        }
        return i;
    };
    return counters_[index_of(rows_, row) * columns_.size() + index_of(columns_, column)];
}

counter& metrics_registry::add_counter(std::string name, std::string help) {
    auto& added = entries_.emplace_back(
        entry{std::move(name), std::move(help), std::make_unique<counter>(), {}, {}, {}});
    return *added.as_counter;
}

gauge& metrics_registry::add_gauge(std::string name, std::string help) {
    auto& added =
        entries_.emplace_back(entry{std::move(name), std::move(help), {}, std::make_unique<gauge>(), {}, {}});
    return *added.as_gauge;
}

histogram& metrics_registry::add_histogram(std::string name, std::string help,
                                           std::vector<double> upper_bounds) {
    auto& added = entries_.emplace_back(entry{
        std::move(name), std::move(help), {}, {}, std::make_unique<histogram>(std::move(upper_bounds)), {}});
    return *added.as_histogram;
}

counter_family& metrics_registry::add_counter_family(std::string name, std::string help, std::string label,
                                                     const std::vector<std::string>& values, double scale) {
    auto& added =
        entries_.emplace_back(entry{std::move(name),
                                    std::move(help),
                                    {},
                                    {},
                                    {},
                                    std::make_unique<counter_family>(std::move(label), values, scale)});
    return *added.as_family;
}

counter_grid& metrics_registry::add_counter_grid(std::string name, std::string help, std::string row_label,
                                                 std::vector<std::string> rows, std::string column_label,
                                                 std::vector<std::string> columns) {
    auto& added = entries_.emplace_back(entry{std::move(name), std::move(help), {}, {}, {}, {}});
    added.as_grid = std::make_unique<counter_grid>(std::move(row_label), std::move(rows),
                                                   std::move(column_label), std::move(columns));
    return *added.as_grid;
}

std::string metrics_registry::render() const {
    std::string out;
    for (const auto& e : entries_) {
        if (e.as_counter) {
            header(out, e.name, e.help, "counter");
            out += e.name + ' ' + std::to_string(e.as_counter->value()) + '\n';
        } else if (e.as_gauge) {
            header(out, e.name, e.help, "gauge");
            out += e.name + ' ' + format_metric_value(e.as_gauge->value()) + '\n';
        } else if (e.as_histogram) {
            header(out, e.name, e.help, "histogram");
            const auto& h = *e.as_histogram;
            const auto counts = h.cumulative_counts();
            for (std::size_t i = 0; i < counts.size(); ++i) {
                const auto le =
                    i < h.upper_bounds().size() ? format_metric_value(h.upper_bounds()[i]) : "+Inf";
                out += e.name + "_bucket{le=\"" + le + "\"} " + std::to_string(counts[i]) + '\n';
            }
            out += e.name + "_sum " + format_metric_value(h.sum()) + '\n';
            out += e.name + "_count " + std::to_string(counts.back()) + '\n';
        } else if (e.as_family) {
            header(out, e.name, e.help, "counter");
            const auto& f = *e.as_family;
            for (std::size_t i = 0; i < f.size(); ++i) {
                const auto value = f.counter_at(i).value();
                out += e.name + '{' + f.label() + "=\"" + escape(f.value_at(i), true) + "\"} " +
                       (f.scale() == 1.0 ? std::to_string(value)
                                         : format_metric_value(static_cast<double>(value) * f.scale())) +
                       '\n';
            }
        } else if (e.as_grid) {
            header(out, e.name, e.help, "counter");
            const auto& g = *e.as_grid;
            for (std::size_t r = 0; r < g.rows().size(); ++r) {
                for (std::size_t c = 0; c < g.columns().size(); ++c) {
                    out += e.name + '{' + g.row_label() + "=\"" + escape(g.rows()[r], true) + "\"," +
                           g.column_label() + "=\"" + escape(g.columns()[c], true) + "\"} " +
                           std::to_string(g.at(r, c).value()) + '\n';
                }
            }
        }
    }
    return out;
}

} // namespace ecsnet::server
