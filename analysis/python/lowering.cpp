#include "python/lowering.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>

extern "C" const TSLanguage* tree_sitter_python(void);

namespace shardlens::python {
namespace {

// Node types the lowering distinguishes, resolved once from the grammar's symbol table so that
// the hot path compares small integers instead of strings.
enum class T : uint8_t {
  Other, Module, ExpressionStatement, Assignment, AugmentedAssignment, ReturnStatement, IfStatement,
  ElifClause, ElseClause, ForStatement, WhileStatement, TryStatement, ExceptClause, FinallyClause,
  WithStatement, WithClause, WithItem, FunctionDefinition, ClassDefinition, DecoratedDefinition,
  Decorator, ImportStatement, ImportFromStatement, FutureImportStatement, AliasedImport,
  DottedName, RelativeImport, ImportPrefix, WildcardImport, PassStatement, BreakStatement,
  ContinueStatement, AssertStatement, RaiseStatement, GlobalStatement, NonlocalStatement,
  DeleteStatement, Block, Identifier, KeywordIdentifier, Integer, Float, String, StringStart,
  StringContent, StringEnd, Interpolation, EscapeSequence, EscapeInterpolation, ConcatenatedString,
  True, False, None, Ellipsis, Attribute, Subscript, Slice, Call, ArgumentList, KeywordArgument,
  ListSplat, DictionarySplat, ParenthesizedExpression, BinaryOperator, UnaryOperator, NotOperator,
  BooleanOperator, ComparisonOperator, ConditionalExpression, Tuple, List, Set, Dictionary, Pair,
  ExpressionList, PatternList, TuplePattern, ListPattern, ListSplatPattern, DictionarySplatPattern,
  ListComprehension, SetComprehension, GeneratorExpression, DictionaryComprehension, ForInClause,
  IfClause, Lambda, LambdaParameters, Parameters, DefaultParameter, TypedParameter,
  TypedDefaultParameter, PositionalSeparator, KeywordSeparator, NamedExpression, AsPattern,
  AsPatternTarget, Type, GenericType, MemberType, UnionType, Comment, Yield, Await, Error, Count
};

struct SymbolTable {
  std::vector<T> by_symbol;
  TSFieldId left, right, value, name, body, condition, consequence, alternative, parameters,
      superclasses, function, arguments, object, attribute, subscript, operator_, argument,
      module_name, alias, definition, type, operators;
  SymbolTable() {
    const TSLanguage* lang = tree_sitter_python();
    static const std::unordered_map<std::string, T> names = {
        {"module", T::Module}, {"expression_statement", T::ExpressionStatement},
        {"assignment", T::Assignment}, {"augmented_assignment", T::AugmentedAssignment},
        {"return_statement", T::ReturnStatement}, {"if_statement", T::IfStatement},
        {"elif_clause", T::ElifClause}, {"else_clause", T::ElseClause},
        {"for_statement", T::ForStatement}, {"while_statement", T::WhileStatement},
        {"try_statement", T::TryStatement}, {"except_clause", T::ExceptClause},
        {"finally_clause", T::FinallyClause}, {"with_statement", T::WithStatement},
        {"with_clause", T::WithClause}, {"with_item", T::WithItem},
        {"function_definition", T::FunctionDefinition}, {"class_definition", T::ClassDefinition},
        {"decorated_definition", T::DecoratedDefinition}, {"decorator", T::Decorator},
        {"import_statement", T::ImportStatement}, {"import_from_statement", T::ImportFromStatement},
        {"future_import_statement", T::FutureImportStatement}, {"aliased_import", T::AliasedImport},
        {"dotted_name", T::DottedName}, {"relative_import", T::RelativeImport},
        {"import_prefix", T::ImportPrefix}, {"wildcard_import", T::WildcardImport},
        {"pass_statement", T::PassStatement}, {"break_statement", T::BreakStatement},
        {"continue_statement", T::ContinueStatement}, {"assert_statement", T::AssertStatement},
        {"raise_statement", T::RaiseStatement}, {"global_statement", T::GlobalStatement},
        {"nonlocal_statement", T::NonlocalStatement}, {"delete_statement", T::DeleteStatement},
        {"block", T::Block}, {"identifier", T::Identifier}, {"keyword_identifier", T::KeywordIdentifier},
        {"integer", T::Integer}, {"float", T::Float}, {"string", T::String},
        {"string_start", T::StringStart}, {"string_content", T::StringContent},
        {"string_end", T::StringEnd}, {"interpolation", T::Interpolation},
        {"escape_sequence", T::EscapeSequence}, {"escape_interpolation", T::EscapeInterpolation},
        {"concatenated_string", T::ConcatenatedString}, {"true", T::True}, {"false", T::False},
        {"none", T::None}, {"ellipsis", T::Ellipsis}, {"attribute", T::Attribute},
        {"subscript", T::Subscript}, {"slice", T::Slice}, {"call", T::Call},
        {"argument_list", T::ArgumentList}, {"keyword_argument", T::KeywordArgument},
        {"list_splat", T::ListSplat}, {"dictionary_splat", T::DictionarySplat},
        {"parenthesized_expression", T::ParenthesizedExpression},
        {"binary_operator", T::BinaryOperator}, {"unary_operator", T::UnaryOperator},
        {"not_operator", T::NotOperator}, {"boolean_operator", T::BooleanOperator},
        {"comparison_operator", T::ComparisonOperator},
        {"conditional_expression", T::ConditionalExpression}, {"tuple", T::Tuple},
        {"list", T::List}, {"set", T::Set}, {"dictionary", T::Dictionary}, {"pair", T::Pair},
        {"expression_list", T::ExpressionList}, {"pattern_list", T::PatternList},
        {"tuple_pattern", T::TuplePattern}, {"list_pattern", T::ListPattern},
        {"list_splat_pattern", T::ListSplatPattern},
        {"dictionary_splat_pattern", T::DictionarySplatPattern},
        {"list_comprehension", T::ListComprehension}, {"set_comprehension", T::SetComprehension},
        {"generator_expression", T::GeneratorExpression},
        {"dictionary_comprehension", T::DictionaryComprehension},
        {"for_in_clause", T::ForInClause}, {"if_clause", T::IfClause}, {"lambda", T::Lambda},
        {"lambda_parameters", T::LambdaParameters}, {"parameters", T::Parameters},
        {"default_parameter", T::DefaultParameter}, {"typed_parameter", T::TypedParameter},
        {"typed_default_parameter", T::TypedDefaultParameter},
        {"positional_separator", T::PositionalSeparator},
        {"keyword_separator", T::KeywordSeparator}, {"named_expression", T::NamedExpression},
        {"as_pattern", T::AsPattern}, {"as_pattern_target", T::AsPatternTarget}, {"type", T::Type},
        {"generic_type", T::GenericType}, {"member_type", T::MemberType}, {"union_type", T::UnionType},
        {"comment", T::Comment}, {"yield", T::Yield}, {"await", T::Await}, {"ERROR", T::Error},
    };
    uint32_t count = ts_language_symbol_count(lang);
    by_symbol.assign(count + 1, T::Other);
    for (uint32_t s = 0; s < count; ++s) {
      if (ts_language_symbol_type(lang, static_cast<TSSymbol>(s)) != TSSymbolTypeRegular) continue;
      auto it = names.find(ts_language_symbol_name(lang, static_cast<TSSymbol>(s)));
      if (it != names.end()) by_symbol[s] = it->second;
    }
    auto f = [&](const char* n) { return ts_language_field_id_for_name(lang, n, static_cast<uint32_t>(strlen(n))); };
    left = f("left"); right = f("right"); value = f("value"); name = f("name"); body = f("body");
    condition = f("condition"); consequence = f("consequence"); alternative = f("alternative");
    parameters = f("parameters"); superclasses = f("superclasses"); function = f("function");
    arguments = f("arguments"); object = f("object"); attribute = f("attribute");
    subscript = f("subscript"); operator_ = f("operator"); argument = f("argument");
    module_name = f("module_name"); alias = f("alias"); definition = f("definition");
    type = f("type"); operators = f("operators");
  }
};

const SymbolTable& symbols() {
  static const SymbolTable table;
  return table;
}

constexpr int kMaxDepth = 400;  // deeper nesting is reported, not recursed into

class Lowerer {
 public:
  Lowerer(std::string_view source, uint32_t base_row, std::vector<SyntaxProblem>& problems)
      : src_(source), base_row_(base_row), problems_(problems), sym_(symbols()) {}

