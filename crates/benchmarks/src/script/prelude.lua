-- dbmeter's sysbench 1.0 Lua API, run in every Lua state before the
-- script. `dbm` holds the functions dbmeter implements in Rust
-- (crates/benchmarks/src/script/state.rs); `info` says which command runs,
-- the thread id and where the script lives.
local dbm, info = ...

-- Lua's print() and dbmeter's report share stdout: lines go out in the
-- order they are written, pipe or not.
io.stdout:setvbuf("line")

-- sysbench's log: its FATAL and ALERT lines (on stdout as sysbench writes
-- them, when run as `dbmeter sysbench`; else on stderr), a message
-- repeated at once said only once, with the count before the next one.
local log_file = info.argv[0] == "sysbench" and io.stdout or io.stderr
local log_last, log_repeats = nil, 0
local function log(line)
   if line == log_last then
      log_repeats = log_repeats + 1
      return
   end
   if log_repeats > 0 then
      log_file:write("(last message repeated ", log_repeats, " times)\n")
   end
   log_last, log_repeats = line, 0
   log_file:write(line, "\n")
   log_file:flush()
end

local function unsupported(what)
   error(what .. " is not supported by dbmeter (docs/scripts.md lists the supported API)", 3)
end

local function strict(t, prefix)
   return setmetatable(t, {__index = function(_, k)
      unsupported(prefix .. tostring(k))
   end})
end

-- The hot functions are Rust functions called through LuaJIT's FFI (see
-- crates/benchmarks/src/script/ffi.rs): F.name(ctx, ...).
local real_ffi = require("ffi")
local ctx = real_ffi.cast("void *", info.ctx)
local F = {}
for name, e in pairs(info.fns) do F[name] = real_ffi.cast(e[1], e[2]) end
local out = real_ffi.new("double[1]")
local len_out = real_ffi.new("size_t[1]")
local ffi_string = real_ffi.string
local f_rand, f_value = F.rand, F.value

package.path = info.script_dir .. "/?.lua;" .. "./?.lua;" ..
   "/usr/share/sysbench/?.lua;" .. package.path

sysbench = {}
sysbench.version = "1.0.20"
sysbench.version_string = "sysbench 1.0.20"
sysbench.tid = info.tid
sysbench.opt = info.opt
sysbench.hooks = {}
sysbench.error = {NONE = 0, RESTART_EVENT = 1, FATAL = 2}
sysbench.cmdline = {
   command = info.command,
   script_path = info.script ~= "-" and info.script or nil,
   argv = info.argv,
   commands = {},
   PARALLEL_COMMAND = true,
   ARG_NULL = 0, ARG_BOOL = 1, ARG_INT = 2, ARG_SIZE = 3, ARG_DOUBLE = 4,
   ARG_STRING = 5, ARG_LIST = 6, ARG_FILE = 7, ARG_MAX = 8,
}
function sysbench.cmdline.command_defined(name)
   return type(sysbench.cmdline.commands) == "table" and
      sysbench.cmdline.commands[name] ~= nil and
      sysbench.cmdline.commands[name][1] ~= nil
