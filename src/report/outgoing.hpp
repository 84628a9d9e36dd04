// What every renderer does to the findings it is given before it shows one: redaction of
// credentials quoted in titles, evidence and tables (whatever check or report they came from),
// and the cap on metrics per finding. Applied on the way out, so no check or reader can forget it.
#pragma once

#include <cstddef>
#include <vector>

#include "report/model.hpp"

namespace perfgap::report {

// A finding shows at most this many metrics (JSON, HTML, Prometheus); the rest are counted in
// a `metrics_left_out` metric and said in an evidence line. Real findings hold tens to hundreds.
inline constexpr std::size_t kMaxMetricsPerFinding = 10000;
// Prometheus: at most this many perfgap_finding and as many perfgap_metric series per node (a
// check report has about 40 of each); the rest are counted in perfgap_series_left_out{node=...},
// so one report cannot swell a fleet's file.
inline constexpr std::size_t kMaxPrometheusSeriesPerNode = 500;

// The finding as shown: redacted (redact_finding) and its metrics capped.
void prepare_outgoing(Finding& f);
std::vector<Finding> outgoing(const std::vector<Finding>& findings);
Report outgoing(const Report& r);

}  // namespace perfgap::report
