'use strict';
// One whole LSP session against the real `shardlens serve`: spawn, initialize with the client
// capabilities VS Code sends, documents, server→client requests answered as an editor would,
// shutdown, exit, exit code. Built on vscode-languageserver-protocol / vscode-jsonrpc (the
// library VS Code's own client uses); every message in both directions is also recorded so that
// the tests can check "exactly one reply per request" and "stdout carries protocol only".

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const rpc = require('vscode-jsonrpc/node');
const lsp = require('vscode-languageserver-protocol/node');
const { TextDocument, editsForDocument } = require('./text');

const SHARDLENS = process.env.SHARDLENS || path.resolve(__dirname, '../../../build/shardlens');
// Sanitizer builds are several times slower: SHARDLENS_LSP_TIMEOUT_SCALE=4 stretches every wait.
const SCALE = Number(process.env.SHARDLENS_LSP_TIMEOUT_SCALE || (process.env.ASAN_OPTIONS ? 4 : 1));
const T = (ms) => ms * SCALE;

const REPO = path.resolve(__dirname, '../../..');
const FIXTURES = process.env.SHARDLENS_FIXTURES || path.resolve(REPO, '../shared/fixtures');

function fileUri(p) { return pathToFileURL(path.resolve(p)).href; }

// What VS Code 1.9x sends (trimmed to what matters here), plus positionEncodings.
function clientCapabilities({ encodings = ['utf-16'], configuration = true } = {}) {
  return {
    general: { positionEncodings: encodings, markdown: { parser: 'marked', version: '1.1.0' },
               regularExpressions: { engine: 'ECMAScript', version: 'ES2020' } },
    workspace: {
      applyEdit: true,
      workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'],
                       failureHandling: 'textOnlyTransactional', normalizesLineEndings: true,
                       changeAnnotationSupport: { groupsOnLabel: true } },
      didChangeConfiguration: { dynamicRegistration: true },
      didChangeWatchedFiles: { dynamicRegistration: true, relativePatternSupport: true },
      executeCommand: { dynamicRegistration: true },
      configuration,
      workspaceFolders: true,
      codeLens: { refreshSupport: true },
      diagnostics: { refreshSupport: true },
    },
    textDocument: {
      synchronization: { dynamicRegistration: true, willSave: true, willSaveWaitUntil: true, didSave: true },
      publishDiagnostics: { relatedInformation: true, versionSupport: false, tagSupport: { valueSet: [1, 2] },
                            codeDescriptionSupport: true, dataSupport: true },
      hover: { dynamicRegistration: true, contentFormat: ['markdown', 'plaintext'] },
      codeLens: { dynamicRegistration: true },
      codeAction: {
        dynamicRegistration: true, isPreferredSupport: true, disabledSupport: true, dataSupport: true,
        honorsChangeAnnotations: false,
        resolveSupport: { properties: ['edit'] },
        codeActionLiteralSupport: { codeActionKind: { valueSet: ['', 'quickfix', 'refactor', 'refactor.extract',
          'refactor.inline', 'refactor.rewrite', 'source', 'source.organizeImports'] } },
      },
    },
    window: { workDoneProgress: true, showMessage: { messageActionItem: { additionalPropertiesSupport: true } },
              showDocument: { support: true } },
  };
}

// `shardlens serve --listen`'s stderr: "shardlens: token T" then "shardlens: listening on HOST:PORT"
// (HOST as bound: 127.0.0.1 or [::1]). undefined until both lines are there.
function listeningLine(stderr) {
  const m = /^shardlens: listening on (\[[^\]]+\]|[^:\s]+):(\d+)$/m.exec(stderr);
  const t = /^shardlens: token ([0-9a-f]+)$/m.exec(stderr);
  if (!m || !t) return undefined;
  return { host: m[1].replace(/^\[|\]$/g, ''), printedHost: m[1], port: Number(m[2]), token: t[1] };
}

class ServerProcess {
  // args: extra arguments after `serve`.
  static spawn(args = [], env = {}) {
    assert.ok(fs.existsSync(SHARDLENS), `no shardlens binary at ${SHARDLENS} (set SHARDLENS)`);
    const proc = spawn(SHARDLENS, ['serve', ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    const sp = new ServerProcess();
    sp.proc = proc;
    sp.stderr = '';
    sp.exit = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (d) => { sp.stderr += d; });
    proc.on('error', (e) => { sp.spawnError = e; });
    proc.stdin.on('error', () => {}); // EPIPE after the server exits is reported through the exit code
    return sp;
  }

  async waitExit(ms = T(5000)) {
    let timer;
    const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve(null), ms); });
    const r = await Promise.race([this.exit, timeout]);
    clearTimeout(timer);
    if (r === null) {
      this.proc.kill('SIGKILL');
      await this.exit;
    }
    return r; // null: did not exit by itself
  }
}