end
-- The script's options as sysbench's help lists them.
function sysbench.cmdline.print_test_options()
   local opts = sysbench.cmdline.options
   if type(opts) ~= "table" then return end
   local formats = {[1] = "[=on|off]", [2] = "=N", [3] = "=SIZE", [4] = "=N",
                    [5] = "=STRING", [6] = "=[LIST,...]", [7] = "=FILENAME"}
   local kinds = {boolean = 1, number = 4, string = 5, table = 6}
   local names, rows, width = {}, {}, 0
   for name in pairs(opts) do names[#names + 1] = name end
   table.sort(names)
   for _, name in ipairs(names) do
      local def = opts[name]
      local kind = def[3] or (def[2] ~= nil and kinds[type(def[2])]) or 5
      local value = def[2]
      if type(value) == "table" then value = table.concat(value, ",")
      elseif type(value) == "boolean" then value = value and "on" or "off"
      elseif value ~= nil then value = tostring(value) end
      local head = name .. (formats[kind] or "=UNKNOWN")
      if #head > width then width = #head end
      rows[#rows + 1] = {head, tostring(def[1]), value}
   end
   local out = {}
   for _, r in ipairs(rows) do
      local line = "  --" .. r[1] .. string.rep(" ", width - #r[1] + 1) .. r[2]
      if r[3] ~= nil then line = line .. " [" .. r[3] .. "]" end
      out[#out + 1] = line .. "\n"
   end
   io.write(table.concat(out), "\n")
end
function sysbench.cmdline.command_parallel(name)
   return sysbench.cmdline.command_defined(name) and
      sysbench.cmdline.commands[name][2] == sysbench.cmdline.PARALLEL_COMMAND
end

-- Random numbers and strings, with the run's --rand-* settings.
local function rand_string(template)
   template = tostring(template)
   local p = F.rand_string(ctx, template, #template, len_out)
   return ffi_string(p, len_out[0])
end
sysbench.rand = {
   default = function(a, b) return f_rand(ctx, 0, a, b) end,
   uniform = function(a, b) return f_rand(ctx, 1, a, b) end,
   gaussian = function(a, b) return f_rand(ctx, 2, a, b) end,
   special = function(a, b) return f_rand(ctx, 3, a, b) end,
   pareto = function(a, b) return f_rand(ctx, 4, a, b) end,
   zipfian = function(a, b) return f_rand(ctx, 5, a, b) end,
   unique = function() return F.rand_unique(ctx) end,
   string = rand_string,
   varstring = function(a, b)
      local p = F.rand_varstring(ctx, a, b, len_out)
      return ffi_string(p, len_out[0])
   end,
   uniform_double = function() return F.rand_double(ctx) end,
   uniform_uint64 = function() return F.rand_uint64(ctx) end,
}
strict(sysbench.rand, "sysbench.rand.")

-- Histograms (sysbench.histogram): `size` buckets on a logarithmic scale
-- from range_min to range_max; values outside go to the end buckets.
local histogram_methods = {}
local histogram_mt = {__index = histogram_methods,
                      __tostring = function() return "<sb_histogram>" end}
sysbench.histogram = {}
function sysbench.histogram.new(size, range_min, range_max)
   size = math.floor(tonumber(size))
   local deduct = math.log(range_min)
   local h = {size = size, deduct = deduct,
              mult = (size - 1) / (math.log(range_max) - deduct), counts = {}}
   return setmetatable(h, histogram_mt)
end
function histogram_methods.update(self, value)
   local i = math.floor((math.log(value) - self.deduct) * self.mult + 0.5)
   if i ~= i or i < 0 then i = 0 elseif i >= self.size then i = self.size - 1 end
   self.counts[i] = (self.counts[i] or 0) + 1
end
function histogram_methods.print(self)
   local max = 0
   for i = 0, self.size - 1 do
      local n = self.counts[i] or 0
      if n > max then max = n end
   end
   if max == 0 then return end
   local out = {"       value  ------------- distribution ------------- count\n"}
   for i = 0, self.size - 1 do
      local n = self.counts[i] or 0
      if n > 0 then
         local width = math.floor(n * 40 / max + 0.5)
         out[#out + 1] = string.format("%12.3f |%-40s %d\n",
            math.exp(i / self.mult + self.deduct), string.rep("*", width), n)
      end
   end
   io.write(table.concat(out))
end

-- SQL.
sysbench.sql = {}
local T = {NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5,
           DOUBLE = 6, TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10,
           CHAR = 11, VARCHAR = 12}
sysbench.sql.type = T
sysbench.sql.error = {NONE = 0, IGNORABLE = 1, FATAL = 2}

-- A connection's result set: as in sysbench, one per connection, valid
-- until the connection's next statement; its values stay on dbmeter's side
-- until a row is fetched.
local result_methods = {}
local result_mt = {__index = result_methods,
                   __tostring = function() return "<sql_result>" end}
function result_methods.fetch_row(self)
   local r = self.at
   local nf = self.nfields
   if r >= self.nrows or nf == 0 then return nil end
   self.at = r + 1
   local row = {}
   local base = r * nf - 1
   local con = self.con
   for i = 1, nf do
      local p = f_value(ctx, con, base + i, len_out)
      if p ~= nil then row[i] = ffi_string(p, len_out[0]) end
   end
   return row
end
function result_methods.free(self)
   if self.freed or self.nfields == 0 then
      log(rawget(self.con_t, "closed") and "ALERT: attempt to use an already closed connection"
          or "ALERT: attempt to free an invalid result set")
      error("db_free_results() failed", 2)
   end
   self.nrows = 0
   self.at = 0
   self.freed = true
end
strict(result_methods, "result:")

local function new_result(con_id)
   return setmetatable({nrows = 0, nfields = 0, at = 0, con = con_id, freed = false},
                       result_mt)
end

-- A failed statement: the hooks decide whether it is ignorable, then the
-- error travels up to dbmeter's engine (which restarts the event, or stops
-- the run, as it does for the built-in workloads).
-- What sysbench's drivers log about a failed statement (`func`: the
-- driver call, by its MySQL and PostgreSQL names).
local function log_failure(func, query, errno, msg)
   local drv = dbm.driver_name()
   if drv == "mysql" then
      local f = func == "execute" and "mysql_stmt_execute()" or "mysql_drv_query()"
      log(string.format("FATAL: %s returned error %u (%s) for query '%s'",
                        f, errno, msg, query))
   elseif drv == "pgsql" then
      local f = func == "execute" and "PQexecPrepared" or "PQexec"
      log(string.format("FATAL: %s() failed: %d %s", f, 7, msg))
      if func ~= "execute" then log("FATAL: failed query was: " .. query) end
   end
end

local function sql_failed(con, query, errno, state, msg, ignorable, func)
   if not ignorable and func ~= nil then log_failure(func, query, errno, msg) end
   local errdesc = {connection = con.handle, query = query, sql_errno = errno,
                    sql_state = state, sql_errmsg = msg}
   if not ignorable and type(sysbench.hooks.sql_error_ignorable) == "function"
      and sysbench.hooks.sql_error_ignorable(errdesc) then
      ignorable = true
      dbm.mark_ignorable()
   end
   if ignorable then
      errdesc.errcode = sysbench.error.RESTART_EVENT
      error(setmetatable(errdesc, {__tostring = function(e)
         return string.format("SQL error, errno = %s, state = '%s': %s",
                              tostring(e.sql_errno), e.sql_state, e.sql_errmsg)
      end}), 3)
   end
   -- Named after the script's line that ran the statement, wherever in
   -- the prelude the failure was found.
   error(dbm.user_position() .. string.format("SQL error, errno = %s, state = '%s': %s",
                       tostring(errno), state, msg), 0)
end

-- A call on a connection that disconnect() closed.
local function closed_con(level)
   log("ALERT: attempt to use an already closed connection")
   error(dbm.user_position() .. "SQL API error", 0)
end

-- The error of a statement that returned -1.
local function failed(con, query, func)
   if rawget(con, "closed") then closed_con() end
   local _, errno, state, msg, ignorable = dbm.last_error()
   sql_failed(con, query, errno, state, msg, ignorable, func or "query")
end

-- The connection's result after a statement that returned nfields.
local function result(con, nfields)
   local rs = con.rs
   rs.nrows = out[0]
   rs.nfields = nfields
   rs.at = 0
   rs.freed = false
   return rs
end

local connection_methods = {}
local connection_mt = {__index = connection_methods,
                       __tostring = function() return "<sql_connection>" end}
function connection_methods.query(self, query)
   query = tostring(query)
   local nf = F.query(ctx, self.id, query, #query, out)
   if nf < 0 then failed(self, query) end
   return result(self, nf)
end
function connection_methods.query_row(self, query)
   local rs = self:query(query)
   if rs == nil or rs.nrows == 0 or rs.nfields == 0 then return nil end
   return unpack(rs:fetch_row(), 1, rs.nfields)
end
function connection_methods.disconnect(self)
   if not dbm.disconnect(self.id) then
      log("ALERT: attempt to close an already closed connection")
   end
   self.closed = true
   return true
end
function connection_methods.reconnect(self)
   if rawget(self, "closed") then
      log("ALERT: attempt to close an already closed connection")
      return true
   end
   if dbm.driver_name() == "pgsql" then
      -- sysbench's pgsql driver cannot reconnect.
      log("ALERT: reconnect is not supported by the current driver")
      return true
   end
   dbm.reconnect(self.id)
   return true
end
function connection_methods.bulk_insert_init(self, query)
   if rawget(self, "closed") then closed_con() end
   dbm.bulk_init(self.id, query)
   return true
end
local function bulk_failed(con, what, ok, a, b, c, d)
   if ok == nil then
      log("ALERT: attempt to call bulk_insert_next() before bulk_insert_init()")
      error(dbm.user_position() .. "db_" .. what .. "() failed", 0)
   end
   if rawget(con, "closed") then closed_con() end
   sql_failed(con, "bulk insert", a, b, c, d, "query")
end
function connection_methods.bulk_insert_next(self, val)
   local ok, a, b, c, d = dbm.bulk_next(self.id, val)
   if not ok then bulk_failed(self, "bulk_insert_next", ok, a, b, c, d) end
   return true
end
function connection_methods.bulk_insert_done(self)
   local ok, a, b, c, d = dbm.bulk_done(self.id)
   if not ok then bulk_failed(self, "bulk_insert_done", ok, a, b, c, d) end
   return true
end
function connection_methods.more_results(self) return false end

local statement_methods = {}
local statement_mt = {__index = statement_methods,
                      __tostring = function() return "<sql_statement>" end}
local param_methods = {}
local param_mt = {__index = param_methods,
                  __tostring = function() return "<sql_param>" end}
function param_methods.set(self, value)
   if value == nil then self.value = nil; return end
   if self.type == T.BIGINT then
      self.value = math.floor(tonumber(value))
   elseif self.type == T.DOUBLE then
      self.value = tonumber(value) + 0.0
   else
      -- Cut to the bind's length, as sysbench copies it into its buffer.
      value = tostring(value)
      local max = rawget(self, "max_len")
      if max ~= nil and #value > max then value = value:sub(1, max) end
      self.value = value
   end
end
function param_methods.set_rand_str(self, fmt)
   local value = rand_string(fmt)
   local max = rawget(self, "max_len")
   if max ~= nil and #value > max then value = value:sub(1, max) end
   self.value = value
end
strict(param_methods, "param:")

function connection_methods.prepare(self, query)
   if rawget(self, "closed") then closed_con() end
   local ok, id, state, msg, _, pos = dbm.prepare(self.id, query)
   if not ok then
      -- As sysbench's drivers say it; then its "API error".
      local drv = dbm.driver_name()
      if drv == "mysql" then
         log("FATAL: mysql_stmt_prepare() failed")
         log(string.format('FATAL: MySQL error: %d "%s"', id, msg))
      elseif drv == "pgsql" then
         -- libpq's excerpt of the statement, with a caret under the spot.
         local excerpt = ""
         if pos ~= nil then
            local before = query:sub(1, pos - 1)
            local line_no = select(2, before:gsub("\n", "")) + 1
            local line_start = (before:match(".*()\n") or 0) + 1
            local line = query:sub(line_start):match("[^\n]*")
            local head = "LINE " .. line_no .. ": "
            excerpt = "\n" .. head .. line .. "\n" ..
               string.rep(" ", #head + pos - line_start) .. "^"
         end
         log("FATAL: PQprepare() failed: ERROR:  " .. msg .. excerpt .. "\n")
      end
      error("SQL API error", 0)
   end
   return setmetatable({con = self, id = id, query = query, params = {}},
                       statement_mt)
end
function statement_methods.bind_create(self, btype, max_len)
   local t
   if btype == T.TINYINT or btype == T.SMALLINT or btype == T.INT or
      btype == T.BIGINT then
      t = T.BIGINT
   elseif btype == T.FLOAT or btype == T.DOUBLE then
      t = T.DOUBLE
   elseif btype == T.CHAR or btype == T.VARCHAR then
      t = T.VARCHAR
   else
      error("Unsupported argument type: " .. tostring(btype), 2)
   end
   return setmetatable({type = t, max_len = max_len}, param_mt)
end
function statement_methods.bind_param(self, ...)
   if select("#", ...) < 1 then return nil end
   self.params = {...}
   return 0
end
-- Binds value v as parameter i (0-based) of the next execute.
local f_bind_num, f_bind_str, f_bind_null = F.bind_num, F.bind_str, F.bind_null
local function bind(i, v)
   local t = type(v)
   if t == "number" then f_bind_num(ctx, i, v)
   elseif t == "string" then f_bind_str(ctx, i, v, #v)
   elseif v == nil then f_bind_null(ctx, i)
   elseif t == "boolean" then f_bind_num(ctx, i, v and 1 or 0)
   else
      error("statement parameter " .. (i + 1) .. ": dbmeter cannot bind a " .. t, 3)
   end
end
local f_execute = F.execute
function statement_methods.execute(self)
   local params = self.params
   local n = #params
   -- rawget: an unset parameter (nil, NULL) is no unknown method.
   for i = 1, n do bind(i - 1, rawget(params[i], "value")) end
   local con = self.con
   local nf = f_execute(ctx, con.id, self.id, n, out)
   if nf < 0 then failed(con, self.query, "execute") end
   return result(con, nf)
end
function statement_methods.close(self) return 0 end
strict(statement_methods, "statement:")
strict(connection_methods, "connection:")

local driver_methods = {}
local driver_mt = {__index = driver_methods,
                   __tostring = function() return "<sql_driver>" end}
-- A connection as sysbench's error descriptors hold it: a cdata that
-- says <sql_connection> and has the connection's methods.
local by_id = {}
pcall(real_ffi.cdef, "typedef struct { int id; } dbm_sql_connection;")
local handle_t = real_ffi.metatype("dbm_sql_connection", {
   __tostring = function() return "<sql_connection>" end,
   __index = function(h, k)
      local con = by_id[h.id]
      local v = con and con[k]
      if type(v) == "function" then
         return function(_, ...) return v(con, ...) end
      end
      return v
   end,
})
local function new_connection(level)
   local id = dbm.connect()
   if type(id) == "table" then
      -- What the driver logs, then sysbench's error.
      for _, line in ipairs(id) do log("FATAL: " .. line) end
      if level == nil then error(dbm.user_position() .. "connection creation failed", 0) end
      error("connection creation failed", level)
   end
   local con = setmetatable({id = id}, connection_mt)
   con.rs = new_result(id)
   con.rs.con_t = con
   con.handle = handle_t(id)
   by_id[id] = con
   return con
end
function driver_methods.connect(self)
   return new_connection(2)
end
function driver_methods.name(self) return dbm.driver_name() end
strict(driver_methods, "driver:")

function sysbench.sql.driver(name)
   -- dbmeter's driver is the one of the run's target; sysbench's names
   -- are taken, anything else is refused as sysbench refuses it.
   if name ~= nil and name ~= "mysql" and name ~= "pgsql" then
      log("FATAL: invalid database driver name: '" .. tostring(name) .. "'")
      error("failed to initialize the DB driver", 2)
   end
   return setmetatable({}, driver_mt)
end
strict(sysbench.sql, "sysbench.sql.")

-- The C functions scripts reach through LuaJIT's FFI: declarations are
-- accepted (ffi.cdef), and ffi.C names dbmeter implements come first.
local C = {
   sb_counter_inc = function(_, kind) F.counter_inc(ctx, kind) end,
   SB_CNT_OTHER = 0, SB_CNT_READ = 1, SB_CNT_WRITE = 2, SB_CNT_TRX = 3,
   SB_CNT_ERROR = 4, SB_CNT_RECONNECT = 5, SB_CNT_BYTES_READ = 6,
   SB_CNT_BYTES_WRITTEN = 7, SB_CNT_MAX = 8,
   usleep = dbm.usleep,
   -- A script's own thread_run() loop: the run's --time and --events.
   sb_more_events = function() return dbm.more_events() end,
   sb_event_start = function() end,
   sb_event_stop = function() end,
   sb_rand_default = sysbench.rand.default,
   sb_rand_uniform = sysbench.rand.uniform,
   sb_rand_gaussian = sysbench.rand.gaussian,
   sb_rand_special = sysbench.rand.special,
   sb_rand_pareto = sysbench.rand.pareto,
   sb_rand_zipfian = sysbench.rand.zipfian,
   sb_rand_unique = sysbench.rand.unique,
   sb_rand_uniform_double = sysbench.rand.uniform_double,
   sb_rand_uniform_uint64 = sysbench.rand.uniform_uint64,
}
setmetatable(C, {__index = function(_, k)
   local ok, v = pcall(function() return real_ffi.C[k] end)
   if ok then return v end
   unsupported("ffi.C." .. tostring(k))
end})
local ffi = setmetatable({
   C = C,
   cdef = function(decl) pcall(real_ffi.cdef, decl) end,
}, {__index = real_ffi})
package.loaded.ffi = ffi
_G.ffi = ffi

-- The sysbench 0.5 API (the scripts of the seed pages' era), on the same
-- connections, statements and random numbers as the 1.0 API. Its random
-- functions are the ones sysbench 1.0 still defines too (its bundled
-- oltp_common.lua calls sb_rand).
sb_rand = sysbench.rand.default
sb_rand_uniform = sysbench.rand.uniform
sb_rand_gaussian = sysbench.rand.gaussian
sb_rand_special = sysbench.rand.special
sb_rand_str = sysbench.rand.string
-- sb_rand_uniq(a, b): the next unique 32-bit number that falls within
-- [a, b] (0 and 2^32-1 when not given), drawn again until one does, as
-- sysbench does: numbers never repeat within a run. Below 2^20 numbers
-- that loop would take seconds a call (and never end once the range is
-- used up): there the unique number is folded into the range instead.
function sb_rand_uniq(a, b)
   a = a == nil and 0 or math.floor(a)
   b = b == nil and 4294967295 or math.floor(b)
   if b < a or b < 0 or a > 4294967295 then
      error(string.format("sb_rand_uniq(%s, %s): no 32-bit number in that range", a, b), 2)
   end
   if b - a < 1048576 then
      return a + F.rand_unique(ctx) % (b - a + 1)
   end
   local x
   repeat
      x = F.rand_unique(ctx)
   until x >= a and x <= b
   return x
end
function sb_rnd() return f_rand(ctx, 1, 0, 2147483647) end

DB_ERROR_NONE = 0
DB_ERROR_RESTART_TRANSACTION = 1
DB_ERROR_FAILED = 2

-- 0.5 scripts have one connection per thread, opened by db_connect() or
-- by the first call that needs it.
db_driver = dbm.driver_name()
local old_con
function db_connect()
   if old_con == nil then
      old_con = new_connection()
   end
   db_driver = dbm.driver_name()
end
function db_disconnect()
   if old_con ~= nil then old_con:disconnect(); old_con = nil end
end
local function con0()
   if old_con == nil then db_connect() end
   return old_con
end
-- These call sql_failed() themselves so that an error names the script's
-- line. db_query returns nothing, as in 0.5.
function db_query(query)
   local con = con0()
   query = tostring(query)
   if F.query(ctx, con.id, query, #query, out) < 0 then failed(con, query) end
end
function db_bulk_insert_init(query)
   dbm.bulk_init(con0().id, query)
end
function db_bulk_insert_next(row)
   local con = con0()
   local ok, a, b, c, d = dbm.bulk_next(con.id, row)
   if not ok then bulk_failed(con, "bulk_insert_next", ok, a, b, c, d) end
end
function db_bulk_insert_done()
   local con = con0()
   local ok, a, b, c, d = dbm.bulk_done(con.id)
   if not ok then bulk_failed(con, "bulk_insert_done", ok, a, b, c, d) end
end

-- Prepared statements: db_bind_param(stmt, t) binds the table t itself;
-- db_execute reads its current values (numbers bound as integers, as
-- sysbench 0.5 binds them, strings as text).
local old_stmt_mt = {__tostring = function() return "<sysbench.stmt>" end}
local old_rs_mt = {__tostring = function() return "<sysbench.rs>" end}
function db_prepare(query)
   local con = con0()
   return setmetatable({con = con, id = dbm.prepare(con.id, query),
                        query = query, n = 0}, old_stmt_mt)
end
local function old_stmt(stmt, fname)
   if getmetatable(stmt) ~= old_stmt_mt then
      error(fname .. "(): a statement from db_prepare() was expected", 3)
   end
end
function db_bind_param(stmt, params)
   old_stmt(stmt, "db_bind_param")
   if type(params) ~= "table" then error("db_bind_param(): table was expected", 2) end
   local n = #params
   if n == 0 then error("db_bind_param(): table is empty", 2) end
   stmt.params, stmt.n, stmt.ints = params, n, {}
   for i = 1, n do
      local t = type(params[i])
      if t == "number" then stmt.ints[i] = true
      elseif t ~= "string" then
         error("db_bind_param(): unsupported variable type: " .. t, 2)
      end
   end
end
function db_bind_result(stmt, results)
   -- sysbench 0.5 has no call that fetches into bound results: accepted.
   old_stmt(stmt, "db_bind_result")
end
function db_execute(stmt)
   old_stmt(stmt, "db_execute")
   local params, ints = stmt.params, stmt.ints
   for i = 1, stmt.n do
      local v = params[i]
      if v ~= nil and ints[i] then
         v = tonumber(v)
         -- C's conversion to int: toward zero.
         v = v < 0 and math.ceil(v) or math.floor(v)
      elseif v ~= nil then
         v = tostring(v)
      end
      bind(i - 1, v)
   end
   local con = stmt.con
   local nf = f_execute(ctx, con.id, stmt.id, stmt.n, out)
   if nf < 0 then failed(con, stmt.query) end
   return setmetatable({rs = result(con, nf)}, old_rs_mt)
end
function db_store_results(rs) end
function db_free_results(rs)
   if type(rs) == "table" and rs.rs ~= nil then
      rs.rs.nrows, rs.rs.at = 0, 0
      rs.rs = nil
   end
end
function db_close(stmt) end

-- sysbench 0.5 hands every option to the script as a global variable
-- (`--oltp-table-size=1000` is oltp_table_size), with the general ones it
-- knew; globals Lua itself defines are left alone.
-- sysbench 1.0 does the same for any script that declares no options.
local exported = {}
local function export_options(opt, globals, legacy)
   if globals or legacy then
      for k, v in pairs(opt) do
         if rawget(_G, k) == nil or exported[k] then
            rawset(_G, k, v)
            exported[k] = true
         end
      end
   end
   if legacy then
      num_threads = opt.threads
      max_requests = opt.events
      max_time = opt.time
      -- Defaults that the options given later replace.
      if mysql_table_engine == nil then
         mysql_table_engine, exported.mysql_table_engine = "innodb", true
      end
      if myisam_max_rows == nil then
         myisam_max_rows, exported.myisam_max_rows = 1000000, true
      end
   end
end
export_options(info.opt, info.export_globals, info.legacy)
-- The --test option of 0.5 (the script's path): oltp.lua finds common.lua by it.
test = info.script
thread_id = sysbench.tid

-- Reports. dbmeter calls sysbench.hooks.report_intermediate(stat) at every
-- --report-interval and sysbench.hooks.report_cumulative(stat) after the
-- run, on the run's main Lua state, with sysbench's stat fields (times and
-- latencies in seconds). What a hook prints (print, io.write) is taken
-- and shown by dbmeter: in place of the interval line, and as the
-- script's section of the final report.
local function rates(stat)
   local secs = tonumber(stat.time_interval) or 0
   local function per(n)
      if secs > 0 then return (tonumber(n) or 0) / secs end
      return 0
   end
   return per(stat.events), per(stat.reads + stat.writes + stat.other),
      per(stat.reads), per(stat.writes), per(stat.other),
      per(stat.errors), per(stat.reconnects)
end

function sysbench.report_default(stat)
   local tps, qps, r, w, o, e, rc = rates(stat)
   print(string.format(
      "[ %.0fs ] thds: %u tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) " ..
      "lat (ms,%u%%): %4.2f err/s %4.2f reconn/s: %4.2f",
      stat.time_total, stat.threads_running, tps, qps, r, w, o,
      tonumber(sysbench.opt.percentile) or 95, stat.latency_pct * 1000, e, rc))
end

function sysbench.report_csv(stat)
   local tps, qps, r, w, o, e, rc = rates(stat)
   print(string.format("%.0f,%u,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f,%4.2f",
      stat.time_total, stat.threads_running, tps, qps, r, w, o,
      stat.latency_pct * 1000, e, rc))
end

-- One JSON object per call, the whole forming an array that dbmeter closes
-- after the last report.
local json_open = false
function sysbench.report_json(stat)
   local tps, qps, r, w, o, e, rc = rates(stat)
   local lead = json_open and ",\n" or "[\n"
   json_open = true
   io.write(lead, string.format(
      '  {\n    "time": %4.0f,\n    "threads": %u,\n    "tps": %4.2f,\n' ..
      '    "qps": {\n      "total": %4.2f,\n      "reads": %4.2f,\n' ..
      '      "writes": %4.2f,\n      "other": %4.2f\n    },\n' ..
      '    "latency": %4.2f,\n    "errors": %4.2f,\n    "reconnects": %4.2f\n  }',
      stat.time_total, stat.threads_running, tps, qps, r, w, o,
      stat.latency_pct * 1000, e, rc))
end

local internal = {}

-- The options of the command about to run, for the state that loaded the
-- script (sysbench, too, hands them over after the script's body ran).
function internal.set_options(opt, command, globals, legacy)
   local o = sysbench.opt
   for k in pairs(o) do o[k] = nil end
   for k, v in pairs(opt) do o[k] = v end
   sysbench.cmdline.command = command
   export_options(opt, globals, legacy)
end
local taken
local function take_print(...)
   local parts = {}
   for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
   taken[#taken + 1] = table.concat(parts, "\t") .. "\n"
end
local function take_write(...)
   for i = 1, select("#", ...) do
      local v = select(i, ...)
      if type(v) ~= "string" and type(v) ~= "number" then
         error("bad argument #" .. i .. " to 'write' (string expected, got " ..
               type(v) .. ")", 2)
      end
      taken[#taken + 1] = tostring(v)
   end
   return io.stdout
end

-- Whether the script defines the hook `name`.
function internal.has_hook(name)
   return type(sysbench.hooks) == "table" and type(sysbench.hooks[name]) == "function"
end

-- What a hook wrote after its last line end: shown with what comes next,
-- as a line-buffered stdout shows it.
local partial = ""

-- Calls hook `name` with `stat`; returns the whole lines it printed, or
-- nil and the error.
function internal.report(name, stat)
   local hook = sysbench.hooks[name]
   local keep_print, keep_write = print, io.write
   taken = {partial}
   print, io.write = take_print, take_write
   local ok, err = pcall(hook, stat)
   print, io.write = keep_print, keep_write
   local text = table.concat(taken)
   taken = nil
   if not ok then return nil, tostring(err) end
   local cut = text:find("[^\n]*$")
   partial = text:sub(cut)
   return text:sub(1, cut - 1)
end

-- The end of report_json's array, when one is open, after what is left.
function internal.close_reports()
   local rest = partial
   partial = ""
   if not json_open then return rest end
   json_open = false
   return rest .. "\n]\n"
end

return internal
