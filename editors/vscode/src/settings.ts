// `shardlens.*` VS Code settings → the server's settings object (server/README.md, "Settings").
// No `vscode` import: unit-tested under plain Node.
//
// Only values the user set (user, workspace or folder settings) are sent; defaults are not, so
// `[tool.shardlens]` in pyproject.toml, which the server reads below the client's settings, still
// applies where the user has not chosen otherwise. Invalid values are reported here and left out.
//
// The execution settings (allowExecution, exactGraph, python) let the server run code: the user's
// script for an export, a TorchScript archive's ops when it loads `model.pt`. They are read from
// the user's settings only (never a workspace's `.vscode/settings.json`, which a cloned repository
// brings) and not sent at all in an untrusted workspace. The memory budget is the user's too: a
// repository that could raise it could make the server use all the machine's memory.

import { parseMesh } from './mesh';

export const EXECUTION_KEYS = ['allowExecution', 'exactGraph', 'python', 'memoryBudgetMiB'] as const;
export const SERVER_KEYS = ['meshes', 'strategy', 'batch', 'seq', 'inputs', 'phase', 'dtype', 'hardware', 'model', 'pythonPath', ...EXECUTION_KEYS] as const;
export type ServerKey = (typeof SERVER_KEYS)[number];
export type ExecutionKey = (typeof EXECUTION_KEYS)[number];

export const ENUMS = {
  strategy: ['auto', 'tensor'],
  phase: ['prefill', 'decode'],
  dtype: ['bf16', 'fp32', 'bfp8'],
  hardware: ['wormhole', 'blackhole'],
} as const;

export interface ServerSettings {
  meshes?: string[];
  strategy?: string;
  batch?: number;
  seq?: number;
  inputs?: string[];
  phase?: string;
  dtype?: string;
  hardware?: string;
  model?: string;
  pythonPath?: string[];
  allowExecution?: boolean;
  exactGraph?: boolean;
  python?: string;
  memoryBudgetMiB?: number;
}

// The part of vscode.WorkspaceConfiguration.inspect()'s result used here.
export interface Inspection<T = unknown> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

// The value a user set, most specific scope first; undefined when only the default applies.
export function explicitValue<T>(inspection: Inspection<T> | undefined): T | undefined {
  if (!inspection) return undefined;
  for (const v of [inspection.workspaceFolderValue, inspection.workspaceValue, inspection.globalValue])
    if (v !== undefined && v !== null) return v;
  return undefined;
}

export const isExecutionKey = (key: string): key is ExecutionKey => (EXECUTION_KEYS as readonly string[]).includes(key);

// The value of `shardlens.<key>` the server may get: for the execution settings the user's own
// (user settings) value, and nothing in an untrusted workspace; for the others explicitValue().
export function settingValue<T>(key: ServerKey, inspection: Inspection<T> | undefined, trusted: boolean): T | undefined {
  if (!isExecutionKey(key)) return explicitValue(inspection);
  if (!trusted || !inspection) return undefined;
  const v = inspection.globalValue;
  return v === null ? undefined : v;
}

export interface Mapped {
  settings: ServerSettings;
  problems: string[]; // one message per rejected value, e.g. "shardlens.batch must be a positive integer, not 0"
}

const show = (v: unknown): string => JSON.stringify(v) ?? String(v);