class Session {
  // opts: initializationOptions, encodings, configuration (object of settings answered for
  // section "shardlens", or a function(item) -> value), transport 'stdio' | 'tcp', args, rootPath,
  // workspaceConfiguration (client capability, default true); over TCP: listen (the --listen
  // address, default 127.0.0.1:0), sendToken (default true).
  static async start(opts = {}) {
    const s = new Session(opts);
    await s._connect();
    await s.initialize();
    return s;
  }

  constructor(opts) {
    this.opts = opts;
    this.received = [];          // every message from the server, in order
    this.sentRequests = new Map(); // id -> method (client -> server requests)
    this.responses = new Map();  // id -> count of responses from the server
    this.strayResponses = [];    // responses to ids we never sent
    this.serverRequests = [];    // {method, params}
    this.notifications = [];     // {method, params}
    this.publishes = [];         // publishDiagnostics params, in order
    this.showMessages = [];
    this.logErrors = [];         // vscode-jsonrpc logger.error + reader/writer errors
    this.docs = new Map();
    this.settings = opts.configuration ?? null;
    this._waiters = new Set();
  }

  get encoding() { return this.initializeResult?.capabilities?.positionEncoding || 'utf-16'; }

  async _connect() {
    const transport = this.opts.transport || 'stdio';
    if (transport === 'stdio') {
      this.server = ServerProcess.spawn(this.opts.args || [], this.opts.env);
      this.reader = new rpc.StreamMessageReader(this.server.proc.stdout);
      this.writer = new rpc.StreamMessageWriter(this.server.proc.stdin);
    } else {
      this.server = ServerProcess.spawn(['--listen', this.opts.listen || '127.0.0.1:0', ...(this.opts.args || [])], this.opts.env);
      this.stdout = '';
      this.server.proc.stdout.setEncoding('utf8');
      this.server.proc.stdout.on('data', (d) => { this.stdout += d; });
      const listening = await this._waitFor(() => listeningLine(this.server.stderr), T(5000),
        'the "shardlens: listening on HOST:PORT" line on stderr', this.server.proc.stderr);
      Object.assign(this, listening); // host, port, token
      assert.ok(this.port > 0 && this.port < 65536, `bad port ${this.port}`);
      this.socket = net.connect({ host: this.host, port: this.port });
      await new Promise((resolve, reject) => { this.socket.once('connect', resolve); this.socket.once('error', reject); });
      this.reader = new rpc.SocketMessageReader(this.socket);
      this.writer = new rpc.SocketMessageWriter(this.socket);
    }
    this.reader.onError((e) => this.logErrors.push(`reader: ${e.message || e}`));
    this.writer.onError(([e]) => this.logErrors.push(`writer: ${e && e.message}`));
    const origListen = this.reader.listen.bind(this.reader);
    this.reader.listen = (cb) => origListen((msg) => { this._onRaw(msg); cb(msg); setImmediate(() => this._poke()); });
    const origWrite = this.writer.write.bind(this.writer);
    this.writer.write = (msg) => {
      if (msg.id !== undefined && msg.method !== undefined) this.sentRequests.set(msg.id, msg.method);
      return origWrite(msg);
    };
    const logger = {
      error: (m) => this.logErrors.push(m), warn: () => {}, info: () => {}, log: () => {},
    };
    this.conn = lsp.createProtocolConnection(this.reader, this.writer, logger);
    this._installHandlers();
    this.conn.listen();
  }

  _onRaw(msg) {
    this.received.push(msg);
    if (msg.id !== undefined && msg.method === undefined) {
      if (!this.sentRequests.has(msg.id)) this.strayResponses.push(msg);
      this.responses.set(msg.id, (this.responses.get(msg.id) || 0) + 1);
      if (msg.result === undefined && msg.error === undefined) this.logErrors.push(`response ${msg.id} has neither result nor error`);
      if (msg.result !== undefined && msg.error !== undefined) this.logErrors.push(`response ${msg.id} has both result and error`);
    }
    // recorded here, in arrival order, rather than in connection handlers (which run later)
    if (msg.method === 'textDocument/publishDiagnostics' && msg.id === undefined) this.publishes.push(msg.params);
    if (msg.method === 'window/showMessage' && msg.id === undefined) this.showMessages.push(msg.params);
    if (msg.jsonrpc !== '2.0') this.logErrors.push(`message without jsonrpc "2.0": ${JSON.stringify(msg).slice(0, 200)}`);
  }

