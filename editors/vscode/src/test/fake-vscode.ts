// A stand-in for the `vscode` module, just large enough for extension.ts and vscode-languageclient 9
// to run against the real server under plain Node: settings (with inspect/update and change
// events), open documents, the active editor, diagnostics collections and their change event,
// commands (registering one twice throws, as in VS Code), status-bar items, output channels, and
// scripted answers for quick picks and input boxes. Every message, opened document and executed
// built-in command is recorded. API a test does not use falls back to no-op registrations.
/* eslint-disable @typescript-eslint/no-explicit-any */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

type Listener<T> = (e: T) => any;

export class Disposable {
  constructor(private readonly f: () => any = () => undefined) {}
  static from(...items: { dispose(): any }[]): Disposable {
    return new Disposable(() => items.forEach((i) => i?.dispose()));
  }
  dispose(): void {
    this.f();
  }
}

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  event = (listener: Listener<T>, thisArg?: any, disposables?: Disposable[]): Disposable => {
    const l = thisArg ? listener.bind(thisArg) : listener;
    this.listeners.add(l);
    const d = new Disposable(() => this.listeners.delete(l));
    disposables?.push(d);
    return d;
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class Uri {
  private constructor(readonly scheme: string, readonly authority: string, readonly path: string, readonly query: string, readonly fragment: string, private readonly text?: string) {}
  static parse(value: string): Uri {
    const u = new URL(value);
    return new Uri(u.protocol.replace(/:$/, ''), u.host, decodeURIComponent(u.pathname), u.search.replace(/^\?/, ''), u.hash.replace(/^#/, ''), value);
  }
  static file(p: string): Uri {
    return Uri.parse(pathToFileURL(p).href);
  }
  static from(c: { scheme: string; authority?: string; path?: string; query?: string; fragment?: string }): Uri {
    return new Uri(c.scheme, c.authority ?? '', c.path ?? '', c.query ?? '', c.fragment ?? '');
  }
  get fsPath(): string {
    return this.scheme === 'file' ? fileURLToPath(this.toString()) : this.path;
  }
  with(change: Partial<{ scheme: string; authority: string; path: string; query: string; fragment: string }>): Uri {
    return new Uri(change.scheme ?? this.scheme, change.authority ?? this.authority, change.path ?? this.path, change.query ?? this.query, change.fragment ?? this.fragment);
  }
  toString(): string {
    if (this.text) return this.text;
    return `${this.scheme}://${this.authority}${encodeURI(this.path)}${this.query ? '?' + this.query : ''}${this.fragment ? '#' + this.fragment : ''}`;
  }
  toJSON(): any {
    return { scheme: this.scheme, path: this.path, external: this.toString() };
  }
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}
export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: any, b: any, c?: number, d?: number) {
    if (typeof a === 'number') {
      this.start = new Position(a, b);
      this.end = new Position(c ?? a, d ?? b);
    } else {
      this.start = a;
      this.end = b;
    }
  }
}
export class Selection extends Range {}
export class Location {
  constructor(readonly uri: Uri, readonly range: Range) {}
}
export class Diagnostic {
  code: any;
  source?: string;
  tags?: any[];
  relatedInformation?: any[];
  constructor(readonly range: Range, readonly message: string, readonly severity: number = 0) {}
}
export class DiagnosticRelatedInformation {
  constructor(readonly location: Location, readonly message: string) {}
}
export class TextEdit {
  constructor(readonly range: Range, readonly newText: string) {}
  static replace(range: Range, newText: string): TextEdit {
    return new TextEdit(range, newText);
  }
}
export class WorkspaceEdit {
  readonly edits: { uri: Uri; range?: Range; newText?: string }[] = [];
  replace(uri: Uri, range: Range, newText: string): void {
    this.edits.push({ uri, range, newText });
  }
  insert(uri: Uri, position: Position, newText: string): void {
    this.edits.push({ uri, range: new Range(position, position), newText });
  }
  delete(uri: Uri, range: Range): void {
    this.edits.push({ uri, range, newText: '' });
  }
  set(uri: Uri, edits: TextEdit[]): void {
    for (const e of edits) this.edits.push({ uri, range: e.range, newText: e.newText });
  }
  createFile(): void {}
  renameFile(): void {}
  deleteFile(): void {}
  entries(): any[] {
    return this.edits.map((e) => [e.uri, [e]]);
  }
  get size(): number {
    return this.edits.length;
  }
}
export class MarkdownString {
  constructor(public value = '', public supportThemeIcons = false) {}
  isTrusted?: boolean;
  supportHtml?: boolean;
  appendMarkdown(v: string): this {
    this.value += v;
    return this;
  }
  appendText(v: string): this {
    this.value += v;
    return this;
  }
  appendCodeblock(v: string): this {
    this.value += v;
    return this;
  }
}
export class ThemeColor {
  constructor(readonly id: string) {}
}
export class CancellationError extends Error {}
export class CancellationTokenSource {
  private emitter = new EventEmitter<void>();
  token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.emitter.fire();
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}
export class CodeLens {
  constructor(public range: Range, public command?: any) {}
}
export class Hover {
  constructor(public contents: any, public range?: Range) {}
}
export class CodeAction {
  constructor(public title: string, public kind?: any) {}
}
export class CodeActionKind {
  static readonly Empty = new CodeActionKind('');
  static readonly QuickFix = new CodeActionKind('quickfix');
  static readonly Source = new CodeActionKind('source');
  constructor(readonly value: string) {}
  append(part: string): CodeActionKind {
    return new CodeActionKind(this.value ? `${this.value}.${part}` : part);
  }
}
export class TabInputText {}
export class TabInputTextDiff {}
export class TabInputCustom {}
export class TabInputNotebook {}
export class TabInputNotebookDiff {}

export const DiagnosticSeverity = { Error: 0, Warning: 1, Information: 2, Hint: 3 };
export const DiagnosticTag = { Unnecessary: 1, Deprecated: 2 };
export const StatusBarAlignment = { Left: 1, Right: 2 };
export const ProgressLocation = { SourceControl: 1, Window: 10, Notification: 15 };
export const ConfigurationTarget = { Global: 1, Workspace: 2, WorkspaceFolder: 3 };
export const ViewColumn = { Active: -1, Beside: -2, One: 1, Two: 2 };
export const EndOfLine = { LF: 1, CRLF: 2 };

export interface FakeDocument {
  uri: Uri;
  fileName: string;
  languageId: string;
  version: number;
  isClosed: boolean;
  isUntitled: boolean;
  lineCount: number;
  eol: number;
  getText(range?: Range): string;
  lineAt(line: number): any;
  offsetAt(p: Position): number;
  positionAt(offset: number): Position;
  save(): Promise<boolean>;
}

export function makeDocument(uri: Uri, languageId: string, text: string): FakeDocument {
  const lines = () => text.split('\n');
  return {
    uri,
    fileName: uri.fsPath,
    languageId,
    version: 1,
    isClosed: false,
    isUntitled: uri.scheme === 'untitled',
    get lineCount() {
      return lines().length;
    },
    eol: EndOfLine.LF,
    getText: () => text,
    lineAt: (line: number) => ({ text: lines()[line] ?? '', lineNumber: line }),
    offsetAt: (p: Position) => lines().slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character,
    positionAt: (offset: number) => {
      const before = text.slice(0, offset).split('\n');
      return new Position(before.length - 1, before[before.length - 1].length);
    },
    save: async () => true,
  };
}

interface Inspected {
  globalValue?: any;
  workspaceValue?: any;
  workspaceFolderValue?: any;
}

export interface FakeOptions {
  manifest: any; // package.json: defaults of the contributed settings
  workspaceFolder?: string;
  trusted?: boolean;
  settings?: Record<string, Inspected>; // 'shardlens.meshes' → values per scope
}

// Builds a fresh `vscode` module and the handles tests use to drive and observe it.
export function createFakeVscode(options: FakeOptions) {
  const defaults: Record<string, any> = {};
  for (const [k, v] of Object.entries<any>(options.manifest.contributes.configuration.properties)) defaults[k] = v.default;
  const values: Record<string, Inspected> = JSON.parse(JSON.stringify(options.settings ?? {}));

  const log = {
    info: [] as string[],
    warnings: [] as string[],
    errors: [] as string[],
    opened: [] as any[], // openTextDocument({language, content}) calls
    executed: [] as { command: string; args: any[] }[], // built-in commands run
    applied: [] as WorkspaceEdit[],
    output: [] as string[],
  };
  const script = {
    quickPick: undefined as undefined | ((items: any[]) => any),
    inputBox: undefined as undefined | ((options: any) => string | undefined),
    messageChoice: undefined as undefined | ((message: string, items: string[]) => string | undefined),
  };

  const onDidChangeConfiguration = new EventEmitter<any>();
  const onDidGrantWorkspaceTrust = new EventEmitter<void>();
  const onDidOpenTextDocument = new EventEmitter<FakeDocument>();
  const onDidCloseTextDocument = new EventEmitter<FakeDocument>();
  const onDidChangeActiveTextEditor = new EventEmitter<any>();
  const onDidChangeDiagnostics = new EventEmitter<{ uris: Uri[] }>();
  const diagnostics = new Map<string, Diagnostic[]>();

  const noop = () => new Disposable();
  // Unknown members of a namespace: event subscriptions and registrations give a Disposable.
  const ns = <T extends object>(impl: T): T =>
    new Proxy(impl, {
      get: (t: any, k) => {
        if (k in t) return t[k];
        if (typeof k === 'string' && /^(on[A-Z]|register|create)/.test(k)) return noop;
        return undefined;
      },
    });

  function configuration(section?: string) {
    const full = (key: string) => (section ? `${section}.${key}` : key);
    const explicit = (k: string) => {
      const i = values[k] ?? {};
      return i.workspaceFolderValue ?? i.workspaceValue ?? i.globalValue;
    };
    const value = (k: string) => {
      const e = explicit(k);
      if (e !== undefined) return e;
      if (k in defaults) return defaults[k];
      // a section object: collect its keys
      const prefix = k + '.';
      const keys = Object.keys(defaults).filter((d) => d.startsWith(prefix));
      if (!keys.length) return undefined;
      const obj: any = {};
      for (const d of keys) {
        const parts = d.slice(prefix.length).split('.');
        let o = obj;
        for (const p of parts.slice(0, -1)) o = o[p] ??= {};
        o[parts[parts.length - 1]] = value(d);
      }
      return obj;
    };
    const cfg: any = {
      get: (key: string, dflt?: any) => value(full(key)) ?? dflt,
      has: (key: string) => value(full(key)) !== undefined,
      inspect: (key: string) => ({ key: full(key), defaultValue: defaults[full(key)], ...(values[full(key)] ?? {}) }),
      update: async (key: string, v: any, target: number) => {
        const k = full(key);
        const scope = target === ConfigurationTarget.Global ? 'globalValue' : target === ConfigurationTarget.WorkspaceFolder ? 'workspaceFolderValue' : 'workspaceValue';
        values[k] = { ...(values[k] ?? {}), [scope]: v };
        fireConfigurationChange(k);
      },
    };
    if (section) for (const d of Object.keys(defaults).filter((d) => d.startsWith(section + '.'))) cfg[d.slice(section.length + 1)] = value(d);
    return cfg;
  }

  function fireConfigurationChange(key: string) {
    onDidChangeConfiguration.fire({ affectsConfiguration: (s: string) => key === s || key.startsWith(s + '.') || s.startsWith(key + '.') });
  }

  const folder = options.workspaceFolder ? { uri: Uri.file(options.workspaceFolder), name: path.basename(options.workspaceFolder), index: 0 } : undefined;
  const textDocuments: FakeDocument[] = [];
  const commands = new Map<string, (...args: any[]) => any>();
  const statusItems: any[] = [];

  const workspace = ns({
    get workspaceFolders() {
      return folder ? [folder] : undefined;
    },
    get isTrusted() {
      return options.trusted ?? true;
    },
    textDocuments,
    getConfiguration: (section?: string) => configuration(section),
    getWorkspaceFolder: (uri: Uri) => (folder && uri.fsPath.startsWith(folder.uri.fsPath + path.sep) ? folder : undefined),
    onDidChangeConfiguration: onDidChangeConfiguration.event,
    onDidGrantWorkspaceTrust: onDidGrantWorkspaceTrust.event,
    onDidOpenTextDocument: onDidOpenTextDocument.event,
    onDidCloseTextDocument: onDidCloseTextDocument.event,
    openTextDocument: async (arg: any) => {
      if (arg instanceof Uri) return textDocuments.find((d) => d.uri.toString() === arg.toString()) ?? makeDocument(arg, 'plaintext', fs.readFileSync(arg.fsPath, 'utf8'));
      log.opened.push(arg);
      return makeDocument(Uri.parse(`untitled:Untitled-${log.opened.length}`), arg?.language ?? 'plaintext', arg?.content ?? '');
    },
    applyEdit: async (edit: WorkspaceEdit) => {
      log.applied.push(edit);
      return true;
    },
  });

  const window = ns({
    activeTextEditor: undefined as any,
    visibleTextEditors: [] as any[],
    tabGroups: { all: [], onDidChangeTabs: noop, onDidChangeTabGroups: noop },
    onDidChangeActiveTextEditor: onDidChangeActiveTextEditor.event,
    createOutputChannel: (name: string) => ({
      name,
      append: (v: string) => log.output.push(v),
      appendLine: (v: string) => log.output.push(v),
      replace: () => undefined,
      clear: () => undefined,
      show: () => undefined,
      hide: () => undefined,
      dispose: () => undefined,
    }),
    createStatusBarItem: (id: string, alignment: number, priority: number) => {
      const item = { id, alignment, priority, text: '', tooltip: '', command: undefined, name: '', backgroundColor: undefined, visible: false,
        show() { item.visible = true; }, hide() { item.visible = false; }, dispose() { item.visible = false; } };
      statusItems.push(item);
      return item;
    },
    showInformationMessage: async (m: string, ...items: any[]) => (log.info.push(m), script.messageChoice?.(m, items)),
    showWarningMessage: async (m: string, ...items: any[]) => (log.warnings.push(m), script.messageChoice?.(m, items)),
    showErrorMessage: async (m: string, ...items: any[]) => (log.errors.push(m), script.messageChoice?.(m, items)),
    showQuickPick: async (items: any[]) => script.quickPick?.(await items),
    showInputBox: async (o: any) => {
      const v = script.inputBox?.(o);
      if (v !== undefined && o?.validateInput && (await o.validateInput(v))) return undefined;
      return v;
    },
    withProgress: async (_o: any, task: any) => task({ report: () => undefined }, new CancellationTokenSource().token),
    showTextDocument: async (doc: any) => ({ document: doc }),
  });

  const languages = ns({
    match: (selector: any, doc: FakeDocument) => {
      const filters = Array.isArray(selector) ? selector : [selector];
      return filters.some((f: any) => (typeof f === 'string' ? f === doc.languageId : (!f.language || f.language === doc.languageId) && (!f.scheme || f.scheme === doc.uri.scheme)))
        ? 10
        : 0;
    },
    onDidChangeDiagnostics: onDidChangeDiagnostics.event,
    getDiagnostics: (uri: Uri) => diagnostics.get(uri.toString()) ?? [],
    createDiagnosticCollection: (name: string) => {
      const mine = new Set<string>();
      const c: any = {
        name,
        set: (uri: Uri, d: Diagnostic[] | undefined) => {
          diagnostics.set(uri.toString(), d ?? []);
          mine.add(uri.toString());
          onDidChangeDiagnostics.fire({ uris: [uri] });
        },
        delete: (uri: Uri) => {
          diagnostics.delete(uri.toString());
          onDidChangeDiagnostics.fire({ uris: [uri] });
        },
        clear: () => {
          for (const u of mine) diagnostics.delete(u);
          mine.clear();
        },
        get: (uri: Uri) => diagnostics.get(uri.toString()),
        has: (uri: Uri) => diagnostics.has(uri.toString()),
        forEach: () => undefined,
        dispose: () => c.clear(),
      };
      return c;
    },
  });

  const commandsNs = ns({
    registerCommand: (id: string, f: (...args: any[]) => any) => {
      if (commands.has(id)) throw new Error(`command '${id}' already exists`);
      commands.set(id, f);
      return new Disposable(() => commands.delete(id));
    },
    executeCommand: async (id: string, ...args: any[]) => {
      const f = commands.get(id);
      if (f) return f(...args);
      log.executed.push({ command: id, args });
      return undefined;
    },
    getCommands: async () => [...commands.keys()],
  });

  const module: any = {
    version: '1.82.0',
    env: { appName: 'Visual Studio Code', appRoot: '/', language: 'en', machineId: 'test', sessionId: 'test', uriScheme: 'vscode', openExternal: async () => true },
    workspace,
    window,
    languages,
    commands: commandsNs,
    extensions: ns({ all: [], getExtension: () => undefined }),
    Disposable, EventEmitter, Uri, Position, Range, Selection, Location, Diagnostic, DiagnosticRelatedInformation, TextEdit, WorkspaceEdit,
    MarkdownString, ThemeColor, CancellationError, CancellationTokenSource, CodeLens, Hover, CodeAction, CodeActionKind,
    TabInputText, TabInputTextDiff, TabInputCustom, TabInputNotebook, TabInputNotebookDiff,
    DiagnosticSeverity, DiagnosticTag, StatusBarAlignment, ProgressLocation, ConfigurationTarget, ViewColumn, EndOfLine,
  };

  // Other classes and enums (CompletionItem, SymbolKind, ...): a generic class, created on first use,
  // whose unknown static members (enum values) are their own names.
  const generic = new Map<string, any>();
  const moduleProxy = new Proxy(module, {
    get: (t, k) => {
      if (k in t) return t[k];
      if (typeof k !== 'string' || !/^[A-Z]/.test(k)) return undefined;
      if (!generic.has(k)) {
        const cls = class {
          constructor(...args: any[]) {
            Object.assign(this, { args });
          }
        };
        Object.defineProperty(cls, 'name', { value: k });
        generic.set(k, new Proxy(cls, { get: (c: any, m) => (m in c ? c[m] : typeof m === 'string' ? m : undefined) }));
      }
      return generic.get(k);
    },
  });

  const control = {
    log,
    script,
    commands,
    statusItem: () => statusItems[statusItems.length - 1],
    values,
    // Opens a document and makes it the active editor.
    open(file: string, languageId: string, text: string): FakeDocument {
      const doc = makeDocument(Uri.file(file), languageId, text);
      textDocuments.push(doc);
      onDidOpenTextDocument.fire(doc);
      window.activeTextEditor = { document: doc, selection: new Selection(0, 0, 0, 0) };
      onDidChangeActiveTextEditor.fire(window.activeTextEditor);
      return doc;
    },
    setUserSetting(key: string, value: any) {
      values[key] = { ...(values[key] ?? {}), globalValue: value };
      fireConfigurationChange(key);
    },
    trust() {
      options.trusted = true;
      onDidGrantWorkspaceTrust.fire();
    },
    diagnostics,
  };
  return { module: moduleProxy, control };
}
