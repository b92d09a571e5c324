-- shardlens.nvim: Neovim client for `shardlens serve` (server/README.md is the interface).
--
--   require("shardlens").setup({
--     cmd = { "shardlens", "serve" },          -- how to start the server
--     settings = { meshes = { "1x8" } },       -- server settings (meshes, strategy, batch, ...)
--     filetypes = { "python" },
--   })
--
-- Neovim 0.7: vim.lsp.start_client + FileType/BufEnter autocmds, one client per root directory.
-- Neovim 0.8-0.10: vim.lsp.start from the same autocmds (it reuses a client per name + root).
-- Neovim 0.11+: vim.lsp.config("shardlens", ...) + vim.lsp.enable("shardlens").
local M = {}

local api = vim.api
local uv = vim.loop

local NAME = "shardlens"
local KIND_ANNOTATIONS = "source.shardlens.insertAnnotations"
local KIND_LOAD_SHARD_SPEC = "source.shardlens.insertLoadShardSpec"
local MESH_COMPLETIONS = { "1x2", "1x4", "1x8", "1x32", "2x4", "4x8", "8x4", "t3k", "galaxy" }

local has_config_api = vim.fn.has("nvim-0.11") == 1 and type(vim.lsp.config) ~= "nil" and vim.lsp.enable ~= nil
local has_start = vim.lsp.start ~= nil -- 0.8+
local method_calls = vim.fn.has("nvim-0.11") == 1 -- client:request() instead of client.request()

local state = {
  cmd = { "shardlens", "serve" },
  settings = {},
  filetypes = { "python" },
  root_markers = { "pyproject.toml", ".git" },
  user = {}, -- on_attach, on_exit, capabilities, handlers passed through to the client
  roots = {}, -- Neovim 0.7: root_dir -> client id
  buffers = {}, -- bufnr -> client id it was attached to (clients may not be initialized yet)
  warned_cmd = false,
  codelens = true,
}

-- Messages -------------------------------------------------------------------------------------

local function notify(msg, level)
  vim.notify("shardlens: " .. msg, level or vim.log.levels.INFO)
end

local function format_error(err)
  if type(err) ~= "table" then
    return tostring(err)
  end
  local msg = err.message or vim.inspect(err)
  if err.code then
    msg = string.format("%s (code %s)", msg, tostring(err.code))
  end
  return msg
end

-- Settings -------------------------------------------------------------------------------------

-- A Lua table as JSON sees it: empty tables become objects, not arrays.
local function as_object(t)
  local copy = vim.deepcopy(t or {})
  if next(copy) == nil then
    return vim.empty_dict()
  end
  return copy
end

local function normalize_settings(settings)
  settings = settings or {}
  -- Accept { shardlens = { ... } } as well as the settings object itself.
  if type(settings.shardlens) == "table" and next(settings, next(settings)) == nil then
    settings = settings.shardlens
  end
  if type(settings.meshes) == "string" then
    settings.meshes = { settings.meshes }
  end
  return vim.deepcopy(settings)
end

--- The settings currently sent to the server (a copy).
function M.settings()
  return vim.deepcopy(state.settings)
end

local function lookup_section(settings, section)
  local value = settings
  if section == nil or section == "" then
    return value
  end
  for part in vim.gsplit(section, ".", true) do
    if type(value) ~= "table" then
      return vim.NIL
    end
    value = value[part]
    if value == nil then
      return vim.NIL
    end
  end
  return value
end

--- Handler for the server's `workspace/configuration` requests: answers every item, in order,
--- from the stored settings (`{ shardlens = settings }`), `null` for sections we do not know.
function M.on_configuration(_, params)
  local response = {}
  local root = { [NAME] = as_object(state.settings) }
  for i, item in ipairs((params and params.items) or {}) do
    local value = lookup_section(root, item.section)
    if type(value) == "table" and next(value) == nil then
      value = vim.empty_dict()
    end
    response[i] = value
  end
  return response
end

-- Clients --------------------------------------------------------------------------------------

local function all_clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

