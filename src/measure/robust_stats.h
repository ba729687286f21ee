// Median and median absolute deviation: statistics that a few bad nodes cannot move, so the
// reference a fleet is judged against stays the healthy majority's (Iglewicz and Hoaglin 1993,
// "How to Detect and Handle Outliers"; 1.4826 x MAD estimates the standard deviation of normal
// data).
#pragma once

#include <vector>

namespace trainrig::bench {

inline constexpr double kMadToSigma = 1.4826;

double median(std::vector<double> v);  // 0 for an empty list
double mad(const std::vector<double>& v, double median_of_v);

}  // namespace trainrig::bench
