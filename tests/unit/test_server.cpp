// The server's analysis pieces without the protocol: settings, annotation checks, incremental
// re-analysis, hovers and lenses over a real fixture.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "session/document_analysis.h"
#include "lsp_features.h"
#include "plan/plan_output.h"
#include "settings.h"
#include "test_helpers.h"

using namespace shardlens;
using namespace shardlens::server;
using shardlens::session::AnnotationSite;
using shardlens::session::Finding;

namespace {

const Finding* finding(const DocumentAnalysis& a, const std::string& code, const std::string& near_text) {
  size_t at = a.text.find(near_text);
  for (auto& f : a.findings)
    if (f.code == code && at != std::string::npos && f.start <= at && at < std::max(f.end, f.start + 1)) return &f;
  return nullptr;
}

std::string codes(const DocumentAnalysis& a) {
  std::string s;
  for (auto& f : a.findings) s += f.code + ": " + f.message + "\n";
  return s;
}

}  // namespace

TEST_CASE("settings: valid values apply, bad ones are reported and ignored") {
  Settings s;
  std::vector<std::string> problems;
  s.apply({{"meshes", {"t3k", "8x4"}}, {"phase", "prefill"}, {"batch", 4}, {"model", "GPT(GPTConfig())"}}, problems);
  CHECK(problems.empty());
  CHECK(s.meshes == std::vector<std::string>{"t3k", "8x4"});
  CHECK(s.phase == "prefill");
  CHECK(s.batch == 4);
  s.apply({{"meshes", {"3x"}}, {"phase", "train"}, {"batch", -1}, {"dtype", 16}}, problems);
  CHECK(problems.size() == 4);
  CHECK(s.meshes == std::vector<std::string>{"t3k", "8x4"});
  CHECK(s.phase == "prefill");
  CHECK(s.plan_options().meshes.size() == 2);
}

TEST_CASE("settings: inputs take NAME=SHAPE[:DTYPE] as --input does; seq set is remembered") {
  Settings s;
  std::vector<std::string> problems;
  CHECK_FALSE(s.seq_set);
  s.apply({{"inputs", {"input_ids=1x128:int64", "t=1"}}, {"seq", 512}}, problems);
  CHECK(problems.empty());
  CHECK(s.inputs == std::vector<std::string>{"input_ids=1x128:int64", "t=1"});
  CHECK(s.seq_set);
  s.apply({{"inputs", {"input_ids=1x:int64"}}}, problems);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("shardlens.inputs") != std::string::npos);
  CHECK(s.inputs.size() == 2);
}

TEST_CASE("settings: [tool.shardlens] in pyproject.toml") {
  std::vector<std::string> problems;
  auto j = read_pyproject_settings(
      "[project]\nname = \"x\"\nmeshes = [\"nope\"]\n\n[tool.shardlens]  # ours\nmeshes = [\n  \"1x8\",  # n300 pairs\n  'galaxy',\n]\n"
      "batch = 1_024\nphase = \"decode\"\nstrategy='tensor'\nbogus = {a = 1}\n[tool.other]\nbatch = 3\n",
      problems);
  CHECK(j["meshes"] == nlohmann::json({"1x8", "galaxy"}));
  CHECK(j["batch"] == 1024);
  CHECK(j["phase"] == "decode");
  CHECK(j["strategy"] == "tensor");
  CHECK(!j.contains("name"));
  CHECK(problems.size() == 1);  // the inline table
}

TEST_CASE("settings: a workspace file cannot allow execution, ask for the exact graph or choose the interpreter") {
  std::vector<std::string> problems;
  auto j = read_pyproject_settings(
      "[tool.shardlens]\nmeshes = [\"t3k\"]\nallowExecution = true\nexactGraph = true\npython = \"./evil/python3\"\n", problems);
  REQUIRE(problems.empty());
  Settings s;
  s.apply(j, problems, SettingsSource::Workspace);
  CHECK(s.meshes == std::vector<std::string>{"t3k"});  // analysis options still apply
  CHECK(!s.allow_execution);
  CHECK(!s.exact_graph);
  CHECK(s.python.empty());
  CHECK(problems.size() == 3);
  // The user's own settings can.
  problems.clear();
  s.apply(j, problems, SettingsSource::User);
  CHECK((s.allow_execution && s.exact_graph && s.python == "./evil/python3"));
  CHECK(problems.empty());
}

