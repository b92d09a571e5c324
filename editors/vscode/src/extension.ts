// The Shardlens extension: starts `shardlens serve` for Python files through vscode-languageclient,
// passes the `shardlens.*` settings on, adds commands and a status-bar item. Everything that can be
// decided without VS Code lives in the modules imported below (unit-tested under plain Node); this
// file is only the glue.
//
// Command IDs: vscode-languageclient registers a VS Code command for every command the server lists
// in `executeCommandProvider` (shardlens.insertAnnotations, shardlens.showPlan, ...; later
// shardlens.generateReport), so the extension's own commands are `shardlens.client.*` and never
// clash with those, whatever a newer server advertises.

import * as os from 'os';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';

import {
  advertisedCommands,
  commandErrorMessage,
  insertMessage,
  outputOf,
  REQUEST_CANCELLED,
  serverVersion,
  unsupportedMessage,
} from './commandResult';
import { meshPicks, parseMeshList } from './mesh';
import { locateExecutable, serverLaunch } from './serverCommand';
import { explicitValue, keysDroppedSinceStart, meshesTarget, ServerKey, SERVER_KEYS, ServerSettings, settingValue, toServerSettings } from './settings';
import { busyStatus, errorStatus, planStatus, StatusView } from './status';

export const SECTION = 'shardlens';

// Server-side command IDs (server/README.md, "Commands").
export const SERVER_COMMANDS = {
  generateReport: 'shardlens.generateReport',
  exportGraph: 'shardlens.exportGraph',
  insertAnnotations: 'shardlens.insertAnnotations',
  insertLoadShardSpec: 'shardlens.insertLoadShardSpec',
  showPlan: 'shardlens.showPlan',
} as const;

// Client-side command IDs (package.json "contributes.commands").
export const CLIENT_COMMANDS = {
  generateReport: 'shardlens.client.generateReport',
  exportGraph: 'shardlens.client.exportGraph',
  insertAnnotations: 'shardlens.client.insertAnnotations',
  insertLoadShardSpec: 'shardlens.client.insertLoadShardSpec',
  selectMesh: 'shardlens.client.selectMesh',
  showPlan: 'shardlens.client.showPlan',
  restartServer: 'shardlens.client.restartServer',
  showOutput: 'shardlens.client.showOutput',
} as const;

const DEFAULT_MESHES = ['1x8'];

