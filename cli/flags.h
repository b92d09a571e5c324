// The one flag reader every command reads its arguments with: `--flag value` and `--flag=value`
// are split here only, `-h`/`--help` prints the command's usage, and every message about an
// argument is worded once ("shardlens plan: --mesh needs a value").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardlens::cli {

class FlagReader {
 public:
  // `command` prefixes messages ("shardlens plan"); `usage` is printed for --help (stdout) and
  // after a usage error (stderr).
  FlagReader(std::string command, const char* usage, const std::vector<std::string>& args);

  // Moves to the next argument. False at the end, after --help, and after an error; then
  // exit_code() says how the command ends.
  bool next();
  std::optional<int> exit_code() const { return exit_code_; }

  // The current argument: its name ("--mesh" for "--mesh=1x8"), whether it is an option (starts
  // with '-' and is not "-", which names stdin), and the test for one name.
  const std::string& name() const { return name_; }
  bool option() const { return name_.size() > 1 && name_[0] == '-'; }
  bool is(const char* flag) const { return name_ == flag; }

  // The option's value: after '=' or the next argument. None: "needs a value" and the usage.
  std::optional<std::string> value();
  // A value that must be one of `allowed`: "FLAG must be a, b or c, not 'v'".
  std::optional<std::string> choice(const std::vector<std::string>& allowed);
  // A value that must be a positive integer: "FLAG must be a positive integer, not 'v'".
  std::optional<int64_t> positive();
  // Takes `--format text|json` when it is the current argument (true: taken, even when bad).
  bool format(std::string& out);
  // The current argument, which no flag took, as the command's FILE: an option here is unknown,
  // a second FILE is an error.
  void file(std::string& out);
  // After the loop: the exit status when the command ends here (--help, an error, or no FILE:
  // the usage on stderr and 2).
  std::optional<int> finished(const std::string& file) const;

  // Errors end the command with exit status 2: "<command>: MESSAGE" (fail) or the unknown option
  // and the usage (unknown).
  void fail(const std::string& message);
  void unknown();
  // Ends the reading with `code` (when a command decides its own exit).
  void stop(int code) { exit_code_ = code; }

  // The raw arguments the current one took, its value included (a report's regenerate line).
  std::vector<std::string> taken() const;
  const std::string& command() const { return command_; }
  const char* usage() const { return usage_; }

 private:
  std::string command_;
  const char* usage_;
  const std::vector<std::string>& args_;
  size_t first_ = 0, next_ = 0;  // the current argument is args_[first_, next_)
  std::string name_;
  std::optional<std::string> inline_value_;
  std::optional<int> exit_code_;
};

// The text of `path`; otherwise prints "<command>: why" (missing, a directory, unreadable) and nullopt.
std::optional<std::string> read_input(const std::string& command, const std::string& path);

// `v` as a positive integer; otherwise prints "<command>: FLAG must be a positive integer, not 'v'".
std::optional<int64_t> positive_int(const std::string& command, const std::string& flag, const std::string& v);

// An argument as a shell reads it back (quoted unless plain), for the command lines outputs cite.
std::string shell_word(const std::string& a);

// "a, b or c"
std::string one_of(const std::vector<std::string>& allowed);

}  // namespace shardlens::cli
