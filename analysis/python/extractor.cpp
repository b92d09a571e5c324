#include "python/extractor.h"

#include <sys/stat.h>
#include <tree_sitter/api.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cstring>
#include <functional>
#include <mutex>
#include <tuple>
#include <unordered_set>

#include "ir/hash.h"
#include "python/interpreter.h"
#include "python/lowering.h"
#include "python/module_tree.h"
#include "python/syntax.h"

namespace shardlens::python {
namespace {

uint64_t text_hash(std::string_view s) { return std::hash<std::string_view>()(s); }

// The text without its comments and the blanks that end a line: each `#` outside a string up
// to the end of its line goes, and the spaces and tabs before it or before a line break, so every
// other character keeps its line and column (spans of the code do not move) and typing a comment
// after code (`x = f(y)  # why`) changes no code.
std::string without_comments(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t code_end = 0;  // out's length up to its last character that is not a trailing blank
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '\'' || c == '"') {
      size_t end = end_of_string_literal(text, i);
      out.append(text.substr(i, end - i));
      code_end = out.size();
      i = end;
      continue;
    }
    if (c == '\n' || c == '\r') out.resize(code_end);
    out.push_back(c);
    if (c != ' ' && c != '\t') code_end = out.size();
    ++i;
  }
  out.resize(code_end);
  return out;
}

// Computed when first compared: a cold extraction needs none.
uint64_t code_hash_of(Unit& unit) {
  if (!unit.code_hash) unit.code_hash = text_hash(without_comments(unit.text)) ^ unit.text_hash ^ text_hash(unit.text);
  return unit.code_hash;
}

void collect_names(const Expr* e, std::vector<std::string>& out);
void collect_names(const Block& b, std::vector<std::string>& out);

void collect_names(const Expr* e, std::vector<std::string>& out) {
  if (!e) return;
  if (e->kind == ExprKind::Name) out.push_back(e->name);
  for (const auto& item : e->items) collect_names(item.get(), out);
  for (const auto& c : e->comprehensions) {
    collect_names(c.iter.get(), out);
    for (const auto& cond : c.conditions) collect_names(cond.get(), out);
  }
  if (e->lambda) collect_names(e->lambda->lambda_body.get(), out);
}

void collect_names(const Stmt& s, std::vector<std::string>& out) {
  for (const auto& t : s.targets) collect_names(t.get(), out);
  collect_names(s.value.get(), out);
  collect_names(s.body, out);
  collect_names(s.orelse, out);
  collect_names(s.finalbody, out);
  for (const auto& h : s.handlers) collect_names(h.body, out);
  for (const auto& [ctx, target] : s.with_items) collect_names(ctx.get(), out);
  if (s.function) {
    for (const auto& p : s.function->params) collect_names(p.default_value.get(), out);
    collect_names(s.function->body, out);
  }
  if (s.class_def) {
    for (const auto& b : s.class_def->bases) collect_names(b.get(), out);
    collect_names(s.class_def->body, out);
  }
}

void collect_names(const Block& b, std::vector<std::string>& out) {
  for (const auto& s : b)
    if (s) collect_names(*s, out);
}

bool is_statement_type(const char* type) {
  size_t n = std::strlen(type);
  auto ends_with = [&](const char* suffix) {
    size_t k = std::strlen(suffix);
    return n >= k && std::strcmp(type + n - k, suffix) == 0;
  };
  return ends_with("_statement") || ends_with("_definition");
}

}  // namespace

ModelExtractor::ModelExtractor(std::string text, std::string source_path, ParsePieces pieces)
    : document_(std::move(text), pieces, [this](TSNode root, const std::string& t) { lower_ahead(root, t); }),
      source_path_(std::move(source_path)) {
  for (auto& unit : ahead_) cache_.emplace(unit->text_hash, std::move(unit));
  ahead_.clear();
}

struct ModelExtractor::Construction {
  // The statements it stands for, with their rows: those it ran, or edited ones whose methods it
  // adopted (adopt_edited_methods).
  std::vector<std::pair<std::shared_ptr<Unit>, uint32_t>> units;
  std::vector<std::shared_ptr<Unit>> replaced;  // statements it ran that were edited since: their unchanged methods still run
  ExtractOptions options;
  std::shared_ptr<InstanceObj> root;
  bool root_by_class = false;  // the class no other class uses: the names a class body uses matter
  bool ok = false;
  std::string error;
  ir::ModelIR model;  // the module tree and parameters, before tracing and reporting
  std::vector<NamedModule> walk;
  TreeIndex index;  // of `walk`
  std::vector<uint64_t> tree_ids;  // of the modules in `walk`, ascending
  Interpreter::Checkpoint built;  // the interpreter when construction ended
  std::unique_ptr<Unit> expression_unit;  // --model's
  ExprPtr expression;
  std::vector<std::shared_ptr<const LoadedModule>> imported;  // the modules its run read from source
  std::unique_ptr<Interpreter> interp;  // last: its objects point into the statements above
};

ModelExtractor::~ModelExtractor() = default;

void ModelExtractor::apply_edit(const TextEdit& edit) { document_.apply_edit(edit); }

