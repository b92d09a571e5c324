#include "torch/export_runner.h"

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "torch/child_process.h"
#include "torch/confinement.h"

#ifndef SHARDLENS_SOURCE_DIR
#define SHARDLENS_SOURCE_DIR ""
#endif

namespace shardlens::torchgraph {
namespace {

std::string real_path(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

bool readable(const std::string& p) {
  FILE* f = std::fopen(p.c_str(), "r");
  if (!f) return false;
  std::fclose(f);
  return true;
}

std::string last_line(const std::string& s) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

// Copies the child's archive to `to` through a temporary file beside it, so that `to` is either
// the old file or the whole new one.
bool move_into_place(const std::string& from, const std::string& to, std::string& error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target = absolute_path(to);
  fs::create_directories(target.parent_path(), ec);
  fs::path partial = target;
  partial += ".partial";
  fs::copy_file(from, partial, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(partial, target, ec);
  if (!ec) return true;
  error = ec.message();
  fs::remove(partial, ec);
  return false;
}

}  // namespace

std::string find_export_helper(std::string& error) {
  if (const char* e = std::getenv("SHARDLENS_EXPORT_HELPER"); e && *e) {
    if (readable(e)) return e;
    error = "SHARDLENS_EXPORT_HELPER='" + std::string(e) + "' cannot be read";
    return "";
  }
  std::string dir = executable_dir();
  std::vector<std::string> candidates;
  if (!dir.empty()) {
    candidates.push_back(dir + "/export_helper.py");
    candidates.push_back(dir + "/../share/shardlens/export_helper.py");
  }
  if (*SHARDLENS_SOURCE_DIR) candidates.push_back(std::string(SHARDLENS_SOURCE_DIR) + "/analysis/torch/export_helper.py");
  for (auto& c : candidates)
    if (readable(c)) return c;
  error = "the export helper (export_helper.py) was not found next to " + (dir.empty() ? std::string("shardlens") : dir) +
          " nor in the source tree; set SHARDLENS_EXPORT_HELPER";
  return "";
}

std::vector<std::string> python_candidates(const std::string& configured) {
  if (!configured.empty()) return {configured};
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (auto& p : find_on_path("python3", true))
    if (seen.insert(real_path(p)).second) out.push_back(p);
  if (is_executable("/usr/bin/python3") && seen.insert(real_path("/usr/bin/python3")).second) out.push_back("/usr/bin/python3");
  return out;
}

ExportResult run_export(const ExportRequest& request) {
  ExportResult r;
  r.helper = find_export_helper(r.message);
  if (r.helper.empty()) {
    r.failure = ExportFailure::HelperMissing;
    r.kind = "helper-missing";
    return r;
  }
  // The script runs in a confined child (confinement.h) that may write only in its own directory:
  // the archive is written there and copied into place here.
  TempDir sandbox("shardlens-export-");
  if (sandbox.path().empty()) {
    r.failure = ExportFailure::WriteFailed;
    r.kind = "write-failed";
    r.message = sandbox.error();
    return r;
  }
  const std::string written = sandbox.path() + "/export.pt";
  std::vector<std::string> args{absolute_path(r.helper), absolute_path(request.script), "-o", written, "--weights", request.weights,
                                "--method", request.method, "--batch", std::to_string(request.batch),
                                "--seq", std::to_string(request.seq)};
  if (!request.model_expression.empty()) {
    args.push_back("--model");
    args.push_back(request.model_expression);
  }
  for (auto& h : request.root_hints) {
    args.push_back("--root-hint");
    args.push_back(h);
  }
  auto pythons = python_candidates(request.python);
  if (pythons.empty()) {
    r.failure = ExportFailure::NoTorch;
    r.kind = "no-torch";
    r.message = "no python3 found (on PATH or /usr/bin/python3); give one with --python PATH";
    return r;
  }
  std::vector<std::string> no_torch;
  for (auto& py : pythons) {
    std::vector<std::string> argv{py.find('/') == std::string::npos ? py : absolute_path(py)};
    argv.insert(argv.end(), args.begin(), args.end());
    auto p = run_process(argv, {.timeout_s = request.timeout_s,
                                .extra_env = {"PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1"},
                                .confine_to = sandbox.path()});
    r.ms += p.ms;
    r.python = py;
    if (!p.started) {
      no_torch.push_back(py + ": " + p.error);
      continue;
    }
    if (p.timed_out) {
      r.failure = ExportFailure::ExportFailed;
      r.kind = "timeout";
      r.message = "the export did not finish within " + std::to_string(request.timeout_s) + " s";
      return r;
    }
    auto j = nlohmann::json::parse(last_line(p.out), nullptr, false);
    if (p.exit_code == 0 && !j.is_discarded() && j.is_object() && j.value("ok", false)) {
      std::string error;
      if (!move_into_place(written, request.output, error)) {
        r.failure = ExportFailure::WriteFailed;
        r.kind = "write-failed";
        r.message = "could not write " + request.output + ": " + error;
        return r;
      }
      r.ok = true;
      r.result = j;
      r.result["output"] = request.output;
      return r;
    }
    if (p.exit_code == static_cast<int>(ExportFailure::NoTorch)) {
      std::string why = !j.is_discarded() && j.is_object() ? j.value("message", "") : "";
      auto colon = why.find(": ");
      no_torch.push_back(py + (colon == std::string::npos ? "" : " (" + why.substr(colon + 2) + ")"));
      continue;  // the next interpreter may have torch
    }
    r.failure = p.exit_code >= 2 && p.exit_code <= 7 ? static_cast<ExportFailure>(p.exit_code) : ExportFailure::ExportFailed;
    if (!j.is_discarded() && j.is_object()) {
      r.kind = j.value("kind", "");
      r.message = j.value("message", "");
    }
    if (r.message.empty()) {
      std::string err = last_line(p.err);
      r.message = err.empty() ? "the export helper exited with status " + std::to_string(p.exit_code) : err;
      if (r.kind.empty()) r.kind = "helper-failed";
    }
    return r;
  }
  r.failure = ExportFailure::NoTorch;
  r.kind = "no-torch";
  r.message = "cannot import torch with any Python interpreter tried: ";
  for (size_t i = 0; i < no_torch.size(); ++i) r.message += (i ? ", " : "") + no_torch[i];
  r.message += "; install PyTorch (Debian: apt-get install python3-torch) or give an interpreter with --python PATH";
  return r;
}

}  // namespace shardlens::torchgraph