  _installHandlers() {
    const c = this.conn;
    const rec = (method) => (params) => { this.serverRequests.push({ method, params }); return null; };
    c.onRequest(lsp.ConfigurationRequest.type, (params) => {
      this.serverRequests.push({ method: 'workspace/configuration', params });
      return params.items.map((item) => this.configurationFor(item));
    });
    c.onRequest(lsp.ApplyWorkspaceEditRequest.type, (params) => {
      this.serverRequests.push({ method: 'workspace/applyEdit', params });
      return this._applyWorkspaceEdit(params.edit);
    });
    c.onRequest(lsp.WorkDoneProgressCreateRequest.type, rec('window/workDoneProgress/create'));
    c.onRequest(lsp.RegistrationRequest.type, rec('client/registerCapability'));
    c.onRequest(lsp.UnregistrationRequest.type, rec('client/unregisterCapability'));
    c.onRequest(lsp.CodeLensRefreshRequest.type, rec('workspace/codeLens/refresh'));
    c.onRequest(lsp.DiagnosticRefreshRequest.type, rec('workspace/diagnostic/refresh'));
    c.onRequest(lsp.ShowMessageRequest.type, rec('window/showMessageRequest'));
    c.onRequest(lsp.WorkspaceFoldersRequest.type, (p) => { rec('workspace/workspaceFolders')(p); return this.workspaceFolders(); });
    c.onRequest((method, params) => {
      this.serverRequests.push({ method, params, unexpected: true });
      return new rpc.ResponseError(rpc.ErrorCodes.MethodNotFound, `test client does not handle ${method}`);
    });
    c.onNotification(lsp.PublishDiagnosticsNotification.type, () => {});
    c.onNotification(lsp.ShowMessageNotification.type, () => {});
    c.onNotification((method, params) => { this.notifications.push({ method, params }); });
    c.onError(([e]) => this.logErrors.push(`connection: ${e && e.message}`));
  }

  configurationFor(item) {
    const s = this.settings;
    if (typeof s === 'function') return s(item);
    if (item.section === 'shardlens') return s;
    if (!item.section) return s === null ? null : { shardlens: s };
    return null;
  }

  workspaceFolders() {
    return this.opts.rootPath ? [{ uri: fileUri(this.opts.rootPath), name: path.basename(this.opts.rootPath) }] : null;
  }

  // An editor applies the edit to its buffer and then tells the server with didChange.
  _applyWorkspaceEdit(edit) {
    for (const doc of this.docs.values()) {
      const touches = (edit.changes && edit.changes[doc.uri]) ||
        (edit.documentChanges || []).some((dc) => dc.textDocument && dc.textDocument.uri === doc.uri);
      if (!touches) continue;
      const edits = editsForDocument(edit, doc);
      this.applyEditsAndNotify(doc, edits);
    }
    return { applied: true };
  }

  // Applies TextEdits to doc and sends them as incremental changes (last first, as VS Code does,
  // so each change's range is valid for the text the server has at that point).
  applyEditsAndNotify(doc, edits) {
    const expected = doc.applyEdits(edits);
    const order = edits.map((e, i) => ({ e, i, off: doc.offsetAt(e.range.start) }))
      .sort((a, b) => b.off - a.off || b.i - a.i);
    const changes = order.map(({ e }) => ({ range: e.range, text: e.newText }));
    this.change(doc, changes);
    assert.equal(doc.text, expected, 'applying the edits one by one differs from applying them together');
  }

  _poke() {
    for (const w of [...this._waiters]) w();
  }

  // Resolves with fn()'s first truthy value, re-checked after every message from the server
  // (and on `emitter` data); rejects after ms with a description of what was awaited.
  _waitFor(fn, ms, what, emitter) {
    return new Promise((resolve, reject) => {
      let done = false;
      const check = () => {
        if (done) return;
        let v;
        try { v = fn(); } catch (e) { finish(); reject(e); return; }
        if (v !== undefined && v !== null && v !== false) { finish(); resolve(v); }
      };
      const timer = setTimeout(() => {
        if (done) return;
        finish();
        reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
      }, ms);
      let finish = () => {
        done = true;
        clearTimeout(timer);
        this._waiters.delete(check);
        if (emitter) emitter.off('data', onData);
      };
      const onData = () => setImmediate(check);
      if (emitter) emitter.on('data', onData);
      this._waiters.add(check);
      const poll = setInterval(check, 50); // state may also change through handlers that run later
      const clear = finish;
      finish = () => { clearInterval(poll); clear(); };
      check();
    });
  }

