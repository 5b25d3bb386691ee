-- dbmeter's sysbench 1.0 Lua API, run in every Lua state before the
-- script. `dbm` holds the functions dbmeter implements in Rust
-- (crates/benchmarks/src/script/state.rs); `info` says which command runs,
-- the thread id and where the script lives.
local dbm, info = ...

local function unsupported(what)
   error(what .. " is not supported by dbmeter (docs/scripts.md lists the supported API)", 3)
end

local function strict(t, prefix)
   return setmetatable(t, {__index = function(_, k)
      unsupported(prefix .. tostring(k))
   end})
end

package.path = info.script_dir .. "/?.lua;" .. "./?.lua;" ..
   "/usr/share/sysbench/?.lua;" .. package.path

sysbench = {}
sysbench.version = "1.0.20"
sysbench.version_string = "sysbench 1.0.20 (dbmeter)"
sysbench.tid = info.tid
sysbench.opt = info.opt
sysbench.hooks = {}
sysbench.error = {NONE = 0, RESTART_EVENT = 1, FATAL = 2}
sysbench.cmdline = {
   command = info.command,
   script_path = info.script,
   argv = {},
   options = {},
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
function sysbench.cmdline.command_parallel(name)
   return sysbench.cmdline.command_defined(name) and
      sysbench.cmdline.commands[name][2] == sysbench.cmdline.PARALLEL_COMMAND
end

-- Random numbers and strings, with the run's --rand-* settings.
sysbench.rand = {
   default = dbm.rand_default,
   uniform = dbm.rand_uniform,
   gaussian = dbm.rand_gaussian,
   special = dbm.rand_special,
   pareto = dbm.rand_pareto,
   zipfian = dbm.rand_zipfian,
   unique = dbm.rand_unique,
   string = dbm.rand_string,
   varstring = dbm.rand_varstring,
   uniform_double = dbm.rand_uniform_double,
   uniform_uint64 = dbm.rand_uniform_uint64,
}
strict(sysbench.rand, "sysbench.rand.")

-- SQL.
sysbench.sql = {}
local T = {NONE = 0, TINYINT = 1, SMALLINT = 2, INT = 3, BIGINT = 4, FLOAT = 5,
           DOUBLE = 6, TIME = 7, DATE = 8, DATETIME = 9, TIMESTAMP = 10,
           CHAR = 11, VARCHAR = 12}
sysbench.sql.type = T
sysbench.sql.error = {NONE = 0, IGNORABLE = 1, FATAL = 2}

local result_methods = {}
local result_mt = {__index = result_methods,
                   __tostring = function() return "<sql_result>" end}
function result_methods.fetch_row(self)
   local r = self.at
   if r >= self.nrows or self.nfields == 0 then return nil end
   self.at = r + 1
   local row = {}
   local base = r * self.nfields
   for i = 1, self.nfields do
      row[i] = self.values[base + i]
   end
   return row
end
function result_methods.free(self) self.values = nil; self.nrows = 0 end
strict(result_methods, "result:")

local function make_result(nrows, nfields, values)
   return setmetatable({nrows = nrows, nfields = nfields, values = values, at = 0},
                       result_mt)
end

-- A failed statement: the hooks decide whether it is ignorable, then the
-- error travels up to dbmeter's engine (which restarts the event, or stops
-- the run, as it does for the built-in workloads).
local function sql_failed(con, query, errno, state, msg, ignorable)
   local errdesc = {connection = con, query = query, sql_errno = errno,
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
   error(string.format("SQL error, errno = %s, state = '%s': %s",
                       tostring(errno), state, msg), 3)
end

local function outcome(con, query, ok, a, b, c, d)
   if not ok then sql_failed(con, query, a, b, c, d) end
   if a == nil then return nil end
   return make_result(a, b, c)
end

local connection_methods = {}
local connection_mt = {__index = connection_methods,
                       __tostring = function() return "<sql_connection>" end}
function connection_methods.query(self, query)
   return outcome(self, query, dbm.query(self.id, query))
end
function connection_methods.query_row(self, query)
   local rs = self:query(query)
   if rs == nil or rs.nrows == 0 or rs.nfields == 0 then return nil end
   return unpack(rs:fetch_row(), 1, rs.nfields)
end
function connection_methods.disconnect(self) dbm.disconnect(self.id) end
function connection_methods.reconnect(self) dbm.reconnect(self.id) end
function connection_methods.bulk_insert_init(self, query)
   dbm.bulk_init(self.id, query)
end
function connection_methods.bulk_insert_next(self, val)
   outcome(self, "bulk insert", dbm.bulk_next(self.id, val))
end
function connection_methods.bulk_insert_done(self)
   outcome(self, "bulk insert", dbm.bulk_done(self.id))
end
function connection_methods.more_results(self) return false end

local statement_methods = {}
local statement_mt = {__index = statement_methods,
                      __tostring = function() return "<sql_statement>" end}
local param_methods = {}
local param_mt = {__index = param_methods,
                  __tostring = function() return "<sql_bind>" end}
function param_methods.set(self, value)
   if value == nil then self.value = nil; return end
   if self.type == T.BIGINT then
      self.value = math.floor(tonumber(value))
   elseif self.type == T.DOUBLE then
      self.value = tonumber(value) + 0.0
   else
      self.value = tostring(value)
   end
end
function param_methods.set_rand_str(self, fmt)
   self.value = dbm.rand_string(fmt)
end
strict(param_methods, "param:")

function connection_methods.prepare(self, query)
   local id = dbm.prepare(self.id, query)
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
      error("sql bind type " .. tostring(btype) .. " is not supported by dbmeter", 2)
   end
   return setmetatable({type = t, max_len = max_len}, param_mt)
end
function statement_methods.bind_param(self, ...)
   self.params = {...}
end
function statement_methods.execute(self)
   local n = #self.params
   local values = {}
   for i = 1, n do
      local v = self.params[i].value
      if v == nil then
         error("statement parameter " .. i .. " is NULL; dbmeter does not bind NULLs yet", 2)
      end
      values[i] = v
   end
   return outcome(self.con, self.query,
                  dbm.execute(self.con.id, self.id, values, n))
end
function statement_methods.close(self) end
strict(statement_methods, "statement:")
strict(connection_methods, "connection:")

local driver_methods = {}
local driver_mt = {__index = driver_methods,
                   __tostring = function() return "<sql_driver>" end}
function driver_methods.connect(self)
   return setmetatable({id = dbm.connect()}, connection_mt)
end
function driver_methods.name(self) return dbm.driver_name() end
strict(driver_methods, "driver:")

function sysbench.sql.driver(name)
   return setmetatable({}, driver_mt)
end
strict(sysbench.sql, "sysbench.sql.")

-- The C functions scripts reach through LuaJIT's FFI: declarations are
-- accepted (ffi.cdef), and ffi.C names dbmeter implements come first.
local real_ffi = require("ffi")
local C = {
   sb_counter_inc = dbm.counter_inc,
   SB_CNT_OTHER = 0, SB_CNT_READ = 1, SB_CNT_WRITE = 2, SB_CNT_TRX = 3,
   SB_CNT_ERROR = 4, SB_CNT_RECONNECT = 5, SB_CNT_BYTES_READ = 6,
   SB_CNT_BYTES_WRITTEN = 7, SB_CNT_MAX = 8,
   usleep = dbm.usleep,
   sb_rand_default = dbm.rand_default,
   sb_rand_uniform = dbm.rand_uniform,
   sb_rand_gaussian = dbm.rand_gaussian,
   sb_rand_special = dbm.rand_special,
   sb_rand_pareto = dbm.rand_pareto,
   sb_rand_zipfian = dbm.rand_zipfian,
   sb_rand_unique = dbm.rand_unique,
   sb_rand_uniform_double = dbm.rand_uniform_double,
   sb_rand_uniform_uint64 = dbm.rand_uniform_uint64,
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
-- 1.0: sb_rand_uniq() is any unique 32-bit number; 0.5: sb_rand_uniq(a, b)
-- draws it within [a, b].
function sb_rand_uniq(a, b)
   local x = dbm.rand_unique()
   if a == nil or b == nil then return x end
   a, b = math.floor(a), math.floor(b)
   if b <= a then return a end
   return a + x % (b - a + 1)
end
function sb_rnd() return dbm.rand_uniform(0, 2147483647) end

DB_ERROR_NONE = 0
DB_ERROR_RESTART_TRANSACTION = 1
DB_ERROR_FAILED = 2

-- 0.5 scripts have one connection per thread, opened by db_connect() or
-- by the first call that needs it.
db_driver = dbm.driver_name()
local old_con
function db_connect()
   if old_con == nil then
      old_con = setmetatable({id = dbm.connect()}, connection_mt)
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
   local ok, a, b, c, d = dbm.query(con.id, query)
   if not ok then sql_failed(con, query, a, b, c, d) end
end
function db_bulk_insert_init(query)
   dbm.bulk_init(con0().id, query)
end
function db_bulk_insert_next(row)
   local con = con0()
   local ok, a, b, c, d = dbm.bulk_next(con.id, row)
   if not ok then sql_failed(con, "bulk insert", a, b, c, d) end
end
function db_bulk_insert_done()
   local con = con0()
   local ok, a, b, c, d = dbm.bulk_done(con.id)
   if not ok then sql_failed(con, "bulk insert", a, b, c, d) end
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
   local values = {}
   for i = 1, stmt.n do
      local v = stmt.params[i]
      if v == nil then
         error("db_execute(): parameter " .. i .. " is NULL; dbmeter does not bind NULLs yet", 2)
      end
      if stmt.ints[i] then
         v = tonumber(v)
         -- C's conversion to int: toward zero.
         v = v < 0 and math.ceil(v) or math.floor(v)
      else
         v = tostring(v)
      end
      values[i] = v
   end
   local ok, a, b, c, d = dbm.execute(stmt.con.id, stmt.id, values, stmt.n)
   if not ok then sql_failed(stmt.con, stmt.query, a, b, c, d) end
   return setmetatable({rs = a and make_result(a, b, c)}, old_rs_mt)
end
function db_store_results(rs) end
function db_free_results(rs)
   if type(rs) == "table" and rs.rs ~= nil then rs.rs:free(); rs.rs = nil end
end
function db_close(stmt) end

-- sysbench 0.5 hands every option to the script as a global variable
-- (`--oltp-table-size=1000` is oltp_table_size), with the general ones it
-- knew; globals Lua itself defines are left alone.
if info.legacy then
   for k, v in pairs(info.opt) do
      if rawget(_G, k) == nil then rawset(_G, k, v) end
   end
   num_threads = info.opt.threads
   max_requests = info.opt.events
   max_time = info.opt.time
   mysql_table_engine = mysql_table_engine or "innodb"
   myisam_max_rows = myisam_max_rows or 1000000
end
-- The --test option of 0.5 (the script's path): oltp.lua finds common.lua by it.
test = info.script
