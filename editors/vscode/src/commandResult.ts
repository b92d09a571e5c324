// What the client makes of `workspace/executeCommand` results and errors: where a generated report or
// graph is to be opened, and the message a failure shows. No `vscode` import: unit-tested under Node.

export type Output =
  | { kind: 'file'; path: string } // a file path on the server's machine (= this one)
  | { kind: 'uri'; uri: string } // a URI, usually file://
  | { kind: 'text'; text: string } // the document itself (Markdown)
  | { kind: 'none'; message: string }; // nothing to open

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const URI_SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]+:\/\//;

function fromString(s: string): Output {
  if (s.includes('\n')) return { kind: 'text', text: s };
  if (URI_SCHEME.test(s) || s.startsWith('file:')) return { kind: 'uri', uri: s };
  return { kind: 'file', path: s };
}

// `shardlens.generateReport` / `shardlens.exportGraph` results: `{path}` or `{uri}` (also `file`,
// `output`), a bare path/URI string, or the Markdown text itself.
export function outputOf(result: unknown, what: string): Output {
  if (typeof result === 'string' && result.trim() !== '') return fromString(result.trim());
  if (isObject(result)) {
    if (typeof result.uri === 'string' && result.uri) return { kind: 'uri', uri: result.uri };
    for (const key of ['path', 'file', 'output']) {
      const v = result[key];
      if (typeof v === 'string' && v) return fromString(v);
    }
    for (const key of ['markdown', 'text', 'content']) {
      const v = result[key];
      if (typeof v === 'string' && v) return { kind: 'text', text: v };
    }
  }
  return { kind: 'none', message: `Shardlens: ${what} finished but returned nothing to open.` };
}

// The parts of a vscode-jsonrpc ResponseError (or any Error) used here.
export interface ErrorLike {
  code?: number;
  message?: string;
}

export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const REQUEST_CANCELLED = -32800;

// The server advertises its commands in `capabilities.executeCommandProvider.commands`.
export function advertisedCommands(initializeResult: unknown): string[] | undefined {
  if (!isObject(initializeResult) || !isObject(initializeResult.capabilities)) return undefined;
  const provider = initializeResult.capabilities.executeCommandProvider;
  if (!isObject(provider) || !Array.isArray(provider.commands)) return undefined;
  return provider.commands.filter((c): c is string => typeof c === 'string');
}

export function serverVersion(initializeResult: unknown): string | undefined {
  if (!isObject(initializeResult) || !isObject(initializeResult.serverInfo)) return undefined;
  const v = initializeResult.serverInfo.version;
  return typeof v === 'string' ? v : undefined;
}

export function unsupportedMessage(command: string, version: string | undefined): string {
  return (
    `Shardlens: this shardlens server${version ? ` (${version})` : ''} does not provide '${command}' yet. ` +
    'Update shardlens, or set shardlens.server.path to a newer build.'
  );
}

// True when the error says the server does not know the command (this server answers an unknown
// command with -32602 "unknown command '...'"; others use -32601).
export function isUnknownCommand(error: ErrorLike): boolean {
  return error.code === METHOD_NOT_FOUND || /unknown command/i.test(error.message ?? '');
}

// The message to show for a failed command, or undefined for one the user cancelled.
export function commandErrorMessage(command: string, error: unknown, version?: string): string | undefined {
  const e: ErrorLike = isObject(error) || error instanceof Error ? (error as ErrorLike) : { message: String(error) };
  if (e.code === REQUEST_CANCELLED) return undefined;
  if (isUnknownCommand(e)) return unsupportedMessage(command, version);
  const text = (e.message ?? String(error)).trim() || 'no reason given';
  return `Shardlens: ${command} failed: ${text}`;
}

// `shardlens.insertAnnotations` / `insertLoadShardSpec` answer `{applied: bool}`.
export function insertMessage(result: unknown, what: string): string | undefined {
  if (isObject(result) && result.applied === true) return undefined;
  return `Shardlens: ${what} was not applied (the file changed meanwhile, or the edit was refused).`;
}