  waitFor(fn, what, ms = T(10000)) { return this._waitFor(fn, ms, what); }

  async initialize() {
    const o = this.opts;
    const params = {
      processId: process.pid,
      clientInfo: { name: 'shardlens-e2e', version: '1' },
      locale: 'en',
      rootPath: o.rootPath || null,
      rootUri: o.rootPath ? fileUri(o.rootPath) : null,
      workspaceFolders: this.workspaceFolders(),
      capabilities: clientCapabilities({ encodings: o.encodings, configuration: o.workspaceConfiguration !== false }),
      trace: 'off',
    };
    if (o.initializationOptions !== undefined) params.initializationOptions = o.initializationOptions;
    // Over TCP the server wants the token it printed (unless the test chooses what to send).
    if (this.token && o.sendToken !== false) params.initializationOptions = { ...(params.initializationOptions || {}), token: this.token };
    this.initializeResult = await this.conn.sendRequest(lsp.InitializeRequest.type, params);
    await this.conn.sendNotification(lsp.InitializedNotification.type, {});
    return this.initializeResult;
  }

  // Opens a file (path) or {uri, text}; returns the client-side TextDocument.
  async open(fileOrDoc, { text, uri } = {}) {
    const u = uri || (typeof fileOrDoc === 'string' ? fileUri(fileOrDoc) : fileOrDoc.uri);
    const t = text !== undefined ? text : (typeof fileOrDoc === 'string' ? fs.readFileSync(fileOrDoc, 'utf8') : fileOrDoc.text);
    const doc = new TextDocument(u, t, { version: 1, encoding: this.encoding });
    this.docs.set(u, doc);
    await this.conn.sendNotification(lsp.DidOpenTextDocumentNotification.type,
      { textDocument: { uri: u, languageId: 'python', version: doc.version, text: t } });
    return doc;
  }

  // Incremental changes {range, text} (ranges in the session's encoding, each against the
  // text left by the previous one), applied to the client copy too.
  async change(doc, changes) {
    for (const ch of changes) doc.applyChange(ch);
    doc.version += 1;
    this.lastChangeMark = this.publishes.length;
    await this.conn.sendNotification(lsp.DidChangeTextDocumentNotification.type,
      { textDocument: { uri: doc.uri, version: doc.version }, contentChanges: changes });
  }

  // Replace the first occurrence of `needle` with `replacement` through one ranged change.
  async replace(doc, needle, replacement, opts = {}) {
    const range = doc.rangeOf(needle, opts);
    await this.change(doc, [{ range, text: replacement }]);
    return range;
  }

  // Several replacements [needle, replacement, opts?] in ONE didChange: each change's range is
  // computed on the text the previous changes left, as the protocol applies them in order.
  async replaceMany(doc, pairs) {
    const scratch = new TextDocument(doc.uri, doc.text, { encoding: doc.encoding });
    const changes = [];
    for (const [needle, replacement, opts] of pairs) {
      const range = scratch.rangeOf(needle, opts || {});
      const ch = { range, text: replacement };
      scratch.applyChange(ch);
      changes.push(ch);
    }
    await this.change(doc, changes);
    return changes;
  }

  // Inserts `text` before line `line` (0-based).
  async insertLines(doc, line, text) {
    const pos = { line, character: 0 };
    await this.change(doc, [{ range: { start: pos, end: pos }, text }]);
  }

  async close(doc) {
    this.docs.delete(doc.uri);
    await this.conn.sendNotification(lsp.DidCloseTextDocumentNotification.type, { textDocument: { uri: doc.uri } });
  }

  latestDiagnostics(uri) {
    for (let i = this.publishes.length - 1; i >= 0; i--) if (this.publishes[i].uri === uri) return this.publishes[i];
    return undefined;
  }

  // Waits for a publishDiagnostics for doc, sent after message index `since` (default: the last
  // change of any document), whose diagnostics satisfy pred. Returns the diagnostics.
  async diagnostics(doc, pred = () => true, { since, ms = T(10000), what } = {}) {
    const from = since ?? this.lastChangeMark ?? 0;
    const p = await this.waitFor(() => {
      for (let i = this.publishes.length - 1; i >= from; i--) {
        const pub = this.publishes[i];
        if (pub.uri !== doc.uri) continue;
        // the newest publish for the document decides (an older one may be stale)
        return pred(pub.diagnostics, pub) ? pub : undefined;
      }
      return undefined;
    }, what || `publishDiagnostics for ${path.basename(doc.uri)} v${doc.version} matching ${pred.toString().slice(0, 160)}` +
      ` (latest: ${JSON.stringify(this.latestDiagnostics(doc.uri)?.diagnostics?.map((d) => [d.code, d.range.start.line]) ?? null)})`, ms);
    return p.diagnostics;
  }

