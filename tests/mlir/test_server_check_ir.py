"""The language server's shardlens.checkIr command: the report as the answer, mismatches as diagnostics
at the script's lines (published with the document's own).

usage: test_server_check_ir.py PATH/TO/shardlens
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def send(proc, msg):
    body = json.dumps(msg).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()


def receive(proc):
    length = 0
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("server closed")
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    msg = json.loads(proc.stdout.read(length))
    if os.environ.get("DEBUG"):
        print(json.dumps(msg)[:300], file=sys.stderr)
    return msg


def wait_for(proc, pred):
    while True:
        m = receive(proc)
        if m.get("method") in ("workspace/configuration", "window/workDoneProgress/create", "client/registerCapability"):
            send(proc, {"jsonrpc": "2.0", "id": m["id"], "result": [None] * len(m.get("params", {}).get("items", [])) if m["method"] == "workspace/configuration" else None})
            continue
        if pred(m):
            return m


tmp = tempfile.mkdtemp(prefix="shardlens-lsp-ir-")
failures = []
try:
    script = os.path.join(tmp, "ffn.py")
    shutil.copy(os.path.join(HERE, "models", "ffn.py"), script)
    export = os.path.join(tmp, "export")
    os.makedirs(export)
    shutil.copy(os.path.join(HERE, "ir", "ffn_n300_wrong_dim.ttir.mlir"), export)
    shutil.copy(os.path.join(HERE, "ir", "ffn_n300_extra_all_gather.ttnn.mlir"), export)
    proc = subprocess.Popen([sys.argv[1], "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    uri = "file://" + script
    send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"processId": None, "rootUri": "file://" + tmp, "capabilities": {}, "initializationOptions": {"meshes": ["n300"]}}})
    init = wait_for(proc, lambda m: m.get("id") == 1)
    if "shardlens.checkIr" not in init["result"]["capabilities"]["executeCommandProvider"]["commands"]:
        failures.append("shardlens.checkIr is advertised")
    send(proc, {"jsonrpc": "2.0", "method": "initialized", "params": {}})
    send(proc, {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": open(script).read()}}})
    send(proc, {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {"command": "shardlens.checkIr", "arguments": [uri, "export"]}})
    # The diagnostics are published before the answer goes out: take both, in either order.
    answer, diag = None, None
    while answer is None or diag is None:
        m = wait_for(proc, lambda m: m.get("id") == 2 or m.get("method") == "textDocument/publishDiagnostics")
        if m.get("id") == 2:
            answer = m
        elif any(str(d.get("code", "")).startswith("ir-") for d in m["params"]["diagnostics"]):
            diag = m
    result = answer.get("result") or {}
    kinds = sorted(m["kind"] for m in result.get("mismatches", []))
    if result.get("verdict") != "mismatch" or kinds != ["extra", "weight_sharding"]:
        failures.append(f"the answer names both mismatches: {answer}")
    ir = [d for d in diag["params"]["diagnostics"] if str(d.get("code", "")).startswith("ir-")]
    weight = [d for d in ir if d["code"] == "ir-weight_sharding"]
    if len(ir) != 2 or not weight or weight[0]["range"]["start"]["line"] != 8:
        failures.append(f"diagnostics at the script's lines (up.weight on line 9): {ir}")
    send(proc, {"jsonrpc": "2.0", "id": 3, "method": "workspace/executeCommand", "params": {"command": "shardlens.checkIr", "arguments": [uri]}})
    bad = wait_for(proc, lambda m: m.get("id") == 3)
    if "error" not in bad:
        failures.append(f"no folder is an error: {bad}")
    send(proc, {"jsonrpc": "2.0", "id": 4, "method": "shutdown"})
    wait_for(proc, lambda m: m.get("id") == 4)
    send(proc, {"jsonrpc": "2.0", "method": "exit"})
    proc.wait(timeout=30)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
for f in failures:
    print("FAIL:", f)
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