// `value(key)` gives the explicit value of `shardlens.<key>` (undefined when unset).
export function toServerSettings(value: (key: ServerKey) => unknown): Mapped {
  const settings: ServerSettings = {};
  const problems: string[] = [];

  const meshes = value('meshes');
  if (meshes !== undefined) {
    const list = typeof meshes === 'string' ? [meshes] : meshes;
    if (!Array.isArray(list)) {
      problems.push(`shardlens.meshes must be a list of meshes like ["1x8"], not ${show(meshes)}`);
    } else if (list.length === 0) {
      problems.push('shardlens.meshes must not be empty');
    } else {
      let bad: string | undefined;
      for (const m of list) {
        if (typeof m !== 'string') {
          bad = `shardlens.meshes: entries must be strings like "1x8" or "t3k", not ${show(m)}`;
          break;
        }
        const r = parseMesh(m);
        if (!r.ok) {
          bad = `shardlens.meshes: ${r.error}`;
          break;
        }
      }
      if (bad) problems.push(bad);
      else settings.meshes = (list as string[]).map((m) => m.trim());
    }
  }

  for (const key of ['strategy', 'phase', 'dtype', 'hardware'] as const) {
    const v = value(key);
    if (v === undefined) continue;
    const allowed: readonly string[] = ENUMS[key];
    if (typeof v === 'string' && allowed.includes(v)) settings[key] = v;
    else problems.push(`shardlens.${key} must be ${allowed.join('|')}, not ${show(v)}`);
  }

  for (const key of ['batch', 'seq', 'memoryBudgetMiB'] as const) {
    const v = value(key);
    if (v === undefined) continue;
    if (typeof v === 'number' && Number.isInteger(v) && v > 0) settings[key] = v;
    else problems.push(`shardlens.${key} must be a positive integer, not ${show(v)}`);
  }

  {
    // forward() inputs, NAME=SHAPE[:DTYPE] (the server checks the dtype and says so).
    const v = value('inputs');
    if (v !== undefined) {
      const list = typeof v === 'string' ? [v] : v;
      const spec = /^[A-Za-z_][A-Za-z0-9_]*=[0-9]+([x,][0-9]+)*(:[A-Za-z0-9]+)?$/;
      if (Array.isArray(list) && list.every((s) => typeof s === 'string' && spec.test(s.trim())))
        settings.inputs = (list as string[]).map((s) => s.trim());
      else problems.push(`shardlens.inputs must be a list of NAME=SHAPE[:DTYPE] such as "input_ids=1x128:int64", not ${show(v)}`);
    }
  }

  {
    // Folders searched for imports after the script's own (relative ones from the document's folder).
    const v = value('pythonPath');
    if (v !== undefined) {
      const list = typeof v === 'string' ? [v] : v;
      if (Array.isArray(list) && list.every((s) => typeof s === 'string'))
        settings.pythonPath = (list as string[]).map((s) => s.trim()).filter((s) => s !== '');
      else problems.push(`shardlens.pythonPath must be a list of folders, not ${show(v)}`);
    }
  }

  for (const key of ['model', 'python'] as const) {
    const v = value(key);
    if (v === undefined) continue;
    if (typeof v !== 'string') problems.push(`shardlens.${key} must be a string, not ${show(v)}`);
    else if (v.trim() !== '') settings[key] = v.trim();
  }

  for (const key of ['allowExecution', 'exactGraph'] as const) {
    const v = value(key);
    if (v === undefined) continue;
    if (typeof v === 'boolean') settings[key] = v;
    else problems.push(`shardlens.${key} must be true or false, not ${show(v)}`);
  }
  return { settings, problems };
}

// Keys the server was started with (initializationOptions) that the user has since unset. The
// server keeps initializationOptions below later settings but never forgets them, so dropping one
// of those keys needs a new server to fall back to the default or pyproject.toml.
export function keysDroppedSinceStart(atStart: ServerSettings, now: ServerSettings): ServerKey[] {
  return SERVER_KEYS.filter((k) => atStart[k] !== undefined && now[k] === undefined);
}

export type ConfigTarget = 'global' | 'workspace' | 'workspaceFolder';

// Where `Shardlens: Select mesh` writes `shardlens.meshes`: the folder's settings when the value
// comes from there (a write anywhere else would be shadowed), else the workspace when one is open,
// else the user settings.
export function meshesTarget(inspection: Inspection | undefined, workspaceOpen: boolean, inFolder: boolean): ConfigTarget {
  if (inFolder && inspection?.workspaceFolderValue !== undefined) return 'workspaceFolder';
  return workspaceOpen ? 'workspace' : 'global';
}