TEST_CASE("settings: the memory budget is the user's to change, not a workspace file's") {
  std::vector<std::string> problems;
  Settings s;
  CHECK(s.memory_budget_mib == 256);
  s.apply(nlohmann::json{{"memoryBudgetMiB", 100000}}, problems, SettingsSource::Workspace);
  CHECK(s.memory_budget_mib == 256);
  CHECK(problems.size() == 1);
  problems.clear();
  s.apply(nlohmann::json{{"memoryBudgetMiB", 64}}, problems, SettingsSource::User);
  CHECK(s.memory_budget_mib == 64);
  CHECK(s.to_json()["memoryBudgetMiB"] == 64);
  s.apply(nlohmann::json{{"memoryBudgetMiB", -1}}, problems, SettingsSource::User);
  CHECK(s.memory_budget_mib == 64);
  CHECK(problems.size() == 1);
}

TEST_CASE("settings: pyproject.toml is looked for up to the workspace folder, never above it") {
  namespace fs = std::filesystem;
  fs::path top = fs::temp_directory_path() / ("shardlens-pyproject-" + std::to_string(::getpid()));
  fs::create_directories(top / "ws" / "pkg" / "models");
  fs::create_directories(top / "ws" / "sub");
  fs::create_directories(top / "elsewhere");
  auto touch = [](const fs::path& p) { std::ofstream(p) << "[tool.shardlens]\n"; };
  touch(top / "pyproject.toml");  // above the workspace: a stranger's
  const std::string ws = (top / "ws").string();
  CHECK(find_pyproject((top / "ws" / "pkg" / "models").string(), {ws}).empty());
  touch(top / "ws" / "pyproject.toml");
  CHECK(find_pyproject((top / "ws" / "pkg" / "models").string(), {ws}) == (top / "ws" / "pyproject.toml").string());
  touch(top / "ws" / "pkg" / "pyproject.toml");
  CHECK(find_pyproject((top / "ws" / "pkg" / "models").string(), {ws}) == (top / "ws" / "pkg" / "pyproject.toml").string());
  // The deepest folder holding the document bounds the walk.
  CHECK(find_pyproject((top / "ws" / "sub").string(), {ws, (top / "ws" / "sub").string() + "/"}).empty());
  // Outside every folder (or with none): the document's own directory only.
  CHECK(find_pyproject((top / "elsewhere").string(), {ws}).empty());
  CHECK(find_pyproject((top / "ws" / "pkg" / "models").string(), {}).empty());
  CHECK(find_pyproject((top / "ws" / "pkg").string(), {}) == (top / "ws" / "pkg" / "pyproject.toml").string());
  fs::remove_all(top);
}

