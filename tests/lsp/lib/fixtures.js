'use strict';
// Model scripts the sessions open, and small helpers over diagnostics.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { FIXTURES, REPO } = require('./session');

const fixture = (name) => path.join(FIXTURES, name);
const example = (name) => path.join(REPO, 'examples', name);
const testModel = (name) => path.join(REPO, 'tests', 'models', name);
const read = (p) => fs.readFileSync(p, 'utf8');

const byCode = (diags, code) => diags.filter((d) => d.code === code);
const codes = (diags) => diags.map((d) => `${d.code}@${d.range.start.line}`);

// The range lies inside the document and inside the lines it names (UTF-16 or UTF-8 units).
function assertRangeInDocument(doc, range, what = 'range') {
  const n = doc.lineCount;
  for (const [k, p] of [['start', range.start], ['end', range.end]]) {
    assert.ok(Number.isInteger(p.line) && Number.isInteger(p.character) && p.line >= 0 && p.character >= 0,
      `${what}.${k} is not a position: ${JSON.stringify(p)}`);
    assert.ok(p.line < n || (p.line === n && p.character === 0), `${what}.${k} line ${p.line} past the end (${n} lines) of ${path.basename(doc.uri)}`);
    if (p.line < n) {
      const len = doc.encoding === 'utf-8' ? Buffer.byteLength(doc.line(p.line)) : doc.line(p.line).length;
      assert.ok(p.character <= len, `${what}.${k} character ${p.character} past the end of line ${p.line} (${len} ${doc.encoding} units): ${JSON.stringify(doc.line(p.line))}`);
    }
  }
  assert.ok(range.start.line < range.end.line || (range.start.line === range.end.line && range.start.character <= range.end.character),
    `${what} ends before it starts: ${JSON.stringify(range)}`);
}

// The text a range covers.
function textIn(doc, range) {
  return doc.text.slice(doc.offsetAt(range.start), doc.offsetAt(range.end));
}

// Every diagnostic is well formed: shardlens source, a string code, a severity, a range inside
// the document.
function assertWellFormedDiagnostics(doc, diags) {
  for (const d of diags) {
    const w = `diagnostic ${JSON.stringify(d).slice(0, 300)}`;
    assert.equal(d.source, 'shardlens', `${w}: source`);
    assert.equal(typeof d.code, 'string', `${w}: code must be a string`);
    assert.ok([1, 2, 3, 4].includes(d.severity), `${w}: severity`);
    assert.equal(typeof d.message, 'string', `${w}: message`);
    assert.ok(d.message.length > 0, `${w}: empty message`);
    assertRangeInDocument(doc, d.range, w);
  }
}

module.exports = { fixture, example, testModel, read, byCode, codes, assertRangeInDocument, assertWellFormedDiagnostics, textIn };
