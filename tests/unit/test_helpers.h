#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ir/ir_json.h"
#include "ir/model_ir.h"
#include "python/extractor.h"
#include "python/source_document.h"

namespace shardlens::test {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Extracts `text` with forward() traced under `workload` (the default workload: the planner's
// 2048-token prefill).
// `model`: the root to trace, as --model takes it (default: the one the script assigns).
inline python::ExtractResult traced(const std::string& text, python::TraceWorkload workload = {}, const std::string& model = "") {
  python::ModelExtractor extractor(text, "m.py");
  python::ExtractOptions options;
  options.trace_forward = true;
  options.model_expression = model;
  if (workload.tokens == 1 && workload.context == 0) workload.tokens = 2048;
  options.workload = workload;
  return extractor.extract(options);
}

inline std::string fixture(const std::string& name) {
  return read_text(std::string(SHARDLENS_SOURCE_DIR) + "/../shared/fixtures/" + name);
}

inline std::string model_script(const std::string& name) {
  return read_text(std::string(SHARDLENS_SOURCE_DIR) + "/tests/models/" + name);
}

// Every model script the project has: tests/models, ../shared/fixtures and bench/models.
inline std::vector<std::filesystem::path> all_model_scripts() {
  std::vector<std::filesystem::path> out;
  for (const char* dir : {"/tests/models", "/../shared/fixtures", "/bench/models"})
    for (auto& entry : std::filesystem::directory_iterator(std::string(SHARDLENS_SOURCE_DIR) + dir))
      if (entry.path().extension() == ".py") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Under the sanitizers (several times slower) the sweeps over every model script take every
// third one: the release run checks them all, and the sanitizers look for memory errors on the same
// code paths.
#ifdef SHARDLENS_SANITIZED_TESTS
constexpr size_t kScriptStride = 3;
#else
constexpr size_t kScriptStride = 1;
#endif
inline std::vector<std::filesystem::path> swept_model_scripts() {
  std::vector<std::filesystem::path> all = all_model_scripts(), out;
  for (size_t i = 0; i < all.size(); i += kScriptStride) out.push_back(all[i]);
  return out;
}

// The position of the first occurrence of `needle` (0-based row and byte column).
inline python::TextPosition find(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  REQUIRE(at != std::string::npos);
  python::TextPosition p;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++p.row;
      p.column = 0;
    } else {
      ++p.column;
    }
  }
  return p;
}

// An edit replacing the first occurrence of `from` (on one line) with `to`.
inline python::TextEdit replace_first(const std::string& text, const std::string& from, const std::string& to) {
  auto start = find(text, from);
  auto end = start;
  end.column += static_cast<uint32_t>(from.size());
  return {start, end, to};
}

inline std::string join_ints(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += std::to_string(x) + ",";
  return s;
}

// Everything the dataflow holds, one line per op and tensor.
inline std::string dump(const ir::Dataflow& f) {
  std::ostringstream o;
  o << "traced " << f.traced << " error " << f.error << "\n";
  for (size_t i = 0; i < f.tensors.size(); ++i) {
    auto& t = f.tensors[i];
    o << "t" << i << " [";
    for (auto d : t.shape) o << d << ",";
    o << "] " << t.shape_known << " " << t.dtype << " p" << t.parameter << " b" << t.buffer << " d" << t.data_dependent << "\n";
  }
  for (size_t i = 0; i < f.ops.size(); ++i) {
    auto& op = f.ops[i];
    o << "op" << i << " " << static_cast<int>(op.kind) << " " << op.name << " in " << join_ints(op.inputs) << " out " << join_ints(op.outputs)
      << " eq " << op.equation << " dims " << join_ints(op.dims) << " sizes ";
    for (auto s : op.sizes) o << s << ",";
    o << " g" << op.groups << " l" << op.linear << " m" << op.module << " end" << op.end << " @" << op.span.line << ":" << op.span.column
      << "-" << op.span.end_line << ":" << op.span.end_column << " " << op.detail << "\n";
  }
  o << "inputs " << join_ints(f.inputs) << " outputs " << join_ints(f.outputs) << "\n";
  for (auto& d : f.input_descriptions) o << "input " << d << "\n";
  for (auto& n : f.notes) o << "note " << n << "\n";
  return o.str();
}

// The whole IR: the module tree as JSON, then the dataflow.
inline std::string dump(const ir::ModelIR& m) { return ir::to_json(m).dump(1) + "\n" + dump(m.dataflow); }

}  // namespace shardlens::test
