// `check-ir`: compares the collectives and weight shardings a compiler emitted (tt-xla's exported
// StableHLO/Shardy, TTIR or TTNN text) with what a plan (`shardlens plan --format json`) promised.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlir/mlir_text.h"

namespace shardlens::mlir {

enum class IrLevel { StableHlo, Ttir, Ttnn, Unknown };
const char* level_name(IrLevel level);  // "stablehlo", "ttir", "ttnn", "unknown"

struct IrCollective {
  std::string kind;   // all_reduce | all_gather | reduce_scatter | all_to_all | collective_permute
  std::string op;     // the op's name, e.g. "ttnn.all_gather" ("ttnn.reduce_scatter+ttnn.all_gather" for a split all-reduce)
  int line = 0;       // in the IR file
  TensorType type;    // the tensor as the op sees it
  double elements = 0;  // the full logical tensor's elements (as the plan counts them)
  double bytes = 0;
  int devices = 0;      // devices in a group (0: unknown)
  std::string axis;     // the plan's mesh axis name, "" when unknown
  Location loc;
  int matched = -1;     // index into the plan mesh's collectives
};

struct IrWeight {
  std::string arg;   // "%arg0"
  std::string name;  // as the IR names it (ttir.name, loc name), may be empty
  TensorType type;   // the full (global) shape when it can be told
  std::vector<std::vector<std::string>> spec;  // per dim: plan axis names
  bool sharding_known = false;
  int line = 0;
  int parameter = -1;  // matched plan parameter
};

struct Mismatch {
  std::string kind;     // missing | extra | other_kind | other_size | weight_sharding
  std::string file;     // the IR file ("" for a missing collective)
  int ir_line = 0;
  std::string message;
  std::string at;       // the plan component (module path) or parameter it concerns
  int source_line = 0;  // in the model script, when known (the plan's span or the IR's loc)
  int source_column = 0;
};

struct IrFileReport {
  std::string file;
  IrLevel level = IrLevel::Unknown;
  std::vector<IrCollective> collectives;
  std::vector<IrWeight> weights;
  std::vector<ParseError> errors;
  std::vector<Mismatch> mismatches;
  std::vector<std::string> notes;
};

struct CheckReport {
  std::string error;  // the plan could not be read: nothing was compared
  std::vector<int> mesh_shape;  // of the plan mesh compared with
  std::vector<IrFileReport> files;
  std::vector<std::string> notes;
  size_t mismatch_count() const;
  bool matches() const { return error.empty() && mismatch_count() == 0; }
};

struct CheckOptions {
  std::string mesh;  // "1x8": which of the plan's meshes; "" picks the one the IR's mesh matches
};

// Compares each parsed IR file with the plan on its own (each level must match the plan).
CheckReport check_ir(const std::vector<Module>& modules, const nlohmann::json& plan, const CheckOptions& options = {});

// What the IR holds, without a plan (the collectives and weight shardings).
IrFileReport read_ir(const Module& module, const std::vector<std::string>& plan_axes, const std::vector<int>& mesh_shape);

// The IR files named, a folder standing for the *.mlir files under it (sorted); a plan.json found
// in a folder is offered in `plan_in_dir`. False with `error` when a folder holds no .mlir file.
bool collect_ir_files(const std::vector<std::string>& inputs, std::vector<std::string>& files, std::string& plan_in_dir, std::string& error);

// Reads and checks IR files against a plan: what `check-ir` and the server's command run. False
// with `error` when a file cannot be read.
bool check_ir_files(const std::vector<std::string>& files, const nlohmann::json& plan, const CheckOptions& options, CheckReport& report,
                    std::string& error);

nlohmann::json to_json(const CheckReport& report);
std::string to_text(const CheckReport& report);
// The report's "Compiled IR check" section (`shardlens report --ir DIR`).
std::string to_markdown(const CheckReport& report);

}  // namespace shardlens::mlir