TEST_CASE("annotations: mark_sharding calls are resolved through loops and checked against the plan") {
  std::string text = test::fixture("gpt.py") +
                     "\nimport numpy as np\nimport torch_xla.distributed.spmd as xs\n"
                     "mesh = xs.Mesh(np.array(range(8)), (1, 8), (\"batch\", \"model\"))\n"
                     "for layer in model.h:\n"
                     "    xs.mark_sharding(layer.attn.proj.weight, mesh, (\"model\", None))  # disagrees\n"
                     "    xs.mark_sharding(layer.mlp.up.weight, mesh, (\"model\", None))  # agrees\n"
                     "xs.mark_sharding(model.h[0].mlp.down.weight, mesh, (None, \"tensor\"))  # axis\n"
                     "xs.mark_sharding(model.h[-1].mlp.down.weight, mesh, (None,))  # rank\n"
                     "xs.mark_sharding(model.ln_f.weight, mesh, (\"model\", None))  # rank too\n"
                     "xs.mark_sharding(model.h[1].attn.missing, mesh, (None, \"model\"))  # unknown\n"
                     "xs.mark_sharding(model.wpe.weight, mesh, (\"model\", None))  # 1024 rows: divides\n";
  DocumentAnalyzer analyzer;
  Settings settings;
  auto a = analyzer.analyze(1, "gpt.py", text, {}, true, settings);
  REQUIRE(a->plan.ok);
  INFO(codes(*a));
  REQUIRE(a->annotations.size() == 7);
  CHECK(a->annotations[0].parameters.size() == 24);  // one per block through the loop
  CHECK(a->annotations[0].parameters[0] == "h.0.attn.proj.weight");
  CHECK(a->annotations[3].parameters == std::vector<std::string>{"h.23.mlp.down.weight"});

  const Finding* disagree = finding(*a, "annotation-disagrees", "layer.attn.proj.weight");
  REQUIRE(disagree);
  CHECK(disagree->message.find("all-gather") != std::string::npos);  // the column split needs a gather
  REQUIRE(disagree->fix);
  CHECK(disagree->fix->text == "(None, \"model\")");
  CHECK(text.substr(disagree->fix->start, disagree->fix->end - disagree->fix->start) == "(\"model\", None)");
  CHECK(!finding(*a, "annotation-disagrees", "layer.mlp.up.weight"));
  CHECK(finding(*a, "annotation-unknown-axis", "model.h[0].mlp.down.weight"));
  CHECK(finding(*a, "annotation-rank", "model.h[-1].mlp.down.weight"));
  CHECK(finding(*a, "annotation-rank", "model.ln_f.weight"));
  const Finding* unknown = finding(*a, "annotation-unknown-tensor", "model.h[1].attn.missing");
  REQUIRE(unknown);
  REQUIRE(unknown->fix);
  CHECK(text.substr(unknown->fix->start, unknown->fix->end - unknown->fix->start).find("missing") != std::string::npos);
  CHECK(!finding(*a, "annotation-indivisible", "model.wpe.weight"));
}

TEST_CASE("annotations: a split that does not divide is an error; load_shard_spec entries are checked too") {
  std::string text = test::fixture("gpt.py") +
                     "\ndef load_shard_spec(model):\n"
                     "    specs = {}\n"
                     "    for block in model.h:\n"
                     "        specs[block.attn.proj.weight] = (None, \"model\")\n"
                     "    specs[model.wte.weight] = (\"model\", None)\n"
                     "    return specs\n";
  DocumentAnalyzer analyzer;
  Settings settings;
  settings.meshes = {"1x5"};
  auto a = analyzer.analyze(1, "gpt.py", text, {}, true, settings);
  REQUIRE(a->plan.ok);
  INFO(codes(*a));
  REQUIRE(a->annotations.size() == 2);
  CHECK(a->annotations[0].kind == AnnotationSite::ShardSpecEntry);
  CHECK(a->annotations[0].parameters.size() == 24);
  CHECK(finding(*a, "annotation-indivisible", "specs[model.wte.weight]"));  // 50304 rows over 5
  CHECK(finding(*a, "annotation-indivisible", "specs[block.attn.proj.weight]"));  // 2048 over 5
  // The planner's per-block divisibility findings are folded into one per source location.
  size_t divisibility = 0;
  for (auto& f : a->findings) divisibility += f.code == "divisibility-features";
  CHECK(divisibility < 10);  // 73 unfolded
}

