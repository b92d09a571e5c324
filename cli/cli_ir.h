// The commands about compiled programs and measured hardware: `check-ir` (the compiler's IR
// against a plan) and `calibrate` (a hardware profile from measurements).
#pragma once

#include <string>
#include <vector>

namespace shardlens::cli {

int run_check_ir(const std::vector<std::string>& args);
int run_calibrate(const std::vector<std::string>& args);

}  // namespace shardlens::cli
