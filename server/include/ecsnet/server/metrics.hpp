#pragma once

// Prometheus metrics: counters, gauges and histograms that the tick and network threads update without
// locks (relaxed atomics), and a registry that renders them in the Prometheus text exposition format
// (version 0.0.4) for the admin endpoint's /metrics.
//
// Metrics are registered once at start-up; registering after rendering began is not supported. A labelled
// family (a counter per label value, e.g. disconnects by reason) takes its label values up front, so the
// hot path never allocates or locks.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ecsnet::server {

class counter {
public:
    void add(std::uint64_t amount = 1) noexcept { value_.fetch_add(amount, std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> value_{0};
};

class gauge {
public:
    void set(double value) noexcept { value_.store(value, std::memory_order_relaxed); }
    void add(double amount) noexcept;
    [[nodiscard]] double value() const noexcept { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<double> value_{0.0};
};

class histogram_tally;

/// Cumulative histogram over fixed upper bounds (plus +Inf).
class histogram {
public:
    explicit histogram(std::vector<double> upper_bounds);

    void observe(double value) noexcept;
    /// Adds what a tally observed, and empties it.
    void add(histogram_tally& tally) noexcept;

    [[nodiscard]] const std::vector<double>& upper_bounds() const noexcept { return bounds_; }
    /// Observations <= upper_bounds()[i], cumulative as Prometheus wants them; the last entry is +Inf.
    [[nodiscard]] std::vector<std::uint64_t> cumulative_counts() const;
    [[nodiscard]] double sum() const noexcept { return sum_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
    /// The q-quantile (0..1) estimated by linear interpolation within buckets, as Prometheus'
    /// histogram_quantile does; 0 when empty.
    [[nodiscard]] double quantile(double q) const;

    /// `count` bounds starting at `start`, each `factor` times the previous.
    [[nodiscard]] static std::vector<double> exponential_bounds(double start, double factor,
                                                                std::size_t count);

private:
    std::vector<double> bounds_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_; // per bucket, not cumulative; last is +Inf
    std::atomic<double> sum_{0.0};
    std::atomic<std::uint64_t> count_{0};
};

/// Observations one thread gathers without atomics, added to a histogram at once (histogram::add): the
/// server's workers observing per client per tick on the histogram's own atomics bounced its cache lines
/// between the cores.
class histogram_tally {
public:
    explicit histogram_tally(const histogram& of);

    void observe(double value) noexcept;
    [[nodiscard]] std::uint64_t count() const noexcept { return count_; }

private:
    friend class histogram;
    const histogram* of_;
    std::vector<std::uint64_t> buckets_; // per bucket, as the histogram's
    std::size_t lowest_{};               // the buckets observed since the last add, at most this range
    std::size_t highest_{0};
    double sum_{0.0};
    std::uint64_t count_{0};
};

/// Counters sharing a name, one per value of a single label.
class counter_family {
public:
    /// Each counter is rendered as its value times `scale`: a family counting nanoseconds is rendered in
    /// seconds, Prometheus' base unit, with a scale of 1e-9 (the counters stay integers and lock-free).
    counter_family(std::string label, const std::vector<std::string>& values, double scale = 1.0);

    /// The counter of `value`, or of "other" for a value not declared up front.
    counter& with(std::string_view value) noexcept;
    [[nodiscard]] const std::string& label() const noexcept { return label_; }
    [[nodiscard]] std::size_t size() const noexcept { return values_.size(); }
    [[nodiscard]] const std::string& value_at(std::size_t i) const noexcept { return values_[i]; }
    [[nodiscard]] const counter& counter_at(std::size_t i) const noexcept { return counters_[i]; }
    [[nodiscard]] double scale() const noexcept { return scale_; }

private:
    std::string label_;
    std::vector<std::string> values_; // the declared values, then "other"
    double scale_;
    std::unique_ptr<counter[]> counters_;
};

/// Counters sharing a name, one per pair of values of two labels (e.g. requests by call and result), all
/// declared up front like counter_family's.
class counter_grid {
public:
    counter_grid(std::string row_label, std::vector<std::string> rows, std::string column_label,
                 std::vector<std::string> columns);

    /// The counter of (row, column); an undeclared value counts in the last declared one of its label.
    counter& with(std::string_view row, std::string_view column) noexcept;
    [[nodiscard]] const std::string& row_label() const noexcept { return row_label_; }
    [[nodiscard]] const std::string& column_label() const noexcept { return column_label_; }
    [[nodiscard]] const std::vector<std::string>& rows() const noexcept { return rows_; }
    [[nodiscard]] const std::vector<std::string>& columns() const noexcept { return columns_; }
    [[nodiscard]] const counter& at(std::size_t row, std::size_t column) const noexcept {
        return counters_[row * columns_.size() + column];
    }

private:
    std::string row_label_;
    std::vector<std::string> rows_;
    std::string column_label_;
    std::vector<std::string> columns_;
    std::unique_ptr<counter[]> counters_;
};

class metrics_registry {
public:
    counter& add_counter(std::string name, std::string help);
    gauge& add_gauge(std::string name, std::string help);
    histogram& add_histogram(std::string name, std::string help, std::vector<double> upper_bounds);
    counter_family& add_counter_family(std::string name, std::string help, std::string label,
                                       const std::vector<std::string>& values, double scale = 1.0);
    counter_grid& add_counter_grid(std::string name, std::string help, std::string row_label,
                                   std::vector<std::string> rows, std::string column_label,
                                   std::vector<std::string> columns);

    /// Everything, in the Prometheus text format.
    [[nodiscard]] std::string render() const;

private:
    struct entry {
        std::string name;
        std::string help;
        std::unique_ptr<counter> as_counter;
        std::unique_ptr<gauge> as_gauge;
        std::unique_ptr<histogram> as_histogram;
        std::unique_ptr<counter_family> as_family;
        std::unique_ptr<counter_grid> as_grid{};
    };
    std::vector<entry> entries_;
};

/// Formats a number the way Prometheus parses it (+Inf, -Inf, NaN, shortest round-trip otherwise).
[[nodiscard]] std::string format_metric_value(double value);

} // namespace ecsnet::server
