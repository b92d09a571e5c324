#!/usr/bin/env node
// `vsce package` (offline) and a check of the .vsix it writes: a zip with the manifest, the compiled
// entry point and the bundled vscode-languageclient, without sources, tests or dev dependencies;
// then, unpacked, the entry point loads with only what the package holds (a stand-in for the
// `vscode` module, which VS Code provides) and exports activate/deactivate.
//
// usage: node scripts/test-package.js [OUT_DIR]   (OUT_DIR: where the .vsix goes; default a temp dir)
'use strict';

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const Module = require('node:module');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');

const ROOT = path.resolve(__dirname, '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

// The zip's central directory: name → {method, compressedSize, offset}.
function readZip(file) {
  const buf = fs.readFileSync(file);
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 65535); --i)
    if (buf.readUInt32LE(i) === 0x06054b50) { eocd = i; break; }
  assert.ok(eocd >= 0, `${file} is not a zip (no end of central directory)`);
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries = new Map();
  for (let n = 0; n < count; ++n) {
    assert.equal(buf.readUInt32LE(p), 0x02014b50, 'central directory entry');
    const method = buf.readUInt16LE(p + 10);
    const compressedSize = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const offset = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
    entries.set(name, { method, compressedSize, offset });
    p += 46 + nameLen + extraLen + commentLen;
  }
  const data = (name) => {
    const e = entries.get(name);
    assert.ok(e, `${name} in the zip`);
    const h = e.offset;
    assert.equal(buf.readUInt32LE(h), 0x04034b50, 'local header');
    const start = h + 30 + buf.readUInt16LE(h + 26) + buf.readUInt16LE(h + 28);
    const raw = buf.subarray(start, start + e.compressedSize);
    if (e.method === 0) return raw;
    assert.equal(e.method, 8, `${name}: deflate`);
    return zlib.inflateRawSync(raw);
  };
  return { names: [...entries.keys()], data };
}

let passed = 0;
let failed = 0;
function check(title, f) {
  try {
    f();
    ++passed;
    console.log(`ok - ${title}`);
  } catch (e) {
    ++failed;
    console.log(`not ok - ${title}\n  ${String(e && e.stack || e).split('\n').join('\n  ')}`);
  }
}

const outDir = process.argv[2] ? path.resolve(process.argv[2]) : fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-vsix-'));
fs.mkdirSync(outDir, { recursive: true });
const vsix = path.join(outDir, `${manifest.name}-${manifest.version}.vsix`);
fs.rmSync(vsix, { force: true });

// `npm run package` = vsce package (its vscode:prepublish compiles first).
execFileSync('npm', ['run', '--silent', 'package', '--', '--out', vsix], { cwd: ROOT, stdio: 'inherit' });
assert.ok(fs.existsSync(vsix), `vsce wrote ${vsix}`);
const zip = readZip(vsix);
const names = new Set(zip.names);

check('the .vsix holds the manifest, the entry point, README, CHANGELOG and LICENSE', () => {
  for (const n of ['extension.vsixmanifest', '[Content_Types].xml', 'extension/package.json', 'extension/out/extension.js',
                   'extension/readme.md', 'extension/changelog.md', 'extension/LICENSE.txt'])
    assert.ok(names.has(n), n);
  for (const m of ['mesh', 'settings', 'status', 'commandResult', 'serverCommand']) assert.ok(names.has(`extension/out/${m}.js`), m);
});

check('its package.json is this one', () => {
  const inner = JSON.parse(zip.data('extension/package.json').toString('utf8'));
  for (const k of ['name', 'version', 'publisher', 'main', 'engines', 'activationEvents', 'capabilities', 'contributes'])
    assert.deepEqual(inner[k], manifest[k], k);
  assert.ok(names.has(`extension/${inner.main.replace(/^\.\//, '')}`), 'main is in the package');
});

check('vscode-languageclient and its dependencies are bundled, pinned', () => {
  for (const dep of ['vscode-languageclient', 'vscode-languageserver-protocol', 'vscode-jsonrpc', 'vscode-languageserver-types', 'semver'])
    assert.ok(names.has(`extension/node_modules/${dep}/package.json`), dep);
  assert.ok(names.has('extension/node_modules/vscode-languageclient/node.js'));
  const lc = JSON.parse(zip.data('extension/node_modules/vscode-languageclient/package.json').toString('utf8'));
  assert.equal(lc.version, manifest.dependencies['vscode-languageclient']);
});

check('no sources, tests, source maps or dev dependencies', () => {
  for (const n of names) {
    assert.ok(!n.startsWith('extension/src/'), n);
    assert.ok(!n.startsWith('extension/out/test/'), n);
    assert.ok(!n.startsWith('extension/scripts/'), n);
    assert.ok(!n.endsWith('.map') && !n.endsWith('.ts') && !n.endsWith('.vsix'), n);
    for (const dev of ['typescript', '@vscode/vsce', '@types/', 'secretlint'])
      assert.ok(!n.startsWith(`extension/node_modules/${dev}`), n);
  }
});

check('unpacked, the entry point loads from the package alone', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shardlens-vsix-x-'));
  try {
    for (const n of zip.names) {
      if (n.endsWith('/')) continue;
      const to = path.join(dir, n);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.writeFileSync(to, zip.data(n));
    }
    const ext = path.join(dir, 'extension');
    // Only `vscode` comes from outside (VS Code provides it): a stand-in that accepts any use.
    const stub = new Proxy(function stub() {}, {
      get: (t, k) => (k === 'prototype' ? {} : k === Symbol.toPrimitive ? () => '' : stub),
      apply: () => stub,
      construct: () => ({}),
    });
    const resolve = Module._resolveFilename;
    const loaded = [];
    Module._resolveFilename = function (request, parent, ...rest) {
      if (request === 'vscode') return 'vscode';
      const r = resolve.call(this, request, parent, ...rest);
      if (!Module.isBuiltin(r)) loaded.push(r);
      return r;
    };
    require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: stub };
    try {
      const m = require(path.join(ext, 'out/extension.js'));
      assert.equal(typeof m.activate, 'function');
      assert.equal(typeof m.deactivate, 'function');
    } finally {
      Module._resolveFilename = resolve;
      delete require.cache.vscode;
    }
    assert.ok(loaded.some((f) => f.startsWith(path.join(ext, 'node_modules', 'vscode-languageclient'))), 'languageclient loaded from the package');
    for (const f of loaded) assert.ok(f.startsWith(ext + path.sep), `${f} is inside the package`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

console.log(`${vsix}: ${zip.names.length} files, ${fs.statSync(vsix).size} bytes`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