  StmtPtr statement(TSNode n);
  ExprPtr expression(TSNode n);

 private:
  T type(TSNode n) const {
    if (ts_node_is_missing(n)) return T::Error;
    if (ts_node_is_extra(n) && !ts_node_is_null(n) && ts_node_symbol(n) < sym_.by_symbol.size() &&
        sym_.by_symbol[ts_node_symbol(n)] != T::Error)
      return T::Comment;  // comments and line continuations
    TSSymbol s = ts_node_symbol(n);
    return s < sym_.by_symbol.size() ? sym_.by_symbol[s] : T::Other;
  }
  std::string text(TSNode n) const {
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    if (b > src_.size() || a > b) return {};
    return std::string(src_.substr(a, b - a));
  }
  RelSpan span(TSNode n) const {
    TSPoint a = ts_node_start_point(n), b = ts_node_end_point(n);
    return {a.row - base_row_, a.column, b.row - base_row_, b.column};
  }
  TSNode field(TSNode n, TSFieldId id) const { return ts_node_child_by_field_id(n, id); }
  void problem(TSNode n, std::string message) { problems_.push_back({span(n), std::move(message)}); }

  ExprPtr make(ExprKind kind, TSNode n, std::string name = {}) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->span = span(n);
    e->name = std::move(name);
    return e;
  }
  ExprPtr unsupported(TSNode n, std::string what) { return make(ExprKind::Unsupported, n, std::move(what)); }
  StmtPtr make_stmt(StmtKind kind, TSNode n) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->span = span(n);
    return s;
  }

  void block(TSNode n, Block& out);
  void statements_into(TSNode n, Block& out);
  StmtPtr simple_or_compound(TSNode n);
  StmtPtr assignment(TSNode n);
  StmtPtr if_statement(TSNode n);
  StmtPtr try_statement(TSNode n);
  StmtPtr with_statement(TSNode n);
  StmtPtr import_statement(TSNode n);
  StmtPtr import_from(TSNode n);
  std::shared_ptr<FunctionDef> function(TSNode n, std::vector<ExprPtr> decorators);
  std::shared_ptr<ClassDef> class_def(TSNode n, std::vector<ExprPtr> decorators);
  void parameters(TSNode n, std::vector<Param>& out);
  ExprPtr expression_inner(TSNode n);
  ExprPtr sequence(ExprKind kind, TSNode n);
  ExprPtr string_literal(TSNode n);
  void string_parts(TSNode n, Expr& fstring, std::string& literal, bool& is_f, bool& is_bytes);
  ExprPtr call(TSNode n);
  ExprPtr comprehension(ExprKind kind, TSNode n);
  ExprPtr lambda(TSNode n);
  ExprPtr subscript(TSNode n);
  ExprPtr slice(TSNode n);
  // `left op right` (arithmetic, and/or): the operator's text and its two operands.
  ExprPtr binary_operator(TSNode n, ExprKind kind);
  ExprPtr number(TSNode n, bool is_float);

  std::string_view src_;
  uint32_t base_row_;
  std::vector<SyntaxProblem>& problems_;
  const SymbolTable& sym_;
  int depth_ = 0;
  bool in_function_ = false;
  bool saw_yield_ = false;
};

// The k-th named child that is not an extra (comments and `\` line continuations may sit
// anywhere between a node's children).
TSNode named(TSNode n, uint32_t k) {
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_named_child(n, i);
    if (ts_node_is_extra(c)) continue;
    if (k-- == 0) return c;
  }
  return TSNode{};
}

// All named children, extras included, in order.
std::vector<TSNode> named_children(TSNode n) {
  uint32_t count = ts_node_named_child_count(n);
  std::vector<TSNode> out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) out.push_back(ts_node_named_child(n, i));
  return out;
}