namespace {

TSNode first_error(TSNode n) {
  if (ts_node_is_missing(n) || std::strcmp(ts_node_type(n), "ERROR") == 0) return n;
  uint32_t count = ts_node_child_count(n);
  for (uint32_t i = 0; i < count; ++i) {
    TSNode c = ts_node_child(n, i);
    if (ts_node_has_error(c) || ts_node_is_missing(c)) {
      TSNode e = first_error(c);
      if (!ts_node_is_null(e)) return e;
    }
  }
  return TSNode{};
}

}  // namespace

// Tree-sitter recovers from a syntax error locally, but an unclosed bracket can swallow the rest
// of a file. Blanking the offending line (spaces keep every byte offset, so spans stay exact)
// and re-parsing recovers what a person would expect: everything else still analysed.
ModelExtractor::Recovered ModelExtractor::recover_syntax() {
  Recovered r;
  r.text = document_.text();
  r.tree = ts_tree_copy(document_.sole_tree());  // a document with an error is one tree
  TSParser* parser = ts_parser_new();
  ts_parser_set_language(parser, ts_tree_language(r.tree));
  for (int attempt = 0; attempt < kMaxRecoveredLines; ++attempt) {
    TSNode root = ts_tree_root_node(r.tree);
    if (!ts_node_has_error(root)) break;
    TSNode err = first_error(root);
    if (ts_node_is_null(err)) break;
    uint32_t row = ts_node_start_point(err).row;
    size_t start = 0;
    for (uint32_t i = 0; i < row && start != std::string::npos; ++i) {
      start = r.text.find('\n', start);
      if (start != std::string::npos) ++start;
    }
    if (start == std::string::npos) break;
    size_t end = r.text.find('\n', start);
    if (end == std::string::npos) end = r.text.size();
    bool blank = true;
    for (size_t i = start; i < end; ++i) blank &= r.text[i] == ' ' || r.text[i] == '\t' || r.text[i] == '\r';
    if (blank) break;  // nothing left to remove on that line: keep tree-sitter's own recovery
    r.skipped_lines.push_back(row);
    for (size_t i = start; i < end; ++i)
      if (r.text[i] != '\t') r.text[i] = ' ';
    TSInputEdit edit{};
    edit.start_byte = static_cast<uint32_t>(start);
    edit.old_end_byte = edit.new_end_byte = static_cast<uint32_t>(end);
    edit.start_point = {row, 0};
    edit.old_end_point = edit.new_end_point = {row, static_cast<uint32_t>(end - start)};
    ts_tree_edit(r.tree, &edit);
    TSTree* next = ts_parser_parse_string(parser, r.tree, r.text.data(), static_cast<uint32_t>(r.text.size()));
    ts_tree_delete(r.tree);
    r.tree = next;
  }
  ts_parser_delete(parser);
  return r;
}

namespace {

// The top-level statements under a root, in order; a top-level syntax error is kept (it is
// reported) together with the statements tree-sitter recovered inside it.
std::vector<TSNode> top_level_statements(TSNode root) {
  std::vector<TSNode> top, out;
  // A cursor walks the children in O(n); ts_node_named_child(root, i) is O(i) per call.
  TSTreeCursor cursor = ts_tree_cursor_new(root);
  if (ts_tree_cursor_goto_first_child(&cursor)) {
    do {
      TSNode n = ts_tree_cursor_current_node(&cursor);
      if (ts_node_is_named(n)) top.push_back(n);
    } while (ts_tree_cursor_goto_next_sibling(&cursor));
  }
  ts_tree_cursor_delete(&cursor);
  for (TSNode n : top) {
    if (std::strcmp(ts_node_type(n), "comment") == 0) continue;
    out.push_back(n);
    if (std::strcmp(ts_node_type(n), "ERROR") == 0) {
      uint32_t k = ts_node_named_child_count(n);
      for (uint32_t j = 0; j < k; ++j) {
        TSNode c = ts_node_named_child(n, j);
        if (is_statement_type(ts_node_type(c)) || std::strcmp(ts_node_type(c), "decorated_definition") == 0)
          out.push_back(c);
      }
    }
  }
  return out;
}

std::string_view text_of(TSNode n, const std::string& text) {
  uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
  return std::string_view(text.data() + a, b - a);
}

bool is_error_node(TSNode n) { return std::strcmp(ts_node_type(n), "ERROR") == 0; }

// The cache key of a statement: its text, and the column of its first line (spans store
// absolute columns).
uint64_t unit_key(TSNode n, std::string_view unit_text) {
  return text_hash(unit_text) ^ (static_cast<uint64_t>(ts_node_start_point(n).column) * 0x9E3779B97F4A7C15ULL) ^
         (is_error_node(n) ? 1 : 0);
}

std::shared_ptr<Unit> lower_unit(TSNode n, const std::string& text, uint64_t key) {
  auto unit = std::make_shared<Unit>();
  unit->text = std::string(text_of(n, text));
  unit->text_hash = key;
  std::vector<SyntaxProblem> problems;
  if (is_error_node(n)) {
    TSPoint p = ts_node_start_point(n), q = ts_node_end_point(n);
    problems.push_back({{0, p.column, q.row - p.row, q.column}, "syntax error"});
  } else {
    unit->stmt = lower_top_level(n, text, ts_node_start_point(n).row, problems);
  }
  for (auto& p : problems) unit->problems.emplace_back(p.span, p.message);
  unit->definition_cacheable = unit->stmt && definition_is_cacheable(*unit->stmt);
  if (unit->stmt && unit->stmt->kind == StmtKind::ClassDef) {
    unit->class_name = unit->stmt->class_def->name;
    collect_names(unit->stmt->class_def->body, unit->referenced_names);
    std::sort(unit->referenced_names.begin(), unit->referenced_names.end());
    unit->referenced_names.erase(std::unique(unit->referenced_names.begin(), unit->referenced_names.end()), unit->referenced_names.end());
  }
  return unit;
}

}  // namespace