TEST_CASE("analyzer: edits applied incrementally give the same analysis as a fresh start; comment edits reuse it") {
  std::string text = test::fixture("gpt.py");
  DocumentAnalyzer incremental, fresh;
  Settings settings;
  auto first = incremental.analyze(1, "gpt.py", text, {}, true, settings);
  REQUIRE(first->plan.ok);
  size_t at = text.find("n_head: int = 16");
  REQUIRE(at != std::string::npos);
  at += std::string("n_head: int = ").size();
  std::string edited = text;
  edited.replace(at, 2, "12");
  auto second = incremental.analyze(2, "gpt.py", edited, {{at, at + 2, "12"}}, false, settings);
  auto reference = fresh.analyze(2, "gpt.py", edited, {}, true, settings);
  CHECK(second->findings.size() == reference->findings.size());
  CHECK(codes(*second) == codes(*reference));
  // Wrong edits (the text does not match) fall back to a fresh start instead of analysing garbage.
  auto third = incremental.analyze(3, "gpt.py", text, {{0, 0, "zzz"}}, false, settings);
  CHECK(codes(*third) == codes(*first));

  // An edit in a comment changes no code: the model and plan are reused, and equal a fresh start's.
  size_t comment = text.find("# ");
  REQUIRE(comment != std::string::npos);
  std::string commented = text;
  commented.insert(comment + 2, "note: ");
  auto fourth = incremental.analyze(4, "gpt.py", commented, {{comment + 2, comment + 2, "note: "}}, false, settings);
  CHECK(fourth->shared_model == third->shared_model);
  REQUIRE(fourth->plan.ok);
  auto commented_reference = fresh.analyze(4, "gpt.py", commented, {}, true, settings);
  CHECK(codes(*fourth) == codes(*commented_reference));
  auto plan_json = [](const DocumentAnalysis& a) {
    auto j = plan::to_json(a.plan, a.model(), a.options);
    j.erase("plan_ms");  // the one figure that differs: the reused plan took no time
    return j;
  };
  CHECK(plan_json(*fourth) == plan_json(*commented_reference));
  // Other settings re-plan; a code edit extracts again.
  Settings other = settings;
  other.meshes = {"1x4"};
  auto fifth = incremental.analyze(5, "gpt.py", commented, {}, false, other);
  CHECK(fifth->shared_model != fourth->shared_model);
  CHECK(fifth->plan.meshes.at(0).mesh.shape_string() == "1x4");
  size_t n_head = commented.find("n_head: int = 16") + std::string("n_head: int = ").size();
  std::string recoded = commented;
  recoded.replace(n_head, 2, "12");
  auto sixth = incremental.analyze(6, "gpt.py", recoded, {{n_head, n_head + 2, "12"}}, false, other);
  CHECK(sixth->shared_model != fifth->shared_model);
}