uint32_t named_count(TSNode n) {
  uint32_t count = ts_node_named_child_count(n), k = 0;
  for (uint32_t i = 0; i < count; ++i)
    if (!ts_node_is_extra(ts_node_named_child(n, i))) ++k;
  return k;
}

struct DepthGuard {
  int& depth;
  explicit DepthGuard(int& d) : depth(d) { ++depth; }
  ~DepthGuard() { --depth; }
};

void Lowerer::block(TSNode n, Block& out) {
  if (ts_node_is_null(n)) return;
  statements_into(n, out);
}

void Lowerer::statements_into(TSNode n, Block& out) {
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_named_child(n, i);
    T t = type(c);
    if (t == T::Comment) continue;
    if (t == T::Error) {
      problem(c, "syntax error");
      statements_into(c, out);  // keep whatever statements tree-sitter recovered inside
      continue;
    }
    if (auto s = simple_or_compound(c)) out.push_back(std::move(s));
  }
}

StmtPtr Lowerer::statement(TSNode n) { return simple_or_compound(n); }

StmtPtr Lowerer::simple_or_compound(TSNode n) {
  DepthGuard guard(depth_);
  if (depth_ > kMaxDepth) {
    problem(n, "statement nested too deeply to analyse");
    return nullptr;
  }
  if (ts_node_has_error(n) && type(n) != T::ClassDefinition && type(n) != T::FunctionDefinition &&
      type(n) != T::DecoratedDefinition && type(n) != T::IfStatement && type(n) != T::ForStatement &&
      type(n) != T::WhileStatement && type(n) != T::TryStatement && type(n) != T::WithStatement) {
    // A simple statement with an error inside: executing half of it could bind wrong values.
    problem(n, "syntax error in statement");
    return nullptr;
  }
  switch (type(n)) {
    case T::ExpressionStatement: {
      uint32_t count = named_count(n);
      if (count == 1) {
        TSNode c = named(n, 0);
        T t = type(c);
        if (t == T::Assignment || t == T::AugmentedAssignment) return assignment(c);
        auto s = make_stmt(StmtKind::Expr, n);
        s->value = expression(c);
        return s;
      }
      auto s = make_stmt(StmtKind::Expr, n);
      s->value = sequence(ExprKind::Tuple, n);
      return s;
    }
    case T::ReturnStatement: {
      auto s = make_stmt(StmtKind::Return, n);
      if (named_count(n) > 0) s->value = expression(named(n, 0));
      return s;
    }
    case T::IfStatement: return if_statement(n);
    case T::ForStatement: {
      auto s = make_stmt(StmtKind::For, n);
      s->targets.push_back(expression(field(n, sym_.left)));
      s->value = expression(field(n, sym_.right));
      block(field(n, sym_.body), s->body);
      TSNode alt = field(n, sym_.alternative);
      if (!ts_node_is_null(alt)) block(field(alt, sym_.body), s->orelse);
      return s;
    }
    case T::WhileStatement: {
      auto s = make_stmt(StmtKind::While, n);
      s->value = expression(field(n, sym_.condition));
      block(field(n, sym_.body), s->body);
      TSNode alt = field(n, sym_.alternative);
      if (!ts_node_is_null(alt)) block(field(alt, sym_.body), s->orelse);
      return s;
    }
    case T::TryStatement: return try_statement(n);
    case T::WithStatement: return with_statement(n);
    case T::FunctionDefinition: {
      auto s = make_stmt(StmtKind::FunctionDef, n);
      s->function = function(n, {});
      return s;
    }
    case T::ClassDefinition: {
      auto s = make_stmt(StmtKind::ClassDef, n);
      s->class_def = class_def(n, {});
      return s;
    }
    case T::DecoratedDefinition: {
      std::vector<ExprPtr> decorators;
      uint32_t count = ts_node_named_child_count(n);
      for (uint32_t i = 0; i < count; ++i) {
        TSNode c = ts_node_named_child(n, i);
        if (type(c) == T::Decorator && ts_node_named_child_count(c) > 0)
          decorators.push_back(expression(named(c, 0)));
      }
      TSNode def = field(n, sym_.definition);
      if (ts_node_is_null(def)) return nullptr;
      if (type(def) == T::ClassDefinition) {
        auto s = make_stmt(StmtKind::ClassDef, n);
        s->class_def = class_def(def, std::move(decorators));
        return s;
      }
      auto s = make_stmt(StmtKind::FunctionDef, n);
      s->function = function(def, std::move(decorators));
      return s;
    }
    case T::ImportStatement: return import_statement(n);
    case T::ImportFromStatement: return import_from(n);
    case T::FutureImportStatement: return make_stmt(StmtKind::Pass, n);
    case T::PassStatement: return make_stmt(StmtKind::Pass, n);
    case T::BreakStatement: return make_stmt(StmtKind::Break, n);
    case T::ContinueStatement: return make_stmt(StmtKind::Continue, n);
    case T::AssertStatement: {
      auto s = make_stmt(StmtKind::Assert, n);
      if (named_count(n) > 0) s->value = expression(named(n, 0));
      return s;
    }
    case T::RaiseStatement: {
      auto s = make_stmt(StmtKind::Raise, n);
      if (named_count(n) > 0) s->value = expression(named(n, 0));
      return s;
    }
    case T::GlobalStatement:
    case T::NonlocalStatement: {
      auto s = make_stmt(StmtKind::Global, n);
      s->op = type(n) == T::NonlocalStatement ? "nonlocal" : "global";
      uint32_t count = ts_node_named_child_count(n);
      for (uint32_t i = 0; i < count; ++i) s->targets.push_back(expression(ts_node_named_child(n, i)));
      return s;
    }
    case T::DeleteStatement: {
      auto s = make_stmt(StmtKind::Delete, n);
      if (named_count(n) > 0) {
        TSNode c = named(n, 0);
        if (type(c) == T::ExpressionList) {
          uint32_t count = ts_node_named_child_count(c);
          for (uint32_t i = 0; i < count; ++i) s->targets.push_back(expression(ts_node_named_child(c, i)));
        } else {
          s->targets.push_back(expression(c));
        }
      }
      return s;
    }
    case T::Comment: return nullptr;
    default: {
      auto s = make_stmt(StmtKind::Unsupported, n);
      s->op = ts_node_type(n);
      return s;
    }
  }
}

