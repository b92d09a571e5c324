// A reader for textual MLIR as tt-xla / tt-mlir print it (StableHLO with Shardy, TTIR, TTNN):
// operations with their results, operands, attributes, types, regions and locations. It reads
// the generic form ("dialect.op"(%x) <{props}> {attrs} : (types) -> types loc(...)) and the
// custom forms of the ops a sharding check needs; anything else is kept as an op with its name
// and whatever of the above it shows. No MLIR library is involved.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace shardlens::mlir {

struct TensorType {
  std::vector<int64_t> shape;  // -1 for a dynamic dim
  std::string element;         // "bf16", "f32", "i64", ...
  bool valid = false;
  int64_t elements() const;
  double element_bytes() const;  // 2 for bf16, 4 for f32, ...
  double bytes() const { return static_cast<double>(elements()) * element_bytes(); }
  std::string str() const;  // "1x4096xbf16"
};
// "tensor<1x4096xbf16, #layout>" -> shape and element; invalid for other types.
TensorType parse_tensor_type(std::string_view text);

struct Attribute {
  std::string_view name;
  std::string_view value;  // the value's text as written (trimmed), aliases not expanded
};

// A resolved location: the names of NameLocs and every file:line:col met, outermost first.
struct Location {
  std::vector<std::string> names;
  struct Frame {
    std::string file;
    int line = 0, column = 0;
  };
  std::vector<Frame> frames;
  bool empty() const { return names.empty() && frames.empty(); }
};

struct Operation {
  std::string_view name;  // "stablehlo.all_reduce", "ttir.mesh_shard", "func.func", ...
  std::vector<std::string_view> results;
  std::vector<std::string_view> operands;
  std::vector<Attribute> attributes;  // properties <{...}> and the attribute dictionary {...}
  std::vector<std::string_view> operand_types, result_types;
  std::string_view loc;  // the text inside loc(...), or empty
  std::string_view text;  // the op's own text (its regions' bodies left out)
  int line = 0;           // 1-based line in the file where it starts
  int parent = -1;        // the op whose region holds it, -1 at top level
  std::optional<std::string_view> attribute(std::string_view key) const;
};

struct Argument {
  std::string_view name;  // "%arg0"
  std::string_view type;
  std::vector<Attribute> attributes;
  std::string_view loc;
};

struct Function {
  std::string_view name;  // "main"
  int op = -1;            // the func.func op
  std::vector<Argument> arguments;
};

struct MeshAxes {
  std::string name;  // "mesh"
  std::vector<std::pair<std::string, int64_t>> axes;  // ("batch", 1), ("model", 8)
};

struct ParseError {
  int line = 0;
  std::string message;
};

class Module {
 public:
  std::vector<Operation> ops;  // in text order (a region's ops follow their parent)
  std::vector<Function> functions;
  std::unordered_map<std::string_view, std::string_view> aliases;  // "#loc3" -> "loc(...)", "#layout" -> "#ttnn.ttnn_layout<...>"
  std::vector<MeshAxes> meshes;  // sdy.mesh and ttcore.meshes
  std::vector<ParseError> errors;
  std::string file;

  // Follows #loc aliases, NameLoc / CallSiteLoc / FusedLoc nesting.
  Location resolve_location(std::string_view loc) const;
  std::string_view source() const { return *text_; }

 private:
  friend Module parse_mlir(std::string text, std::string file);
  std::shared_ptr<const std::string> text_;
};

// Parses MLIR text. Never throws on bad input: what cannot be read is listed in `errors` with its
// line, and the rest is kept.
Module parse_mlir(std::string text, std::string file = "");

// Helpers over attribute text.
std::vector<int64_t> parse_int_array(std::string_view text);  // "array<i64: -1, 1>", "[1, 2]", "dense<[[0,1]]> : ..."
std::optional<int64_t> parse_int_attr(std::string_view text);  // "1 : ui32" -> 1
// "#sdy.sharding<@mesh, [{\"model\"}, {}]>" or "<@mesh, [...]>" -> per dim, the axis names.
std::optional<std::vector<std::vector<std::string>>> parse_sdy_sharding(std::string_view text);
// "#sdy.sharding_per_value<[<@mesh, [...]>, ...]>" -> one sharding per value.
std::vector<std::vector<std::vector<std::string>>> parse_sdy_sharding_per_value(std::string_view text);

}  // namespace shardlens::mlir
