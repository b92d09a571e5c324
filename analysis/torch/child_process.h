// Runs a program as a child process and collects what it prints: how shardlens runs the Python
// export helper and shardlens-graph without linking Python or LibTorch itself. POSIX.
#pragma once

#include <string>
#include <vector>

namespace shardlens::torchgraph {

struct ProcessResult {
  bool started = false;     // false: the program could not be run (see error)
  int exit_code = -1;       // the exit status; 128 + N when killed by signal N
  bool timed_out = false;
  std::string out, err;     // standard output and error
  std::string error;        // why it did not start
  double ms = 0;            // wall time
};

// argv[0] is looked up on PATH when it has no slash. Standard input is /dev/null. `timeout_s` <= 0:
// no limit. `extra_env` entries ("NAME=value") are added to the environment.
ProcessResult run_process(const std::vector<std::string>& argv, int timeout_s = 0,
                          const std::vector<std::string>& extra_env = {});

// The directory of the running executable ("" when unknown).
std::string executable_dir();

// First executable named `name` on PATH ("" when none); every match when `all` is set.
std::vector<std::string> find_on_path(const std::string& name, bool all = false);

bool is_executable(const std::string& path);

}  // namespace shardlens::torchgraph