StmtPtr Lowerer::assignment(TSNode n) {
  if (type(n) == T::AugmentedAssignment) {
    auto s = make_stmt(StmtKind::AugAssign, n);
    s->targets.push_back(expression(field(n, sym_.left)));
    std::string op = text(field(n, sym_.operator_));
    if (!op.empty() && op.back() == '=') op.pop_back();
    s->op = op;
    s->value = expression(field(n, sym_.right));
    return s;
  }
  TSNode right = field(n, sym_.right);
  TSNode annotation = field(n, sym_.type);
  if (!ts_node_is_null(annotation)) {
    auto s = make_stmt(StmtKind::AnnAssign, n);
    s->targets.push_back(expression(field(n, sym_.left)));
    s->annotation = expression(annotation);
    if (!ts_node_is_null(right)) s->value = expression(right);
    return s;
  }
  // `a = b = value` nests assignments on the right: collect the chain of targets.
  auto s = make_stmt(StmtKind::Assign, n);
  s->targets.push_back(expression(field(n, sym_.left)));
  while (!ts_node_is_null(right) && type(right) == T::Assignment &&
         ts_node_is_null(field(right, sym_.type))) {
    s->targets.push_back(expression(field(right, sym_.left)));
    right = field(right, sym_.right);
  }
  if (!ts_node_is_null(right) && type(right) == T::AugmentedAssignment) {
    s->value = unsupported(right, "augmented assignment inside assignment");
  } else if (!ts_node_is_null(right)) {
    s->value = expression(right);
  } else {
    s->value = unsupported(n, "assignment without a value");
  }
  return s;
}

StmtPtr Lowerer::if_statement(TSNode n) {
  auto s = make_stmt(StmtKind::If, n);
  s->value = expression(field(n, sym_.condition));
  block(field(n, sym_.consequence), s->body);
  // elif / else clauses: lower them as a chain of nested ifs in `orelse`.
  Block* tail = &s->orelse;
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_named_child(n, i);
    if (type(c) == T::ElifClause) {
      auto e = make_stmt(StmtKind::If, c);
      e->value = expression(field(c, sym_.condition));
      block(field(c, sym_.consequence), e->body);
      tail->push_back(std::move(e));
      tail = &tail->back()->orelse;
    } else if (type(c) == T::ElseClause) {
      block(field(c, sym_.body), *tail);
    }
  }
  return s;
}

StmtPtr Lowerer::try_statement(TSNode n) {
  auto s = make_stmt(StmtKind::Try, n);
  block(field(n, sym_.body), s->body);
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_named_child(n, i);
    T t = type(c);
    if (t == T::ExceptClause) {
      ExceptHandler h;
      TSNode v = field(c, sym_.value);
      TSNode a = field(c, sym_.alias);
      if (!ts_node_is_null(v) && type(v) == T::AsPattern) {  // `except ImportError as e` (newer grammars)
        TSNode target = named(v, 1);
        if (!ts_node_is_null(target) && type(target) == T::AsPatternTarget) target = named(target, 0);
        if (!ts_node_is_null(target)) h.name = text(target);
        v = named(v, 0);
      }
      if (!ts_node_is_null(v)) h.type = expression(v);
      if (!ts_node_is_null(a)) h.name = text(a);
      uint32_t cc = ts_node_named_child_count(c);
      for (uint32_t j = 0; j < cc; ++j)
        if (type(ts_node_named_child(c, j)) == T::Block) block(ts_node_named_child(c, j), h.body);
      s->handlers.push_back(std::move(h));
    } else if (t == T::ElseClause) {
      block(field(c, sym_.body), s->orelse);
    } else if (t == T::FinallyClause) {
      uint32_t cc = ts_node_named_child_count(c);
      for (uint32_t j = 0; j < cc; ++j)
        if (type(ts_node_named_child(c, j)) == T::Block) block(ts_node_named_child(c, j), s->finalbody);
    }
  }
  return s;
}

StmtPtr Lowerer::with_statement(TSNode n) {
  auto s = make_stmt(StmtKind::With, n);
  for (TSNode c : named_children(n)) {
    if (type(c) != T::WithClause) continue;
    for (TSNode item : named_children(c)) {
      if (type(item) != T::WithItem) continue;
      TSNode v = field(item, sym_.value);
      if (!ts_node_is_null(v) && type(v) == T::AsPattern && ts_node_named_child_count(v) >= 2) {
        TSNode target = named(v, 1);
        if (type(target) == T::AsPatternTarget && ts_node_named_child_count(target) > 0)
          target = named(target, 0);
        s->with_items.emplace_back(expression(named(v, 0)), expression(target));
      } else if (!ts_node_is_null(v)) {
        s->with_items.emplace_back(expression(v), nullptr);
      }
    }
  }
  block(field(n, sym_.body), s->body);
  return s;
}

StmtPtr Lowerer::import_statement(TSNode n) {
  auto s = make_stmt(StmtKind::Import, n);
  for (TSNode c : named_children(n)) {
    if (type(c) == T::DottedName) {
      std::string path = text(c);
      // `import a.b` binds `a`; the interpreter resolves the rest by attribute access.
      s->imports.push_back({path, path.substr(0, path.find('.'))});
    } else if (type(c) == T::AliasedImport) {
      s->imports.push_back({text(field(c, sym_.name)), text(field(c, sym_.alias))});
    }
  }
  return s;
}

