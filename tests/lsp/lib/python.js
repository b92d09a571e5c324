'use strict';
// Python side of the checks: does an edited script still parse, and what does it mark when it
// runs under real PyTorch (meta device) with the recording torch_xla stand-in (harness/run_sharded.py).

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const PYTHON = process.env.SHARDLENS_TORCH_PYTHON || '/usr/bin/python3';
const HARNESS = path.join(__dirname, '..', 'harness', 'run_sharded.py');

function tempScript(text, name = 'model.py') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-lsp-'));
  const f = path.join(dir, name);
  fs.writeFileSync(f, text);
  return { dir, file: f, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

// {ok, error}: the exact check of the brief, ast.parse of the file's text.
function parses(text) {
  const t = tempScript(text);
  try {
    const r = spawnSync(PYTHON, ['-c', 'import ast,sys; f=sys.argv[1]; ast.parse(open(f).read())', t.file],
      { encoding: 'utf8', timeout: 60000 });
    return { ok: r.status === 0, error: (r.stderr || '') + (r.error ? String(r.error) : '') };
  } finally {
    t.cleanup();
  }
}

// Runs the harness; returns its JSON or throws with the script's traceback and the text around
// the failing line.
function runSharded(text, { name = 'model.py', devices = 8, model, applySharding, meshShape, loadShardSpec } = {}) {
  const t = tempScript(text, name);
  try {
    const args = [HARNESS, t.file, '--devices', String(devices)];
    if (model) args.push('--model', model);
    if (applySharding) args.push('--apply-sharding', applySharding, '--mesh-shape', meshShape || `1x${devices}`);
    if (loadShardSpec) args.push('--load-shard-spec');
    const r = spawnSync(PYTHON, args, { encoding: 'utf8', timeout: 120000, maxBuffer: 64 << 20 });
    if (r.status !== 0) {
      const m = /File "[^"]*model\.py", line (\d+)/.exec(r.stderr || '');
      let around = '';
      if (m) {
        const lines = text.split('\n');
        const n = Number(m[1]);
        around = lines.slice(Math.max(0, n - 4), n + 2).map((l, i) => `${Math.max(1, n - 3) + i}: ${l}`).join('\n');
      }
      throw new Error(`running the annotated script under torch failed (status ${r.status}):\n${(r.stderr || '').slice(-3000)}${around ? `\n--- around line ${m[1]} ---\n${around}` : ''}`);
    }
    return JSON.parse(r.stdout);
  } finally {
    t.cleanup();
  }
}

function normSpec(spec) {
  if (spec === null || spec === undefined) return null;
  return spec.map((e) => (Array.isArray(e) ? (e.length === 1 ? e[0] : e) : e));
}

const isSharded = (spec) => Array.isArray(spec) && spec.some((e) => e !== null);

// Compares what the script marked with what the plan (shardlens.showPlan) says for its first
// mesh. Returns a list of problems (empty when they agree).
function compareMarks(run, plan, { meshIndex = 0 } = {}) {
  const problems = [];
  const m = plan.meshes[meshIndex];
  const planSpecs = new Map(m.parameters.map((p) => [p.name, normSpec(p.spec)]));
  const expected = new Map([...planSpecs].filter(([, s]) => isSharded(s)));
  const got = new Map();
  for (const mk of run.marks) {
    const spec = normSpec(mk.spec);
    if (mk.name === null) {
      problems.push(`marks a tensor of shape [${mk.shape}] that is not a parameter of the model with ${JSON.stringify(spec)}`);
      continue;
    }
    if (JSON.stringify(mk.mesh.shape) !== JSON.stringify(m.shape) || JSON.stringify(mk.mesh.axes) !== JSON.stringify(m.axes)) {
      problems.push(`${mk.name}: marked on a mesh ${JSON.stringify(mk.mesh)}, the plan's is ${JSON.stringify({ shape: m.shape, axes: m.axes })}`);
    }
    if (got.has(mk.name) && JSON.stringify(got.get(mk.name)) !== JSON.stringify(spec)) {
      problems.push(`${mk.name}: marked twice with different specs ${JSON.stringify(got.get(mk.name))} and ${JSON.stringify(spec)}`);
    }
    got.set(mk.name, spec);
  }
  for (const [name, spec] of got) {
    if (!planSpecs.has(name)) {
      problems.push(`${name}: marked ${JSON.stringify(spec)} but the plan does not list it`);
    } else if (isSharded(spec) && !expected.has(name)) {
      problems.push(`${name}: marked ${JSON.stringify(spec)}, the plan's spec is ${JSON.stringify(planSpecs.get(name))}`);
    } else if (!isSharded(spec) && planSpecs.get(name) !== null && isSharded(planSpecs.get(name))) {
      problems.push(`${name}: marked replicated ${JSON.stringify(spec)}, the plan's spec is ${JSON.stringify(planSpecs.get(name))}`);
    }
  }
  for (const [name, spec] of expected) {
    if (!got.has(name)) problems.push(`${name}: not marked, the plan shards it ${JSON.stringify(spec)}`);
    else if (JSON.stringify(got.get(name)) !== JSON.stringify(spec)) {
      problems.push(`${name}: marked ${JSON.stringify(got.get(name))}, the plan says ${JSON.stringify(spec)}`);
    }
  }
  return problems;
}

module.exports = { PYTHON, parses, runSharded, compareMarks, normSpec, isSharded, tempScript };
