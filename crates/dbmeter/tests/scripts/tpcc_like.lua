-- A TPC-C-like workload as a sysbench 1.0 Lua script, written for
-- dbmeter's tests (crates/dbmeter/tests/lua_tpcc.rs). It is in the style
-- of the TPC-C scripts people run under sysbench: nine tables, options of
-- its own, a prepare that bulk-loads them, a parallel consistency check,
-- and an event that runs New-Order, Payment and Order-Status
-- transactions. It is not a TPC-C implementation (no Delivery or
-- Stock-Level, no keying or think times, small default scale) and runs on
-- SQLite, MySQL/MariaDB and PostgreSQL.
--
--   dbmeter prepare tpcc_like.lua --db=... --warehouses=2
--   dbmeter run tpcc_like.lua --db=... --warehouses=2 --threads=4 --time=60
--   dbmeter check tpcc_like.lua --db=... --warehouses=2 --threads=2
--   dbmeter cleanup tpcc_like.lua --db=...

sysbench.cmdline.options = {
   warehouses = {"number of warehouses", 1, sysbench.cmdline.ARG_INT},
   districts = {"districts per warehouse", 10, sysbench.cmdline.ARG_INT},
   customers = {"customers (and initial orders) per district", 30,
                sysbench.cmdline.ARG_INT},
   scale_items = {"number of items (and stock rows per warehouse)", 1000,
                  sysbench.cmdline.ARG_INT},
   use_fk = {"declare foreign keys between the tables", false,
             sysbench.cmdline.ARG_BOOL},
   new_order_weight = {"share of New-Order transactions", 45,
                       sysbench.cmdline.ARG_INT},
   payment_weight = {"share of Payment transactions", 43,
                     sysbench.cmdline.ARG_INT},
   order_status_weight = {"share of Order-Status transactions", 12,
                          sysbench.cmdline.ARG_INT},
   rollback_pct = {"percent of New-Orders that name an unused item and roll back",
                   1, sysbench.cmdline.ARG_INT},
}

-- The tables, children first (the order cleanup drops them in).
local TABLES = {"order_line", "new_orders", "orders", "history", "stock",
                "customer", "district", "warehouse", "item"}

-- Last names from three syllables of a number, as TPC-C makes them.
local SYLLABLES = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI",
                   "CALLY", "ATION", "EING"}
local function last_name(n)
   local a = math.floor(n / 100) % 10
   local b = math.floor(n / 10) % 10
   local c = n % 10
   return SYLLABLES[a + 1] .. SYLLABLES[b + 1] .. SYLLABLES[c + 1]
end

-- Customers of a district share this many last names (about three each).
local function names_per_district()
   return math.max(1, math.floor(sysbench.opt.customers / 3))
end

-- Orders of a district that are still new (undelivered) after prepare.
local function new_per_district()
   return math.floor(sysbench.opt.customers * 0.3)
end

local function driver_name()
   return sysbench.sql.driver():name()
end

-- Column types and table options that differ between the databases.
local function dialect()
   local d = driver_name()
   if d == "mysql" then
      return {ts = "DATETIME", engine = " ENGINE=InnoDB", begin_write = "BEGIN"}
   elseif d == "pgsql" then
      return {ts = "TIMESTAMP", engine = "", begin_write = "BEGIN"}
   end
   -- SQLite: a writing transaction takes the write lock at once, so that
   -- two users never both hold a read lock and wait for each other.
   return {ts = "TEXT", engine = "", begin_write = "BEGIN IMMEDIATE"}
end

local function fk(clause)
   if sysbench.opt.use_fk then return ",\n  " .. clause end
   return ""
end