  // Waits until no publish for doc arrived for `quietMs`, then returns the latest diagnostics.
  async settledDiagnostics(doc, quietMs = T(1500)) {
    await this.diagnostics(doc, () => true, { since: 0 });
    for (;;) {
      const n = this.publishes.length;
      await new Promise((r) => setTimeout(r, quietMs));
      if (this.publishes.length === n) return this.latestDiagnostics(doc.uri).diagnostics;
    }
  }

  request(method, params) { return this.conn.sendRequest(method, params); }

  hover(doc, position) {
    return this.conn.sendRequest(lsp.HoverRequest.type, { textDocument: { uri: doc.uri }, position });
  }

  codeLens(doc) {
    return this.conn.sendRequest(lsp.CodeLensRequest.type, { textDocument: { uri: doc.uri } });
  }

  codeActions(doc, range, context = { diagnostics: [] }) {
    return this.conn.sendRequest(lsp.CodeActionRequest.type, { textDocument: { uri: doc.uri }, range, context });
  }

  resolveCodeAction(action) {
    return this.conn.sendRequest(lsp.CodeActionResolveRequest.type, action);
  }

  executeCommand(command, args) {
    return this.conn.sendRequest(lsp.ExecuteCommandRequest.type, { command, arguments: args });
  }

  async didChangeConfiguration(settings) {
    this.lastChangeMark = this.publishes.length;
    await this.conn.sendNotification(lsp.DidChangeConfigurationNotification.type, { settings });
  }

  // The protocol bookkeeping every session must satisfy.
  checkProtocol() {
    const problems = [...this.logErrors];
    for (const r of this.strayResponses) problems.push(`response to an id never sent: ${JSON.stringify(r).slice(0, 300)}`);
    for (const [id, n] of this.responses) if (n > 1) problems.push(`request ${id} (${this.sentRequests.get(id)}) answered ${n} times`);
    for (const r of this.serverRequests) if (r.unexpected) problems.push(`unexpected server request ${r.method}`);
    return problems;
  }

  // shutdown + exit; asserts exit code 0, every request answered once, clean protocol.
  async end() {
    const res = await this.conn.sendRequest(lsp.ShutdownRequest.type);
    assert.equal(res, null, 'shutdown result must be null');
    await this.conn.sendNotification(lsp.ExitNotification.type);
    const ex = await this.server.waitExit();
    this.dispose();
    assert.ok(ex, `server did not exit within ${T(5000)} ms of exit; stderr:\n${this.server.stderr.slice(-2000)}`);
    assert.equal(ex.signal, null, `server died of ${ex.signal}; stderr:\n${this.server.stderr.slice(-3000)}`);
    assert.equal(ex.code, 0, `exit code after shutdown + exit; stderr:\n${this.server.stderr.slice(-2000)}`);
    for (const [id, method] of this.sentRequests) {
      assert.ok(this.responses.get(id) === 1, `request ${id} (${method}) got ${this.responses.get(id) || 0} replies`);
    }
    assert.deepEqual(this.checkProtocol(), [], 'protocol problems during the session');
    if (this.stdout !== undefined) assert.equal(this.stdout, '', 'TCP mode wrote to stdout');
  }

  dispose() {
    try { this.conn.dispose(); } catch { /* already gone */ }
    if (this.socket) this.socket.destroy();
  }

  // For test teardown after a failure: never leave a server behind.
  async kill() {
    this.dispose();
    if (this.server && this.server.proc.exitCode === null && this.server.proc.signalCode === null) {
      this.server.proc.kill('SIGKILL');
      await this.server.exit;
    }
  }
}

// Runs body(session) inside a whole session and always cleans up; on failure the server's
// stderr tail is attached to the error.
async function withSession(opts, body) {
  const s = await Session.start(opts);
  try {
    await body(s);
    await s.end();
  } catch (e) {
    const tail = s.server ? s.server.stderr.slice(-1500) : '';
    if (tail && e && typeof e.message === 'string' && !e.message.includes('stderr:')) {
      e.message += `\n--- server stderr (tail) ---\n${tail}`;
    }
    throw e;
  } finally {
    await s.kill();
  }
}

module.exports = { Session, ServerProcess, withSession, listeningLine, fileUri, clientCapabilities, SHARDLENS, FIXTURES, REPO, T, lsp };