// Runs on the thread that parsed the piece, while other pieces still parse: a cold extraction
// then finds these statements in the cache. Pieces with a syntax error are left to units(), which
// lowers what error recovery makes of the whole text.
void ModelExtractor::lower_ahead(TSNode root, const std::string& text) {
  if (ts_node_has_error(root)) return;
  std::vector<std::shared_ptr<Unit>> lowered;
  try {
    for (TSNode n : top_level_statements(root)) {
      lowered.push_back(lower_unit(n, text, unit_key(n, text_of(n, text))));
      lowered.back()->lowered_ahead = true;
    }
  } catch (...) {
    return;  // not on this thread: units() lowers them again, where a failure reaches the caller
  }
  std::lock_guard lock(ahead_mutex_);
  for (auto& unit : lowered) ahead_.push_back(std::move(unit));
}

std::vector<std::shared_ptr<Unit>> ModelExtractor::units(ExtractStats& stats) {
  Recovered recovered;
  bool has_error = document_.has_error();
  if (has_error) recovered = recover_syntax();
  struct TreeGuard {
    TSTree* tree;
    ~TreeGuard() { if (tree) ts_tree_delete(tree); }
  } guard{recovered.tree};
  const std::string& text = has_error ? recovered.text : document_.text();
  std::vector<TSNode> roots = has_error ? std::vector<TSNode>{ts_tree_root_node(recovered.tree)} : document_.roots();
  skipped_lines_ = recovered.skipped_lines;

  std::unordered_multimap<uint64_t, std::shared_ptr<Unit>> next;
  std::vector<std::shared_ptr<Unit>> out;
  for (TSNode root : roots)
    for (TSNode n : top_level_statements(root)) {
      std::string_view unit_text = text_of(n, text);
      bool is_error = is_error_node(n);
      uint64_t h = unit_key(n, unit_text);
      std::shared_ptr<Unit> unit;
      auto range = cache_.equal_range(h);
      for (auto it = range.first; it != range.second; ++it)
        if (it->second->text == unit_text) {
          unit = it->second;
          cache_.erase(it);
          break;
        }
      if (!unit && !is_error && !cache_.empty()) {
        // Only a comment changed: the lowered statement is the same (its spans too; a syntax
        // error's extent may cover the comment, so those are lowered afresh).
        std::string code = without_comments(unit_text);
        uint64_t code_hash = text_hash(code) ^ (h ^ text_hash(unit_text));  // h's column and error bits
        for (auto it = cache_.begin(); it != cache_.end(); ++it)
          if (code_hash_of(*it->second) == code_hash && without_comments(it->second->text) == code) {
            unit = it->second;
            cache_.erase(it);
            unit->text = std::string(unit_text);
            unit->text_hash = h;
            break;
          }
      }
      bool lowered = !unit || unit->lowered_ahead;
      if (!unit) unit = lower_unit(n, text, h);
      unit->lowered_ahead = false;
      if (lowered) {
        ++stats.units_lowered;
        if (!unit->class_name.empty()) stats.classes_lowered.push_back(unit->class_name);
      }
      unit->start_row = ts_node_start_point(n).row;
      next.emplace(h, unit);
      out.push_back(unit);
    }
  cache_ = std::move(next);
  stats.units = out.size();
  return out;
}

namespace {

using ir::mix64;

struct IrBuilder {
  ir::ModelIR& model;
  TreeIndex& index;

