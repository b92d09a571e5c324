-- Headless Neovim (0.7.2+) session against `shardlens serve`, through editors/neovim.
--
--   SHARDLENS=build/shardlens nvim --headless --clean -u NONE -c 'luafile tests/nvim/test_nvim.lua'
--
-- (tests/nvim/run_nvim_test.sh does this with a private XDG home and prints the LSP log on failure.)
-- Environment: SHARDLENS (server binary, required), SHARDLENS_FIXTURE (gpt.py to copy; default
-- ../shared/fixtures/gpt.py beside the repository), SHARDLENS_TEST_TMP (scratch directory),
-- SHARDLENS_WAIT_MS (per step, default 30000).
--
-- The script: a copy of the GPT fixture with 4 attention heads, which do not divide the 8 devices
-- of the default 1x8 mesh. Checks, in order:
--   1. the plugin starts one client, rooted at the directory holding pyproject.toml;
--   2. a `divisibility-heads` diagnostic from source "shardlens" arrives on the `n_head` line and
--      reaches vim.diagnostic;
--      code lenses "1x8: ..." appear above module classes;
--   3. hover on `self.down = nn.Linear(...)` is Markdown naming a collective; hover on a blank
--      line is null;
--   4. :ShardlensMesh 1x4 re-publishes diagnostics without the divisibility warning (4 heads divide
--      4) and updates the stored settings (what workspace/configuration answers);
--   5. :ShardlensAnnotate inserts the tt-xla block, which still parses; running it again replaces
--      the block instead of adding a second one;
--   6. :ShardlensReport answers, with a report or with the server's error shown as a message;
--   7. shutdown + exit: the server exits with code 0.
-- Any failure: a message on stderr and exit code 1.

local api = vim.api

local function say(msg)
  io.stderr:write("test_nvim: " .. msg .. "\n")
end

local Failure = {}
local function fail(msg)
  error(setmetatable({ msg = msg }, Failure), 0)
end

local function check(cond, msg)
  if not cond then
    fail(msg)
  end
end

local script = debug.getinfo(1, "S").source:gsub("^@", "")
local repo = vim.fn.fnamemodify(script, ":p:h:h:h")
local server = os.getenv("SHARDLENS")
local fixture = os.getenv("SHARDLENS_FIXTURE") or (repo .. "/../shared/fixtures/gpt.py")
local wait_ms = tonumber(os.getenv("SHARDLENS_WAIT_MS") or "") or 30000

-- Observations ---------------------------------------------------------------------------------

local published = {} -- every textDocument/publishDiagnostics, in arrival order
local notes = {} -- every vim.notify: { msg, level }
local exits = {} -- client id -> { code, signal }
local stopping = false

local orig_publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
  table.insert(published, vim.deepcopy(result))
  return orig_publish(err, result, ctx, config)
end

vim.lsp.handlers["window/showMessage"] = function(_, result)
  say(string.format("server window/showMessage (type %s): %s", tostring(result.type), result.message))
  return vim.NIL
end

vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level or vim.log.levels.INFO })
  say("notify: " .. tostring(msg))
end

local function errors_since(n)
  local out = {}
  for i = n + 1, #notes do
    if notes[i].level >= vim.log.levels.ERROR then
      table.insert(out, notes[i].msg)
    end
  end
  return out
end

local function server_gone()
  if stopping then
    return nil
  end
  for id, e in pairs(exits) do
    return string.format("the server (client %d) exited early with code %s, signal %s",
      id, tostring(e.code), tostring(e.signal))
  end
  return nil
end

-- Waits for `pred`, failing early when the server dies; returns whether it held.
local function wait_for(pred, ms)
  local ok = vim.wait(ms or wait_ms, function()
    return pred() or server_gone() ~= nil
  end, 20)
  local gone = server_gone()
  if gone then
    fail(gone)
  end
  return ok and pred()
end