local function create_tables(con)
   local d = dialect()
   local ddl = {
      item = [[CREATE TABLE item (
  i_id INTEGER NOT NULL PRIMARY KEY,
  i_im_id INTEGER NOT NULL,
  i_name VARCHAR(24) NOT NULL,
  i_price DECIMAL(5,2) NOT NULL,
  i_data VARCHAR(50) NOT NULL)]],
      warehouse = [[CREATE TABLE warehouse (
  w_id INTEGER NOT NULL PRIMARY KEY,
  w_name VARCHAR(10) NOT NULL,
  w_street_1 VARCHAR(20) NOT NULL,
  w_city VARCHAR(20) NOT NULL,
  w_state CHAR(2) NOT NULL,
  w_zip CHAR(9) NOT NULL,
  w_tax DECIMAL(4,4) NOT NULL,
  w_ytd DECIMAL(14,2) NOT NULL)]],
      district = [[CREATE TABLE district (
  d_id INTEGER NOT NULL,
  d_w_id INTEGER NOT NULL,
  d_name VARCHAR(10) NOT NULL,
  d_street_1 VARCHAR(20) NOT NULL,
  d_city VARCHAR(20) NOT NULL,
  d_tax DECIMAL(4,4) NOT NULL,
  d_ytd DECIMAL(14,2) NOT NULL,
  d_next_o_id INTEGER NOT NULL,
  PRIMARY KEY (d_w_id, d_id)]] ..
         fk("FOREIGN KEY (d_w_id) REFERENCES warehouse (w_id)") .. ")",
      customer = [[CREATE TABLE customer (
  c_id INTEGER NOT NULL,
  c_d_id INTEGER NOT NULL,
  c_w_id INTEGER NOT NULL,
  c_first VARCHAR(16) NOT NULL,
  c_middle CHAR(2) NOT NULL,
  c_last VARCHAR(16) NOT NULL,
  c_credit CHAR(2) NOT NULL,
  c_discount DECIMAL(4,4) NOT NULL,
  c_balance DECIMAL(14,2) NOT NULL,
  c_ytd_payment DECIMAL(14,2) NOT NULL,
  c_payment_cnt INTEGER NOT NULL,
  c_data VARCHAR(500) NOT NULL,
  PRIMARY KEY (c_w_id, c_d_id, c_id)]] ..
         fk("FOREIGN KEY (c_w_id, c_d_id) REFERENCES district (d_w_id, d_id)") .. ")",
      history = [[CREATE TABLE history (
  h_c_id INTEGER NOT NULL,
  h_c_d_id INTEGER NOT NULL,
  h_c_w_id INTEGER NOT NULL,
  h_d_id INTEGER NOT NULL,
  h_w_id INTEGER NOT NULL,
  h_date ]] .. d.ts .. [[,
  h_amount DECIMAL(6,2) NOT NULL,
  h_data VARCHAR(24) NOT NULL]] ..
         fk("FOREIGN KEY (h_c_w_id, h_c_d_id, h_c_id) REFERENCES customer (c_w_id, c_d_id, c_id)") ..
         fk("FOREIGN KEY (h_w_id, h_d_id) REFERENCES district (d_w_id, d_id)") .. ")",
      orders = [[CREATE TABLE orders (
  o_id INTEGER NOT NULL,
  o_d_id INTEGER NOT NULL,
  o_w_id INTEGER NOT NULL,
  o_c_id INTEGER NOT NULL,
  o_entry_d ]] .. d.ts .. [[,
  o_carrier_id INTEGER,
  o_ol_cnt INTEGER NOT NULL,
  o_all_local INTEGER NOT NULL,
  PRIMARY KEY (o_w_id, o_d_id, o_id)]] ..
         fk("FOREIGN KEY (o_w_id, o_d_id, o_c_id) REFERENCES customer (c_w_id, c_d_id, c_id)") .. ")",
      new_orders = [[CREATE TABLE new_orders (
  no_o_id INTEGER NOT NULL,
  no_d_id INTEGER NOT NULL,
  no_w_id INTEGER NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id)]] ..
         fk("FOREIGN KEY (no_w_id, no_d_id, no_o_id) REFERENCES orders (o_w_id, o_d_id, o_id)") .. ")",
      stock = [[CREATE TABLE stock (
  s_i_id INTEGER NOT NULL,
  s_w_id INTEGER NOT NULL,
  s_quantity INTEGER NOT NULL,
  s_dist_01 CHAR(24) NOT NULL, s_dist_02 CHAR(24) NOT NULL,
  s_dist_03 CHAR(24) NOT NULL, s_dist_04 CHAR(24) NOT NULL,
  s_dist_05 CHAR(24) NOT NULL, s_dist_06 CHAR(24) NOT NULL,
  s_dist_07 CHAR(24) NOT NULL, s_dist_08 CHAR(24) NOT NULL,
  s_dist_09 CHAR(24) NOT NULL, s_dist_10 CHAR(24) NOT NULL,
  s_ytd INTEGER NOT NULL,
  s_order_cnt INTEGER NOT NULL,
  s_remote_cnt INTEGER NOT NULL,
  s_data VARCHAR(50) NOT NULL,
  PRIMARY KEY (s_w_id, s_i_id)]] ..
         fk("FOREIGN KEY (s_w_id) REFERENCES warehouse (w_id)") ..
         fk("FOREIGN KEY (s_i_id) REFERENCES item (i_id)") .. ")",
      order_line = [[CREATE TABLE order_line (
  ol_o_id INTEGER NOT NULL,
  ol_d_id INTEGER NOT NULL,
  ol_w_id INTEGER NOT NULL,
  ol_number INTEGER NOT NULL,
  ol_i_id INTEGER NOT NULL,
  ol_supply_w_id INTEGER NOT NULL,
  ol_delivery_d ]] .. d.ts .. [[,
  ol_quantity INTEGER NOT NULL,
  ol_amount DECIMAL(6,2) NOT NULL,
  ol_dist_info CHAR(24) NOT NULL,
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)]] ..
         fk("FOREIGN KEY (ol_w_id, ol_d_id, ol_o_id) REFERENCES orders (o_w_id, o_d_id, o_id)") ..
         fk("FOREIGN KEY (ol_supply_w_id, ol_i_id) REFERENCES stock (s_w_id, s_i_id)") .. ")",
   }
   -- Parents first.
   for i = #TABLES, 1, -1 do
      local t = TABLES[i]
      con:query(ddl[t] .. d.engine)
   end
   con:query("CREATE INDEX idx_customer_name ON customer (c_w_id, c_d_id, c_last, c_first)")
   con:query("CREATE INDEX idx_orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)")
end

local function quoted(s) return "'" .. s .. "'" end

-- Letters, between a and b of them (safe in SQL text on every database:
-- sysbench.rand.varstring draws from '0' to 'z', backslash included,
-- which MySQL reads as an escape).
local function letters(a, b)
   return sysbench.rand.string(string.rep("@", sysbench.rand.uniform(a, b)))
end

local function load_items(con)
   con:bulk_insert_init("INSERT INTO item (i_id, i_im_id, i_name, i_price, i_data) VALUES")
   for i = 1, sysbench.opt.scale_items do
      con:bulk_insert_next(string.format("(%d, %d, %s, %d.%02d, %s)", i,
         sysbench.rand.uniform(1, 10000), quoted(letters(14, 24)),
         sysbench.rand.uniform(1, 99), sysbench.rand.uniform(0, 99),
         quoted(letters(26, 50))))
   end
   con:bulk_insert_done()
end

local function load_warehouse(con, w)
   local o = sysbench.opt
   con:query(string.format("INSERT INTO warehouse (w_id, w_name, w_street_1, w_city, " ..
      "w_state, w_zip, w_tax, w_ytd) VALUES (%d, %s, %s, %s, %s, %s, 0.%04d, %d)",
      w, quoted(letters(6, 10)), quoted(letters(10, 20)),
      quoted(letters(10, 20)), quoted(sysbench.rand.string("@@")),
      quoted(sysbench.rand.string("####11111")), sysbench.rand.uniform(0, 2000),
      30000 * o.districts))

   con:bulk_insert_init("INSERT INTO stock (s_i_id, s_w_id, s_quantity, s_dist_01, " ..
      "s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, " ..
      "s_dist_09, s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data) VALUES")
   local dist = quoted(string.rep("@", 24))
   for i = 1, o.scale_items do
      con:bulk_insert_next(string.format("(%d, %d, %d, %s, 0, 0, 0, %s)", i, w,
         sysbench.rand.uniform(10, 100),
         string.rep(quoted(sysbench.rand.string(string.rep("@", 24))) .. ", ", 9) ..
         quoted(sysbench.rand.string(string.rep("@", 24))),
         quoted(letters(26, 50))))
   end
   con:bulk_insert_done()

   con:bulk_insert_init("INSERT INTO district (d_id, d_w_id, d_name, d_street_1, d_city, " ..
      "d_tax, d_ytd, d_next_o_id) VALUES")
   for d = 1, o.districts do
      con:bulk_insert_next(string.format("(%d, %d, %s, %s, %s, 0.%04d, 30000, %d)", d, w,
         quoted(letters(6, 10)), quoted(letters(10, 20)),
         quoted(letters(10, 20)), sysbench.rand.uniform(0, 2000),
         o.customers + 1))
   end
   con:bulk_insert_done()

   local names = names_per_district()
   con:bulk_insert_init("INSERT INTO customer (c_id, c_d_id, c_w_id, c_first, c_middle, " ..
      "c_last, c_credit, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_data) VALUES")
   for d = 1, o.districts do
      for c = 1, o.customers do
         local credit = sysbench.rand.uniform(1, 10) == 1 and "BC" or "GC"
         con:bulk_insert_next(string.format(
            "(%d, %d, %d, %s, 'OE', %s, '%s', 0.%04d, -10, 10, 1, %s)", c, d, w,
            quoted(letters(8, 16)), quoted(last_name((c - 1) % names)),
            credit, sysbench.rand.uniform(0, 5000), quoted(letters(300, 500))))
      end
   end
   con:bulk_insert_done()

   con:bulk_insert_init("INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, " ..
      "h_date, h_amount, h_data) VALUES")
   for d = 1, o.districts do
      for c = 1, o.customers do
         con:bulk_insert_next(string.format("(%d, %d, %d, %d, %d, CURRENT_TIMESTAMP, 10, %s)",
            c, d, w, d, w, quoted(letters(12, 24))))
      end
   end
   con:bulk_insert_done()

   -- One order per customer; the last ones of each district are new
   -- (no carrier yet, their lines not delivered).
   local first_new = o.customers - new_per_district() + 1
   local counts = {}
   con:bulk_insert_init("INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, " ..
      "o_carrier_id, o_ol_cnt, o_all_local) VALUES")
   for d = 1, o.districts do
      counts[d] = {}
      for id = 1, o.customers do
         local n = sysbench.rand.uniform(5, 15)
         counts[d][id] = n
         local carrier = id < first_new and tostring(sysbench.rand.uniform(1, 10)) or "NULL"
         con:bulk_insert_next(string.format("(%d, %d, %d, %d, CURRENT_TIMESTAMP, %s, %d, 1)",
            id, d, w, id, carrier, n))
      end
   end
   con:bulk_insert_done()

   con:bulk_insert_init("INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES")
   for d = 1, o.districts do
      for id = first_new, o.customers do
         con:bulk_insert_next(string.format("(%d, %d, %d)", id, d, w))
      end
   end
   con:bulk_insert_done()

   con:bulk_insert_init("INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, " ..
      "ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES")
   for d = 1, o.districts do
      for id = 1, o.customers do
         local delivered = id < first_new
         for n = 1, counts[d][id] do
            con:bulk_insert_next(string.format("(%d, %d, %d, %d, %d, %d, %s, 5, %s, %s)",
               id, d, w, n, sysbench.rand.uniform(1, o.scale_items), w,
               delivered and "CURRENT_TIMESTAMP" or "NULL",
               delivered and "0" or string.format("%d.%02d", sysbench.rand.uniform(0, 9999),
                                                  sysbench.rand.uniform(0, 99)),
               dist))
         end
      end
   end
   con:bulk_insert_done()
end

function cmd_prepare()
   local con = sysbench.sql.driver():connect()
   print(string.format("Creating %d tables on %s", #TABLES, driver_name()))
   create_tables(con)
   load_items(con)
   for w = 1, sysbench.opt.warehouses do
      print(string.format("Loading warehouse %d", w))
      con:query("BEGIN")
      load_warehouse(con, w)
      con:query("COMMIT")
   end
end

function cmd_cleanup()
   local con = sysbench.sql.driver():connect()
   for _, t in ipairs(TABLES) do
      print("Dropping table " .. t)
      con:query("DROP TABLE IF EXISTS " .. t)
   end
end

-- The consistency conditions (after TPC-C's): each thread checks the
-- warehouses w with w % threads == tid, and error()s on the first that
-- does not hold.
local function fail(fmt, ...)
   error(string.format(fmt, ...), 2)
end

local function by_district(con, sql)
   local out = {}
   local rs = con:query(sql)
   local row = rs:fetch_row()
   while row ~= nil do
      out[tonumber(row[1])] = {tonumber(row[2]), tonumber(row[3]), tonumber(row[4])}
      row = rs:fetch_row()
   end
   return out
end

function cmd_check()
   local con = sysbench.sql.driver():connect()
   local threads = sysbench.opt.threads
   local checked = 0
   for w = 1, sysbench.opt.warehouses do
      if w % threads == sysbench.tid then
         local w_ytd = tonumber(con:query_row("SELECT w_ytd FROM warehouse WHERE w_id = " .. w))
         local d_ytd = tonumber(con:query_row("SELECT SUM(d_ytd) FROM district WHERE d_w_id = " .. w))
         if w_ytd == nil or math.abs(w_ytd - d_ytd) > 0.005 then
            fail("warehouse %d: w_ytd %s is not the sum of its districts' d_ytd %s",
                 w, tostring(w_ytd), tostring(d_ytd))
         end
         local districts = by_district(con, "SELECT d_id, d_next_o_id FROM district " ..
            "WHERE d_w_id = " .. w .. " ORDER BY d_id")
         local orders = by_district(con, "SELECT o_d_id, MAX(o_id), SUM(o_ol_cnt), COUNT(*) " ..
            "FROM orders WHERE o_w_id = " .. w .. " GROUP BY o_d_id")
         local news = by_district(con, "SELECT no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) " ..
            "FROM new_orders WHERE no_w_id = " .. w .. " GROUP BY no_d_id")
         local lines = by_district(con, "SELECT ol_d_id, COUNT(*), 0 FROM order_line " ..
            "WHERE ol_w_id = " .. w .. " GROUP BY ol_d_id")
         for d = 1, sysbench.opt.districts do
            local next_o = districts[d] and districts[d][1]
            local o, n, l = orders[d] or {}, news[d] or {}, lines[d] or {}
            if next_o == nil or o[1] ~= next_o - 1 then
               fail("district %d/%d: next order id %s - 1 is not the largest order id %s",
                    w, d, tostring(next_o), tostring(o[1]))
            end
            if n[1] ~= o[1] then
               fail("district %d/%d: the largest new order id %s is not the largest order id %s",
                    w, d, tostring(n[1]), tostring(o[1]))
            end
            if n[1] - n[2] + 1 ~= n[3] then
               fail("district %d/%d: %d new orders, but ids %d..%d", w, d, n[3], n[2], n[1])
            end
            if o[2] ~= l[1] then
               fail("district %d/%d: orders have %s lines, order_line has %s",
                    w, d, tostring(o[2]), tostring(l[1]))
            end
         end
         checked = checked + 1
      end
   end
   print(string.format("check: thread %d: %d warehouse(s) consistent", sysbench.tid, checked))
end

sysbench.cmdline.commands = {
   prepare = {cmd_prepare},
   cleanup = {cmd_cleanup},
   check = {cmd_check, sysbench.cmdline.PARALLEL_COMMAND},
}

-- The run.

local con, begin_write
local stmt = {}

-- A prepared statement and its parameters, of the given types.
local function prepare(name, sql, ...)
   local s = con:prepare(sql)
   local params = {}
   for i, t in ipairs({...}) do params[i] = s:bind_create(t) end
   s:bind_param(unpack(params))
   stmt[name] = {s = s, p = params}
end

-- Runs prepared statement `name` with the values given.
local function exec(name, ...)
   local st = stmt[name]
   local n = select("#", ...)
   for i = 1, n do st.p[i]:set((select(i, ...))) end
   return st.s:execute()
end

function thread_init()
   con = sysbench.sql.driver():connect()
   begin_write = dialect().begin_write
   local INT, DOUBLE, STR = sysbench.sql.type.INT, sysbench.sql.type.DOUBLE,
      sysbench.sql.type.VARCHAR
   prepare("customer_by_name", "SELECT c_id FROM customer WHERE c_w_id = ? AND " ..
           "c_d_id = ? AND c_last = ? ORDER BY c_first", INT, INT, STR)
   prepare("customer", "SELECT c_first, c_middle, c_last, c_balance, c_credit, c_discount " ..
           "FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", INT, INT, INT)
   prepare("warehouse_tax", "SELECT w_tax FROM warehouse WHERE w_id = ?", INT)
   prepare("next_order", "UPDATE district SET d_next_o_id = d_next_o_id + 1 " ..
           "WHERE d_w_id = ? AND d_id = ?", INT, INT)
   prepare("district_order", "SELECT d_next_o_id - 1, d_tax FROM district " ..
           "WHERE d_w_id = ? AND d_id = ?", INT, INT)
   prepare("insert_order", "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, " ..
           "o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?, ?)",
           INT, INT, INT, INT, INT, INT, INT)
   prepare("insert_new_order", "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) " ..
           "VALUES (?, ?, ?)", INT, INT, INT)
   prepare("item", "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?", INT)
   prepare("update_stock", "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, " ..
           "s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? " ..
           "WHERE s_w_id = ? AND s_i_id = ?", INT, INT, INT, INT, INT)
   prepare("insert_line", "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, " ..
           "ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) " ..
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
           INT, INT, INT, INT, INT, INT, STR, INT, DOUBLE, STR)
   prepare("pay_warehouse", "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
           INT, INT)
   prepare("pay_district", "UPDATE district SET d_ytd = d_ytd + ? " ..
           "WHERE d_w_id = ? AND d_id = ?", INT, INT, INT)
   prepare("pay_customer", "UPDATE customer SET c_balance = c_balance - ?, " ..
           "c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 " ..
           "WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?", INT, INT, INT, INT, INT)
   prepare("insert_history", "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, " ..
           "h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
           INT, INT, INT, INT, INT, INT, STR)
   prepare("last_order", "SELECT o_id, o_carrier_id, o_entry_d FROM orders " ..
           "WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
           INT, INT, INT)
   prepare("order_lines", "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, " ..
           "ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
           INT, INT, INT)
end

-- The first row of a prepared statement's result (as a table), or nil.
local function first_row(name, ...)
   local rs = exec(name, ...)
   return rs:fetch_row()
end

-- A customer of district d of warehouse w: by last name 60% of the time
-- (the one in the middle of those with the name, by first name), else by
-- id.
local function pick_customer(w, d)
   if sysbench.rand.uniform(1, 100) > 60 then
      return sysbench.rand.uniform(1, sysbench.opt.customers)
   end
   local name = last_name(sysbench.rand.uniform(0, names_per_district() - 1))
   local rs = exec("customer_by_name", w, d, name)
   local ids = {}
   local row = rs:fetch_row()
   while row do
      ids[#ids + 1] = tonumber(row[1])
      row = rs:fetch_row()
   end
   assert(#ids == rs.nrows and #ids > 0, "no customer named " .. name)
   return ids[math.ceil(#ids / 2)]
end

local function other_warehouse(w)
   local n = sysbench.opt.warehouses
   if n == 1 then return w end
   local o = sysbench.rand.uniform(1, n - 1)
   if o >= w then o = o + 1 end
   return o
end

local function new_order(w)
   local o = sysbench.opt
   local d = sysbench.rand.uniform(1, o.districts)
   local c = sysbench.rand.uniform(1, o.customers)
   local count = sysbench.rand.uniform(5, 15)
   local lines = {}
   local all_local = 1
   for i = 1, count do
      local supply = w
      if sysbench.rand.uniform(1, 100) == 1 then
         supply = other_warehouse(w)
         if supply ~= w then all_local = 0 end
      end
      lines[i] = {item = sysbench.rand.default(1, o.scale_items), supply = supply,
                  quantity = sysbench.rand.uniform(1, 10)}
   end
   -- An unused item number in the last line makes the order roll back.
   local rollback = sysbench.rand.uniform(1, 100) <= o.rollback_pct
   if rollback then lines[count].item = o.scale_items + 1 end
   -- Stock rows are locked in one order by every user (no deadlocks).
   table.sort(lines, function(a, b)
      if a.supply ~= b.supply then return a.supply < b.supply end
      return a.item < b.item
   end)

   con:query(begin_write)
   local cust = first_row("customer", w, d, c)
   local discount = tonumber(cust[6])
   local w_tax = tonumber(first_row("warehouse_tax", w)[1])
   exec("next_order", w, d)
   local dist = first_row("district_order", w, d)
   local o_id, d_tax = tonumber(dist[1]), tonumber(dist[2])
   -- No carrier yet: a NULL parameter.
   exec("insert_order", o_id, d, w, c, nil, count, all_local)
   exec("insert_new_order", o_id, d, w)
   local total = 0
   for n, line in ipairs(lines) do
      local rs = exec("item", line.item)
      if rs.nrows == 0 then
         con:query("ROLLBACK")
         return
      end
      local price = tonumber(rs:fetch_row()[1])
      -- A plain query: the district's column of the stock row.
      local s = {con:query_row(string.format("SELECT s_quantity, s_data, s_dist_%02d " ..
         "FROM stock WHERE s_w_id = %d AND s_i_id = %d", d, line.supply, line.item))}
      local qty = tonumber(s[1])
      if qty >= line.quantity + 10 then qty = qty - line.quantity
      else qty = qty - line.quantity + 91 end
      exec("update_stock", qty, line.quantity, line.supply ~= w and 1 or 0,
           line.supply, line.item)
      local amount = line.quantity * price
      total = total + amount
      exec("insert_line", o_id, d, w, n, line.item, line.supply, nil, line.quantity,
           amount, s[3])
   end
   con:query("COMMIT")
   return total * (1 - discount) * (1 + w_tax + d_tax)
end

local function payment(w)
   local o = sysbench.opt
   local d = sysbench.rand.uniform(1, o.districts)
   -- 15% pay through another warehouse's district.
   local cw, cd = w, d
   if sysbench.rand.uniform(1, 100) <= 15 then
      cw = other_warehouse(w)
      cd = sysbench.rand.uniform(1, o.districts)
   end
   local amount = sysbench.rand.uniform(1, 5000)
   con:query(begin_write)
   exec("pay_warehouse", amount, w)
   exec("pay_district", amount, w, d)
   local c = pick_customer(cw, cd)
   local cust = first_row("customer", cw, cd, c)
   exec("pay_customer", amount, amount, cw, cd, c)
   if cust[5] == "BC" then
      -- Bad credit: the payment goes into the customer's data (a plain
      -- statement with a string).
      con:query(string.format("UPDATE customer SET c_data = '%d %d %d %d %d %d' " ..
         "WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", c, cd, cw, d, w, amount,
         cw, cd, c))
   end
   exec("insert_history", c, cd, cw, d, w, amount, sysbench.rand.varstring(12, 24))
   con:query("COMMIT")
end

local function order_status(w)
   local d = sysbench.rand.uniform(1, sysbench.opt.districts)
   con:query("BEGIN")
   local c = pick_customer(w, d)
   local cust = first_row("customer", w, d, c)
   assert(cust ~= nil and #cust[3] > 0)
   local last = first_row("last_order", w, d, c)
   if last ~= nil then
      -- o_carrier_id is NULL (nil) for an order not delivered yet.
      local undelivered = last[2] == nil
      local rs = exec("order_lines", w, d, tonumber(last[1]))
      local row = rs:fetch_row()
      while row do
         assert((row[5] == nil) == undelivered, "delivery date of a line")
         row = rs:fetch_row()
      end
   end
   con:query("COMMIT")
end

local mix
function event()
   local o = sysbench.opt
   if mix == nil then
      mix = {o.new_order_weight, o.new_order_weight + o.payment_weight,
             o.new_order_weight + o.payment_weight + o.order_status_weight}
   end
   local w = sysbench.rand.uniform(1, o.warehouses)
   local x = sysbench.rand.uniform(1, mix[3])
   if x <= mix[1] then
      new_order(w)
   elseif x <= mix[2] then
      payment(w)
   else
      order_status(w)
   end
end

function thread_done()
   for _, st in pairs(stmt) do st.s:close() end
   con:disconnect()
end