  // `index.module` is the walk's (named_modules); the parameters and buffers are indexed here.
  void build(const std::vector<NamedModule>& walk) {
    model.modules.reserve(walk.size());
    for (auto& nm : walk) {
      ir::Module m;
      m.name = nm.name;
      m.class_name = nm.module->cls->name;
      if (nm.module->module) {
        m.span = nm.module->module->span;
        m.extra_repr = nm.module->module->extra_repr;
      }
      model.modules.push_back(std::move(m));
    }
    for (size_t i = 0; i < walk.size(); ++i) {
      if (!walk[i].module->module) continue;
      auto& m = model.modules[i];
      for (auto& [k, child] : walk[i].module->module->modules)
        if (child) {
          m.children.push_back(index.module.at(child.get()));
          m.child_keys.push_back(k);
        }
    }
    // Parameters and buffers alike: a record per tensor, listed by the module that owns it.
    auto add_tensors = [&](bool buffers, auto& records, std::vector<int> ir::Module::*owned, const char* what) {
      for_each_tensor(walk, buffers, buffers ? index.buffer : index.parameter,
                      [&](const NamedModule& nm, const std::string& key, const std::shared_ptr<TensorObj>& t, bool persistent) {
                        typename std::remove_reference_t<decltype(records)>::value_type r;
                        r.name = nm.name.empty() ? key : nm.name + "." + key;
                        r.shape_known = t->shape.has_value();
                        if (r.shape_known) r.shape = *t->shape;
                        r.dtype = t->dtype;
                        r.span = t->span;
                        if constexpr (requires { r.persistent; }) r.persistent = persistent;
                        // nm is an element of walk: its position there is its module's index.
                        (model.modules[static_cast<size_t>(&nm - walk.data())].*owned).push_back(static_cast<int>(records.size()));
                        if (!r.shape_known)
                          model.unresolved.push_back(
                              {std::string("shape of ") + what + " '" + r.name + "'", t->why ? t->why->reason : "unknown", r.span});
                        records.push_back(std::move(r));
                      });
    };
    add_tensors(false, model.parameters, &ir::Module::parameters, "parameter");
    add_tensors(true, model.buffers, &ir::Module::buffers, "buffer");
    std::vector<bool> done(model.modules.size(), false);
    std::function<uint64_t(int)> hash = [&](int i) -> uint64_t {
      auto& m = model.modules[i];
      if (done[i]) return m.structure_hash;
      done[i] = true;  // guards against cycles; set properly below
      // The last component of a dotted name, without a copy.
      auto leaf = [](const std::string& name) { return std::string_view(name).substr(name.rfind('.') + 1); };
      uint64_t h = text_hash(m.class_name);
      h = mix64(h, text_hash(m.extra_repr));
      for (int p : m.parameters) {
        auto& param = model.parameters[p];
        h = mix64(h, text_hash(leaf(param.name)));
        for (auto d : param.shape) h = mix64(h, static_cast<uint64_t>(d));
      }
      for (int b : m.buffers) {
        auto& buf = model.buffers[b];
        h = mix64(h, text_hash(leaf(buf.name)));
        for (auto d : buf.shape) h = mix64(h, static_cast<uint64_t>(d));
      }
      for (size_t c = 0; c < m.children.size(); ++c) {
        h = mix64(h, text_hash(m.child_keys[c]));
        h = mix64(h, hash(m.children[c]));
      }
      m.structure_hash = h;
      return h;
    };
    for (size_t i = model.modules.size(); i-- > 0;) hash(static_cast<int>(i));
  }
};

std::string joined_names(const std::vector<std::pair<std::string, std::shared_ptr<InstanceObj>>>& named) {
  std::string names;
  for (auto& entry : named) names += (names.empty() ? "" : ", ") + entry.first;
  return names;
}

bool is_module_instance(const Value& v) {
  auto* inst = v.as<InstanceObj>();
  return inst && inst->module;
}

}  // namespace

