#include "session/script_pipeline.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "python/module_loader.h"
#include "python/value_locator.h"

namespace shardlens::session {

std::string too_large_to_analyse() {
  return "is larger than " + std::to_string(python::ModuleLoader::kMaxModuleBytes >> 20) + " MiB; shardlens does not analyse it";
}

bool read_file(const std::string& path, std::string& out, std::string& error) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    error = "'" + path + "' is a directory, not a Python file";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) {
    error = "cannot read '" + path + "'";
    return false;
  }
  out = buf.str();
  return true;
}

bool read_script(const std::string& path, std::string& out, std::string& error) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > python::ModuleLoader::kMaxModuleBytes) {
    error = "'" + path + "' " + too_large_to_analyse();
    return false;
  }
  if (!read_file(path, out, error)) return false;
  if (out.find('\0') == std::string::npos) return true;
  error = "'" + path + "' is not a text file (it contains NUL bytes)";
  return false;
}

std::string export_path_for(const std::string& script_path) {
  std::string base = script_path;
  auto slash = base.rfind('/');
  auto dot = base.rfind('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) base = base.substr(0, dot);
  return base + ".pt";
}

// The text is indexed once, on the first lookup (linear time however many sizes fail to divide).
plan::ValueLocator value_locator(const std::string& text) {
  return [index = python::LazyValueIndex(text)](const std::vector<std::string>& keys, int64_t value, ir::Span fallback) {
    ir::Span s = index.locate(keys, value);
    return s.valid() ? s : fallback;
  };
}

std::string unknown_pin(const ir::ModelIR& model, const plan::PlanOptions& options) {
  for (auto& [name, layout] : options.pinned_parameters) {
    bool known = false;
    for (auto& p : model.parameters) known |= p.name == name;
    if (!known) return "--pin " + name + ": the model has no parameter of that name";
  }
  for (auto& [name, layout] : options.pinned_outputs) {
    bool known = false;
    for (auto& m : model.modules) known |= m.name == name;
    if (!known) return "--pin-output " + name + ": the model has no module of that name";
  }
  return "";
}

bool fit_sequence_to_model(plan::PlanOptions& options, const ir::ModelIR& model) {
  int64_t most = model.dataflow.max_tokens;
  if (most <= 0 || options.workload.seq <= most) return false;
  options.workload.seq = most;
  return true;
}

plan::PlanResult plan_in_text(const std::string& text, const ir::ModelIR& model, plan::PlanOptions options) {
  options.locate = value_locator(text);
  return plan::plan_model(model, options);
}

}  // namespace shardlens::session
