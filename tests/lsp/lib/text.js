'use strict';
// A text document as the client holds it, with LSP positions in UTF-16 code units (what
// JavaScript strings index) or UTF-8 bytes, and TextEdit application written out here on
// purpose: the tests must not trust a library to agree with the server about positions.

const assert = require('node:assert/strict');

// Line starts per LSP: a line ends at \n, \r\n or \r.
function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13 /* \r */) {
      if (text.charCodeAt(i + 1) === 10) i++;
      starts.push(i + 1);
    } else if (c === 10 /* \n */) {
      starts.push(i + 1);
    }
  }
  return starts;
}

// The text of line `line` without its line terminator.
function lineText(text, line, starts = lineStarts(text)) {
  assert.ok(line >= 0 && line < starts.length, `line ${line} outside the document (${starts.length} lines)`);
  let end = line + 1 < starts.length ? starts[line + 1] : text.length;
  while (end > starts[line] && (text[end - 1] === '\n' || text[end - 1] === '\r')) end--;
  return text.slice(starts[line], end);
}

function utf8Length(s) {
  return Buffer.byteLength(s, 'utf8');
}

function isHighSurrogate(c) { return c >= 0xd800 && c <= 0xdbff; }

// UTF-16 column inside `line` for a character count in `encoding` units.
function columnToUtf16(line, character, encoding) {
  if (encoding === 'utf-16') {
    if (character > line.length) return line.length; // LSP: past the end means the end
    assert.ok(!(character > 0 && isHighSurrogate(line.charCodeAt(character - 1))),
      `position splits a surrogate pair: character ${character} in ${JSON.stringify(line)}`);
    return character;
  }
  if (encoding === 'utf-8') {
    let bytes = 0;
    for (let i = 0; i < line.length;) {
      if (bytes === character) return i;
      const cp = line.codePointAt(i);
      const units = cp > 0xffff ? 2 : 1;
      const b = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      assert.ok(bytes + b <= character || bytes === character,
        `utf-8 position ${character} splits a character in ${JSON.stringify(line)}`);
      bytes += b;
      i += units;
    }
    return line.length; // at or past the end
  }
  throw new Error(`unknown position encoding ${encoding}`);
}

// Character count (in `encoding` units) of the first `utf16` code units of `line`.
function utf16ToColumn(line, utf16, encoding) {
  if (encoding === 'utf-16') return utf16;
  if (encoding === 'utf-8') return utf8Length(line.slice(0, utf16));
  throw new Error(`unknown position encoding ${encoding}`);
}

class TextDocument {
  constructor(uri, text, { version = 1, languageId = 'python', encoding = 'utf-16' } = {}) {
    this.uri = uri;
    this.text = text;
    this.version = version;
    this.languageId = languageId;
    this.encoding = encoding;
  }

  get lineCount() { return lineStarts(this.text).length; }

  line(n) { return lineText(this.text, n); }

  // Offset (UTF-16 index into this.text) of an LSP position.
  offsetAt(pos) {
    const starts = lineStarts(this.text);
    assert.ok(Number.isInteger(pos.line) && Number.isInteger(pos.character) && pos.line >= 0 && pos.character >= 0,
      `bad position ${JSON.stringify(pos)}`);
    if (pos.line >= starts.length) return this.text.length; // LSP: past the last line means the end
    return starts[pos.line] + columnToUtf16(lineText(this.text, pos.line, starts), pos.character, this.encoding);
  }

  positionAt(offset) {
    const starts = lineStarts(this.text);
    let line = 0;
    while (line + 1 < starts.length && starts[line + 1] <= offset) line++;
    const lt = lineText(this.text, line, starts);
    const col = Math.min(offset - starts[line], lt.length);
    return { line, character: utf16ToColumn(lt, col, this.encoding) };
  }

