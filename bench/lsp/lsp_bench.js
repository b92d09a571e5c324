#!/usr/bin/env node
'use strict';
// Language-server benchmark: `shardlens serve` against pyright on the same ~2,500-line model file
// (bench/models/lsp_bench_model.py) and the same edits, over stdio with vscode-jsonrpc (the
// JSON-RPC library VS Code's client uses).
//
// Per server: initialize, open the file, wait for its first diagnostics; then --edits incremental
// didChange notifications (realistic typing: one character inserted into a config value, a
// comment or an identifier in a forward(), then the insertion reverted), each followed by the
// wait for the publishDiagnostics of that version; then --hovers hovers on layer lines (module
// assignments in __init__ and module calls in forward() of the classes the model uses); server
// memory from /proc/PID/status. Prints p50/p99 of edit->diagnostics and of hover, RSS (VmRSS) and
// peak RSS (VmHWM), the shardlens/pyright ratio of each, and the targets beside them; for
// shardlens also the five slowest edits, each with where it was typed and the server's own logged
// time for that version (extraction: script run, trace; plan), which is where the p99 comes from. Exit status
// 0 even when targets are missed (a benchmark reports figures; it does not assert); 1 only when
// shardlens cannot be benchmarked at all, 2 for bad arguments.
//
// Edits are sent >= --gap ms (default 200) after the previous one and only once its diagnostics
// arrived, so shardlens' debounce is always the fixed isolated-edit delay (10 ms; 40 ms applies
// only to an edit less than 150 ms after the previous one: did_change in
// server/language_server.cpp). Those 10 ms are subtracted from shardlens' edit->diagnostics
// figures; pyright has no debounce to subtract (it re-checks an open file when it changes).
// The edit phase of each server stops after --budget seconds (pyright needs seconds per edit on
// this file); the shardlens/pyright ratios of edit figures are then taken over the edits both
// servers completed (the same edits, in the same order).
//
//   node bench/lsp/lsp_bench.js [--server build/shardlens] [--model FILE] [--edits 200]
//       [--hovers 200] [--gap 200] [--budget 45] [--hover-budget 10] [--no-pyright]
//       [--json OUT.json]        (LSP_BENCH_TRACE=1 logs every edit and publish to stderr)

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const rpc = require('vscode-jsonrpc/node');

const HERE = __dirname;
const REPO = path.resolve(HERE, '..', '..');

const DEBOUNCE_MS = 10;          // server/language_server.cpp did_change: an isolated edit
const BURST_DEBOUNCE_MS = 40;    // ... an edit < 150 ms after the previous one
const BURST_WINDOW_MS = 150;
const TARGETS = { editP99: 30, hoverP99: 5, rssMiB: 100 };
const TRACE = Boolean(process.env.LSP_BENCH_TRACE);
const CLK_TCK = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number((r.stdout || '').trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

// ---- options ---------------------------------------------------------------------------------

function parseArgs(argv) {
  const o = {
    server: process.env.SHARDLENS || path.join(REPO, 'build', 'shardlens'),
    model: path.join(REPO, 'bench', 'models', 'lsp_bench_model.py'),
    edits: 200,
    hovers: 200,
    gap: 200,
    budget: 45,          // seconds per server for the edit phase
    hoverBudget: 10,     // seconds per server for the hover phase
    pyright: true,
    json: null,
    seed: 20240611,
    timeout: 60,         // seconds to wait for one publishDiagnostics or reply
  };
  for (let i = 2; i < argv.length; ++i) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    const num = (v) => {
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0) usage(`${a}: not a non-negative number: ${v}`);
      return n;
    };
    if (a === '--server') o.server = path.resolve(next());
    else if (a === '--model') o.model = path.resolve(next());
    else if (a === '--edits') o.edits = Math.floor(num(next()));
    else if (a === '--hovers') o.hovers = Math.floor(num(next()));
    else if (a === '--gap') o.gap = num(next());
    else if (a === '--budget') o.budget = num(next());
    else if (a === '--hover-budget') o.hoverBudget = num(next());
    else if (a === '--timeout') o.timeout = num(next());
    else if (a === '--seed') o.seed = Math.floor(num(next()));
    else if (a === '--no-pyright') o.pyright = false;
    else if (a === '--json') o.json = path.resolve(next());
    else if (a === '-h' || a === '--help') usage();
    else usage(`unknown argument ${a}`);
  }
  if (o.gap < BURST_WINDOW_MS) {
    console.error(`lsp_bench: warning: --gap ${o.gap} is under ${BURST_WINDOW_MS} ms, so shardlens debounces ${BURST_DEBOUNCE_MS} ms ` +
      `when its analysis is faster than that, but ${DEBOUNCE_MS} ms is what gets subtracted`);
  }
  return o;
}