ExtractResult ModelExtractor::extract(const ExtractOptions& options) {
  ExtractResult result;
  result.model.source = source_path_;
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point since) { return std::chrono::duration<double, std::milli>(Clock::now() - since).count(); };
  auto t0 = Clock::now();
  auto all_units = units(result.stats);
  result.stats.lower_ms = ms(t0);
  auto t1 = Clock::now();
  Made made;
  for (auto& u : all_units) made.units.emplace_back(u, u->start_row);
  for (uint32_t row : skipped_lines_) {
    const std::string& t = document_.text();
    size_t start = document_.offset_of({row, 0});
    made.skipped += t.substr(start, t.find('\n', start) - start) + "\n" + std::to_string(row) + "\n";
  }
  made.options = options;
  made.options.reuse_unchanged = false;  // asking for reuse is not a different extraction
  made.options.reuse_construction = false;
  made.options.reuse_input_shapes = false;
  // The same statements: the same units, or (after an undo took the caller back to an earlier
  // extraction, whose units were re-lowered since) units of the same code. Once lowered, a unit's
  // text changes only outside its code (units() hands it the text of an edit to a comment or a
  // trailing blank), so comparing code, not text, holds whichever of the two was touched last.
  // (A syntax error, such as blanks after a line continuation, is caught by `skipped` below.)
  auto same_units = [](const auto& a, const auto& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) {
             return x.second == y.second &&
                    (x.first == y.first || x.first->text == y.first->text || without_comments(x.first->text) == without_comments(y.first->text));
           });
  };
  if (options.reuse_unchanged && last_ && same_units(last_->units, made.units) && last_->skipped == made.skipped &&
      last_->options == made.options && imports_unchanged(last_->imported)) {
    result.unchanged = true;
    result.ok = last_->ok;
    result.error = last_->error;
    return result;
  }

  // Freed later, with what this run replaced: a caller in a hurry should not wait for it.
  auto retire = [&result](std::shared_ptr<void> dropped) {
    if (!dropped) return;
    if (result.retired)
      result.retired = std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<void>>>(std::move(result.retired), std::move(dropped));
    else
      result.retired = std::move(dropped);
  };
  // Either a kept construction (the last, else the one before it), with the edited methods
  // swapped in, or a new run of the script.
  std::unique_ptr<Construction> fresh;
  Construction* c = nullptr;
  // A kept run stands for its imports as they were: one changed file and the script runs anew.
  if (construction_ && !imports_unchanged(construction_->imported)) retire(std::move(construction_));
  if (spare_construction_ && !imports_unchanged(spare_construction_->imported)) retire(std::move(spare_construction_));
  bool adopted = options.reuse_construction && adopt_edited_methods(all_units, made.options);
  if (!adopted && options.reuse_construction && spare_construction_) {
    std::swap(construction_, spare_construction_);
    adopted = adopt_edited_methods(all_units, made.options);
    if (!adopted) std::swap(construction_, spare_construction_);
  }
  if (adopted) {
    // Runs share the class objects of unchanged class statements (definition caches): the methods
    // just swapped into one construction's classes may be in the other's, which then no longer
    // stands for its text.
    retire(std::move(spare_construction_));
    c = construction_.get();
    c->interp->rollback(c->built);
    result.ok = c->ok;
    result.error = c->error;
    result.model = c->model;
    result.stats.construction_reused = true;
    result.stats.execute_ms = ms(t1);
  } else {
    // The spare is the older of the two: typing a number runs the script at every digit, and the
    // text an undo goes back to is the one before the first.
    if (construction_ && spare_construction_) retire(std::move(construction_));
    else if (construction_) spare_construction_ = std::move(construction_);
    fresh = std::make_unique<Construction>();
    c = fresh.get();
    Interpreter::Limits limits;
    limits.max_value_bytes = options.memory_budget_mib << 20;
    if (options.step_budget) limits.max_steps = options.step_budget;
    c->interp = std::make_unique<Interpreter>(limits);
    if (!loader_) loader_ = std::make_shared<ModuleLoader>();
    // __file__ is absolute, as Python 3.9+ gives it to the main script ("" for standard input).
    std::error_code ec;
    std::string script_file = source_path_.empty() || source_path_ == "-" ? "" : std::filesystem::absolute(source_path_, ec).lexically_normal().string();
    if (ec) script_file.clear();
    c->interp->set_module_loader(loader_, search_roots(script_file, options), script_file, options.site_packages);
    construct(*c, all_units, options, result);
    c->imported = c->interp->loaded_modules();
    c->options = made.options;
    for (auto& u : all_units) c->units.emplace_back(u, u->start_row);
    result.stats.execute_ms = ms(t1) - result.stats.ir_ms;
  }
  // An exception out of the trace would leave the kept interpreter inside a call: drop it then.
  struct DropUnlessDone {
    std::unique_ptr<Construction>& kept;
    bool done = false;
    ~DropUnlessDone() {
      if (!done) kept.reset();
    }
  } guard{construction_};
  Interpreter& interp = *c->interp;
  const std::shared_ptr<InstanceObj>& root = c->root;
  const std::vector<uint64_t>& tree_ids = c->tree_ids;
  auto t2 = Clock::now();
  bool traced_cleanly = false;
  if (root && options.trace_forward) {
    auto t3 = Clock::now();
    // Its memo and maps are freed with what this run replaced (its destructor reads nothing it refers to).
    auto tracer = std::make_shared<ForwardTracer>(interp, result.model, c->walk, c->index);
    tracer->set_replay(options.replay_identical_calls);
    if (options.reuse_input_shapes && last_inputs_options_ == made.options) tracer->guess_inputs(last_inputs_, last_trace_sizes_);
    interp.set_tracer(tracer.get());
    tracer->trace(root, options.workload);
    interp.set_tracer(nullptr);
    result.stats.trace_ms = ms(t3);
    result.stats.calls_replayed = tracer->calls_replayed();
    result.stats.input_shapes_reused = tracer->guess_held();
    traced_cleanly = !tracer->changed_prior_state() && !interp.budget_exhausted();
    // Only a trace that changed nothing it did not make offers its inputs to the next one: a guess
    // that fails is followed by the usual two passes, on objects the failed pass must not have changed.
    last_inputs_ = traced_cleanly ? tracer->inputs_found() : std::vector<ForwardTracer::InputShape>{};
    last_inputs_options_ = made.options;
    last_trace_sizes_ = {result.model.dataflow.ops.size(), result.model.dataflow.tensors.size()};
    retire(std::move(tracer));
  }
  // Report what could not be resolved while building the chosen model, and every syntax error.
  for (const auto& e : interp.events()) {
    bool raised = e.what.find("raised") != std::string::npos || e.what == "analysis stopped";
    if (std::binary_search(tree_ids.begin(), tree_ids.end(), e.owner) || (e.owner == 0 && raised) || (!root && raised))
      result.model.unresolved.push_back({e.what, e.reason, e.span});
  }
  for (uint32_t row : skipped_lines_) {
    uint32_t width = 0;
    const std::string& t = document_.text();
    size_t start = document_.offset_of({row, 0});
    while (start + width < t.size() && t[start + width] != '\n') ++width;
    result.model.unresolved.push_back({"syntax error", "this line does not parse and was skipped; the rest of the file is still analysed",
                                       {row + 1, 0, row + 1, width}});
  }
  for (auto& u : all_units)
    for (auto& [span, message] : u->problems)
      result.model.unresolved.push_back({message,
                                         message.find("too deeply") != std::string::npos
                                             ? "nesting beyond the analyser's depth limit; the rest of the file is still analysed"
                                             : "the statement does not parse; the rest of the file is still analysed",
                                         span_in_file(span, u.get())});
  // Each imported module once (a run may read one twice only if it changed meanwhile: not here).
  for (auto& m : c->imported) {
    result.dependencies.push_back(m->path);
    for (auto& [span, message] : m->problems)
      result.model.unresolved.push_back({message, "in an imported module; the rest of it is still analysed", span});
  }
  // The document's own entries first, by position; then each imported file's.
  std::stable_sort(result.model.unresolved.begin(), result.model.unresolved.end(), [](auto& a, auto& b) {
    return std::tuple(a.span.file, a.span.line, a.span.column) < std::tuple(b.span.file, b.span.line, b.span.column);
  });
  for (const auto& n : interp.notes()) result.model.notes.push_back(n);
  result.stats.interpreter_steps = interp.steps();
  result.stats.definitions_reused = interp.definitions_reused();
  result.stats.ir_ms += ms(t2) - result.stats.trace_ms;
  // Kept for the next extraction while a trace on it sees what a new run would: forward() changed
  // nothing it did not make, and no statement is broken (error recovery may shift what runs).
  bool keep = traced_cleanly && options.reuse_construction && skipped_lines_.empty() &&
              std::none_of(all_units.begin(), all_units.end(), [](auto& u) { return !u->problems.empty(); });
  if (keep && fresh) {
    construction_ = std::move(fresh);
  } else if (!keep) {
    retire(fresh ? std::move(fresh) : std::move(construction_));
  }
  guard.done = true;
  made.ok = result.ok;
  made.error = result.error;
  made.imported = c->imported;
  last_ = std::make_shared<const Made>(std::move(made));
  return result;
}