class Shardlens implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private startedWith: ServerSettings = {};
  private launchKey = '';
  private readonly output = vscode.window.createOutputChannel('Shardlens');
  private readonly status = vscode.window.createStatusBarItem('shardlens.status', vscode.StatusBarAlignment.Right, 100);
  private readonly disposables: vscode.Disposable[] = [];
  private shownProblems = new Set<string>();
  private statusTimer: NodeJS.Timeout | undefined;
  private statusSeq = 0;
  private statusUri: string | undefined;
  private statusCancel: vscode.CancellationTokenSource | undefined;
  private lastError: string | undefined;
  private planMeshes: string[] | undefined; // shapes of the last plan shown, e.g. ["1x8"]
  private restarting: Promise<void> = Promise.resolve();
  private clientListener: vscode.Disposable | undefined;
  private shownNotes = new Set<string>();

  constructor() {
    this.status.name = 'Shardlens';
    this.status.command = CLIENT_COMMANDS.selectMesh;
    const reg = (id: string, f: (...args: unknown[]) => unknown) => this.disposables.push(vscode.commands.registerCommand(id, f));
    reg(CLIENT_COMMANDS.generateReport, () => this.runOutputCommand(SERVER_COMMANDS.generateReport, 'Generating the sharding report'));
    reg(CLIENT_COMMANDS.exportGraph, () => this.runOutputCommand(SERVER_COMMANDS.exportGraph, 'Exporting the graph'));
    reg(CLIENT_COMMANDS.insertAnnotations, () => this.runInsert(SERVER_COMMANDS.insertAnnotations, 'Insert Shardy annotations'));
    reg(CLIENT_COMMANDS.insertLoadShardSpec, () => this.runInsert(SERVER_COMMANDS.insertLoadShardSpec, 'Insert load_shard_spec()'));
    reg(CLIENT_COMMANDS.selectMesh, () => this.selectMesh());
    reg(CLIENT_COMMANDS.showPlan, () => this.showPlanCommand());
    reg(CLIENT_COMMANDS.restartServer, () => this.restart());
    reg(CLIENT_COMMANDS.showOutput, () => this.output.show(true));

    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.log('workspace trusted: restarting the server with the workspace settings');
        void this.restart();
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.scheduleStatus(0)),
      vscode.languages.onDidChangeDiagnostics((e) => {
        const doc = this.activePythonDocument();
        if (doc && e.uris.some((u) => u.toString() === doc.uri.toString())) this.scheduleStatus(50);
      }),
    );
  }

  // ---- server lifecycle ------------------------------------------------------------------------

  private launch(): ReturnType<typeof serverLaunch> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const config = vscode.workspace.getConfiguration(SECTION);
    return serverLaunch(
      { path: config.inspect('server.path'), args: config.inspect('server.args') },
      { trusted: vscode.workspace.isTrusted, workspaceFolder: folder?.scheme === 'file' ? folder.fsPath : undefined, home: os.homedir() },
    );
  }

  async start(): Promise<void> {
    const launch = this.launch();
    if (!launch.ok) {
      this.fail(launch.error, true);
      return;
    }
    for (const note of launch.notes) {
      this.log(note);
      if (!this.shownNotes.has(note)) void vscode.window.showInformationMessage(`Shardlens (restricted mode): ${note}.`);
      this.shownNotes.add(note);
    }
    // Found before starting, so that a missing binary gets one clear message (and a bare name
    // never resolves through the current directory).
    const executable = locateExecutable(launch.command, process.env.PATH);
    if (!executable) {
      this.fail(
        launch.command.includes('/')
          ? `'${launch.command}' is not an executable file. Set shardlens.server.path to the shardlens binary.`
          : `'${launch.command}' was not found on PATH. Install shardlens, or set shardlens.server.path to the binary.`,
        true,
      );
      return;
    }

    const mapped = this.serverSettings();
    this.startedWith = mapped.settings;
    this.launchKey = JSON.stringify([launch.command, launch.args]);
    const exe = { command: executable, args: launch.args, transport: TransportKind.stdio };
    const serverOptions: ServerOptions = { run: exe, debug: exe };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'untitled', language: 'python' },
      ],
      initializationOptions: mapped.settings,
      synchronize: { configurationSection: SECTION },
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      middleware: {
        workspace: {
          // workspace/configuration: answer the `shardlens` section with the settings the user set
          // (mapped and validated), not the package.json defaults.
          configuration: async (params, token, next) => {
            const result = await next(params, token);
            if (!Array.isArray(result)) return result;
            return result.map((value, i) => {
              const item = params.items[i];
              const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
              if (item.section === SECTION) return this.serverSettings(scope).settings;
              if (item.section?.startsWith(SECTION + '.')) {
                const key = item.section.slice(SECTION.length + 1) as ServerKey;
                if ((SERVER_KEYS as readonly string[]).includes(key)) return this.serverSettings(scope).settings[key] ?? null;
              }
              return value;
            });
          },
          // workspace/didChangeConfiguration: the same object under `settings.shardlens`.
          didChangeConfiguration: async (sections, next) => {
            if (!sections || !sections.includes(SECTION) || !this.client) return next(sections);
            await this.client.sendNotification(DidChangeConfigurationNotification.type, {
              settings: { [SECTION]: this.serverSettings().settings },
            });
          },
        },
        // The code lenses' `shardlens.showPlan`: show the plan instead of dropping the result.
        executeCommand: async (command, args, next) => {
          const result = await next(command, args);
          if (command === SERVER_COMMANDS.showPlan && result) await this.openJson(result);
          return result;
        },
      },
    };

    const client = new LanguageClient('shardlens', 'Shardlens', serverOptions, clientOptions);
    this.client = client;
    this.clientListener?.dispose();
    this.clientListener = client.onDidChangeState((e) => {
      if (this.client !== client) return;
      if (e.newState === State.Running) this.lastError = undefined;
      this.scheduleStatus(0);
    });
    this.log(`starting ${executable} ${launch.args.join(' ')}`);
    this.showStatus(busyStatus(this.configuredMeshes()));
    try {
      await client.start();
      this.log(`server started: ${client.initializeResult?.serverInfo?.name ?? 'shardlens'} ${serverVersion(client.initializeResult) ?? ''}`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.fail(
        `could not start '${executable} ${launch.args.join(' ')}': ${message}. ` +
          'Check shardlens.server.path and shardlens.server.args, and the Shardlens output.',
        true,
      );
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.statusCancel?.cancel();
    this.clientListener?.dispose();
    this.clientListener = undefined;
    if (client && client.needsStop()) {
      try {
        await client.stop(2000);
      } catch (error) {
        this.log(`stopping the server: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  restart(): Promise<void> {
    this.restarting = this.restarting
      .then(async () => {
        await this.stop();
        await this.start();
      })
      .catch((error) => this.log(`restart: ${error instanceof Error ? error.message : String(error)}`));
    return this.restarting;
  }

  private onConfigurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration(SECTION)) return;
    if (e.affectsConfiguration(`${SECTION}.server`)) {
      const launch = this.launch();
      if (!launch.ok || JSON.stringify([launch.command, launch.args]) !== this.launchKey) {
        this.log('shardlens.server.* changed: restarting the server');
        void this.restart();
        return;
      }
    }
    const mapped = this.serverSettings(); // reports invalid values once
    const dropped = keysDroppedSinceStart(this.startedWith, mapped.settings);
    if (dropped.length) {
      // The server keeps initializationOptions under later settings; a fresh one forgets them.
      this.log(`${dropped.map((k) => `shardlens.${k}`).join(', ')} unset: restarting the server`);
      void this.restart();
      return;
    }
    this.scheduleStatus(300);
  }

  // The explicit `shardlens.*` values for the server; warns once about each invalid one.
  private serverSettings(scope?: vscode.Uri): ReturnType<typeof toServerSettings> {
    const config = vscode.workspace.getConfiguration(SECTION, scope ?? null);
    const trusted = vscode.workspace.isTrusted;
    const mapped = toServerSettings((key) => settingValue(key, config.inspect(key), trusted));
    const now = new Set(mapped.problems);
    for (const p of mapped.problems)
      if (!this.shownProblems.has(p)) void vscode.window.showWarningMessage(`Shardlens: ${p} (ignored)`);
    this.shownProblems = now;
    return mapped;
  }

  private configuredMeshes(): string[] {
    const v = explicitValue(vscode.workspace.getConfiguration(SECTION).inspect<unknown>('meshes'));
    return Array.isArray(v) && v.every((m) => typeof m === 'string') ? (v as string[]) : DEFAULT_MESHES;
  }

  private fail(message: string, offerSettings: boolean): void {
    this.lastError = message;
    this.log(message);
    this.showStatus(errorStatus(message, this.configuredMeshes()));
    const buttons = offerSettings ? ['Open Settings', 'Show Output'] : ['Show Output'];
    void vscode.window.showErrorMessage(`Shardlens: ${message}`, ...buttons).then((choice) => {
      if (choice === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'shardlens.server');
      else if (choice === 'Show Output') this.output.show(true);
    });
  }

  private log(message: string): void {
    this.output.appendLine(`[shardlens] ${message}`);
  }

  // ---- commands --------------------------------------------------------------------------------

  private activePythonDocument(): vscode.TextDocument | undefined {
    const doc = vscode.window.activeTextEditor?.document;
    return doc && doc.languageId === 'python' ? doc : undefined;
  }

  // The running client and the active Python document's URI, or a message why not.
  private target(): { client: LanguageClient; uri: string } | undefined {
    const doc = this.activePythonDocument();
    if (!doc) {
      void vscode.window.showWarningMessage('Shardlens: open a Python model script first.');
      return undefined;
    }
    const client = this.client;
    if (!client || client.state !== State.Running) {
      void vscode.window
        .showErrorMessage(`Shardlens: the server is not running${this.lastError ? ` (${this.lastError})` : ''}.`, 'Restart Server', 'Show Output')
        .then((choice) => {
          if (choice === 'Restart Server') void this.restart();
          else if (choice === 'Show Output') this.output.show(true);
        });
      return undefined;
    }
    return { client, uri: client.code2ProtocolConverter.asUri(doc.uri) };
  }

  private async execute(client: LanguageClient, command: string, args: unknown[], token?: vscode.CancellationToken): Promise<unknown> {
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }, token);
  }

  private showCommandError(client: LanguageClient, command: string, error: unknown): void {
    const message = commandErrorMessage(command, error, serverVersion(client.initializeResult));
    if (message) {
      this.log(message);
      void vscode.window.showErrorMessage(message);
    }
  }

  // generateReport / exportGraph: run on the active file, open what comes back.
  private async runOutputCommand(command: string, title: string): Promise<void> {
    const t = this.target();
    if (!t) return;
    const advertised = advertisedCommands(t.client.initializeResult);
    if (advertised && !advertised.includes(command)) {
      void vscode.window.showErrorMessage(unsupportedMessage(command, serverVersion(t.client.initializeResult)));
      return;
    }
    let result: unknown;
    try {
      result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Shardlens: ${title}…`, cancellable: true },
        (_progress, token) => this.execute(t.client, command, [t.uri], token),
      );
    } catch (error) {
      this.showCommandError(t.client, command, error);
      return;
    }
    const out = outputOf(result, title.toLowerCase());
    try {
      if (out.kind === 'none') void vscode.window.showInformationMessage(out.message);
      else if (out.kind === 'text') {
        const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: out.text });
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: false });
      } else {
        const uri = out.kind === 'file' ? vscode.Uri.file(out.path) : vscode.Uri.parse(out.uri);
        await vscode.commands.executeCommand('vscode.open', uri, { viewColumn: vscode.ViewColumn.Beside, preview: false });
        this.log(`${command}: ${uri.toString()}`);
      }
    } catch (error) {
      void vscode.window.showErrorMessage(`Shardlens: could not open the result of ${command}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async runInsert(command: string, title: string): Promise<void> {
    const t = this.target();
    if (!t) return;
    try {
      const result = await this.execute(t.client, command, [t.uri]);
      const message = insertMessage(result, title);
      if (message) void vscode.window.showWarningMessage(message);
    } catch (error) {
      this.showCommandError(t.client, command, error);
    }
  }

  private async showPlanCommand(): Promise<void> {
    const t = this.target();
    if (!t) return;
    try {
      await this.openJson(await this.execute(t.client, SERVER_COMMANDS.showPlan, [t.uri]));
    } catch (error) {
      this.showCommandError(t.client, SERVER_COMMANDS.showPlan, error);
    }
  }

  private async openJson(value: unknown): Promise<void> {
    const doc = await vscode.workspace.openTextDocument({ language: 'json', content: JSON.stringify(value, null, 2) });
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  }

  private async selectMesh(): Promise<void> {
    const current = this.planMeshes ?? this.configuredMeshes();
    const picks = meshPicks(current);
    const chosen = await vscode.window.showQuickPick(
      picks.map((p) => ({ label: p.label, description: p.description, detail: p.detail, pick: p })),
      { title: 'Shardlens: mesh to plan for', placeHolder: `current: ${current.join(', ')}` },
    );
    if (!chosen) return;
    let meshes = chosen.pick.meshes;
    if (!meshes) {
      const text = await vscode.window.showInputBox({
        title: 'Shardlens: custom mesh',
        prompt: 'RxC (rows = batch axis, columns = model axis) or a preset; several separated by commas',
        value: current.join(', '),
        validateInput: (v) => {
          const r = parseMeshList(v);
          return r.ok ? undefined : r.error;
        },
      });
      if (text === undefined) return;
      const r = parseMeshList(text);
      if (!r.ok) return;
      meshes = r.meshes;
    }
    const doc = this.activePythonDocument();
    const folder = doc ? vscode.workspace.getWorkspaceFolder(doc.uri) : undefined;
    const config = vscode.workspace.getConfiguration(SECTION, folder?.uri ?? null);
    const where = meshesTarget(config.inspect('meshes'), (vscode.workspace.workspaceFolders?.length ?? 0) > 0, folder !== undefined);
    const target =
      where === 'workspaceFolder'
        ? vscode.ConfigurationTarget.WorkspaceFolder
        : where === 'workspace'
          ? vscode.ConfigurationTarget.Workspace
          : vscode.ConfigurationTarget.Global;
    try {
      await config.update('meshes', meshes, target);
      this.log(`shardlens.meshes = ${JSON.stringify(meshes)} (${where} settings)`);
    } catch (error) {
      void vscode.window.showErrorMessage(`Shardlens: could not update shardlens.meshes: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  // ---- status bar ------------------------------------------------------------------------------

  private showStatus(view: StatusView): void {
    this.status.text = view.text;
    this.status.tooltip = view.tooltip;
    this.status.backgroundColor = view.kind === 'error' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    if (this.activePythonDocument()) this.status.show();
    else this.status.hide();
  }

  private scheduleStatus(delayMs: number): void {
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.statusTimer = setTimeout(() => void this.refreshStatus(), delayMs);
  }

  // Asks the server for the active document's plan (shardlens.showPlan) and shows the first mesh's
  // collective total; runs when the document's diagnostics change, on editor switches and settings.
  private async refreshStatus(): Promise<void> {
    const doc = this.activePythonDocument();
    if (!doc) {
      this.status.hide();
      return;
    }
    const client = this.client;
    if (!client || client.state !== State.Running) {
      this.showStatus(this.lastError ? errorStatus(this.lastError, this.configuredMeshes()) : busyStatus(this.configuredMeshes()));
      return;
    }
    const uri = client.code2ProtocolConverter.asUri(doc.uri);
    if (uri !== this.statusUri) {
      this.statusUri = uri;
      this.showStatus(busyStatus(this.configuredMeshes()));
    }
    const seq = ++this.statusSeq;
    this.statusCancel?.cancel();
    const cancel = (this.statusCancel = new vscode.CancellationTokenSource());
    try {
      const plan = await this.execute(client, SERVER_COMMANDS.showPlan, [uri], cancel.token);
      if (seq !== this.statusSeq) return;
      const view = planStatus(plan, this.configuredMeshes());
      this.planMeshes = view.kind === 'plan' ? planShapes(plan) : undefined;
      this.showStatus(view);
    } catch (error) {
      if (seq !== this.statusSeq) return;
      const e = error as { code?: number; message?: string };
      if (e?.code === REQUEST_CANCELLED) return;
      this.planMeshes = undefined;
      this.showStatus(errorStatus(e?.message ?? String(error), this.configuredMeshes()));
    } finally {
      cancel.dispose();
      if (this.statusCancel === cancel) this.statusCancel = undefined;
    }
  }

  dispose(): void {
    if (this.statusTimer) clearTimeout(this.statusTimer);
    for (const d of this.disposables) d.dispose();
    this.status.dispose();
    this.output.dispose();
  }
}

function planShapes(plan: unknown): string[] | undefined {
  const meshes = (plan as { meshes?: { shape?: unknown }[] })?.meshes;
  if (!Array.isArray(meshes)) return undefined;
  const shapes = meshes.map((m) => (Array.isArray(m?.shape) && m.shape.length === 2 ? `${m.shape[0]}x${m.shape[1]}` : undefined));
  return shapes.every((s) => s !== undefined) ? (shapes as string[]) : undefined;
}

let instance: Shardlens | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  instance = new Shardlens();
  context.subscriptions.push(instance);
  await instance.start();
}

export async function deactivate(): Promise<void> {
  const i = instance;
  instance = undefined;
  if (i) await i.stop();
}