TEST_CASE("analyzer: a keystroke taken back or an undo reuses that text's analysis; what follows is analysed afresh") {
  const std::string text = test::fixture("gpt.py");
  DocumentAnalyzer analyzer, fresh;
  Settings settings;
  auto plan_json = [](const DocumentAnalysis& a) {
    auto j = plan::to_json(a.plan, a.model(), a.options);
    j.erase("plan_ms");
    return j;
  };
  auto v1 = analyzer.analyze(1, "gpt.py", text, {}, true, settings);
  REQUIRE(v1->plan.ok);
  const size_t at = text.find("n_head: int = 16") + std::string("n_head: int = ").size();
  std::string twelve = text;
  twelve.replace(at, 2, "12");
  auto v2 = analyzer.analyze(2, "gpt.py", twelve, {{at, at + 2, "12"}}, false, settings);
  REQUIRE(codes(*v2) != codes(*v1));  // 12 heads on 8 devices: the edit matters
  // Taken back: the first analysis, under the new version.
  auto v3 = analyzer.analyze(3, "gpt.py", text, {{at, at + 2, "16"}}, false, settings);
  CHECK(v3->version == 3);
  CHECK(v3->shared_model == v1->shared_model);
  CHECK(codes(*v3) == codes(*v1));
  // Redone: the second.
  auto v4 = analyzer.analyze(4, "gpt.py", twelve, {{at, at + 2, "12"}}, false, settings);
  CHECK(v4->shared_model == v2->shared_model);
  auto v5 = analyzer.analyze(5, "gpt.py", text, {{at, at + 2, "16"}}, false, settings);
  CHECK(v5->shared_model == v1->shared_model);
  // The extractor last ran on "12", the analysis is of "16": a comment added to "16" changes no
  // code relative to the analysis, which holds.
  const size_t comment = text.find("# ") + 2;
  std::string commented = text;
  commented.insert(comment, "note: ");
  auto v5c = analyzer.analyze(5, "gpt.py", commented, {{comment, comment, "note: "}}, false, settings);
  CHECK(v5c->shared_model == v1->shared_model);
  CHECK(codes(*v5c) == codes(*fresh.analyze(5, "gpt.py", commented, {}, true, settings)));
  // Back to "16" without the comment (reused), then a comment added to "12": no code changed
  // relative to the extractor's last run of the script, but the last analysis is of other code: it
  // is analysed again, and matches a fresh start.
  auto v5d = analyzer.analyze(5, "gpt.py", text, {{comment, comment + 6, ""}}, false, settings);
  CHECK(v5d->shared_model == v1->shared_model);
  std::string twelve_commented = twelve;
  twelve_commented.insert(comment, "note: ");
  auto v6 = analyzer.analyze(6, "gpt.py", twelve_commented, {{at, at + 2, "12"}, {comment, comment, "note: "}}, false, settings);
  auto reference = fresh.analyze(6, "gpt.py", twelve_commented, {}, true, settings);
  CHECK(v6->shared_model != v1->shared_model);
  CHECK(codes(*v6) == codes(*reference));
  CHECK(plan_json(*v6) == plan_json(*reference));
  // Other settings: no reuse.
  Settings other = settings;
  other.meshes = {"1x4"};
  auto v7 = analyzer.analyze(7, "gpt.py", text, {{comment, comment + 6, ""}, {at, at + 2, "16"}}, false, other);
  CHECK(v7->shared_model != v1->shared_model);
  CHECK(v7->plan.meshes.at(0).mesh.shape_string() == "1x4");
}

TEST_CASE("analyzer: an analysis pushed out of the recent ones is freed by drop_retired, after the analysis that pushed it") {
  const std::string text = test::fixture("gpt.py");
  DocumentAnalyzer analyzer;
  Settings settings;
  const size_t at = text.find("n_head: int = 16") + std::string("n_head: int = ").size();
  auto with_heads = [&](const char* heads) {
    std::string t = text;
    t.replace(at, 2, heads);
    return t;
  };
  auto v1 = analyzer.analyze(1, "gpt.py", text, {}, true, settings);
  REQUIRE(v1->plan.ok);
  std::weak_ptr<const ir::ModelIR> first_model = v1->shared_model;
  v1.reset();  // from here on only the analyzer's recent analyses hold it
  int version = 2;
  for (const char* heads : {"12", "20", "24"}) {
    auto a = analyzer.analyze(version++, "gpt.py", with_heads(heads), {{at, at + 2, heads}}, false, settings);
    REQUIRE(a->shared_model != nullptr);
    CHECK_FALSE(first_model.expired());  // held by the recent analyses, or retired but not yet freed
    analyzer.drop_retired();
  }
  // Three newer texts pushed it out; drop_retired freed it.
  CHECK(first_model.expired());
}

TEST_CASE("features: hover on a layer names its layout and collectives; lenses sit on the classes") {
  std::string text = test::fixture("gpt.py");
  DocumentAnalyzer analyzer;
  Settings settings;
  auto a = analyzer.analyze(1, "gpt.py", text, {}, true, settings);
  REQUIRE(a->plan.ok);
  auto enc = protocol::PositionEncoding::Utf16;
  auto hover = hover_json(*a, text.find("self.proj = nn.Linear"), enc);
  REQUIRE(hover.is_object());
  std::string md = hover["contents"]["value"];
  CHECK(md.find("h.*.attn.proj") != std::string::npos);
  CHECK(md.find("row") != std::string::npos);
  CHECK(md.find("all-reduce") != std::string::npos);
  CHECK(hover_json(*a, text.find("\n\n") + 1, enc).is_null());
  auto class_hover = hover_json(*a, text.find("class Block"), enc);
  REQUIRE(class_hover.is_object());
  CHECK(class_hover["contents"]["value"].get<std::string>().find("× 24") != std::string::npos);
  auto lenses = code_lenses_json(*a, "file:///gpt.py", enc);
  bool block_lens = false;
  for (auto& l : lenses) {
    std::string title = l["command"]["title"];
    if (title.find("2 all-reduce") != std::string::npos && title.find("× 24 blocks") != std::string::npos) block_lens = true;
  }
  CHECK(block_lens);
}