namespace {

// Byte offset in a statement's text of a position relative to it.
size_t offset_in(const std::string& text, uint32_t row, uint32_t column) {
  size_t at = 0;
  for (uint32_t r = 0; r < row; ++r) {
    at = text.find('\n', at);
    if (at == std::string::npos) return text.size();
    ++at;
  }
  return std::min(text.size(), at + column);
}

// The methods of a class statement (functions defined directly in its body), with the byte range
// of each one's body in the statement's text.
struct MethodBody {
  const Stmt* stmt;
  size_t begin, end;
};
std::optional<std::vector<MethodBody>> method_bodies(const Unit& unit) {
  std::vector<MethodBody> out;
  for (const auto& s : unit.stmt->class_def->body) {
    if (!s || s->kind != StmtKind::FunctionDef) continue;
    const Block& body = s->function->body;
    auto first = std::find_if(body.begin(), body.end(), [](auto& b) { return b != nullptr; });
    auto last = std::find_if(body.rbegin(), body.rend(), [](auto& b) { return b != nullptr; });
    if (first == body.end()) return std::nullopt;
    out.push_back({s.get(), offset_in(unit.text, (*first)->span.row, (*first)->span.column),
                   offset_in(unit.text, (*last)->span.end_row, (*last)->span.end_column)});
    if (out.back().end < out.back().begin || (out.size() > 1 && out.back().begin < out[out.size() - 2].end)) return std::nullopt;
  }
  return out;
}

// The statement's text with every method body replaced by a mark.
std::string without_method_bodies(const Unit& unit, const std::vector<MethodBody>& bodies) {
  std::string out;
  size_t at = 0;
  for (auto& b : bodies) {
    out.append(unit.text, at, b.begin - at);
    out += '\x01';
    at = b.end;
  }
  out.append(unit.text, at, std::string::npos);
  return out;
}

}  // namespace