local function summarize(diags)
  local parts = {}
  for _, d in ipairs(diags or {}) do
    table.insert(parts, string.format("{line %s, source %s, code %s: %s}",
      tostring(d.range and d.range.start and d.range.start.line), tostring(d.source), tostring(d.code),
      tostring(d.message)))
  end
  return #parts > 0 and table.concat(parts, "; ") or "(no diagnostics)"
end

local function publishes_for(uri, from)
  local out = {}
  for i = (from or 0) + 1, #published do
    if published[i].uri == uri then
      table.insert(out, published[i])
    end
  end
  return out
end

local function describe_publishes(uri, from)
  local list = publishes_for(uri, from)
  if #list == 0 then
    local others = {}
    for i = (from or 0) + 1, #published do
      table.insert(others, published[i].uri)
    end
    return "no publishDiagnostics for " .. uri
      .. (#others > 0 and (" (only for: " .. table.concat(others, ", ") .. ")") or "")
  end
  local parts = {}
  for i, p in ipairs(list) do
    table.insert(parts, string.format("#%d: %s", i, summarize(p.diagnostics)))
  end
  return #list .. " publishDiagnostics: " .. table.concat(parts, " | ")
end

local function find_line(lines, pattern)
  for i, l in ipairs(lines) do
    if l:find(pattern) then
      return i - 1, l
    end
  end
  return nil
end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local s = f:read("*a")
  f:close()
  return s
end

local function write_file(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function hover_text(contents)
  if contents == nil or contents == vim.NIL then
    return nil
  end
  if type(contents) == "string" then
    return contents, "plaintext"
  end
  if contents.value ~= nil and contents.kind ~= nil then -- MarkupContent
    return contents.value, contents.kind
  end
  if contents.value ~= nil then -- MarkedString { language, value }
    return contents.value, "marked"
  end
  local parts = {}
  for _, c in ipairs(contents) do
    table.insert(parts, type(c) == "string" and c or tostring(c.value))
  end
  return table.concat(parts, "\n"), "marked"
end

local function hover(bufnr, line, character)
  local uri = vim.uri_from_bufnr(bufnr)
  local params = { textDocument = { uri = uri }, position = { line = line, character = character } }
  local results, err = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, wait_ms)
  check(results ~= nil, string.format("textDocument/hover at %d:%d: no answer within %d ms (%s)",
    line, character, wait_ms, tostring(err)))
  local _, answer = next(results)
  check(answer ~= nil, string.format("textDocument/hover at %d:%d: no client answered", line, character))
  check(answer.err == nil, string.format("textDocument/hover at %d:%d: error %s", line, character,
    vim.inspect(answer.err)))
  return answer.result
end

local function count(text, needle)
  local n, from = 0, 1
  while true do
    local s, e = text:find(needle, from, true)
    if not s then
      return n
    end
    n, from = n + 1, e + 1
  end
end

-- The session ----------------------------------------------------------------------------------

local passed = 0
local function pass(msg)
  passed = passed + 1
  say("ok " .. passed .. " - " .. msg)
end

local function main()
  check(server and server ~= "", "set SHARDLENS to the shardlens binary (e.g. build/shardlens)")
  check(vim.fn.executable(server) == 1, "SHARDLENS=" .. server .. " is not an executable file")
  say("Neovim " .. tostring(vim.version().major) .. "." .. tostring(vim.version().minor) .. "."
    .. tostring(vim.version().patch) .. ", server " .. server)

  -- The project: <tmp>/proj/pyproject.toml and <tmp>/proj/models/gpt.py (4 heads).
  local source = read_file(fixture)
  check(source ~= nil, "cannot read the fixture " .. fixture .. " (set SHARDLENS_FIXTURE)")
  local edited, n = source:gsub("n_head: int = 16\n", "n_head: int = 4\n")
  check(n == 1, fixture .. ": expected exactly one `n_head: int = 16` line to change to 4, found " .. n)
  local tmp = os.getenv("SHARDLENS_TEST_TMP") or vim.fn.tempname()
  local proj = tmp .. "/proj"
  vim.fn.mkdir(proj .. "/models", "p")
  write_file(proj .. "/pyproject.toml", '[project]\nname = "shardlens-nvim-test"\nversion = "0"\n')
  local file = proj .. "/models/gpt.py"
  write_file(file, edited)
  proj = vim.loop.fs_realpath(proj)

  vim.opt.runtimepath:prepend(repo .. "/editors/neovim")
  local shardlens = require("shardlens")
  shardlens.setup({
    cmd = { server, "serve" },
    settings = { meshes = { "1x8" } },
    filetypes = { "python" },
    on_exit = function(code, signal, client_id)
      exits[client_id] = { code = code, signal = signal }
    end,
  })
  for _, name in ipairs({ "ShardlensReport", "ShardlensMesh", "ShardlensAnnotate" }) do
    check(vim.fn.exists(":" .. name) == 2, "setup() did not define :" .. name)
  end

  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = api.nvim_get_current_buf()
  check(vim.bo[buf].filetype == "python", "filetype of gpt.py is '" .. vim.bo[buf].filetype .. "', not python")
  local uri = vim.uri_from_bufnr(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)

  -- 1. One client, rooted at the project.
  check(wait_for(function()
    return #shardlens.clients(buf) > 0
  end), "no shardlens client attached to the buffer and initialized within " .. wait_ms .. " ms")
  local clients = shardlens.clients(buf)
  check(#clients == 1, "expected 1 shardlens client on the buffer, got " .. #clients)
  local client = clients[1]
  local root = vim.loop.fs_realpath(client.config.root_dir or "") or tostring(client.config.root_dir)
  check(root == proj, "client root_dir is " .. tostring(root) .. ", expected " .. proj .. " (pyproject.toml)")
  local caps = client.server_capabilities or client.resolved_capabilities or {}
  check(caps.hoverProvider, "server did not announce hoverProvider: " .. vim.inspect(caps))
  pass("one client, root " .. root)

  -- A second script of the same project shares the client.
  local other = proj .. "/models/other.py"
  write_file(other, "import torch.nn as nn\n\n\nclass Tiny(nn.Module):\n    def __init__(self):\n"
    .. "        super().__init__()\n        self.fc = nn.Linear(8, 8)\n")
  vim.cmd("edit " .. vim.fn.fnameescape(other))
  local other_buf = api.nvim_get_current_buf()
  check(wait_for(function()
    return vim.lsp.buf_is_attached(other_buf, client.id)
  end, 5000), "a second script under the same pyproject.toml was not attached to the same client")
  check(#shardlens.clients() == 1, "a second script of the same project started another client: "
    .. #shardlens.clients() .. " clients")
  vim.cmd("buffer " .. buf)
  pass("a second script of the project shares the client")

  -- 2. Divisibility diagnostic on the n_head line.
  local head_line, head_text = find_line(lines, "n_head: int = 4")
  local function divisibility(p)
    for _, d in ipairs(p.diagnostics or {}) do
      if d.source == "shardlens" and d.code == "divisibility-heads" then
        return d
      end
    end
  end
  local found
  check(wait_for(function()
    for _, p in ipairs(publishes_for(uri)) do
      found = divisibility(p) or found
    end
    return found ~= nil
  end), string.format("expected a diagnostic {source \"shardlens\", code \"divisibility-heads\"} for "
    .. "4 heads on mesh 1x8 at line %d (`%s`) within %d ms; got %s", head_line, head_text, wait_ms,
    describe_publishes(uri)))
  check(found.range.start.line == head_line, string.format(
    "divisibility-heads diagnostic at line %d, expected line %d (`%s`): %s", found.range.start.line,
    head_line, head_text, summarize({ found })))
  check(wait_for(function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.source == "shardlens" and d.lnum == head_line then
        return true
      end
    end
    return false
  end, 2000), "the diagnostic did not reach vim.diagnostic.get() for the buffer")
  pass(string.format("divisibility-heads at line %d: %s", head_line, found.message))

  -- Code lenses: the plugin refreshes them when a plan's diagnostics arrive.
  if caps.codeLensProvider then
    local titles = {}
    local lensed = wait_for(function()
      titles = {}
      for _, lens in ipairs(vim.lsp.codelens.get(buf) or {}) do
        if lens.command and lens.command.title then
          table.insert(titles, lens.command.title)
        end
      end
      for _, t in ipairs(titles) do
        if t:find("^1x8: ") then
          return true
        end
      end
      return false
    end)
    check(lensed, string.format("textDocument/codeLens: expected a lens titled \"1x8: ...\" above a module "
      .. "class within %d ms; got %s", wait_ms, #titles > 0 and table.concat(titles, " | ") or "none"))
    pass("code lenses: " .. titles[1])
  else
    fail("server did not announce codeLensProvider: " .. vim.inspect(caps))
  end

  -- 3. Hover on a layer, and on a blank line.
  local down_line, down_text = find_line(lines, "self%.down = nn%.Linear%(")
  check(down_line ~= nil, "fixture has no `self.down = nn.Linear(` line")
  local down_col = down_text:find("down", 1, true) - 1
  local result = hover(buf, down_line, down_col)
  check(result ~= nil and result ~= vim.NIL, string.format(
    "textDocument/hover at %d:%d (`%s`): expected Markdown naming a collective, got null",
    down_line, down_col, vim.trim(down_text)))
  local text, kind = hover_text(result.contents)
  check(kind == "markdown", string.format("hover at %d:%d: expected MarkupContent kind markdown, got %s: %s",
    down_line, down_col, tostring(kind), vim.inspect(result.contents)))
  local lower = (text or ""):lower()
  check(lower:find("all[-_ ]?reduce") or lower:find("all[-_ ]?gather"), string.format(
    "hover at %d:%d (`%s`) names no all-reduce / all-gather:\n%s", down_line, down_col,
    vim.trim(down_text), tostring(text)))
  pass(string.format("hover on mlp.down (%d:%d) names a collective", down_line, down_col))

  local blank_line = find_line(lines, "^$")
  local blank = hover(buf, blank_line, 0)
  check(blank == nil or blank == vim.NIL, string.format("hover on blank line %d: expected null, got %s",
    blank_line, vim.inspect(blank)))
  pass("hover on a blank line is null")

  -- 4. :ShardlensMesh 1x4 re-plans: 4 heads divide 4.
  local before, notes_before = #published, #notes
  vim.cmd("ShardlensMesh 1x4")
  local latest
  local replanned = wait_for(function()
    for _, p in ipairs(publishes_for(uri, before)) do
      latest = p
      if not divisibility(p) then
        return true
      end
    end
    return false
  end)
  local errs = errors_since(notes_before)
  check(replanned, string.format(":ShardlensMesh 1x4 (workspace/executeCommand shardlens.setMeshes "
    .. "[[\"1x4\"]]): expected diagnostics re-published without divisibility-heads within %d ms; got %s%s",
    wait_ms, describe_publishes(uri, before),
    #errs > 0 and ("; messages: " .. table.concat(errs, " / ")) or ""))
  check(#errs == 0, ":ShardlensMesh 1x4 reported: " .. table.concat(errs, " / "))
  check(vim.deep_equal(shardlens.settings().meshes, { "1x4" }),
    "stored meshes after :ShardlensMesh 1x4: " .. vim.inspect(shardlens.settings().meshes))
  local answer = shardlens.on_configuration(nil, { items = { { section = "shardlens" } } })
  check(type(answer[1]) == "table" and vim.deep_equal(answer[1].meshes, { "1x4" }),
    "workspace/configuration answer after :ShardlensMesh 1x4: " .. vim.inspect(answer))
  pass("ShardlensMesh 1x4 re-published diagnostics: " .. summarize(latest.diagnostics))

  -- 5. :ShardlensAnnotate inserts the tt-xla block; a second run replaces it.
  local BEGIN, END = "# >>> shardlens tt-xla sharding >>>", "# <<< shardlens tt-xla sharding <<<"
  local function buffer_text()
    return table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
  end
  notes_before = #notes
  vim.cmd("ShardlensAnnotate")
  local inserted = wait_for(function()
    local t = buffer_text()
    return t:find(BEGIN, 1, true) ~= nil and t:find(END, 1, true) ~= nil
  end)
  errs = errors_since(notes_before)
  check(inserted, string.format(":ShardlensAnnotate (textDocument/codeAction only=[%s], then "
    .. "codeAction/resolve): expected the buffer to contain %q ... %q within %d ms; %s",
    "source.shardlens.insertAnnotations", BEGIN, END, wait_ms,
    #errs > 0 and ("messages: " .. table.concat(errs, " / ")) or "no error message; buffer unchanged"))
  local annotated = buffer_text()
  check(annotated:find("mark_sharding", 1, true), "the inserted block has no xs.mark_sharding call:\n" .. annotated)
  if vim.fn.executable("python3") == 1 then
    local out = vim.fn.system({ "python3", "-c", "import ast, sys; ast.parse(sys.stdin.read())" }, annotated)
    check(vim.v.shell_error == 0, "the annotated script does not parse:\n" .. out .. "\n" .. annotated)
  end
  local done, action_err = false, nil
  shardlens.annotate(buf, function(err)
    done, action_err = true, err
  end)
  check(wait_for(function()
    return done
  end), "second insertAnnotations: no answer within " .. wait_ms .. " ms")
  check(action_err == nil, "second insertAnnotations failed: " .. vim.inspect(action_err))
  local again = buffer_text()
  check(count(again, BEGIN) == 1 and count(again, END) == 1, string.format(
    "insertAnnotations twice: expected one block (markers once each), got %d begin / %d end markers:\n%s",
    count(again, BEGIN), count(again, END), again))
  pass("ShardlensAnnotate inserted one parsing tt-xla block, idempotent")

  -- 6. :ShardlensReport: a report, or the server's error shown cleanly (the command may be missing).
  notes_before = #notes
  vim.cmd("ShardlensReport")
  local reported = wait_for(function()
    for i = notes_before + 1, #notes do
      local m = notes[i].msg
      if m:find("^shardlens: report") or m:find("^shardlens: generateReport failed: ") then
        return true
      end
    end
    return vim.bo[api.nvim_get_current_buf()].filetype == "markdown"
  end)
  check(reported, ":ShardlensReport: neither a report nor an error message within " .. wait_ms .. " ms")
  local last = notes[#notes] and notes[#notes].msg or "(report opened in a window)"
  if last:find("failed", 1, true) then
    say("note: shardlens.generateReport is not available yet; the plugin showed: " .. last)
  end
  pass(":ShardlensReport answered: " .. last)
  if vim.fn.bufnr("%") ~= buf then
    vim.cmd("buffer " .. buf)
  end

  -- 7. Shutdown + exit.
  stopping = true
  local id = client.id
  shardlens.stop()
  check(wait_for(function()
    return exits[id] ~= nil
  end, 10000), "the server did not exit within 10 s of shutdown + exit")
  check(exits[id].code == 0, string.format("the server exited with code %s (signal %s) after shutdown + exit, expected 0",
    tostring(exits[id].code), tostring(exits[id].signal)))
  pass("shutdown + exit: exit code 0")
end

local ok, err = xpcall(main, function(e)
  if getmetatable(e) == Failure then
    return e
  end
  return { msg = "Lua error: " .. debug.traceback(tostring(e), 2) }
end)
if ok then
  say(string.format("PASS: %d checks", passed))
  vim.cmd("qall!")
else
  say(string.format("FAIL after %d passed checks: %s", passed, err.msg))
  pcall(function()
    stopping = true
    require("shardlens").stop()
    vim.wait(2000, function()
      return #(vim.lsp.get_clients or vim.lsp.get_active_clients)() == 0
    end, 20)
  end)
  vim.cmd("cquit 1")
end