--- Running shardlens clients (all of them, or those attached to `bufnr`).
function M.clients(bufnr)
  local out = {}
  for _, client in ipairs(all_clients()) do
    if client.name == NAME and (bufnr == nil or vim.lsp.buf_is_attached(bufnr, client.id)) then
      table.insert(out, client)
    end
  end
  return out
end

local function request(client, method, params, handler, bufnr)
  if method_calls then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function buffer_client(bufnr)
  local client = M.clients(bufnr)[1]
  if not client then
    notify("no shardlens server is attached to this buffer", vim.log.levels.WARN)
  end
  return client
end

-- After a settings change: what a client reports and what future clients start with.
local function publish_settings()
  for _, client in ipairs(M.clients()) do
    client.config.settings = { [NAME] = as_object(state.settings) }
    if method_calls and client.settings ~= nil then
      client.settings = { [NAME] = as_object(state.settings) }
    end
  end
  if has_config_api then
    vim.lsp.config(NAME, {
      init_options = as_object(state.settings),
      settings = { [NAME] = as_object(state.settings) },
    })
  end
end

-- Root directory: the nearest directory with one of the markers, else the file's directory.
function M.root_dir(path)
  if path == nil or path == "" then
    return uv.cwd()
  end
  local dir = vim.fn.fnamemodify(path, ":p:h")
  local cur = dir
  while true do
    for _, marker in ipairs(state.root_markers) do
      local sep = cur:sub(-1) == "/" and "" or "/"
      if uv.fs_stat(cur .. sep .. marker) then
        return cur
      end
    end
    local parent = vim.fn.fnamemodify(cur, ":h")
    if parent == cur then
      break
    end
    cur = parent
  end
  return dir
end

-- Code lenses ("1x8: 2 all-reduce · 8.0 MiB per forward × 24 blocks") kept fresh in the buffer.
function M._codelens(client, bufnr)
  local caps = client.server_capabilities or {}
  if not state.codelens or not caps.codeLensProvider then
    return
  end
  local codelens = vim.lsp.codelens
  if codelens.enable then -- newer Neovim refreshes by itself once enabled
    pcall(codelens.enable, true, { bufnr = bufnr })
    return
  end
  local group = api.nvim_create_augroup("shardlens_codelens_" .. bufnr, { clear = true })
  api.nvim_create_autocmd({ "BufEnter", "CursorHold", "InsertLeave" }, {
    group = group,
    buffer = bufnr,
    callback = function()
      pcall(codelens.refresh)
    end,
  })
  if bufnr == api.nvim_get_current_buf() then
    pcall(codelens.refresh)
  end
end

local function capabilities()
  local caps = state.user.capabilities or vim.lsp.protocol.make_client_capabilities()
  caps = vim.deepcopy(caps)
  caps.workspace = caps.workspace or {}
  caps.workspace.configuration = true -- Neovim 0.7 answers it but does not say so
  return caps
end

-- Diagnostics are published when a plan is ready: the moment to ask for fresh code lenses too.
local function on_publish_diagnostics(err, result, ctx, config)
  local ret = vim.lsp.handlers["textDocument/publishDiagnostics"](err, result, ctx, config)
  if state.codelens and not vim.lsp.codelens.enable and result and result.uri then
    local bufnr = api.nvim_get_current_buf()
    if vim.uri_from_bufnr(bufnr) == result.uri and vim.lsp.buf_is_attached(bufnr, ctx.client_id) then
      pcall(vim.lsp.codelens.refresh)
    end
  end
  return ret
end

local function client_config(root)
  local handlers = vim.tbl_extend("force", {
    ["workspace/configuration"] = M.on_configuration,
    ["textDocument/publishDiagnostics"] = on_publish_diagnostics,
  }, state.user.handlers or {})
  local config = {
    name = NAME,
    cmd = vim.deepcopy(state.cmd),
    root_dir = root,
    filetypes = vim.deepcopy(state.filetypes),
    init_options = as_object(state.settings),
    settings = { [NAME] = as_object(state.settings) },
    capabilities = capabilities(),
    handlers = handlers,
    before_init = function(params)
      -- A client may start long after setup(): send the settings as they are now.
      params.initializationOptions = as_object(state.settings)
    end,
    on_attach = function(client, bufnr)
      M._codelens(client, bufnr)
      if state.user.on_attach then
        state.user.on_attach(client, bufnr)
      end
    end,
    on_exit = function(code, signal, client_id)
      for r, id in pairs(state.roots) do
        if id == client_id then
          state.roots[r] = nil
        end
      end
      for b, id in pairs(state.buffers) do
        if id == client_id then
          state.buffers[b] = nil
        end
      end
      if state.user.on_exit then
        state.user.on_exit(code, signal, client_id)
      end
    end,
  }
  if root == nil then
    config.root_dir = nil
  end
  return config