// An edit that changed only the bodies of methods the construction never called cannot have
// changed what it built: those functions get the edited bodies (in place, so every reference to
// them sees the edit) and the construction stands for the edited text. Anything else, or any
// doubt, and the script runs again.
bool ModelExtractor::adopt_edited_methods(const std::vector<std::shared_ptr<Unit>>& units, const ExtractOptions& options) {
  Construction* c = construction_.get();
  if (!c || !(c->options == options) || !skipped_lines_.empty() || units.size() != c->units.size()) return false;
  struct Swap {
    FunctionObj* function;
    std::shared_ptr<FunctionDef> def;
    const Unit* unit;
  };
  std::vector<Swap> swaps;
  std::vector<size_t> edited;
  for (size_t i = 0; i < units.size(); ++i) {
    const auto& [was, row] = c->units[i];
    const Unit& now = *units[i];
    if (now.start_row != row) return false;
    // The same statement, or one lowered again from the same text (after an undo).
    if (units[i] == was || was->text == now.text) continue;
    if (!was->stmt || !now.stmt || was->stmt->kind != StmtKind::ClassDef || now.stmt->kind != StmtKind::ClassDef) return false;
    if (!was->problems.empty() || !now.problems.empty() || was->class_name != now.class_name) return false;
    if (!was->stmt->class_def->decorators.empty() || !now.stmt->class_def->decorators.empty()) return false;
    if (c->root_by_class && was->referenced_names != now.referenced_names) return false;
    auto old_bodies = method_bodies(*was), new_bodies = method_bodies(now);
    if (!old_bodies || !new_bodies || old_bodies->size() != new_bodies->size()) return false;
    if (without_method_bodies(*was, *old_bodies) != without_method_bodies(now, *new_bodies)) return false;
    auto bound = c->interp->globals().vars.find(now.class_name);
    auto* cls = bound == c->interp->globals().vars.end() ? nullptr : bound->second.as<ClassObj>();
    if (!cls) return false;
    for (size_t k = 0; k < old_bodies->size(); ++k) {
      const MethodBody& o = (*old_bodies)[k];
      const MethodBody& n = (*new_bodies)[k];
      const auto& old_def = o.stmt->function;
      if (std::string_view(was->text).substr(o.begin, o.end - o.begin) == std::string_view(now.text).substr(n.begin, n.end - n.begin))
        continue;
      if (!old_def->decorators.empty() || c->interp->was_called(old_def.get())) return false;
      FunctionObj* function = nullptr;
      for (auto& [name, value] : cls->attributes)
        if (name == old_def->name)
          if (auto* f = value.as<FunctionObj>(); f && f->def == old_def) function = f;
      if (!function) return false;
      swaps.push_back({function, n.stmt->function, &now});
    }
    edited.push_back(i);
  }
  // Each edit keeps the statement it replaced alive; a long session starts afresh now and then
  // (before swapping anything: another construction may share these classes).
  if (c->replaced.size() + edited.size() > 64) {
    construction_.reset();
    return false;
  }
  for (auto& s : swaps) {
    s.function->def = s.def;
    s.function->unit = s.unit;
  }
  for (size_t i : edited) {
    auto& [was, row] = c->units[i];
    was->definition_cache.reset();  // its class object now runs the edited methods
    c->replaced.push_back(was);
    was = units[i];
  }
  return true;
}

void ModelExtractor::construct(Construction& c, const std::vector<std::shared_ptr<Unit>>& all_units, const ExtractOptions& options,
                               ExtractResult& result) {
  Interpreter& interp = *c.interp;
  interp.run_module(all_units, options.module_name);

  std::shared_ptr<InstanceObj> root;
  std::string how;
  std::vector<std::string> considered;
  // --model's expression lives as long as what it made may run (a lambda among its arguments).
  c.expression_unit = std::make_unique<Unit>();
  Unit& expression_unit = *c.expression_unit;
  ExprPtr& expression = c.expression;
  if (!options.model_expression.empty()) {
    std::vector<SyntaxProblem> problems;
    expression = lower_expression_text(options.model_expression, problems);
    if (!expression) {
      result.error = "--model " + options.model_expression + ": not a Python expression";
    } else {
      Value v = interp.evaluate_in_globals(*expression, expression_unit);
      if (is_module_instance(v)) {
        root = std::static_pointer_cast<InstanceObj>(v.obj);
        how = options.model_expression;
      } else {
        std::string why = v.is_unknown() ? v.unknown->reason : "it is a " + type_name(v);
        for (auto& e : interp.events())
          if (e.reason.find("Error") != std::string::npos || e.what.find("raised") != std::string::npos) why += "; " + e.what + ": " + e.reason;
        result.error = "--model " + options.model_expression + " did not evaluate to an nn.Module: " + why;
      }
    }
  } else {
    // 1. A module instance bound at module level (also inside `if __name__ == "__main__":`).
    std::vector<std::pair<std::string, std::shared_ptr<InstanceObj>>> instances;
    for (const auto& name : interp.global_order()) {
      auto it = interp.globals().vars.find(name);
      if (it != interp.globals().vars.end() && is_module_instance(it->second))
        instances.emplace_back(name, std::static_pointer_cast<InstanceObj>(it->second.obj));
    }
    // Instances inside another (a block bound to a name of its own) are not candidates; a lone
    // instance is the root without walking its tree.
    std::unordered_set<const InstanceObj*> nested;
    if (instances.size() > 1)
      for (auto& [name, inst] : instances)
        for (auto& nm : named_modules(*inst))
          if (nm.module != inst.get()) nested.insert(nm.module);
    std::vector<std::pair<std::string, std::shared_ptr<InstanceObj>>> tops;
    for (auto& entry : instances)
      if (!nested.count(entry.second.get())) tops.push_back(entry);
    if (!tops.empty()) {
      auto chosen = tops.back();
      for (auto& entry : tops)
        if (entry.first == "model") chosen = entry;
      root = chosen.second;
      how = chosen.first;
      if (tops.size() > 1) {
        result.model.notes.push_back("several module-level models (" + joined_names(tops) + "): chose '" + how +
                                     "'; pass --model to pick another");
      }
    } else {
      // 2. The nn.Module class no other class uses and whose constructor needs no arguments.
      std::unordered_set<std::string> referenced;
      std::vector<const Unit*> class_units;
      for (auto& u : all_units) {
        if (u->class_name.empty()) continue;
        class_units.push_back(u.get());
      }
      for (auto* u : class_units)
        for (auto& n : u->referenced_names)
          if (n != u->class_name) referenced.insert(n);
      std::vector<std::pair<std::string, std::shared_ptr<InstanceObj>>> qualified;
      for (auto* u : class_units) {
        auto it = interp.globals().vars.find(u->class_name);
        if (it == interp.globals().vars.end()) continue;
        auto* cls = it->second.as<ClassObj>();
        if (!cls || !cls->is_module) continue;
        if (referenced.count(u->class_name)) {
          considered.push_back(u->class_name + " (used by another class)");
          continue;
        }
        Value v = interp.call(it->second, CallArgs{}, cls->span);
        if (interp.exception_pending() || !is_module_instance(v)) {
          std::string why = v.is_unknown() ? v.unknown->reason : "construction failed";
          interp.take_exception("Exception");
          if (why.find("missing required argument") != std::string::npos) why = "its constructor needs arguments";
          considered.push_back(u->class_name + " (" + why + ")");
          continue;
        }
        qualified.emplace_back(u->class_name, std::static_pointer_cast<InstanceObj>(v.obj));
      }
      if (!qualified.empty()) {
        // Several candidates: the one with the most parameters (a model, not a helper layer);
        // ties go to the last defined.
        size_t best = 0;
        int64_t best_count = -1;
        for (size_t q = 0; q < qualified.size(); ++q) {
          int64_t count = 0;
          for (auto& nt : named_tensors(*qualified[q].second, false))
            if (nt.tensor->shape) count = std::min(count, INT64_MAX - nt.tensor->numel()) + nt.tensor->numel();
          if (count >= best_count) {
            best = q;
            best_count = count;
          }
        }
        root = qualified[best].second;
        how = qualified[best].first + "()";
        if (qualified.size() > 1) {
          result.model.notes.push_back("several candidate root classes (" + joined_names(qualified) + "): chose " + how +
                                       ", the one with the most parameters; pass --model to pick another");
        }
      } else {
        result.error = "no model found: no nn.Module instance is assigned at module level, and no nn.Module class "
                       "qualifies as the root (one that no other class uses and whose constructor needs no arguments)";
        if (considered.empty()) result.error += "; the script defines no nn.Module class";
        else {
          result.error += "; considered:";
          for (auto& c : considered) result.error += "\n  - " + c;
        }
        result.error += "\npass --model \"Class(args)\" to choose the root";
      }
    }
  }

  if (root) {
    result.ok = true;
    result.model.model = root->cls->name;
    result.model.root_expression = how;
    auto t0 = std::chrono::steady_clock::now();
    c.walk = named_modules(*root, c.index.module);
    IrBuilder builder{result.model, c.index};
    builder.build(c.walk);
    c.tree_ids.reserve(c.walk.size());
    for (auto& nm : c.walk) c.tree_ids.push_back(nm.module->id);
    std::sort(c.tree_ids.begin(), c.tree_ids.end());
    result.stats.ir_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  c.root = root;
  c.root_by_class = root && options.model_expression.empty() && how.size() > 2 && how.compare(how.size() - 2, 2, "()") == 0;
  c.ok = result.ok;
  c.error = result.error;
  c.built = interp.checkpoint();
  // Kept only where a later extraction may trace on it again (see the end of extract()).
  if (root && options.trace_forward && options.reuse_construction) c.model = result.model;
}

}  // namespace shardlens::python

