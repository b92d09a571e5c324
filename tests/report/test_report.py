#!/usr/bin/env python3
"""End-to-end checks of `shardlens report` against `shardlens plan --format json`.

For every case (the shared fixtures, a multi-mesh plan, a model whose plan falls back for memory):
  - the report and its SVG are written, and writing again gives the same bytes (deterministic);
  - the seven sections of SHARDING.md section 8 exist, in order;
  - each mesh's CCL budget table has a Total row equal to the plan's totals (count and exact bytes),
    and its rows add up to it;
  - column->row pairs are listed and marked in the module tree, and every pair is real in the plan
    (column / column_segments weights feeding row weights); expected pairs are present;
  - citations: arXiv links for the papers the layouts rest on, a numbered Sources list of links;
  - a Mermaid flowchart exists; the SVG is well-formed XML with one panel per mesh and one bar per
    component with collectives (the budget table's components), bytes matching the plan;
  - compiler limits: the knowledge base (analysis/report/compiler_limits.json) is re-matched here
    independently from the plan JSON, and every limit whose pattern the plan hits is reported as hit;
    case-specific limits are checked by id;
  - the Memory fallback section appears exactly when a mesh plan falls back.
Usage: test_report.py --shardlens BIN [--fixtures DIR]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SECTIONS = [
    "1. Model & target",
    "2. Architecture",
    "3. Recommended strategy",
    "4. Per-component design",
    "5. CCL budget",
    "6. Bottlenecks & compiler limitations",
    "7. Sources",
]
UNITS = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
SVG_NS = "{http://www.w3.org/2000/svg}"

failures = []


def check(cond, case, what):
    if not cond:
        failures.append(f"{case}: {what}")
    return cond


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def parse_bytes(text):
    m = re.search(r"([\d.]+) (B|KiB|MiB|GiB)", text)
    return float(m.group(1)) * UNITS[m.group(2)] if m else None


def section(md, title):
    """Text of the `## title` section (up to the next `## `)."""
    start = md.find("\n## " + title)
    if start < 0:
        return ""
    end = md.find("\n## ", start + 1)
    return md[start: end if end >= 0 else len(md)]


def subsections(text, level="### "):
    """{heading: body} of the sub-sections at `level` inside `text`."""
    out = {}
    parts = re.split(r"\n(?=" + re.escape(level) + ")", text)
    for p in parts:
        if p.startswith(level):
            head, _, body = p.partition("\n")
            out[head[len(level):].strip()] = body
    return out


def table_rows(text):
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|") or set(line.replace("|", "").strip()) <= set("-: "):
            continue
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def unescape(s):
    return re.sub(r"\\(.)", r"\1", s).strip("`")


def mesh_label(m):
    return f"{m['shape'][0]}x{m['shape'][1]}"


def pattern_regex(pattern):
    return re.compile("^" + re.escape(pattern).replace(r"\*", r"\d+") + r"\.weight$")


# ---------------------------------------------------------------------------------------------
def kb_hits(kb, plan):
    """Limit ids whose plan-level conditions (diagnostic / collective / layout) the plan JSON meets."""
    hits = set()
    for limit in kb["limits"]:
        for cond in limit["when"]:
            if "diagnostic" in cond:
                if any(d["code"] in cond["diagnostic"] for d in plan["diagnostics"]):
                    hits.add(limit["id"])
            elif "collective" in cond:
                c = cond["collective"]
                for m in plan["meshes"]:
                    for col in m["collectives"]:
                        if c.get("kinds") and col["kind"] not in c["kinds"]:
                            continue
                        roles = re.search(r"\(([^()]*)\)\s*$", col["tensor"])
                        have = [r.strip() for r in roles.group(1).split(",")] if roles else []
                        if not all(r in have for r in c.get("tensor_roles", [])):
                            continue
                        if c.get("at_contains") and not any(s in col["at"] for s in c["at_contains"]):
                            continue
                        hits.add(limit["id"])
            elif "layout" in cond:
                if any(p["layout"] in cond["layout"] for m in plan["meshes"] for p in m["parameters"]):
                    hits.add(limit["id"])
    return hits


def check_case(binary, case, script, args, tmp, kb, expect):
    out_dir = os.path.join(tmp, case)
    md_path = os.path.join(out_dir, "sharding_analysis.md")
    svg_path = os.path.join(out_dir, "sharding_analysis.ccl_bytes.svg")
    printed = run([binary, "report", script, *args, "-o", out_dir + "/"]).split()
    check(printed == [md_path, svg_path], case, f"prints the paths it wrote, got {printed}")
    md = open(md_path, encoding="utf-8").read()
    svg_text = open(svg_path, encoding="utf-8").read()
    # Deterministic: a second run writes the same bytes.
    again = os.path.join(tmp, case + "-again", "sharding_analysis.md")
    run([binary, "report", script, *args, "-o", again])
    check(open(again, encoding="utf-8").read() == md, case, "the Markdown is deterministic")
    check(open(again.replace(".md", ".ccl_bytes.svg"), encoding="utf-8").read() == svg_text, case, "the SVG is deterministic")
    plan = json.loads(run([binary, "plan", script, *args, "--format", "json"]))

    # Sections, in order.
    heads = [l[3:].strip() for l in md.splitlines() if l.startswith("## ")]
    check(len(heads) == len(SECTIONS) and all(h.startswith(s) for h, s in zip(heads, SECTIONS)), case,
          f"sections in order: {heads}")

    # §1 names every mesh.
    s1 = section(md, "1. Model & target")
    for m in plan["meshes"]:
        check(f"| {mesh_label(m)}" in s1, case, f"§1 lists mesh {mesh_label(m)}")
    check(plan["workload"]["dtype"] in s1, case, "§1 states the dtype")

    # §5: one budget per mesh, Total == plan totals.
    s5 = section(md, "5. CCL budget")
    subs = subsections(s5)
    budgets = {}
    for m in plan["meshes"]:
        label = mesh_label(m)
        body = next((b for h, b in subs.items() if h.split()[0] == label), None)
        if not check(body is not None, case, f"§5 has a budget for {label}"):
            continue
        rows = table_rows(body)
        header, data = rows[0], rows[1:]
        check(header[:4] == ["Component", "Collective", "Axis", "Count"], case, f"budget header {header}")
        total = [r for r in data if r[0] == "**Total**"]
        if not check(len(total) == 1, case, f"{label}: one Total row"):
            continue
        t = total[0]
        count = int(t[3].strip("*"))
        exact = int(re.search(r"\(([\d,]+) B\)", t[5]).group(1).replace(",", ""))
        check(count == m["totals"]["collectives"], case, f"{label}: Total count {count} == plan {m['totals']['collectives']}")
        check(exact == m["totals"]["bytes"], case, f"{label}: Total bytes {exact} == plan {m['totals']['bytes']}")
        parts = [r for r in data if r[0] != "**Total**"]
        check(sum(int(r[3]) for r in parts) == count, case, f"{label}: rows add up to the Total count")
        row_bytes = sum(parse_bytes(r[5]) for r in parts)
        check(abs(row_bytes - exact) <= 0.01 * exact + 1024, case, f"{label}: rows add up to the Total bytes ({row_bytes} vs {exact})")
        comps = {}
        for r in parts:
            comps[unescape(r[0])] = comps.get(unescape(r[0]), 0) + parse_bytes(r[5])
        budgets[label] = comps
    check("sharding_analysis.ccl_bytes.svg" in s5, case, "§5 links the chart")

    # §2: pairs listed, marked in the tree, real in the plan.
    s2 = section(md, "2. Architecture")
    pairs = re.findall(r"^- \*\*(P\d+)\*\*: (.*?) \((?:column|column_segments)\) → `([^`]+)` \(row\)", s2, re.M)
    params = {p["name"]: p["layout"] for p in plan["meshes"][0]["parameters"]}
    found = []
    for tag, cols, row in pairs[: len(pairs) if len(plan["meshes"]) == 1 else None]:
        cols = [unescape(c.strip()) for c in cols.split(",")]
        found.append((tuple(cols), row))
        check(f"[{tag} column" in s2 or f", {tag} column" in s2, case, f"{tag} column marked in the tree")
        check(f"{tag} row]" in s2 or f"{tag} row," in s2, case, f"{tag} row marked in the tree")
    if len(plan["meshes"]) == 1:
        for cols, row in found:
            for c in cols:
                rx = pattern_regex(c)
                check(any(rx.match(n) and l in ("column", "column_segments") for n, l in params.items()), case,
                      f"pair column {c} is column-parallel in the plan")
            rx = pattern_regex(row)
            check(any(rx.match(n) and l == "row" for n, l in params.items()), case, f"pair row {row} is row-parallel in the plan")
        has_col = any(l in ("column", "column_segments") for l in params.values())
        has_row = any(l == "row" for l in params.values())
        if has_col and has_row:
            check(found, case, "the plan has column and row layouts: at least one pair is marked")
    for cols, row in expect.get("pairs", []):
        check((tuple(cols), row) in found, case, f"pair {cols} -> {row} in {found}")
    check("```mermaid\nflowchart" in md, case, "a Mermaid flowchart")

    # Citations.
    s7 = section(md, "7. Sources")
    sources = re.findall(r"^\d+\. \[[^\]]+\]\((https?://[^)]+)\)", s7, re.M)
    check(len(sources) >= 3, case, f"Sources lists links ({len(sources)})")
    check("https://arxiv.org/abs/" in md, case, "an arXiv link")
    layouts = {p["layout"] for m in plan["meshes"] for p in m["parameters"]}
    if layouts & {"column", "row", "column_segments"}:
        check("https://arxiv.org/abs/1909.08053" in sources, case, "Megatron-LM (arXiv 1909.08053) in Sources")
    for url in set(re.findall(r"\]\((https?://[^)]+)\)", md)):
        check(url in sources, case, f"every cited link is in Sources: {url}")

    # SVG: well-formed, one panel per mesh, one bar per component with collectives.
    try:
        root = ET.fromstring(svg_text.encode("utf-8"))
    except ET.ParseError as e:
        check(False, case, f"SVG is well-formed XML: {e}")
        root = None
    if root is not None:
        check(root.tag == SVG_NS + "svg", case, f"SVG root element {root.tag}")
        panels = {g.get("data-mesh"): g for g in root.iter(SVG_NS + "g") if g.get("class") == "mesh"}
        for m in plan["meshes"]:
            label = mesh_label(m)
            g = panels.get(label)
            if not check(g is not None, case, f"SVG panel for {label}"):
                continue
            bars = [b for b in g.iter(SVG_NS + "g") if b.get("class") == "bar"]
            names = [b.get("data-component") for b in bars]
            check(len(names) == len(set(names)), case, f"{label}: one bar per component {names}")
            check(set(names) == set(budgets.get(label, {})), case, f"{label}: bars {names} == budget components {sorted(budgets.get(label, {}))}")
            check(sum(int(b.get("data-bytes")) for b in bars) in range(m["totals"]["bytes"] - len(bars), m["totals"]["bytes"] + len(bars) + 1),
                  case, f"{label}: bar bytes add up to the plan's")
            for b in bars:
                check(b.find(SVG_NS + "rect") is not None, case, f"{label}: bar {b.get('data-component')} has a rect")

    # Compiler limits: what the plan JSON hits must be reported as hit.
    s6 = section(md, "6. Bottlenecks & compiler limitations")
    runs_into = s6.split("#### Limits this plan runs into", 1)[-1].split("#### Limits that shaped", 1)[0]
    shaped = s6.split("#### Limits that shaped", 1)[-1].split("### Memory", 1)[0]
    titles = {l["id"]: l["title"] for l in kb["limits"]}
    for lid in kb_hits(kb, plan):
        check(titles[lid] in runs_into.replace("\\", ""), case, f"limit {lid} hit by the plan is reported as hit")
    for lid in expect.get("hits", []):
        check(titles[lid] in runs_into.replace("\\", ""), case, f"expected limit {lid} among the hits")
    for lid in expect.get("shaped", []):
        check(titles[lid] in shaped.replace("\\", ""), case, f"expected limit {lid} among the limits that shaped the plan")
    for lid in expect.get("not", []):
        check(titles[lid] not in s6.replace("\\", ""), case, f"limit {lid} not reported")
    for l in kb["limits"]:
        if titles[l["id"]] in s6.replace("\\", ""):
            for t in l["tracking"]:
                check(t["url"] in md, case, f"limit {l['id']}: tracking link {t['url']}")

    # Memory fallback section exactly when a plan falls back.
    fallback = any(m["memory_fallback"] for m in plan["meshes"])
    check(("### Memory fallback" in s6) == fallback, case, f"Memory fallback section present == plan falls back ({fallback})")
    if fallback:
        check("slower per forward" in s6, case, "the fallback section says what it costs")
    if "fallback" in expect:
        check(fallback == expect["fallback"], case, f"the plan falls back == {expect['fallback']}")

    # Per-component design names every budget component.
    s4 = section(md, "4. Per-component design")
    for label, comps in budgets.items():
        for comp in comps:
            check(f"### `{comp}`" in s4, case, f"§4 has a section for {comp}")
    return md


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shardlens", required=True)
    ap.add_argument("--fixtures", default=os.path.join(ROOT, "..", "shared", "fixtures"))
    a = ap.parse_args()
    kb = json.load(open(os.path.join(ROOT, "analysis", "report", "compiler_limits.json"), encoding="utf-8"))
    fx = lambda name: os.path.join(a.fixtures, name)
    cases = [
        ("gpt", fx("gpt.py"), [], {"pairs": [(("h.*.attn.qkv",), "h.*.attn.proj"), (("h.*.mlp.up",), "h.*.mlp.down")],
                                   "hits": ["reshape-constraint", "lm-head-gather"], "fallback": False}),
        ("llama", fx("llama.py"), [], {"pairs": [(("layers.*.attention.wq", "layers.*.attention.wk", "layers.*.attention.wv"), "layers.*.attention.wo"),
                                                 (("layers.*.feed_forward.w1", "layers.*.feed_forward.w3"), "layers.*.feed_forward.w2")],
                                       "not": ["uneven-sharding"]}),
        ("llama-1x32", fx("llama.py"), ["--mesh", "1x32"], {"hits": ["uneven-sharding"]}),
        ("moe", fx("moe.py"), [], {}),
        ("moe-prefill", fx("moe.py"), ["--phase", "prefill", "--seq", "128", "--prefill-weights", "own"], {"shaped": ["all-to-all-p2p"]}),
        ("mlp", fx("mlp.py"), [], {"pairs": [(("fc1",), "fc2")], "not": ["uneven-sharding", "conv-spatial-sharding"]}),
        ("tinynet", fx("tinynet.py"), [], {"pairs": [], "not": ["lm-head-gather"]}),
        ("vae_block", fx("vae_block.py"), [], {"hits": ["image-activation-gather"], "shaped": ["conv-spatial-sharding"]}),
        ("llama-3-meshes", fx("llama.py"), ["--mesh", "t3k", "--mesh", "galaxy", "--mesh", "n300"], {}),
        ("fallback", os.path.join(HERE, "huge_embedding.py"), ["--mesh", "t3k"], {"fallback": True}),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for name, script, args, expect in cases:
            try:
                md = check_case(a.shardlens, name, script, args, tmp, kb, expect)
                if name == "tinynet":
                    check("None: the plan uses no pattern" in md, name, "no limits hit")
            except Exception as e:  # a crash or a bad exit is a failure of this case, not of the run
                failures.append(f"{name}: {e}")
        # `-o -` prints the Markdown (same sections, no chart link).
        out = run([a.shardlens, "report", fx("mlp.py"), "-o", "-"])
        check(out.startswith("# Sharding analysis") and "## 7. Sources" in out and ".svg" not in out, "stdout", "-o - prints the report")
        # Bad input: usage errors exit 2, missing files 1.
        for argv, code in ((["report"], 2), (["report", fx("mlp.py"), "--format", "json"], 2), (["report", "/nonexistent.py"], 1),
                           (["report", fx("mlp.py"), "--mesh", "3x3x3"], 2), (["report", fx("mlp.py"), "-o", "/proc/shardlens/x.md"], 1)):
            p = subprocess.run([a.shardlens, *argv], capture_output=True, text=True)
            check(p.returncode == code and p.stderr.strip() and not p.stdout, "cli", f"{argv} exits {code} with a message (got {p.returncode})")
    if failures:
        print(f"{len(failures)} failure(s):")
        for f in failures:
            print("  " + f)
        return 1
    print(f"report: {len(cases)} cases ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