  // Range of the n-th (0-based) occurrence of `needle`, in this document's encoding.
  rangeOf(needle, { occurrence = 0, after = 0 } = {}) {
    let at = this.text.indexOf(needle, after);
    for (let k = 0; k < occurrence && at >= 0; k++) at = this.text.indexOf(needle, at + 1);
    assert.ok(at >= 0, `${JSON.stringify(needle)} (occurrence ${occurrence}) not found in ${this.uri}`);
    return { start: this.positionAt(at), end: this.positionAt(at + needle.length) };
  }

  // 0-based line of the first line that contains `needle` (or matches a RegExp).
  lineOf(needle, { occurrence = 0 } = {}) {
    const lines = this.text.split(/\r\n|\r|\n/);
    let seen = 0;
    for (let i = 0; i < lines.length; i++) {
      const hit = needle instanceof RegExp ? needle.test(lines[i]) : lines[i].includes(needle);
      if (hit && seen++ === occurrence) return i;
    }
    assert.fail(`no line with ${needle} in ${this.uri}`);
  }

  // Applies one LSP TextEdit[] (all positions refer to the text before any of them; they must
  // not overlap). Returns the new text without changing this document.
  applyEdits(edits) {
    const resolved = edits.map((e, i) => {
      assert.ok(e && e.range && typeof e.newText === 'string', `malformed TextEdit #${i}: ${JSON.stringify(e)}`);
      const start = this.offsetAt(e.range.start);
      const end = this.offsetAt(e.range.end);
      assert.ok(start <= end, `TextEdit #${i} has its end before its start: ${JSON.stringify(e.range)}`);
      return { start, end, newText: e.newText, i };
    });
    // Stable: inserts at the same offset keep their order in the array.
    resolved.sort((a, b) => a.start - b.start || a.end - b.end || a.i - b.i);
    for (let k = 1; k < resolved.length; k++) {
      assert.ok(resolved[k].start >= resolved[k - 1].end,
        `TextEdits overlap: ${JSON.stringify(edits[resolved[k - 1].i].range)} and ${JSON.stringify(edits[resolved[k].i].range)}`);
    }
    let out = '';
    let at = 0;
    for (const r of resolved) {
      out += this.text.slice(at, r.start) + r.newText;
      at = r.end;
    }
    return out + this.text.slice(at);
  }

  // One incremental change as didChange sends it: {range, text}; applied in place.
  applyChange(change) {
    if (!change.range) {
      this.text = change.text;
      return;
    }
    this.text = this.applyEdits([{ range: change.range, newText: change.text }]);
  }
}

// The TextEdit[] a WorkspaceEdit makes to `uri` (changes or documentChanges), checking the
// version a TextDocumentEdit names against the document's.
function editsForDocument(workspaceEdit, doc) {
  assert.ok(workspaceEdit && typeof workspaceEdit === 'object', `WorkspaceEdit expected, got ${JSON.stringify(workspaceEdit)}`);
  const out = [];
  let touched = false;
  if (workspaceEdit.documentChanges) {
    for (const dc of workspaceEdit.documentChanges) {
      assert.ok(!dc.kind, `unexpected resource operation ${JSON.stringify(dc)}`);
      if (dc.textDocument.uri !== doc.uri) continue;
      if (dc.textDocument.version !== null && dc.textDocument.version !== undefined) {
        assert.equal(dc.textDocument.version, doc.version, `TextDocumentEdit for ${doc.uri} names version ${dc.textDocument.version}, the document is at ${doc.version}`);
      }
      touched = true;
      out.push(...dc.edits);
    }
  }
  if (workspaceEdit.changes && workspaceEdit.changes[doc.uri]) {
    assert.ok(!workspaceEdit.documentChanges, 'WorkspaceEdit has both changes and documentChanges');
    touched = true;
    out.push(...workspaceEdit.changes[doc.uri]);
  }
  assert.ok(touched, `WorkspaceEdit does not touch ${doc.uri}: ${JSON.stringify(workspaceEdit).slice(0, 500)}`);
  return out;
}

module.exports = { TextDocument, lineStarts, lineText, utf8Length, editsForDocument, columnToUtf16, utf16ToColumn };