namespace shardlens::python {

std::vector<std::string> ModelExtractor::search_roots(const std::string& script_file, const ExtractOptions& options) const {
  // The script's folder (absolute, so that sys.path entries the script adds resolve from it), then
  // the root of the package it sits in (the folder above the topmost one with an __init__.py),
  // then the caller's entries, as pyright orders them.
  std::vector<std::string> roots;
  std::error_code ec;
  std::string dir = script_file.empty() ? std::filesystem::current_path(ec).string()
                                        : std::filesystem::path(script_file).parent_path().string();
  if (ec || dir.empty()) dir = ".";
  roots.push_back(dir);
  std::string package_root = dir;
  struct stat st {};
  while (::stat((package_root + "/__init__.py").c_str(), &st) == 0) {
    size_t up = package_root.find_last_of('/');
    if (up == std::string::npos || up == 0) break;
    package_root = package_root.substr(0, up);
  }
  if (package_root != dir) roots.push_back(package_root);
  for (auto& p : options.python_path)
    if (std::find(roots.begin(), roots.end(), p) == roots.end()) roots.push_back(p);
  return roots;
}

bool ModelExtractor::imports_unchanged(const std::vector<std::shared_ptr<const LoadedModule>>& modules) {
  if (modules.empty()) return true;
  if (!loader_) return false;
  for (auto& m : modules)
    if (loader_->load(m->path) != m) return false;  // the loader hands back the same lowering while the file is the same
  return true;
}

std::shared_ptr<LoadedModule> lower_module_text(const std::string& path, const std::string& text) {
  auto out = std::make_shared<LoadedModule>();
  out->path = path;
  out->file = ir::intern_source_file(path);
  ModelExtractor extractor(text, path);
  ExtractStats stats;
  out->units = extractor.units(stats);
  for (auto& u : out->units) {
    u->file = out->file;
    for (auto& [span, message] : u->problems)
      out->problems.push_back({span_in_file(span, u.get()), message});
  }
  for (uint32_t row : extractor.skipped_lines_)
    out->problems.push_back({{row + 1, 0, row + 1, 0, out->file}, "syntax error"});
  return out;
}

}  // namespace shardlens::python