StmtPtr Lowerer::import_from(TSNode n) {
  auto s = make_stmt(StmtKind::ImportFrom, n);
  TSNode module = field(n, sym_.module_name);
  if (!ts_node_is_null(module)) {
    if (type(module) == T::RelativeImport) {
      uint32_t cc = ts_node_named_child_count(module);
      for (uint32_t j = 0; j < cc; ++j) {
        TSNode c = ts_node_named_child(module, j);
        if (type(c) == T::ImportPrefix) s->level = static_cast<int>(text(c).size());
        else if (type(c) == T::DottedName) s->module = text(c);
      }
    } else {
      s->module = text(module);
    }
  }
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_named_child(n, i);
    if (ts_node_eq(c, module)) continue;
    if (type(c) == T::DottedName) {
      std::string name = text(c);
      s->imports.push_back({name, name});
    } else if (type(c) == T::AliasedImport) {
      s->imports.push_back({text(field(c, sym_.name)), text(field(c, sym_.alias))});
    } else if (type(c) == T::WildcardImport) {
      s->imports.push_back({"*", "*"});
    }
  }
  return s;
}

void Lowerer::parameters(TSNode n, std::vector<Param>& out) {
  if (ts_node_is_null(n)) return;
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_named_child(n, i);
    Param p;
    switch (type(c)) {
      case T::Identifier: p.name = text(c); break;
      case T::DefaultParameter:
      case T::TypedDefaultParameter:
        p.name = text(field(c, sym_.name));
        p.default_value = expression(field(c, sym_.value));
        if (type(c) == T::TypedDefaultParameter) p.annotation = text(field(c, sym_.type));
        break;
      case T::TypedParameter: {
        TSNode inner = named(c, 0);
        p.annotation = text(field(c, sym_.type));
        if (type(inner) == T::ListSplatPattern) {
          p.kind = ParamKind::VarArgs;
          p.name = text(named(inner, 0));
        } else if (type(inner) == T::DictionarySplatPattern) {
          p.kind = ParamKind::VarKwargs;
          p.name = text(named(inner, 0));
        } else {
          p.name = text(inner);
        }
        break;
      }
      case T::ListSplatPattern:
        p.kind = ParamKind::VarArgs;
        p.name = text(named(c, 0));
        break;
      case T::DictionarySplatPattern:
        p.kind = ParamKind::VarKwargs;
        p.name = text(named(c, 0));
        break;
      case T::PositionalSeparator: p.kind = ParamKind::PositionalOnlyMarker; break;
      case T::KeywordSeparator: p.kind = ParamKind::KeywordOnlyMarker; break;
      case T::Comment: continue;
      default:
        problem(c, "unsupported parameter form");
        continue;
    }
    out.push_back(std::move(p));
  }
}

std::shared_ptr<FunctionDef> Lowerer::function(TSNode n, std::vector<ExprPtr> decorators) {
  auto f = std::make_shared<FunctionDef>();
  f->name = text(field(n, sym_.name));
  f->span = span(n);
  f->decorators = std::move(decorators);
  parameters(field(n, sym_.parameters), f->params);
  bool outer_in_function = in_function_, outer_yield = saw_yield_;
  in_function_ = true;
  saw_yield_ = false;
  block(field(n, sym_.body), f->body);
  f->is_generator = saw_yield_;
  in_function_ = outer_in_function;
  saw_yield_ = outer_yield;
  return f;
}

std::shared_ptr<ClassDef> Lowerer::class_def(TSNode n, std::vector<ExprPtr> decorators) {
  auto c = std::make_shared<ClassDef>();
  c->name = text(field(n, sym_.name));
  c->span = span(n);
  c->decorators = std::move(decorators);
  TSNode bases = field(n, sym_.superclasses);
  if (!ts_node_is_null(bases)) {
    uint32_t count = ts_node_named_child_count(bases);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode b = ts_node_named_child(bases, i);
      if (type(b) == T::Comment) continue;
      if (type(b) == T::KeywordArgument) {  // class X(Base, metaclass=M, key="small")
        auto k = make(ExprKind::Keyword, b, text(field(b, sym_.name)));
        k->items.push_back(expression(field(b, sym_.value)));
        c->bases.push_back(std::move(k));
        continue;
      }
      c->bases.push_back(expression(b));
    }
  }
  block(field(n, sym_.body), c->body);
  for (auto& st : c->body)
    if (st && st->kind == StmtKind::FunctionDef)
      for (auto& d : st->function->decorators) c->method_decorators.push_back(d.get());
  return c;
}

ExprPtr Lowerer::expression(TSNode n) {
  if (ts_node_is_null(n)) return nullptr;
  DepthGuard guard(depth_);
  if (depth_ > kMaxDepth) {
    problem(n, "expression nested too deeply to analyse");
    return unsupported(n, "expression nested too deeply");
  }
  if (type(n) == T::Error) {
    problem(n, "syntax error");
    return unsupported(n, "syntax error");
  }
  ExprPtr e = expression_inner(n);
  // tree-sitter-python parses `*x.shape[-2:]` as a subscript of (list_splat x); in Python the star
  // applies to the whole postfix expression, so it moves outward.
  if (e && (e->kind == ExprKind::Subscript || e->kind == ExprKind::Attribute || e->kind == ExprKind::Call) && !e->items.empty() &&
      e->items[0] && e->items[0]->kind == ExprKind::Starred && !e->items[0]->items.empty()) {
    ExprPtr star = std::move(e->items[0]);
    e->items[0] = std::move(star->items[0]);
    star->items[0] = std::move(e);
    return star;
  }
  return e;
}

ExprPtr Lowerer::sequence(ExprKind kind, TSNode n) {
  auto e = make(kind, n);
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_named_child(n, i);
    if (type(c) == T::Comment) continue;
    e->items.push_back(expression(c));
  }
  return e;
}

ExprPtr Lowerer::number(TSNode n, bool is_float) {
  std::string t = text(n);
  std::string digits;
  for (char c : t)
    if (c != '_') digits.push_back(c);
  if (!digits.empty() && (digits.back() == 'j' || digits.back() == 'J'))
    return unsupported(n, "complex literal");
  if (!digits.empty() && (digits.back() == 'l' || digits.back() == 'L')) digits.pop_back();
  if (is_float) {
    auto e = make(ExprKind::Float, n);
    e->float_value = std::strtod(digits.c_str(), nullptr);
    return e;
  }
  auto e = make(ExprKind::Int, n);
  int base = 10;
  const char* start = digits.c_str();
  if (digits.size() > 1 && digits[0] == '0') {
    char k = static_cast<char>(digits[1] | 0x20);
    if (k == 'x') { base = 16; start += 2; }
    else if (k == 'o') { base = 8; start += 2; }
    else if (k == 'b') { base = 2; start += 2; }
  }
  errno = 0;
  long long v = std::strtoll(start, nullptr, base);
  if (errno == ERANGE) {
    // Beyond int64: the interpreter makes a big int of the digits (`name` = base, ':', digits).
    e->name = std::to_string(base) + ":" + start;
    return e;
  }
  e->int_value = v;
  return e;
}