function usage(problem) {
  const text = fs.readFileSync(__filename, 'utf8').split('\n').filter((l) => l.startsWith('//   ')).join('\n');
  if (problem) console.error(`lsp_bench: ${problem}`);
  console.error(`usage:\n${text.replace(/^\/\/ {3}/gm, '  ')}`);
  process.exit(problem ? 2 : 0);
}

// ---- small helpers ---------------------------------------------------------------------------

const now = () => Number(process.hrtime.bigint()) / 1e6;  // ms, monotonic
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Deterministic PRNG (mulberry32): every run makes the same edits.
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Nearest-rank percentile (p99 of fewer than 100 samples is the maximum).
function percentile(values, p) {
  if (!values || values.length === 0) return NaN;
  const s = [...values].sort((x, y) => x - y);
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

// The server process and every process below it (in case a server starts helpers).
function processTree(pid) {
  const out = [pid];
  for (let i = 0; i < out.length; ++i) {
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${out[i]}/task`); } catch { continue; }
    for (const t of tasks) {
      let children = '';
      try { children = fs.readFileSync(`/proc/${out[i]}/task/${t}/children`, 'utf8'); } catch { continue; }
      for (const c of children.trim().split(/\s+/)) if (c) out.push(Number(c));
    }
  }
  return out;
}

// VmRSS / VmHWM (MiB) summed over the process tree.
function memory(pid) {
  const pids = processTree(pid);
  let rssKiB = 0;
  let hwmKiB = 0;
  for (const p of pids) {
    let text = '';
    try { text = fs.readFileSync(`/proc/${p}/status`, 'utf8'); } catch { continue; }
    const kb = (key) => {
      const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text);
      return m ? Number(m[1]) : 0;
    };
    rssKiB += kb('VmRSS');
    hwmKiB += kb('VmHWM');
  }
  return { rssMiB: rssKiB / 1024, hwmMiB: hwmKiB / 1024, processes: pids.length };
}

// User + system CPU time (ms) of the process tree: less sensitive than wall time to other load.
function cpuMs(pid) {
  let ticks = 0;
  for (const p of processTree(pid)) {
    let stat = '';
    try { stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8'); } catch { continue; }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(f[11]) + Number(f[12]);  // utime, stime (fields 14 and 15)
  }
  return (ticks * 1000) / CLK_TCK;
}

// ---- the document, the edits, the hover positions -------------------------------------------

// JS string indices are UTF-16 code units: the positions below are UTF-16, the LSP default.
class Doc {
  constructor(text) { this.text = text; }
  offsetAt(pos) {
    let off = 0;
    for (let line = 0; line < pos.line; ++line) {
      const nl = this.text.indexOf('\n', off);
      if (nl < 0) throw new Error(`line ${pos.line} past the end`);
      off = nl + 1;
    }
    return off + pos.character;
  }
  apply(range, newText) {
    const a = this.offsetAt(range.start);
    const b = this.offsetAt(range.end);
    this.text = this.text.slice(0, a) + newText + this.text.slice(b);
  }
}

// Where the typing happens: a line (equal to `anchor`, once, in class `cls` or at module level
// for null) and the token in it that gets one character inserted strictly inside it.
const DIGITS = '0123456789';
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const EDIT_SITES = [
  // config values: sizes of the module-level config the model is built from, and defaults it uses
  { kind: 'config value', cls: null, anchor: '    d_ff=5632,', token: '5632', chars: DIGITS },
  { kind: 'config value', cls: null, anchor: '    moe=MoEConfig(num_experts=8, top_k=2, expert_ffn_dim=4096, shared_ffn_dim=4096),', token: 'expert_ffn_dim=4096', skip: 15, chars: DIGITS },
  { kind: 'config value', cls: 'Seq2SeqMoEConfig', anchor: '    max_position_embeddings: int = 8192', token: '8192', chars: DIGITS },
  { kind: 'config value', cls: 'Seq2SeqMoEConfig', anchor: '    rope_theta: float = 500000.0', token: '500000.0', chars: DIGITS },
  // comments
  { kind: 'comment', cls: 'DecoderBlock', anchor: '        # attention over the encoder output', token: 'encoder output', chars: `${LETTERS} ` },
  { kind: 'comment', cls: 'DecoderBlock', anchor: '        # causal self-attention over the target prefix', token: 'target prefix', chars: `${LETTERS} ` },
  { kind: 'comment', cls: 'SparseMoE', anchor: '        # [E, k, N]: which (token, slot) pairs each expert serves', token: 'each expert serves', chars: `${LETTERS} ` },
  // identifiers in forward()
  { kind: 'identifier in forward()', cls: 'SelfAttention', anchor: '        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim)', token: 'q_proj', chars: `${LETTERS}_` },
  { kind: 'identifier in forward()', cls: 'GatedMLP', anchor: '        hidden = self.act_fn(self.gate_proj(x)) * self.up_proj(x)', token: 'gate_proj', chars: `${LETTERS}_` },
  { kind: 'identifier in forward()', cls: 'DecoderBlock', anchor: '        hidden_states = self.cross_attn(hidden_states, encoder_hidden_states, encoder_attention_mask, cache)', token: 'cross_attn', chars: `${LETTERS}_` },
  { kind: 'identifier in forward()', cls: 'SparseMoE', anchor: '        routing_weights, selected_experts, router_probs, router_logits = self.router(flat)', token: 'self.router', skip: 5, chars: `${LETTERS}_` },
];

// The class each line belongs to (null at module level).
function lineOwners(lines) {
  const owner = [];
  let cls = null;
  lines.forEach((l, i) => {
    const m = /^class (\w+)/.exec(l);
    if (m) cls = m[1];
    else if (/^[^\s#]/.test(l)) cls = null;
    owner[i] = cls;
  });
  return owner;
}

function locateSites(text) {
  const lines = text.split('\n');
  const owner = lineOwners(lines);
  return EDIT_SITES.map((s) => {
    const hits = [];
    lines.forEach((l, i) => { if (l === s.anchor && owner[i] === s.cls) hits.push(i); });
    if (hits.length !== 1) {
      throw new Error(`edit site found ${hits.length} times (want 1) in ${s.cls ? `class ${s.cls}` : 'module-level code'} ` +
        `of the model file: ${JSON.stringify(s.anchor)}`);
    }
    const col = lines[hits[0]].indexOf(s.token) + (s.skip || 0);
    return { ...s, line: hits[0], start: col, end: lines[hits[0]].indexOf(s.token) + s.token.length };
  });
}

// n didChange edits: an insertion strictly inside a site's token, then its revert, cycling through
// the sites so that every kind of typing occurs. [{kind, op, range, text}]
function makeEdits(text, n, seed) {
  const rnd = prng(seed);
  const sites = locateSites(text);
  const edits = [];
  for (let i = 0; edits.length < n; ++i) {
    const s = sites[i % sites.length];
    const character = s.start + 1 + Math.floor(rnd() * (s.end - s.start - 1));
    const ch = s.chars[Math.floor(rnd() * s.chars.length)];
    const at = { line: s.line, character };
    edits.push({ kind: s.kind, op: 'insert', range: { start: at, end: at }, text: ch });
    if (edits.length < n)
      edits.push({ kind: s.kind, op: 'revert', range: { start: at, end: { line: s.line, character: character + 1 } }, text: '' });
  }
  return edits;
}

// Module classes the model is built from, by `shardlens inspect --format json` (null if that fails).
function modelClasses(server, file) {
  const r = spawnSync(server, ['inspect', file, '--format', 'json'], { encoding: 'utf8', maxBuffer: 256 << 20, timeout: 120000 });
  if (r.status !== 0) return null;
  try {
    const j = JSON.parse(r.stdout);
    return new Set([j.model, ...j.modules.map((m) => m.class)]);
  } catch {
    return null;
  }
}

// Hover positions on "layer lines" of the classes the model uses: a module assigned in __init__
// (`self.q_proj = nn.Linear(...)`) or called in forward() (`self.q_proj(hidden_states)`), the
// cursor in the middle of the attribute name.
function hoverPositions(text, classes) {
  const out = [];
  const lines = text.split('\n');
  const owner = lineOwners(lines);
  const assign = /^\s+self\.([A-Za-z_]\w*)\s*=\s*(?:nn\.[A-Z]\w*|[A-Z]\w*|build_\w+)\(/;
  const call = /self\.([A-Za-z_]\w*)\(/g;
  let inForward = false;
  lines.forEach((l, i) => {
    if (/^\s+def /.test(l)) inForward = /^\s+def forward\(/.test(l);
    if (!owner[i] || (classes && !classes.has(owner[i]))) return;
    const m = assign.exec(l);
    if (m) {
      const col = l.indexOf(`self.${m[1]}`) + 5;
      out.push({ line: i, character: col + Math.floor(m[1].length / 2), what: `${owner[i]}: self.${m[1]} = ...` });
      return;
    }
    if (!inForward) return;
    for (const c of l.matchAll(call)) {
      out.push({ line: i, character: c.index + 5 + Math.floor(c[1].length / 2), what: `${owner[i]}.forward: self.${c[1]}(...)` });
      break;
    }
  });
  return out;
}

// ---- one LSP session --------------------------------------------------------------------------

class Session {
  constructor(name, command, args, { cwd, settings } = {}) {
    this.name = name;
    this.settings = settings || {};
    this.proc = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    this.pid = this.proc.pid;
    if (TRACE) console.error(`[${name}] pid ${this.pid}`);
    this.stderr = '';
    this.exited = null;
    this.proc.stderr.on('data', (d) => {
      this.stderr += d.toString();
      if (this.stderr.length > (8 << 20)) this.stderr = this.stderr.slice(-(4 << 20));
    });
    this.proc.on('exit', (code, signal) => { this.exited = { code, signal }; });
    this.proc.on('error', (e) => { this.exited = { error: e }; });
    this.conn = rpc.createMessageConnection(new rpc.StreamMessageReader(this.proc.stdout),
      new rpc.StreamMessageWriter(this.proc.stdin));
    this.waiters = [];
    this.publishes = [];   // {t, version, count} of every publishDiagnostics for the document
    this.uri = null;
    this.folders = null;
    this.conn.onNotification('textDocument/publishDiagnostics', (p) => {
      const t = now();
      if (p.uri !== this.uri) return;
      const rec = { t, version: p.version, count: p.diagnostics.length };
      this.publishes.push(rec);
      if (TRACE) console.error(`[${this.name}] ${t.toFixed(1)} publishDiagnostics v${p.version} (${p.diagnostics.length})`);
      for (const w of [...this.waiters]) {
        if (w.test(rec)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(rec);
        }
      }
    });
    this.conn.onNotification(() => {});
    // Server->client requests, answered as an editor would.
    this.conn.onRequest((method, params) => {
      if (method === 'workspace/configuration') {
        return ((params && params.items) || []).map((it) => {
          const v = (it.section || '').split('.').filter(Boolean)
            .reduce((o, k) => (o && typeof o === 'object' ? o[k] : undefined), this.settings);
          return v === undefined ? null : v;
        });
      }
      if (method === 'workspace/workspaceFolders') return this.folders;
      if (method === 'workspace/applyEdit') return { applied: false };
      return null;
    });
    this.conn.onError(() => {});
    this.conn.onClose(() => {});
    this.conn.listen();
  }

  waitForDiagnostics(test, timeoutMs, what) {
    return new Promise((resolve, reject) => {
      const w = { test, resolve: (r) => { clearTimeout(w.timer); resolve(r); } };
      w.timer = setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new Error(`${this.name}: no publishDiagnostics ${what} within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  async request(method, params, timeoutMs) {
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${this.name}: ${method} not answered within ${timeoutMs / 1000} s`)), timeoutMs);
    });
    try {
      return await Promise.race([this.conn.sendRequest(method, params), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async stop() {
    try {
      if (!this.exited) {
        await this.request('shutdown', null, 10000);
        await this.conn.sendNotification('exit');
      }
    } catch { /* killed below */ }
    for (let i = 0; i < 100 && !this.exited; ++i) await sleep(20);
    if (!this.exited) this.proc.kill('SIGKILL');
    this.conn.dispose();
  }
}

function clientCapabilities() {
  return {
    general: { positionEncodings: ['utf-16'] },
    workspace: { configuration: true, workspaceFolders: true, didChangeConfiguration: { dynamicRegistration: true } },
    textDocument: {
      synchronization: { dynamicRegistration: true, didSave: true },
      publishDiagnostics: { relatedInformation: true, versionSupport: true, tagSupport: { valueSet: [1, 2] } },
      hover: { contentFormat: ['markdown', 'plaintext'] },
    },
    window: { workDoneProgress: false },
  };
}

// ---- the measurement -------------------------------------------------------------------------

async function benchServer(spec, o, workspace, fileText, edits, positions) {
  const file = path.join(workspace, path.basename(o.model));
  const uri = pathToFileURL(file).href;
  const s = new Session(spec.name, spec.command, spec.args, { cwd: workspace, settings: spec.settings });
  s.uri = uri;
  s.folders = [{ uri: pathToFileURL(workspace).href, name: path.basename(workspace) }];
  const result = { name: spec.name, command: [spec.command, ...spec.args].join(' '), debounceMs: spec.debounceMs, notes: [] };
  const T = o.timeout * 1000;
  try {
    const tStart = now();
    await s.request('initialize', {
      processId: process.pid,
      clientInfo: { name: 'shardlens-lsp-bench' },
      rootUri: pathToFileURL(workspace).href,
      workspaceFolders: s.folders,
      capabilities: clientCapabilities(),
      initializationOptions: spec.initializationOptions || {},
    }, T);
    result.initializeMs = now() - tStart;
    await s.conn.sendNotification('initialized', {});
    if (spec.settings) await s.conn.sendNotification('workspace/didChangeConfiguration', { settings: spec.settings });

    // open -> first diagnostics
    const doc = new Doc(fileText);
    let version = 1;
    let cpu0 = cpuMs(s.pid);
    const tOpen = now();
    const firstDiags = s.waitForDiagnostics((r) => r.version === undefined || r.version === version, Math.max(T, 180000), 'after didOpen');
    await s.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version, text: doc.text } });
    const first = await firstDiags;
    result.openMs = first.t - tOpen;
    result.openCpuMs = cpuMs(s.pid) - cpu0;
    result.openDiagnostics = first.count;
    if (first.version === undefined) result.notes.push('publishDiagnostics carries no version: the first publish after each edit is taken');
    await sleep(Math.max(o.gap, 300));  // a second publish for the open, if any, arrives now
    result.memAfterOpen = memory(s.pid);

    // edits
    const latencies = [];
    const kinds = [];
    const sites = [];     // per timed edit: {line, character, op, text} (0-based, as sent)
    const versions = [];  // per timed edit: the document version it made
    const pubsPerEdit = [];
    let stopped = null;
    let lastSend = -Infinity;
    const rssTrend = [{ edits: 0, rssMiB: result.memAfterOpen.rssMiB }];
    cpu0 = cpuMs(s.pid);
    const tPhase = now();
    for (const e of edits) {
      if (now() - tPhase > o.budget * 1000) { stopped = `time budget of ${o.budget} s spent`; break; }
      const wait = o.gap - (now() - lastSend);
      if (wait > 0) await sleep(wait);
      ++version;
      const v = version;
      const pubsBefore = s.publishes.length;
      const diags = s.waitForDiagnostics((r) => r.version === undefined || r.version === v, T, `for version ${v}`);
      doc.apply(e.range, e.text);
      const t0 = now();
      lastSend = t0;
      if (TRACE) console.error(`[${s.name}] ${t0.toFixed(1)} didChange v${v} ${e.kind} ${e.op} ${JSON.stringify(e.text)} at ${e.range.start.line}:${e.range.start.character}`);
      await s.conn.sendNotification('textDocument/didChange', {
        textDocument: { uri, version: v },
        contentChanges: [{ range: e.range, text: e.text }],
      });
      let rec;
      try {
        rec = await diags;
      } catch (err) {
        stopped = err.message;
        break;
      }
      latencies.push(rec.t - t0 - spec.debounceMs);
      kinds.push(e.kind);
      sites.push({ line: e.range.start.line, character: e.range.start.character, op: e.op, text: e.text });
      versions.push(v);
      pubsPerEdit.push(s.publishes.length - pubsBefore);
      if (latencies.length % 25 === 0) rssTrend.push({ edits: latencies.length, rssMiB: memory(s.pid).rssMiB });
    }
    await sleep(Math.max(0, o.gap - (now() - lastSend)));
    result.edits = {
      n: latencies.length, planned: edits.length, stopped, phaseSeconds: (now() - tPhase) / 1000,
      cpuMs: cpuMs(s.pid) - cpu0, latencies, kinds, sites, versions, rssTrend,
    };
    const extra = pubsPerEdit.filter((n) => n > 1).length;
    result.publishesPerEdit = { extra, n: pubsPerEdit.length };
    result.memAfterEdits = memory(s.pid);

    // The last edit may have been an insertion (odd count or an early stop): revert it, untimed,
    // so that the hovers see the file's text at the positions computed from it.
    if (doc.text !== fileText) {
      ++version;
      const v = version;
      const diags = s.waitForDiagnostics((r) => r.version === undefined || r.version === v, T, `for version ${v}`);
      const lines = doc.text.split('\n');
      const full = { start: { line: 0, character: 0 }, end: { line: lines.length - 1, character: lines[lines.length - 1].length } };
      await s.conn.sendNotification('textDocument/didChange', { textDocument: { uri, version: v }, contentChanges: [{ range: full, text: fileText }] });
      doc.text = fileText;
      await diags;
    }

    // hovers, one at a time
    const hoverMs = [];
    let withContent = 0;
    cpu0 = cpuMs(s.pid);
    const tHover = now();
    for (let i = 0; i < o.hovers && positions.length; ++i) {
      if (now() - tHover > o.hoverBudget * 1000) {
        result.notes.push(`hover phase stopped after ${i} hovers: time budget of ${o.hoverBudget} s spent`);
        break;
      }
      const p = positions[i % positions.length];
      const t0 = now();
      const h = await s.request('textDocument/hover', { textDocument: { uri }, position: { line: p.line, character: p.character } }, T);
      hoverMs.push(now() - t0);
      if (h && h.contents && (typeof h.contents === 'string' ? h.contents : h.contents.value || h.contents.length)) ++withContent;
    }
    result.hovers = { n: hoverMs.length, positions: positions.length, withContent, cpuMs: cpuMs(s.pid) - cpu0, latencies: hoverMs };
    result.mem = memory(s.pid);
  } catch (err) {
    result.error = err.message;
  } finally {
    result.stderr = s.stderr;
    await s.stop();
  }
  return result;
}

// Per-analysis times the server logs at --log-level info ("analysed URI vN in X ms (PATH; extract
// E [script S, trace T], plan P)"); `parts` is that parenthesis, shortened, where the server gives it.
function serverAnalysisTimes(stderr) {
  const out = [];
  const short = (x) => x.replace(/(\d+\.\d)\d*/g, '$1');
  for (const m of (stderr || '').matchAll(/analysed \S+ v(\d+) in ([\d.]+) ms(?: \(([^)\n]*)\))?/g))
    out.push({ version: Number(m[1]), ms: Number(m[2]), parts: m[3] ? short(m[3]) : '' });
  return out;
}

// ---- report ----------------------------------------------------------------------------------

function fmtMs(v) {
  if (!Number.isFinite(v)) return '-';
  if (Math.abs(v) >= 1000) return `${(v / 1000).toFixed(2)} s`;
  if (Math.abs(v) >= 100) return `${v.toFixed(0)} ms`;
  if (Math.abs(v) >= 10) return `${v.toFixed(1)} ms`;
  return `${v.toFixed(2)} ms`;
}
const fmtMiB = (v) => (Number.isFinite(v) ? `${v.toFixed(1)} MiB` : '-');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(a / b < 0.095 ? 3 : 2)}x` : '-');

function report(o, info, results) {
  const [sl, py] = results;
  const ok = (r) => r && !r.error;
  const L = [];
  const load = os.loadavg();
  L.push('== language-server benchmark (bench/lsp/lsp_bench.js)');
  L.push(`file: ${path.relative(REPO, o.model) || o.model} (${info.lines} lines, ${(info.bytes / 1024).toFixed(0)} KiB)`);
  L.push(`machine: ${os.cpus().length} CPUs (${(os.cpus()[0] || {}).model || '?'}), node ${process.version}; ` +
    `load average ${info.loadBefore.map((x) => x.toFixed(1)).join(' ')} at the start, ${load.map((x) => x.toFixed(1)).join(' ')} at the end` +
    `${Math.max(info.loadBefore[0], load[0]) > os.cpus().length ? ' (busy machine: wall-clock figures are inflated; the CPU times below are not)' : ''}`);
  for (const r of results) if (r) L.push(`${r.name}: ${r.command}`);
  L.push(`edits: ${o.edits} incremental didChange: one character inserted into a config value / a comment / an identifier in forward(), ` +
    `then reverted; sent >= ${o.gap} ms apart and after the previous edit's diagnostics; at most ${o.budget} s of edits per server`);
  L.push(`shardlens debounce: ${DEBOUNCE_MS} ms for an isolated edit (${BURST_DEBOUNCE_MS} ms only for an edit < ${BURST_WINDOW_MS} ms after the previous one, ` +
    `server/language_server.cpp did_change); the edits are >= ${o.gap} ms apart, so ${DEBOUNCE_MS} ms is subtracted from every shardlens ` +
    'edit->diagnostics figure; pyright\'s are raw (no debounce)');
  L.push(`hovers: ${o.hovers} on ${info.positions} layer lines (module assignments in __init__, module calls in forward(), of the ` +
    `classes the model uses${info.classes ? '' : ' -- inspect failed: of every class'}), one at a time`);
  L.push('');

  // ratios of edit figures over the edits both servers completed
  const nMatched = ok(sl) && ok(py) ? Math.min(sl.edits.n, py.edits.n) : 0;
  const matched = (r, p) => percentile(r.edits.latencies.slice(0, nMatched), p);
  const rows = [];
  const row = (label, a, b, r, target, unit, fmt) => rows.push({ label, a: fmt(a), b: fmt(b), r, t: target === null ? '' :
    `target < ${target} ${unit}: ${Number.isFinite(a) ? (a < target ? 'met' : 'MISSED') : '-'}` });
  const A = ok(sl) ? sl : null;
  const B = ok(py) ? py : null;
  const pe = (r, p) => (r ? percentile(r.edits.latencies, p) : NaN);
  const ph = (r, p) => (r ? percentile(r.hovers.latencies, p) : NaN);
  const editRatio = (p) => (nMatched ? ratio(matched(A, p), matched(B, p)) : '-');
  row('open -> first diagnostics', A && A.openMs, B && B.openMs, ratio(A && A.openMs, B && B.openMs), null, '', fmtMs);
  row('edit -> diagnostics p50', pe(A, 50), pe(B, 50), editRatio(50), null, '', fmtMs);
  row('edit -> diagnostics p99', pe(A, 99), pe(B, 99), editRatio(99), TARGETS.editP99, 'ms', fmtMs);
  row('hover p50', ph(A, 50), ph(B, 50), ratio(ph(A, 50), ph(B, 50)), null, '', fmtMs);
  row('hover p99', ph(A, 99), ph(B, 99), ratio(ph(A, 99), ph(B, 99)), TARGETS.hoverP99, 'ms', fmtMs);
  row('RSS at the end (VmRSS)', A && A.mem.rssMiB, B && B.mem.rssMiB, ratio(A && A.mem.rssMiB, B && B.mem.rssMiB), TARGETS.rssMiB, 'MB', fmtMiB);
  row('peak RSS (VmHWM)', A && A.mem.hwmMiB, B && B.mem.hwmMiB, ratio(A && A.mem.hwmMiB, B && B.mem.hwmMiB), TARGETS.rssMiB, 'MB', fmtMiB);
  L.push(`  ${''.padEnd(27)} ${'shardlens'.padStart(10)} ${(B ? 'pyright' : '(pyright)').padStart(10)} ${'ratio'.padStart(8)}   (ratio = shardlens / pyright)`);
  for (const r of rows) L.push(`  ${r.label.padEnd(27)} ${r.a.padStart(10)} ${r.b.padStart(10)} ${r.r.padStart(8)}   ${r.t}`);
  L.push(`  samples: edits ${A ? A.edits.n : 0} / ${B ? B.edits.n : 0}, hovers ${A ? A.hovers.n : 0} / ${B ? B.hovers.n : 0}`);
  if (nMatched && (nMatched < A.edits.n || nMatched < B.edits.n)) {
    L.push(`  edit ratios are over the first ${nMatched} edits, which both servers completed ` +
      `(shardlens over those: p50 ${fmtMs(matched(A, 50))}, p99 ${fmtMs(matched(A, 99))}; pyright: p50 ${fmtMs(matched(B, 50))}, p99 ${fmtMs(matched(B, 99))})`);
  }
  L.push('');

  for (const r of results) {
    if (!r) continue;
    L.push(`-- ${r.name}`);
    if (r.error) {
      L.push(`  error: ${r.error}`);
      const tail = (r.stderr || '').trim().split('\n').slice(-15);
      if (tail.length && tail[0]) L.push(`  stderr (tail):\n${tail.map((l) => `    ${l}`).join('\n')}`);
      continue;
    }
    L.push(`  initialize ${fmtMs(r.initializeMs)}; open -> first diagnostics ${fmtMs(r.openMs)} (${fmtMs(r.openCpuMs)} CPU; ${r.openDiagnostics} diagnostics)`);
    L.push(`  memory: RSS after open ${fmtMiB(r.memAfterOpen.rssMiB)}, after the edits ${fmtMiB(r.memAfterEdits.rssMiB)}, at the end ` +
      `${fmtMiB(r.mem.rssMiB)}; peak ${fmtMiB(r.mem.hwmMiB)} (${r.mem.processes} process${r.mem.processes === 1 ? '' : 'es'})`);
    const e = r.edits;
    if (e.rssTrend.length > 2) {
      const a = e.rssTrend[0];
      const b = e.rssTrend[e.rssTrend.length - 1];
      L.push(`  RSS during the edits: ${e.rssTrend.map((x) => `${x.edits}: ${x.rssMiB.toFixed(0)}`).join(', ')} MiB ` +
        `(${(((b.rssMiB - a.rssMiB) / b.edits) * 100).toFixed(1)} MiB per 100 edits)`);
    }
    L.push(`  edits: ${e.n} of ${e.planned} in ${e.phaseSeconds.toFixed(1)} s${e.stopped ? ` (stopped: ${e.stopped})` : ''}; ` +
      `server CPU ${fmtMs(e.n ? e.cpuMs / e.n : NaN)} per edit${r.debounceMs ? `; figures exclude the ${r.debounceMs} ms debounce` : ''}`);
    const byKind = {};
    e.latencies.forEach((v, i) => { (byKind[e.kinds[i]] = byKind[e.kinds[i]] || []).push(v); });
    for (const [kind, v] of Object.entries(byKind)) {
      L.push(`    ${kind.padEnd(24)} n=${String(v.length).padEnd(4)} p50 ${fmtMs(percentile(v, 50)).padStart(8)}  ` +
        `p99 ${fmtMs(percentile(v, 99)).padStart(8)}  max ${fmtMs(Math.max(...v)).padStart(8)}`);
    }
    if (r.publishesPerEdit.n) {
      L.push(`  publishDiagnostics: ${r.publishesPerEdit.extra ? `${r.publishesPerEdit.extra} of ${r.publishesPerEdit.n} edits were followed by more than one; ` +
        'the first carrying the edit\'s version was taken' : 'exactly one per edit, carrying the edit\'s version'}`);
    }
    L.push(`  hovers: ${r.hovers.n} over ${r.hovers.positions} positions, ${r.hovers.withContent} with content; ` +
      `max ${fmtMs(Math.max(...r.hovers.latencies))}; server CPU ${fmtMs(r.hovers.n ? r.hovers.cpuMs / r.hovers.n : NaN)} per hover`);
    const an = serverAnalysisTimes(r.stderr);
    if (an.length) {
      const open = an.find((x) => x.version === 1);
      const after = an.filter((x) => x.version > 1).map((x) => x.ms);
      L.push(`  server-side analysis times (--log-level info): open ${fmtMs(open ? open.ms : NaN)}; after an edit p50 ${fmtMs(percentile(after, 50))}, ` +
        `p99 ${fmtMs(percentile(after, 99))}, max ${fmtMs(Math.max(...after))} (${after.length} analyses)`);
      if (after.length && e.n) {
        L.push(`  edit -> diagnostics minus analysis, p50: ${fmtMs(percentile(e.latencies, 50) - percentile(after, 50))} ` +
          '(transport, scheduling and serialising, debounce already excluded)');
      }
      // The tail, edit by edit: where each of the slowest went, as the server logged it.
      if (e.sites && e.versions && e.n) {
        const byVersion = new Map(an.map((x) => [x.version, x]));
        const slowest = [...e.latencies.keys()].sort((a, b) => e.latencies[b] - e.latencies[a]).slice(0, 5);
        L.push('  slowest edits (line:column 1-based, what was typed; then the server\'s own time for that version):');
        for (const i of slowest) {
          const site = e.sites[i];
          const typed = site.op === 'insert' ? `inserted ${JSON.stringify(site.text)}` : 'reverted';
          const logged = byVersion.get(e.versions[i]);
          L.push(`    ${fmtMs(e.latencies[i]).padStart(8)}  ${e.kinds[i]} at ${site.line + 1}:${site.character + 1}, ${typed}` +
            (logged ? `; analysed in ${fmtMs(logged.ms)}${logged.parts ? ` (${logged.parts})` : ''}` : ''));
        }
      }
    }
    for (const n of r.notes) L.push(`  note: ${n}`);
  }
  return L.join('\n');
}

// ---- main ------------------------------------------------------------------------------------

async function main() {
  const o = parseArgs(process.argv);
  const t0 = now();
  if (!fs.existsSync(o.server)) {
    console.error(`lsp_bench: no server binary at ${o.server} (build it with \`make build\`, or pass --server)`);
    process.exit(2);
  }
  const fileText = fs.readFileSync(o.model, 'utf8');
  const edits = makeEdits(fileText, o.edits, o.seed);  // fails early when the edit sites are gone
  const classes = modelClasses(o.server, o.model);
  const positions = hoverPositions(fileText, classes);
  const info = {
    lines: fileText.split('\n').length - (fileText.endsWith('\n') ? 1 : 0),
    bytes: Buffer.byteLength(fileText),
    positions: positions.length,
    classes: classes ? [...classes] : null,
    loadBefore: os.loadavg(),
  };

  // One scratch workspace holds a copy of the file: both servers see the same folder, no
  // pyproject.toml of the repository above it, and pyright checks only the open file.
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-lsp-bench-'));
  fs.writeFileSync(path.join(workspace, path.basename(o.model)), fileText);
  const python = ['/usr/bin/python3', 'python3'].find((p) => spawnSync(p, ['-c', 'import sys'], { stdio: 'ignore' }).status === 0) || 'python3';
  fs.writeFileSync(path.join(workspace, 'pyrightconfig.json'), `${JSON.stringify({ include: [path.basename(o.model)] }, null, 2)}\n`);

  const servers = [{ name: 'shardlens', command: o.server, args: ['serve', '--log-level', 'info'], debounceMs: DEBOUNCE_MS }];
  if (o.pyright) {
    const langserver = path.join(HERE, 'node_modules', 'pyright', 'langserver.index.js');
    if (!fs.existsSync(langserver)) {
      console.error(`lsp_bench: pyright is not installed (${langserver}): run \`npm ci --prefix bench/lsp\`, or pass --no-pyright`);
    } else {
      servers.push({
        name: `pyright ${JSON.parse(fs.readFileSync(path.join(HERE, 'node_modules', 'pyright', 'package.json'), 'utf8')).version}`,
        command: process.execPath,  // node itself, so that the PID measured is the language server's
        args: [langserver, '--stdio'],
        debounceMs: 0,
        // what VS Code sends by default, with the interpreter that has torch
        settings: { python: { pythonPath: python, analysis: { diagnosticMode: 'openFilesOnly', autoSearchPaths: true, useLibraryCodeForTypes: true } } },
      });
    }
  }

  const results = [];
  try {
    for (const spec of servers) {
      process.stderr.write(`lsp_bench: ${spec.name} ...\n`);
      results.push(await benchServer(spec, o, workspace, fileText, edits, positions));
    }
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
  if (results.length < 2) results.push(null);

  console.log(report(o, info, results));
  console.log(`\nbenchmark run time ${((now() - t0) / 1000).toFixed(1)} s`);
  if (o.json) {
    const slim = results.map((r) => (r ? { ...r, stderr: undefined, analysisTimes: serverAnalysisTimes(r.stderr) } : r));
    fs.writeFileSync(o.json, JSON.stringify({ options: o, file: info, results: slim }, null, 1));
  }
  if (results[0].error) process.exitCode = 1;
}

if (require.main === module) {
  main().catch((e) => {
    console.error(`lsp_bench: ${e.stack || e}`);
    process.exit(1);
  });
}

module.exports = { Session, Doc, makeEdits, hoverPositions, locateSites, modelClasses, percentile, memory, cpuMs, clientCapabilities };
