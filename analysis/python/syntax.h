// The front end's own syntax tree: a compact, owned copy of the Python constructs the abstract
// interpreter understands, lowered from tree-sitter's concrete tree one top-level statement at a
// time. Owning it (instead of walking tree-sitter nodes) lets unchanged top-level statements be
// reused across edits: spans are stored relative to the statement's first line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/span.h"

namespace shardlens::python {

// Rows are relative to the owning unit's first row; columns are absolute UTF-8 byte columns.
struct RelSpan {
  uint32_t row = 0, column = 0, end_row = 0, end_column = 0;
};

enum class ExprKind : uint8_t {
  Name, Int, Float, Str, FStr, Bool, NoneLit, EllipsisLit,
  Attribute,   // items[0].name
  Subscript,   // items[0][items[1]] (a tuple index is a Tuple)
  Slice,       // items: lower, upper, step (null when absent)
  Call,        // items[0] = callee, items[1..] = arguments (Starred / Keyword / DoubleStar / plain)
  Keyword,     // name = value items[0]
  Starred,     // *items[0]
  DoubleStar,  // **items[0]
  BinOp,       // name = operator text
  UnaryOp,     // name = "-", "+", "~", "not"
  BoolOp,      // name = "and" | "or"; items are the operands
  Compare,     // items are operands; ops between them
  IfExp,       // items: body, test, orelse
  Tuple, List, Set,
  Dict,        // items in pairs (key, value); a DoubleStar stands alone
  ListComp, SetComp, GenExp, DictComp,  // items[0] = element (and items[1] = value for DictComp)
  Lambda,
  NamedExpr,   // name := items[0]
  Yield,       // items[0] (may be null); name == "from" for `yield from`
  Unsupported, // anything else: name says what
};

struct Expr;
struct Stmt;
struct FunctionDef;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

struct Comprehension {
  ExprPtr target;
  ExprPtr iter;
  std::vector<ExprPtr> conditions;
};

struct Expr {
  ExprKind kind = ExprKind::Unsupported;
  RelSpan span;
  std::string name;  // identifier, attribute, string value, operator or keyword name
  int64_t int_value = 0;
  double float_value = 0;
  std::vector<ExprPtr> items;
  std::vector<std::string> ops;             // Compare
  std::vector<Comprehension> comprehensions;
  std::shared_ptr<FunctionDef> lambda;      // Lambda
};

enum class ParamKind : uint8_t { Normal, PositionalOnlyMarker, VarArgs, KeywordOnlyMarker, VarKwargs };

struct Param {
  std::string name;
  ParamKind kind = ParamKind::Normal;
  ExprPtr default_value;
  std::string annotation;  // its source text ("int", "torch.Tensor"), "" when none
};

struct FunctionDef {
  std::string name;
  RelSpan span;
  std::vector<Param> params;
  std::vector<ExprPtr> decorators;
  Block body;
  ExprPtr lambda_body;  // set for lambdas instead of body
  bool is_generator = false;
};

struct ClassDef {
  std::string name;
  RelSpan span;
  std::vector<ExprPtr> bases;  // plain expressions and Keyword (metaclass=...)
  std::vector<ExprPtr> decorators;
  Block body;
  std::vector<const Expr*> method_decorators;  // of the FunctionDefs in body, in order (read on every run)
};

struct ImportName {
  std::string path;   // dotted name ("torch.nn") or, in `from m import x`, the imported name "x"
  std::string alias;  // the bound name
};

struct ExceptHandler {
  ExprPtr type;
  std::string name;
  Block body;
};

enum class StmtKind : uint8_t {
  Expr, Assign, AugAssign, AnnAssign, Return, If, For, While, Break, Continue, Pass,
  FunctionDef, ClassDef, Import, ImportFrom, Assert, Raise, Try, With, Delete, Global, Unsupported,
};

struct Stmt {
  StmtKind kind = StmtKind::Unsupported;
  RelSpan span;
  std::vector<ExprPtr> targets;  // Assign: chained targets; AugAssign/AnnAssign/For: [0]; Delete: all
  ExprPtr value;                 // assigned value, condition, iterable, returned value, raised exception
  ExprPtr annotation;            // AnnAssign
  std::string op;                // AugAssign operator ("+"), Unsupported: what it was
  Block body, orelse, finalbody;
  std::vector<ExceptHandler> handlers;
  std::vector<std::pair<ExprPtr, ExprPtr>> with_items;  // context expression, optional target
  std::shared_ptr<FunctionDef> function;
  std::shared_ptr<ClassDef> class_def;
  std::vector<ImportName> imports;
  std::string module;  // ImportFrom: the module's dotted name
  int level = 0;       // ImportFrom: leading dots
};

struct DefinitionCache;  // interpreter.h

// One top-level statement of a file with its lowered tree; reused while its text is unchanged.
struct Unit {
  uint32_t start_row = 0;  // current absolute row (0-based) of the statement's first line
  uint32_t file = 0;       // ir::Span::file of the file it is in (0: the document analysed)
  uint64_t text_hash = 0;
  std::string text;        // the statement's source text (the cache key, compared in full)
  uint64_t code_hash = 0;  // of the text without its comments (an edit in a comment keeps the unit); 0: not yet
  StmtPtr stmt;
  std::string class_name;  // non-empty when the statement defines a class
  std::vector<std::string> referenced_names;  // identifiers used inside a class body (root selection)
  std::vector<std::pair<RelSpan, std::string>> problems;  // syntax errors inside the statement
  // A class or function definition whose result depends only on the objects its bases and
  // decorators name (constant defaults, constant class attributes): the interpreter may reuse
  // the object it built last time when those are the same objects again.
  bool definition_cacheable = false;
  mutable std::shared_ptr<DefinitionCache> definition_cache;
  bool lowered_ahead = false;  // lowered while the document was parsed; counted by the first extraction
};

// A span inside a unit as a span of its file.
inline ir::Span span_in_file(const RelSpan& s, const Unit* unit) {
  uint32_t base = unit ? unit->start_row : 0;
  return {base + s.row + 1, s.column, base + s.end_row + 1, s.end_column, unit ? unit->file : 0};
}

}  // namespace shardlens::python
