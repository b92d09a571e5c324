// Which `shardlens serve` to start: `shardlens.server.path` (default: `shardlens` on PATH) and
// `shardlens.server.args`, with workspace trust applied. No `vscode` import: unit-tested under Node.
//
// In an untrusted workspace, a path or arguments that the workspace's own settings name are
// ignored (VS Code already hides them: both settings are `restrictedConfigurations`; this does the
// same from `inspect()` so it holds whatever the engine does), and so is a user-level path that
// would resolve inside the workspace (relative, or using ${workspaceFolder}): the server started is
// then `shardlens` from PATH.

import * as fs from 'fs';
import * as path from 'path';
import { explicitValue, Inspection } from './settings';

export const DEFAULT_SERVER = 'shardlens';

export interface ServerConfig {
  path: Inspection<unknown> | undefined;
  args: Inspection<unknown> | undefined;
}

export interface LaunchContext {
  trusted: boolean;
  workspaceFolder?: string; // first workspace folder's file system path
  home?: string;
}

export type Launch =
  | { ok: true; command: string; args: string[]; notes: string[] }
  | { ok: false; error: string };

function substitute(s: string, ctx: LaunchContext): string {
  let out = s;
  if (ctx.workspaceFolder !== undefined) out = out.split('${workspaceFolder}').join(ctx.workspaceFolder);
  if (ctx.home !== undefined) {
    out = out.split('${userHome}').join(ctx.home);
    if (out === '~' || out.startsWith('~/')) out = ctx.home + out.slice(1);
  }
  return out;
}

const bareName = (p: string): boolean => !p.includes('/') && !p.includes('\\');

function refersToWorkspace(p: string): boolean {
  return p.includes('${workspaceFolder}') || (!bareName(p) && !path.isAbsolute(p) && !p.startsWith('~/') && !p.startsWith('${userHome}'));
}

export function serverLaunch(config: ServerConfig, ctx: LaunchContext): Launch {
  const notes: string[] = [];
  const userOnly = (i: Inspection<unknown> | undefined): unknown => i?.globalValue ?? undefined;
  const fromWorkspace = (i: Inspection<unknown> | undefined): boolean =>
    (i?.workspaceValue ?? i?.workspaceFolderValue) !== undefined && (i?.workspaceValue ?? i?.workspaceFolderValue) !== null;

  let rawPath: unknown;
  let rawArgs: unknown;
  if (ctx.trusted) {
    rawPath = explicitValue(config.path);
    rawArgs = explicitValue(config.args);
  } else {
    rawPath = userOnly(config.path);
    rawArgs = userOnly(config.args);
    if (fromWorkspace(config.path)) notes.push('shardlens.server.path from the workspace settings is ignored until the workspace is trusted');
    if (fromWorkspace(config.args)) notes.push('shardlens.server.args from the workspace settings are ignored until the workspace is trusted');
  }

  let command = DEFAULT_SERVER;
  if (rawPath !== undefined && rawPath !== null && rawPath !== '') {
    if (typeof rawPath !== 'string') return { ok: false, error: `shardlens.server.path must be a string, not ${JSON.stringify(rawPath)}` };
    const p = rawPath.trim();
    if (!ctx.trusted && refersToWorkspace(p)) {
      notes.push(`shardlens.server.path '${p}' points into the workspace; using '${DEFAULT_SERVER}' from PATH until the workspace is trusted`);
    } else if (p !== '') {
      command = substitute(p, ctx);
      if (!bareName(command) && !path.isAbsolute(command)) {
        if (ctx.workspaceFolder === undefined)
          return { ok: false, error: `shardlens.server.path '${p}' is relative and no folder is open to resolve it against` };
        command = path.resolve(ctx.workspaceFolder, command);
      }
    }
  }

  let extra: string[] = [];
  if (rawArgs !== undefined && rawArgs !== null) {
    if (!Array.isArray(rawArgs) || !rawArgs.every((a) => typeof a === 'string'))
      return { ok: false, error: `shardlens.server.args must be a list of strings, not ${JSON.stringify(rawArgs)}` };
    extra = ctx.trusted ? rawArgs.map((a: string) => substitute(a, ctx)) : [...rawArgs];
  }
  // `serve` first unless the user's arguments already name the subcommand.
  const args = extra[0] === 'serve' ? extra : ['serve', ...extra];
  return { ok: true, command, args, notes };
}

// The executable a command names: an absolute path that is an executable file, or the first such
// file on PATH for a bare name (empty and relative PATH entries are skipped, so a workspace cannot
// supply it through the current directory). undefined when there is none.
export function locateExecutable(command: string, envPath: string | undefined, platform: string = process.platform): string | undefined {
  const exts = platform === 'win32' ? ['', ...(process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').filter((e) => e)] : [''];
  const isExecutable = (file: string): boolean => {
    try {
      if (!fs.statSync(file).isFile()) return false;
      if (platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (!bareName(command)) {
    if (!path.isAbsolute(command)) return undefined;
    return exts.map((e) => command + e).find(isExecutable);
  }
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const found = exts.map((e) => path.join(dir, command + e)).find(isExecutable);
    if (found) return found;
  }
  return undefined;
}