static void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) out.push_back(static_cast<char>(cp));
  else if (cp < 0x800) { out.push_back(static_cast<char>(0xC0 | (cp >> 6))); out.push_back(static_cast<char>(0x80 | (cp & 0x3F))); }
  else if (cp < 0x10000) { out.push_back(static_cast<char>(0xE0 | (cp >> 12))); out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F))); out.push_back(static_cast<char>(0x80 | (cp & 0x3F))); }
  else { out.push_back(static_cast<char>(0xF0 | (cp >> 18))); out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F))); out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F))); out.push_back(static_cast<char>(0x80 | (cp & 0x3F))); }
}

static std::string decode_escapes(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) { out.push_back(s[i]); continue; }
    char c = s[++i];
    switch (c) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'r': out.push_back('\r'); break;
      case '0': out.push_back('\0'); break;
      case '\\': out.push_back('\\'); break;
      case '\'': out.push_back('\''); break;
      case '"': out.push_back('"'); break;
      case '\n': break;
      case 'x': case 'u': case 'U': {
        size_t len = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        if (i + len < s.size() + 1 && i + len <= s.size() - 0) {
          uint32_t cp = static_cast<uint32_t>(std::strtoul(std::string(s.substr(i + 1, len)).c_str(), nullptr, 16));
          append_utf8(out, cp);
          i += len;
        }
        break;
      }
      default: out.push_back('\\'); out.push_back(c);
    }
  }
  return out;
}

void Lowerer::string_parts(TSNode n, Expr& fstring, std::string& literal, bool& is_f, bool& is_bytes) {
  bool raw = false;
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_named_child(n, i);
    switch (type(c)) {
      case T::StringStart: {
        for (char ch : text(c)) {
          char k = static_cast<char>(ch | 0x20);
          if (k == 'f') is_f = true;
          if (k == 'r') raw = true;
          if (k == 'b') is_bytes = true;
        }
        break;
      }
      case T::StringContent: {
        std::string t = text(c);
        if (is_f) {  // `{{` and `}}` are escapes in f-strings
          std::string u;
          for (size_t k = 0; k < t.size(); ++k) {
            u.push_back(t[k]);
            if ((t[k] == '{' || t[k] == '}') && k + 1 < t.size() && t[k + 1] == t[k]) ++k;
          }
          t = u;
        }
        literal += raw ? t : decode_escapes(t);
        break;
      }
      case T::Interpolation: {
        if (!literal.empty()) {
          auto lit = make(ExprKind::Str, c, literal);
          fstring.items.push_back(std::move(lit));
          fstring.ops.emplace_back("\x01");  // marker: a literal part
          literal.clear();
        }
        TSNode inner = named(c, 0);
        auto part = expression(inner);
        // Keep a format spec (`:.2f`) or conversion (`!r`) as a trailing Str in `ops`.
        uint32_t k = ts_node_named_child_count(c);
        std::string spec;
        for (uint32_t j = 1; j < k; ++j) {
          TSNode part = ts_node_named_child(c, j);
          std::string t = text(part);
          bool conversion = std::strcmp(ts_node_type(part), "type_conversion") == 0;
          if (conversion && (t.empty() || t[0] != '!')) t = "!" + t;
          if (!conversion && (t.empty() || t[0] != ':')) t = ":" + t;
          spec += t;
        }
        fstring.items.push_back(std::move(part));
        fstring.ops.push_back(spec);
        break;
      }
      default: break;
    }
  }
}

ExprPtr Lowerer::string_literal(TSNode n) {
  auto f = make(ExprKind::FStr, n);
  std::string literal;
  bool is_f = false, is_bytes = false;
  if (type(n) == T::ConcatenatedString) {
    uint32_t count = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < count; ++i) {
      TSNode c = ts_node_named_child(n, i);
      if (type(c) == T::String) string_parts(c, *f, literal, is_f, is_bytes);
    }
  } else {
    string_parts(n, *f, literal, is_f, is_bytes);
  }
  if (f->items.empty()) {
    f->kind = ExprKind::Str;
    f->name = std::move(literal);
    return f;
  }
  if (!literal.empty()) {
    auto lit = make(ExprKind::Str, n, literal);
    f->items.push_back(std::move(lit));
    f->ops.emplace_back("\x01");
  }
  return f;
}

ExprPtr Lowerer::call(TSNode n) {
  auto e = make(ExprKind::Call, n);
  e->items.push_back(expression(field(n, sym_.function)));
  TSNode args = field(n, sym_.arguments);
  if (ts_node_is_null(args)) return e;
  if (type(args) == T::GeneratorExpression) {  // f(x for x in xs)
    e->items.push_back(comprehension(ExprKind::GenExp, args));
    return e;
  }
  uint32_t count = ts_node_named_child_count(args);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode a = ts_node_named_child(args, i);
    switch (type(a)) {
      case T::Comment: break;
      case T::KeywordArgument: {
        auto k = make(ExprKind::Keyword, a, text(field(a, sym_.name)));
        k->items.push_back(expression(field(a, sym_.value)));
        e->items.push_back(std::move(k));
        break;
      }
      case T::ListSplat: {
        auto k = make(ExprKind::Starred, a);
        k->items.push_back(expression(named(a, 0)));
        e->items.push_back(std::move(k));
        break;
      }
      case T::DictionarySplat: {
        auto k = make(ExprKind::DoubleStar, a);
        k->items.push_back(expression(named(a, 0)));
        e->items.push_back(std::move(k));
        break;
      }
      default: e->items.push_back(expression(a));
    }
  }
  return e;
}

