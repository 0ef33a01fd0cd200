// The machine a bench ran on, in words, for its tables and charts: machines of one model name
// differ (2-vCPU "AMD EPYC" VMs were Zen 4 and Zen 5), so the family and model numbers go with it.
#pragma once

#include <string>

namespace deconv_cli {

// "AMD EPYC (family 26 model 2)" from /proc/cpuinfo; "unknown CPU" where it says nothing.
std::string cpu_description();

}  // namespace deconv_cli