end

local function cmd_ok()
  local exe = state.cmd[1]
  if type(exe) ~= "string" or vim.fn.executable(exe) ~= 1 then
    if not state.warned_cmd then
      state.warned_cmd = true
      notify(string.format("cannot run the server %q: not found or not executable; set `cmd` in "
        .. "require('shardlens').setup()", tostring(exe)), vim.log.levels.ERROR)
    end
    return false
  end
  return true
end

local function wanted(bufnr)
  if not api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  if api.nvim_buf_get_name(bufnr) == "" then
    return false
  end
  return vim.tbl_contains(state.filetypes, vim.bo[bufnr].filetype)
end

--- Start (or reuse) the client for `bufnr`'s root directory and attach the buffer.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  if not wanted(bufnr) or #M.clients(bufnr) > 0 then
    return
  end
  local known = state.buffers[bufnr]
  if known ~= nil and vim.lsp.get_client_by_id(known) ~= nil then
    return
  end
  if not cmd_ok() then
    return
  end
  local root = M.root_dir(api.nvim_buf_get_name(bufnr))
  if has_start then
    local ok, result = pcall(vim.lsp.start, client_config(root), { bufnr = bufnr })
    if not ok then
      notify("could not start the server: " .. tostring(result), vim.log.levels.ERROR)
    else
      state.buffers[bufnr] = result
    end
    return
  end
  local id = state.roots[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    local ok, result = pcall(vim.lsp.start_client, client_config(root))
    if not ok or result == nil then
      notify("could not start the server: " .. tostring(result), vim.log.levels.ERROR)
      return
    end
    id = result
    state.roots[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  state.buffers[bufnr] = id
end

--- Stops attaching buffers and stops every shardlens server (`shutdown` + `exit`).
function M.stop()
  pcall(api.nvim_del_augroup_by_name, "shardlens")
  if has_config_api then
    pcall(vim.lsp.enable, NAME, false)
  end
  local ids, seen = {}, {}
  local function add(id)
    if id ~= nil and not seen[id] then
      seen[id] = true
      table.insert(ids, id)
    end
  end
  for _, client in ipairs(M.clients()) do
    add(client.id)
  end
  for _, id in pairs(state.buffers) do
    add(id)
  end
  vim.lsp.stop_client(ids)
  state.roots, state.buffers = {}, {}
end

-- Commands -------------------------------------------------------------------------------------

local function execute(client, command, arguments, bufnr, on_done)
  request(client, "workspace/executeCommand", { command = command, arguments = arguments },
    function(err, result)
      if on_done then
        on_done(err, result)
      end
    end, bufnr)
end

local function open_text(text, filetype)
  vim.cmd("new")
  local buf = api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n", true))
  vim.bo[buf].filetype = filetype
end

--- :ShardlensReport: `shardlens.generateReport [uri]`.
function M.report(bufnr, on_done)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local client = buffer_client(bufnr)
  if not client then
    return
  end
  execute(client, "shardlens.generateReport", { vim.uri_from_bufnr(bufnr) }, bufnr, function(err, result)
    if err then
      notify("generateReport failed: " .. format_error(err), vim.log.levels.ERROR)
    elseif type(result) == "string" and result:find("\n") then
      open_text(result, "markdown")
    else
      local where = result
      if type(result) == "table" then
        where = result.path or result.file or result.uri or result.output
      end
      if type(where) == "string" and where ~= "" then
        if where:match("^file:") then
          where = vim.uri_to_fname(where)
        end
        notify("report written to " .. where)
      else
        notify("report generated")
      end
    end
    if on_done then
      on_done(err, result)
    end
  end)
end

--- :ShardlensMesh 1x8 8x4: `shardlens.setMeshes [[meshes]]` on every server; stored settings
--- follow (what `workspace/configuration` answers and what new servers start with).
function M.set_meshes(meshes, on_done)
  local list = {}
  for _, arg in ipairs(meshes or {}) do
    for mesh in tostring(arg):gmatch("[^,%s]+") do
      if not (mesh:match("^%d+x%d+$") or mesh:match("^%a[%w_-]*$")) then
        notify(string.format("%q is not a mesh (RxC such as 1x8, or a preset such as t3k)", mesh),
          vim.log.levels.ERROR)
        return
      end
      table.insert(list, mesh)
    end
  end
  if #list == 0 then
    local current = state.settings.meshes
    notify("meshes: " .. (current and table.concat(current, " ") or "server default"))
    return
  end
  local previous = state.settings.meshes
  state.settings.meshes = list
  publish_settings()
  local clients = M.clients()
  if #clients == 0 then
    notify("meshes set to " .. table.concat(list, " ") .. " (no server running yet)")
    if on_done then
      on_done(nil, nil)
    end
    return
  end
  local pending, failures = #clients, 0
  for _, client in ipairs(clients) do
    execute(client, "shardlens.setMeshes", { list }, nil, function(err, result)
      if err then
        failures = failures + 1
        notify("setMeshes failed: " .. format_error(err), vim.log.levels.ERROR)
      end
      pending = pending - 1
      if pending == 0 then
        if failures == #clients then
          state.settings.meshes = previous
          publish_settings()
        else
          notify("meshes: " .. table.concat(list, " "))
        end
        if on_done then
          on_done(err, result)
        end
      end
    end)
  end
end

local function apply_action(client, action, bufnr, on_done)
  local function finish(err)
    if err then
      notify("code action failed: " .. format_error(err), vim.log.levels.ERROR)
    end
    if on_done then
      on_done(err, action)
    end
  end
  local function run(resolved)
    if resolved.edit then
      vim.lsp.util.apply_workspace_edit(resolved.edit, client.offset_encoding or "utf-16")
    end
    local command = resolved.command
    if type(command) == "table" then
      execute(client, command.command, command.arguments, bufnr, function(err)
        finish(err)
      end)
    elseif type(command) == "string" then -- the action is a Command
      execute(client, command, resolved.arguments, bufnr, function(err)
        finish(err)
      end)
    else
      finish(nil)
    end
  end
  if action.edit == nil and type(action.command) ~= "string" then
    request(client, "codeAction/resolve", action, function(err, resolved)
      if err then
        finish(err)
      else
        run(resolved or action)
      end
    end, bufnr)
  else
    run(action)
  end
end

--- Runs the first code action of `kind` the server offers for the whole buffer.
function M.code_action(kind, bufnr, on_done)
  bufnr = (bufnr == nil or bufnr == 0) and api.nvim_get_current_buf() or bufnr
  local client = buffer_client(bufnr)
  if not client then
    return
  end
  local last = math.max(api.nvim_buf_line_count(bufnr) - 1, 0)
  local last_line = api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1] or ""
  local last_col = #last_line
  if client.offset_encoding ~= "utf-8" then
    last_col = 0
    for ch in last_line:gmatch("[%z\1-\127\194-\244][\128-\191]*") do
      last_col = last_col + ((#ch == 4 and 2) or 1)
    end
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = last, character = last_col } },
    context = { diagnostics = {}, only = { kind } },
  }
  request(client, "textDocument/codeAction", params, function(err, actions)
    if err then
      notify("code actions failed: " .. format_error(err), vim.log.levels.ERROR)
      if on_done then
        on_done(err, nil)
      end
      return
    end
    for _, action in ipairs(actions or {}) do
      local k = action.kind
      if k == kind or (type(k) == "string" and k:sub(1, #kind + 1) == kind .. ".") then
        apply_action(client, action, bufnr, on_done)
        return
      end
    end
    notify("the server offers no " .. kind .. " action for this buffer", vim.log.levels.WARN)
    if on_done then
      on_done({ message = "no action" }, nil)
    end
  end, bufnr)
end

--- :ShardlensAnnotate: the "Insert Shardy annotations (tt-xla)" source action.
function M.annotate(bufnr, on_done)
  M.code_action(KIND_ANNOTATIONS, bufnr, on_done)
end

--- The "Insert load_shard_spec()" source action.
function M.insert_load_shard_spec(bufnr, on_done)
  M.code_action(KIND_LOAD_SHARD_SPEC, bufnr, on_done)
end

local function create_commands()
  api.nvim_create_user_command("ShardlensReport", function()
    M.report(0)
  end, { nargs = 0, desc = "shardlens: write sharding_analysis.md for this script" })
  api.nvim_create_user_command("ShardlensMesh", function(args)
    M.set_meshes(args.fargs)
  end, {
    nargs = "*",
    desc = "shardlens: set the meshes to plan for (e.g. :ShardlensMesh 1x8 8x4)",
    complete = function(lead)
      return vim.tbl_filter(function(m)
        return m:sub(1, #lead) == lead
      end, MESH_COMPLETIONS)
    end,
  })
  api.nvim_create_user_command("ShardlensAnnotate", function()
    M.annotate(0)
  end, { nargs = 0, desc = "shardlens: insert Shardy annotations (tt-xla)" })
  api.nvim_create_user_command("ShardlensLoadShardSpec", function()
    M.insert_load_shard_spec(0)
  end, { nargs = 0, desc = "shardlens: insert load_shard_spec()" })
end

-- Setup ----------------------------------------------------------------------------------------

--- @param opts table|nil { cmd, settings, filetypes, root_markers, codelens (default true),
---                       on_attach, on_exit, capabilities, handlers }
function M.setup(opts)
  opts = opts or {}
  local types = {
    cmd = { "table", "string" }, settings = { "table" }, filetypes = { "table" },
    root_markers = { "table" }, on_attach = { "function" }, on_exit = { "function" },
    capabilities = { "table" }, handlers = { "table" }, codelens = { "boolean" },
  }
  for key, allowed in pairs(types) do
    if opts[key] ~= nil and not vim.tbl_contains(allowed, type(opts[key])) then
      error(string.format("shardlens.setup: `%s` must be a %s, got %s", key,
        table.concat(allowed, " or "), type(opts[key])), 2)
    end
  end
  local cmd = opts.cmd or { "shardlens", "serve" }
  if type(cmd) == "string" then
    cmd = { cmd, "serve" }
  end
  state.cmd = vim.deepcopy(cmd)
  state.settings = normalize_settings(opts.settings)
  state.filetypes = vim.deepcopy(opts.filetypes or { "python" })
  state.root_markers = vim.deepcopy(opts.root_markers or { "pyproject.toml", ".git" })
  state.user = {
    on_attach = opts.on_attach,
    on_exit = opts.on_exit,
    capabilities = opts.capabilities,
    handlers = opts.handlers,
  }
  state.warned_cmd = false
  state.codelens = opts.codelens ~= false

  create_commands()
  local group = api.nvim_create_augroup("shardlens", { clear = true })

  if has_config_api then
    local config = client_config(nil)
    config.root_dir = function(a, b)
      -- (bufnr, on_dir) since 0.11; tolerate (on_dir) too.
      local bufnr, on_dir = a, b
      if type(a) == "function" then
        bufnr, on_dir = api.nvim_get_current_buf(), a
      end
      if wanted(bufnr) then
        on_dir(M.root_dir(api.nvim_buf_get_name(bufnr)))
      end
    end
    vim.lsp.config(NAME, config)
    vim.lsp.enable(NAME)
    -- Buffers already open: enable() may or may not start them (depends on the version).
    vim.schedule(function()
      for _, bufnr in ipairs(api.nvim_list_bufs()) do
        if api.nvim_buf_is_loaded(bufnr) and #M.clients(bufnr) == 0 then
          M.attach(bufnr)
        end
      end
    end)
    return
  end

  api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = state.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  for _, bufnr in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(bufnr) then
      M.attach(bufnr)
    end
  end
end

return M