ExprPtr Lowerer::comprehension(ExprKind kind, TSNode n) {
  auto e = make(kind, n);
  TSNode body = field(n, sym_.body);
  if (kind == ExprKind::DictComp && !ts_node_is_null(body) && type(body) == T::Pair) {
    e->items.push_back(expression(field(body, ts_language_field_id_for_name(tree_sitter_python(), "key", 3))));
    e->items.push_back(expression(field(body, sym_.value)));
  } else {
    e->items.push_back(expression(body));
  }
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_named_child(n, i);
    if (type(c) == T::ForInClause) {
      Comprehension comp;
      comp.target = expression(field(c, sym_.left));
      // `for x in a, b` iterates a tuple: every named child after the `in` token.
      std::vector<TSNode> rights;
      bool after_in = false;
      uint32_t cc = ts_node_child_count(c);
      for (uint32_t j = 0; j < cc; ++j) {
        TSNode k = ts_node_child(c, j);
        if (!ts_node_is_named(k)) {
          if (std::strcmp(ts_node_type(k), "in") == 0) after_in = true;
          continue;
        }
        if (after_in && type(k) != T::Comment) rights.push_back(k);
      }
      if (rights.size() == 1) {
        comp.iter = expression(rights[0]);
      } else {
        auto tuple = make(ExprKind::Tuple, c);
        for (TSNode r : rights) tuple->items.push_back(expression(r));
        comp.iter = std::move(tuple);
      }
      e->comprehensions.push_back(std::move(comp));
    } else if (type(c) == T::IfClause && !e->comprehensions.empty()) {
      e->comprehensions.back().conditions.push_back(expression(named(c, 0)));
    }
  }
  return e;
}

ExprPtr Lowerer::lambda(TSNode n) {
  auto e = make(ExprKind::Lambda, n);
  auto f = std::make_shared<FunctionDef>();
  f->name = "<lambda>";
  f->span = span(n);
  parameters(field(n, sym_.parameters), f->params);
  f->lambda_body = expression(field(n, sym_.body));
  e->lambda = std::move(f);
  return e;
}

ExprPtr Lowerer::binary_operator(TSNode n, ExprKind kind) {
  auto e = make(kind, n, text(field(n, sym_.operator_)));
  e->items.push_back(expression(field(n, sym_.left)));
  e->items.push_back(expression(field(n, sym_.right)));
  return e;
}

ExprPtr Lowerer::slice(TSNode n) {
  auto e = make(ExprKind::Slice, n);
  e->items.resize(3);
  int part = 0;
  uint32_t count = ts_node_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_child(n, i);
    if (!ts_node_is_named(c)) {
      if (std::strcmp(ts_node_type(c), ":") == 0) ++part;
      continue;
    }
    if (type(c) == T::Comment) continue;
    if (part < 3) e->items[part] = expression(c);
  }
  return e;
}

ExprPtr Lowerer::subscript(TSNode n) {
  auto e = make(ExprKind::Subscript, n);
  TSNode value = field(n, sym_.value);
  e->items.push_back(expression(value));
  // Every named child after the value is an index (ts_node_field_name_for_child is unreliable
  // in libtree-sitter 0.20.7, so fields are not used here).
  std::vector<TSNode> subs;
  uint32_t count = ts_node_named_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_named_child(n, i);
    if (ts_node_eq(c, value) || type(c) == T::Comment) continue;
    subs.push_back(c);
  }
  auto index_of = [&](TSNode s) { return type(s) == T::Slice ? slice(s) : expression(s); };
  if (subs.size() == 1) {
    e->items.push_back(index_of(subs[0]));
  } else {
    auto tuple = make(ExprKind::Tuple, n);
    for (TSNode s : subs) tuple->items.push_back(index_of(s));
    e->items.push_back(std::move(tuple));
  }
  return e;
}