TEST_CASE("features: hover on a module call in forward() describes the called layer") {
  std::string text = test::fixture("gpt.py");
  DocumentAnalyzer analyzer;
  Settings settings;
  auto a = analyzer.analyze(1, "gpt.py", text, {}, true, settings);
  REQUIRE(a->plan.ok);
  size_t call = text.find("self.qkv(x)");
  REQUIRE(call != std::string::npos);
  auto hover = hover_json(*a, call, protocol::PositionEncoding::Utf16);
  REQUIRE(hover.is_object());
  std::string md = hover["contents"]["value"];
  CHECK(md.find("h.*.attn.qkv") != std::string::npos);
  CHECK(md.find("column_segments") != std::string::npos);
  CHECK(md.find("[768, 2048]") != std::string::npos);  // 6144 rows: three segments, each split 8 ways
}

TEST_CASE("analyzer: planning cancelled for a newer version leaves nothing stale behind") {
  std::string text = test::fixture("gpt.py");
  Settings settings;
  DocumentAnalyzer analyzer, fresh;
  int asked = 0;
  const DocumentAnalyzer::CancelCheck cancel_now = [&] {
    ++asked;
    return true;
  };
  // Cancelled while planning: the edit reached the extractor, no analysis comes out.
  CHECK_THROWS_AS(analyzer.analyze(1, "gpt.py", text, {}, true, settings, cancel_now), plan::PlanCancelled);
  CHECK(asked == 1);

  // The next version goes on from the cancelled one's text and equals a fresh analysis.
  size_t at = text.find("n_head: int = 16") + std::string("n_head: int = ").size();
  std::string edited = text;
  edited.replace(at, 2, " 4");
  auto second = analyzer.analyze(2, "gpt.py", edited, {{at, at + 2, " 4"}}, false, settings);
  auto reference = fresh.analyze(2, "gpt.py", edited, {}, true, settings);
  REQUIRE(second->plan.ok);
  CHECK(codes(*second) == codes(*reference));
  CHECK(!second->complete);

  // A completion cancelled gives nothing; asked again without a newer version it completes.
  CHECK(analyzer.complete(second, cancel_now) == nullptr);
  auto completed = analyzer.complete(second, [] { return false; });
  REQUIRE(completed);
  CHECK(completed->complete);
  CHECK(!completed->plan.meshes.at(0).alternatives.empty());

  // A version cancelled after a code edit must not lend its model to the next edit that changes
  // no code: the comment edit below is analysed against the cancelled version's code.
  std::string back = edited;
  back.replace(at, 2, "16");
  CHECK_THROWS_AS(analyzer.analyze(3, "gpt.py", back, {{at, at + 2, "16"}}, false, settings, cancel_now), plan::PlanCancelled);
  size_t comment = back.find("# ");
  REQUIRE(comment != std::string::npos);
  std::string commented = back;
  commented.insert(comment + 2, "note: ");
  auto fourth = analyzer.analyze(4, "gpt.py", commented, {{comment + 2, comment + 2, "note: "}}, false, settings);
  auto fourth_reference = fresh.analyze(4, "gpt.py", commented, {}, true, settings);
  CHECK(fourth->shared_model != second->shared_model);
  CHECK(codes(*fourth) == codes(*fourth_reference));
  // (4 heads do not divide the 8 devices, 16 do: the two versions' findings differ.)
  CHECK(codes(*fourth) != codes(*second));
}