ExprPtr Lowerer::expression_inner(TSNode n) {
  switch (type(n)) {
    case T::Identifier:
    case T::KeywordIdentifier: return make(ExprKind::Name, n, text(n));
    case T::Integer: return number(n, false);
    case T::Float: return number(n, true);
    case T::String:
    case T::ConcatenatedString: return string_literal(n);
    case T::True: { auto e = make(ExprKind::Bool, n); e->int_value = 1; return e; }
    case T::False: return make(ExprKind::Bool, n);
    case T::None: return make(ExprKind::NoneLit, n);
    case T::Ellipsis: return make(ExprKind::EllipsisLit, n);
    case T::Attribute: {
      auto e = make(ExprKind::Attribute, n, text(field(n, sym_.attribute)));
      e->items.push_back(expression(field(n, sym_.object)));
      return e;
    }
    case T::Subscript: return subscript(n);
    case T::Slice: return slice(n);
    case T::Call: return call(n);
    case T::ParenthesizedExpression: {
      uint32_t count = ts_node_named_child_count(n);
      for (uint32_t i = 0; i < count; ++i) {
        TSNode c = ts_node_named_child(n, i);
        if (type(c) != T::Comment) return expression(c);
      }
      return unsupported(n, "empty parentheses");
    }
    case T::BinaryOperator: return binary_operator(n, ExprKind::BinOp);
    case T::UnaryOperator: {
      auto e = make(ExprKind::UnaryOp, n, text(field(n, sym_.operator_)));
      e->items.push_back(expression(field(n, sym_.argument)));
      return e;
    }
    case T::NotOperator: {
      auto e = make(ExprKind::UnaryOp, n, "not");
      e->items.push_back(expression(field(n, sym_.argument)));
      return e;
    }
    case T::BooleanOperator: return binary_operator(n, ExprKind::BoolOp);
    case T::ComparisonOperator: {
      auto e = make(ExprKind::Compare, n);
      uint32_t count = ts_node_child_count(n);
      std::string pending;
      for (uint32_t i = 0; i < count; ++i) {
        TSNode c = ts_node_child(n, i);
        if (ts_node_is_named(c)) {
          if (type(c) == T::Comment) continue;
          if (!pending.empty()) {
            e->ops.push_back(pending);
            pending.clear();
          }
          e->items.push_back(expression(c));
        } else {
          // "not in" and "is not" may arrive as one aliased token or as two tokens.
          std::string tok = text(c);
          std::string norm;
          for (char ch : tok)
            if (!isspace(static_cast<unsigned char>(ch)) || (!norm.empty() && norm.back() != ' ')) norm.push_back(isspace(static_cast<unsigned char>(ch)) ? ' ' : ch);
          while (!norm.empty() && norm.back() == ' ') norm.pop_back();
          pending = pending.empty() ? norm : pending + " " + norm;
        }
      }
      if (e->ops.size() + 1 != e->items.size()) return unsupported(n, "malformed comparison");
      return e;
    }
    case T::ConditionalExpression: {
      auto e = make(ExprKind::IfExp, n);
      for (TSNode c : named_children(n))
        if (type(c) != T::Comment) e->items.push_back(expression(c));
      if (e->items.size() != 3) return unsupported(n, "malformed conditional expression");
      return e;
    }
    case T::Tuple:
    case T::ExpressionList:
    case T::PatternList:
    case T::TuplePattern: return sequence(ExprKind::Tuple, n);
    case T::List:
    case T::ListPattern: return sequence(ExprKind::List, n);
    case T::Set: return sequence(ExprKind::Set, n);
    case T::ListSplat:
    case T::ListSplatPattern: {
      auto e = make(ExprKind::Starred, n);
      e->items.push_back(expression(named(n, 0)));
      return e;
    }
    case T::DictionarySplat: {
      auto e = make(ExprKind::DoubleStar, n);
      e->items.push_back(expression(named(n, 0)));
      return e;
    }
    case T::Dictionary: {
      auto e = make(ExprKind::Dict, n);
      for (TSNode c : named_children(n)) {
        if (type(c) == T::Pair) {
          e->items.push_back(expression(named(c, 0)));
          e->items.push_back(expression(field(c, sym_.value)));
        } else if (type(c) == T::DictionarySplat) {
          auto k = make(ExprKind::DoubleStar, c);
          k->items.push_back(expression(named(c, 0)));
          e->items.push_back(std::move(k));
        }
      }
      return e;
    }
    case T::ListComprehension: return comprehension(ExprKind::ListComp, n);
    case T::SetComprehension: return comprehension(ExprKind::SetComp, n);
    case T::GeneratorExpression: return comprehension(ExprKind::GenExp, n);
    case T::DictionaryComprehension: return comprehension(ExprKind::DictComp, n);
    case T::Lambda: return lambda(n);
    case T::NamedExpression: {
      auto e = make(ExprKind::NamedExpr, n, text(field(n, sym_.name)));
      e->items.push_back(expression(field(n, sym_.value)));
      return e;
    }
    case T::Type: return named_count(n) ? expression(named(n, 0)) : unsupported(n, "type");
    // Annotations parse as types: Optional[X] (generic_type), torch.Tensor (member_type), X | None
    // (union_type) are what the same text means as an expression.
    case T::GenericType: {
      if (named_count(n) < 2) return unsupported(n, "generic type");
      auto e = make(ExprKind::Subscript, n);
      e->items.push_back(make(ExprKind::Name, named(n, 0), text(named(n, 0))));
      TSNode parameters = named(n, 1);
      auto tuple = make(ExprKind::Tuple, parameters);
      for (uint32_t k = 0; k < named_count(parameters); ++k) tuple->items.push_back(expression(named(parameters, k)));
      if (tuple->items.size() == 1) e->items.push_back(std::move(tuple->items[0]));
      else e->items.push_back(std::move(tuple));
      return e;
    }
    case T::MemberType: {
      if (named_count(n) < 2) return unsupported(n, "member type");
      auto e = make(ExprKind::Attribute, n, text(named(n, 1)));
      e->items.push_back(expression(named(n, 0)));
      return e;
    }
    case T::UnionType: {
      if (named_count(n) < 2) return unsupported(n, "union type");
      auto e = make(ExprKind::BinOp, n, "|");
      e->items.push_back(expression(named(n, 0)));
      e->items.push_back(expression(named(n, 1)));
      return e;
    }
    case T::Yield: {
      saw_yield_ = true;
      auto e = make(ExprKind::Yield, n);
      std::string t = text(n);
      if (t.compare(0, 5, "yield") == 0) {
        size_t k = 5;
        while (k < t.size() && isspace(static_cast<unsigned char>(t[k]))) ++k;
        if (t.compare(k, 4, "from") == 0 && (k + 4 == t.size() || !isalnum(static_cast<unsigned char>(t[k + 4])))) e->name = "from";
      }
      TSNode value = named(n, 0);
      e->items.push_back(ts_node_is_null(value) ? nullptr : expression(value));
      return e;
    }
    case T::Await: return unsupported(n, "await");
    default: return unsupported(n, ts_node_type(n));
  }
}

}  // namespace

StmtPtr lower_top_level(TSNode node, std::string_view source, uint32_t base_row,
                        std::vector<SyntaxProblem>& problems) {
  Lowerer lowerer(source, base_row, problems);
  return lowerer.statement(node);
}

ExprPtr lower_expression_text(std::string_view text, std::vector<SyntaxProblem>& problems) {
  TSParser* parser = ts_parser_new();
  ts_parser_set_language(parser, tree_sitter_python());
  std::string source(text);
  TSTree* tree = ts_parser_parse_string(parser, nullptr, source.data(), static_cast<uint32_t>(source.size()));
  TSNode root = ts_tree_root_node(tree);
  ExprPtr result;
  if (ts_node_has_error(root) || ts_node_named_child_count(root) != 1) {
    problems.push_back({{0, 0, 0, static_cast<uint32_t>(source.size())}, "not a single Python expression"});
  } else {
    TSNode stmt = ts_node_named_child(root, 0);
    if (ts_node_named_child_count(stmt) == 1 && std::strcmp(ts_node_type(stmt), "expression_statement") == 0) {
      Lowerer lowerer(source, 0, problems);
      result = lowerer.expression(ts_node_named_child(stmt, 0));
    } else {
      problems.push_back({{0, 0, 0, static_cast<uint32_t>(source.size())}, "not a single Python expression"});
    }
  }
  ts_tree_delete(tree);
  ts_parser_delete(parser);
  return result;
}

}  // namespace shardlens::python
