//! The five transactions as stored procedures (MySQL/MariaDB procedures,
//! PostgreSQL functions), for `run tpcc --stored-procedures`: one round
//! trip per transaction instead of one per statement. They do what the
//! client-side SQL does (same rows read and written); New-Order's unused
//! item raises an error whose message holds [`ROLLBACK_MARK`] after the
//! procedure has rolled back (MySQL) or the statement aborted (PostgreSQL).

use super::TxKind;
use super::payment::Customer;
use super::sql::{Ended, Exec};
use super::terminal::TxInput;
use dbmeter_db::{Connection, DbError, Dialect, Param, StmtId};

/// Part of the error message of New-Order's intended rollback.
pub const ROLLBACK_MARK: &str = "tpcc: item number is not valid";

pub const NAMES: [&str; 5] = [
    "tpcc_new_order",
    "tpcc_payment",
    "tpcc_order_status",
    "tpcc_delivery",
    "tpcc_stock_level",
];

const MYSQL: [&str; 5] = [
    r#"CREATE PROCEDURE tpcc_new_order(IN p_w INT, IN p_d INT, IN p_c INT, IN p_n INT,
    IN p_items VARCHAR(200), IN p_supply VARCHAR(200), IN p_qty VARCHAR(100))
BEGIN
  DECLARE v_discount DECIMAL(4,4); DECLARE v_last VARCHAR(16); DECLARE v_credit CHAR(2);
  DECLARE v_w_tax DECIMAL(4,4); DECLARE v_d_tax DECIMAL(4,4); DECLARE v_o INT;
  DECLARE v_all_local INT DEFAULT 1; DECLARE v_k INT DEFAULT 1;
  DECLARE v_i INT; DECLARE v_sw INT; DECLARE v_q INT;
  DECLARE v_price DECIMAL(5,2); DECLARE v_name VARCHAR(24); DECLARE v_data VARCHAR(50);
  DECLARE v_sq INT; DECLARE v_sdata VARCHAR(50); DECLARE v_dist CHAR(24); DECLARE v_found INT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  WHILE v_k <= p_n DO
    IF SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply, ',', v_k), ',', -1) + 0 <> p_w THEN
      SET v_all_local = 0;
    END IF;
    SET v_k = v_k + 1;
  END WHILE;
  START TRANSACTION;
  SELECT c_discount, c_last, c_credit, w_tax INTO v_discount, v_last, v_credit, v_w_tax
    FROM customer, warehouse WHERE w_id = p_w AND c_w_id = w_id AND c_d_id = p_d AND c_id = p_c;
  SELECT d_next_o_id, d_tax INTO v_o, v_d_tax FROM district
    WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local)
    VALUES (v_o, p_d, p_w, p_c, CURRENT_TIMESTAMP, p_n, v_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o, p_d, p_w);
  SET v_k = 1;
  WHILE v_k <= p_n DO
    SET v_i = SUBSTRING_INDEX(SUBSTRING_INDEX(p_items, ',', v_k), ',', -1) + 0;
    SET v_sw = SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply, ',', v_k), ',', -1) + 0;
    SET v_q = SUBSTRING_INDEX(SUBSTRING_INDEX(p_qty, ',', v_k), ',', -1) + 0;
    SET v_found = 0;
    SELECT i_price, i_name, i_data, 1 INTO v_price, v_name, v_data, v_found
      FROM item WHERE i_id = v_i;
    IF v_found = 0 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'tpcc: item number is not valid';
    END IF;
    SELECT s_quantity, s_data, CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02
      WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
      WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
      INTO v_sq, v_sdata, v_dist FROM stock WHERE s_i_id = v_i AND s_w_id = v_sw FOR UPDATE;
    IF v_sq >= v_q + 10 THEN SET v_sq = v_sq - v_q; ELSE SET v_sq = v_sq - v_q + 91; END IF;
    UPDATE stock SET s_quantity = v_sq, s_ytd = s_ytd + v_q, s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + IF(v_sw <> p_w, 1, 0) WHERE s_i_id = v_i AND s_w_id = v_sw;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
      ol_quantity, ol_amount, ol_dist_info)
      VALUES (v_o, p_d, p_w, v_k, v_i, v_sw, v_q, v_q * v_price, v_dist);
    SET v_k = v_k + 1;
  END WHILE;
  COMMIT;
END"#,
    r#"CREATE PROCEDURE tpcc_payment(IN p_w INT, IN p_d INT, IN p_cw INT, IN p_cd INT,
    IN p_c INT, IN p_last VARCHAR(16), IN p_amount DECIMAL(6,2))
BEGIN
  DECLARE v_wname VARCHAR(10); DECLARE v_ws1 VARCHAR(20); DECLARE v_ws2 VARCHAR(20);
  DECLARE v_wcity VARCHAR(20); DECLARE v_wstate CHAR(2); DECLARE v_wzip CHAR(9);
  DECLARE v_dname VARCHAR(10); DECLARE v_ds1 VARCHAR(20); DECLARE v_ds2 VARCHAR(20);
  DECLARE v_dcity VARCHAR(20); DECLARE v_dstate CHAR(2); DECLARE v_dzip CHAR(9);
  DECLARE v_c INT DEFAULT p_c; DECLARE v_n INT; DECLARE v_off INT;
  DECLARE v_first VARCHAR(16); DECLARE v_middle CHAR(2); DECLARE v_lastn VARCHAR(16);
  DECLARE v_credit CHAR(2); DECLARE v_balance DECIMAL(12,2); DECLARE v_data VARCHAR(500);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
  SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
    INTO v_wname, v_ws1, v_ws2, v_wcity, v_wstate, v_wzip FROM warehouse WHERE w_id = p_w;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
  SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
    INTO v_dname, v_ds1, v_ds2, v_dcity, v_dstate, v_dzip FROM district
    WHERE d_w_id = p_w AND d_id = p_d;
  IF v_c = 0 THEN
    SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last;
    SET v_off = (v_n + 1) DIV 2 - 1;
    IF v_off >= 0 THEN
      SELECT c_id INTO v_c FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last
        ORDER BY c_first LIMIT v_off, 1;
    END IF;
  END IF;
  IF v_c > 0 THEN
    SELECT c_first, c_middle, c_last, c_credit, c_balance
      INTO v_first, v_middle, v_lastn, v_credit, v_balance FROM customer
      WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c FOR UPDATE;
    IF v_credit = 'BC' THEN
      SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
      SET v_data = LEFT(CONCAT(v_c, ' ', p_cd, ' ', p_cw, ' ', p_d, ' ', p_w, ' ', p_amount,
        ' | ', v_data), 500);
      UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
        c_payment_cnt = c_payment_cnt + 1, c_data = v_data
        WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
    ELSE
      UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
        c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
    END IF;
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
      VALUES (v_c, p_cd, p_cw, p_d, p_w, CURRENT_TIMESTAMP, p_amount,
        CONCAT(v_wname, '    ', v_dname));
  END IF;
  COMMIT;
END"#,
    r#"CREATE PROCEDURE tpcc_order_status(IN p_w INT, IN p_d INT, IN p_c INT, IN p_last VARCHAR(16))
BEGIN
  DECLARE v_c INT DEFAULT p_c; DECLARE v_n INT; DECLARE v_off INT;
  DECLARE v_balance DECIMAL(12,2); DECLARE v_first VARCHAR(16); DECLARE v_middle CHAR(2);
  DECLARE v_lastn VARCHAR(16); DECLARE v_o INT; DECLARE v_carrier INT; DECLARE v_entry DATETIME;
  DECLARE v_lines INT; DECLARE v_items BIGINT; DECLARE v_sum DECIMAL(12,2);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION READ ONLY;
  IF v_c = 0 THEN
    SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
    SET v_off = (v_n + 1) DIV 2 - 1;
    IF v_off >= 0 THEN
      SELECT c_id INTO v_c FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last
        ORDER BY c_first LIMIT v_off, 1;
    END IF;
  END IF;
  IF v_c > 0 THEN
    SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_lastn
      FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
    SELECT o_id, o_carrier_id, o_entry_d INTO v_o, v_carrier, v_entry FROM orders
      WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c ORDER BY o_id DESC LIMIT 1;
    SELECT COUNT(*), SUM(ol_i_id + ol_supply_w_id + ol_quantity), SUM(ol_amount)
      INTO v_lines, v_items, v_sum FROM order_line
      WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
  END IF;
  COMMIT;
END"#,
    r#"CREATE PROCEDURE tpcc_delivery(IN p_w INT, IN p_carrier INT)
BEGIN
  DECLARE v_d INT DEFAULT 1; DECLARE v_o INT; DECLARE v_c INT; DECLARE v_amount DECIMAL(12,2);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  WHILE v_d <= 10 DO
    SET v_o = NULL;
    SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d
      ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF v_o IS NOT NULL THEN
      DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
      IF ROW_COUNT() > 0 THEN
        SELECT o_c_id INTO v_c FROM orders WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
        UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
        UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP
          WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
        SELECT SUM(ol_amount) INTO v_amount FROM order_line
          WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
        UPDATE customer SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
          WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
      END IF;
    END IF;
    SET v_d = v_d + 1;
  END WHILE;
  COMMIT;
END"#,
    r#"CREATE PROCEDURE tpcc_stock_level(IN p_w INT, IN p_d INT, IN p_threshold INT)
BEGIN
  DECLARE v_next INT; DECLARE v_low INT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION READ ONLY;
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
  SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM order_line, stock
    WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
    AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
  COMMIT;
END"#,
];

const POSTGRES: [&str; 5] = [
    r#"CREATE OR REPLACE FUNCTION tpcc_new_order(p_w INT, p_d INT, p_c INT, p_n INT,
    p_items TEXT, p_supply TEXT, p_qty TEXT) RETURNS INT AS $$
DECLARE
  v_items INT[] := string_to_array(p_items, ',')::INT[];
  v_supply INT[] := string_to_array(p_supply, ',')::INT[];
  v_qty INT[] := string_to_array(p_qty, ',')::INT[];
  v_discount NUMERIC; v_last TEXT; v_credit TEXT; v_w_tax NUMERIC; v_d_tax NUMERIC;
  v_o INT; v_all_local INT := 1; v_price NUMERIC; v_name TEXT; v_data TEXT;
  v_sq INT; v_sdata TEXT; v_dist TEXT;
BEGIN
  FOR k IN 1..p_n LOOP
    IF v_supply[k] <> p_w THEN v_all_local := 0; END IF;
  END LOOP;
  SELECT c_discount, c_last, c_credit, w_tax INTO v_discount, v_last, v_credit, v_w_tax
    FROM customer, warehouse WHERE w_id = p_w AND c_w_id = w_id AND c_d_id = p_d AND c_id = p_c;
  SELECT d_next_o_id, d_tax INTO v_o, v_d_tax FROM district
    WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
  UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local)
    VALUES (v_o, p_d, p_w, p_c, CURRENT_TIMESTAMP, p_n, v_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o, p_d, p_w);
  FOR k IN 1..p_n LOOP
    SELECT i_price, i_name, i_data INTO v_price, v_name, v_data FROM item WHERE i_id = v_items[k];
    IF NOT FOUND THEN
      RAISE EXCEPTION 'tpcc: item number is not valid';
    END IF;
    SELECT s_quantity, s_data, CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02
      WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
      WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
      INTO v_sq, v_sdata, v_dist FROM stock
      WHERE s_i_id = v_items[k] AND s_w_id = v_supply[k] FOR UPDATE;
    IF v_sq >= v_qty[k] + 10 THEN v_sq := v_sq - v_qty[k]; ELSE v_sq := v_sq - v_qty[k] + 91; END IF;
    UPDATE stock SET s_quantity = v_sq, s_ytd = s_ytd + v_qty[k], s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + CASE WHEN v_supply[k] <> p_w THEN 1 ELSE 0 END
      WHERE s_i_id = v_items[k] AND s_w_id = v_supply[k];
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
      ol_quantity, ol_amount, ol_dist_info)
      VALUES (v_o, p_d, p_w, k, v_items[k], v_supply[k], v_qty[k], v_qty[k] * v_price, v_dist);
  END LOOP;
  RETURN v_o;
END $$ LANGUAGE plpgsql"#,
    r#"CREATE OR REPLACE FUNCTION tpcc_payment(p_w INT, p_d INT, p_cw INT, p_cd INT, p_c INT,
    p_last TEXT, p_amount TEXT) RETURNS INT AS $$
DECLARE
  v_amount NUMERIC := p_amount::NUMERIC; v_c INT := p_c; v_n INT;
  v_w RECORD; v_dist RECORD; v_cust RECORD; v_data TEXT;
BEGIN
  UPDATE warehouse SET w_ytd = w_ytd + v_amount WHERE w_id = p_w;
  SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_w
    FROM warehouse WHERE w_id = p_w;
  UPDATE district SET d_ytd = d_ytd + v_amount WHERE d_w_id = p_w AND d_id = p_d;
  SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_dist
    FROM district WHERE d_w_id = p_w AND d_id = p_d;
  IF v_c = 0 THEN
    SELECT count(*) INTO v_n FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last;
    IF v_n = 0 THEN RETURN 0; END IF;
    SELECT c_id INTO v_c FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last
      ORDER BY c_first OFFSET (v_n + 1) / 2 - 1 LIMIT 1;
  END IF;
  SELECT c_first, c_middle, c_last, c_credit, c_balance INTO v_cust FROM customer
    WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c FOR UPDATE;
  IF v_cust.c_credit = 'BC' THEN
    SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
    v_data := left(v_c || ' ' || p_cd || ' ' || p_cw || ' ' || p_d || ' ' || p_w || ' '
      || p_amount || ' | ' || v_data, 500);
    UPDATE customer SET c_balance = c_balance - v_amount, c_ytd_payment = c_ytd_payment + v_amount,
      c_payment_cnt = c_payment_cnt + 1, c_data = v_data
      WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
  ELSE
    UPDATE customer SET c_balance = c_balance - v_amount, c_ytd_payment = c_ytd_payment + v_amount,
      c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
  END IF;
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c, p_cd, p_cw, p_d, p_w, CURRENT_TIMESTAMP, v_amount,
      v_w.w_name || '    ' || v_dist.d_name);
  RETURN v_c;
END $$ LANGUAGE plpgsql"#,
    r#"CREATE OR REPLACE FUNCTION tpcc_order_status(p_w INT, p_d INT, p_c INT, p_last TEXT)
    RETURNS INT AS $$
DECLARE
  v_c INT := p_c; v_n INT; v_cust RECORD; v_order RECORD; v_lines INT; v_items BIGINT;
  v_sum NUMERIC;
BEGIN
  IF v_c = 0 THEN
    SELECT count(*) INTO v_n FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
    IF v_n = 0 THEN RETURN 0; END IF;
    SELECT c_id INTO v_c FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last
      ORDER BY c_first OFFSET (v_n + 1) / 2 - 1 LIMIT 1;
  END IF;
  SELECT c_balance, c_first, c_middle, c_last INTO v_cust FROM customer
    WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
  SELECT o_id, o_carrier_id, o_entry_d INTO v_order FROM orders
    WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c ORDER BY o_id DESC LIMIT 1;
  SELECT count(*), sum(ol_i_id + ol_supply_w_id + ol_quantity), sum(ol_amount)
    INTO v_lines, v_items, v_sum FROM order_line
    WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_order.o_id;
  RETURN v_lines;
END $$ LANGUAGE plpgsql"#,
    r#"CREATE OR REPLACE FUNCTION tpcc_delivery(p_w INT, p_carrier INT) RETURNS INT AS $$
DECLARE
  v_o INT; v_c INT; v_amount NUMERIC; v_done INT := 0;
BEGIN
  FOR v_d IN 1..10 LOOP
    SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d
      ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    CONTINUE WHEN NOT FOUND;
    DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
    CONTINUE WHEN NOT FOUND;
    SELECT o_c_id INTO v_c FROM orders WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
    UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
    UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP
      WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
    SELECT sum(ol_amount) INTO v_amount FROM order_line
      WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
    UPDATE customer SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
      WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
    v_done := v_done + 1;
  END LOOP;
  RETURN v_done;
END $$ LANGUAGE plpgsql"#,
    r#"CREATE OR REPLACE FUNCTION tpcc_stock_level(p_w INT, p_d INT, p_threshold INT)
    RETURNS INT AS $$
DECLARE
  v_next INT; v_low INT;
BEGIN
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
  SELECT count(DISTINCT s_i_id) INTO v_low FROM order_line, stock
    WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
    AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
  RETURN v_low;
END $$ LANGUAGE plpgsql"#,
];

/// Creates (or replaces) the procedures. SQLite has none.
pub fn install(conn: &mut Connection) -> Result<(), DbError> {
    match conn.dialect() {
        Dialect::Mysql => {
            for (name, sql) in NAMES.iter().zip(MYSQL) {
                conn.execute(&format!("DROP PROCEDURE IF EXISTS {name}"))?;
                conn.execute(sql)
                    .map_err(|e| e.context(format!("creating procedure {name}")))?;
            }
        }
        Dialect::Postgres => {
            for (name, sql) in NAMES.iter().zip(POSTGRES) {
                conn.execute(sql)
                    .map_err(|e| e.context(format!("creating function {name}")))?;
            }
        }
        Dialect::Sqlite => {}
    }
    Ok(())
}

/// Drops the procedures, if there are any.
pub fn uninstall(conn: &mut Connection) -> Result<(), DbError> {
    let kind = match conn.dialect() {
        Dialect::Mysql => "PROCEDURE",
        Dialect::Postgres => "FUNCTION",
        Dialect::Sqlite => return Ok(()),
    };
    for name in NAMES {
        conn.execute(&format!("DROP {kind} IF EXISTS {name}"))?;
    }
    Ok(())
}

/// The calls, registered once per connection, by [`TxKind`].
pub struct Calls {
    calls: Vec<StmtId>,
}

pub fn register(conn: &mut Connection) -> Calls {
    let verb = match conn.dialect() {
        Dialect::Postgres => "SELECT",
        _ => "CALL",
    };
    let args = [7, 7, 4, 2, 3];
    let calls = NAMES
        .iter()
        .zip(args)
        .map(|(name, n)| conn.register(&format!("{verb} {name}({})", vec!["?"; n].join(", "))))
        .collect();
    Calls { calls }
}

fn join(v: impl Iterator<Item = i64>) -> String {
    v.map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

/// The customer as (id, last name): id 0 means "by name".
fn customer(c: &Customer) -> (i64, &str) {
    match c {
        Customer::ById(id) => (*id, ""),
        Customer::ByName(n) => (0, n.as_str()),
    }
}

/// Runs one transaction through its procedure (in its own transaction).
pub fn call(x: &mut Exec<'_>, calls: &Calls, input: &TxInput) -> Result<Ended, DbError> {
    let id = calls.calls[input.kind() as usize];
    let r = match input {
        TxInput::NewOrder(i) => {
            let items = join(i.lines.iter().map(|l| l.i_id));
            let supply = join(i.lines.iter().map(|l| l.supply_w_id));
            let qty = join(i.lines.iter().map(|l| l.quantity));
            x.run(
                id,
                &[
                    Param::Int(i.w_id),
                    Param::Int(i.d_id),
                    Param::Int(i.c_id),
                    Param::Int(i.lines.len() as i64),
                    Param::Text(&items),
                    Param::Text(&supply),
                    Param::Text(&qty),
                ],
            )
        }
        TxInput::Payment(i) => {
            let (c_id, last) = customer(&i.customer);
            let mut amount = String::new();
            super::random::money(i.amount, &mut amount);
            x.run(
                id,
                &[
                    Param::Int(i.w_id),
                    Param::Int(i.d_id),
                    Param::Int(i.c_w_id),
                    Param::Int(i.c_d_id),
                    Param::Int(c_id),
                    Param::Text(last),
                    Param::Text(&amount),
                ],
            )
        }
        TxInput::OrderStatus(i) => {
            let (c_id, last) = customer(&i.customer);
            x.run(
                id,
                &[
                    Param::Int(i.w_id),
                    Param::Int(i.d_id),
                    Param::Int(c_id),
                    Param::Text(last),
                ],
            )
        }
        TxInput::Delivery(i) => x.run(id, &[Param::Int(i.w_id), Param::Int(i.carrier_id)]),
        TxInput::StockLevel(i) => x.run(
            id,
            &[
                Param::Int(i.w_id),
                Param::Int(i.d_id),
                Param::Int(i.threshold),
            ],
        ),
    };
    match r {
        Ok(_) => Ok(Ended::Committed),
        Err(e) if input.kind() == TxKind::NewOrder && e.message.contains(ROLLBACK_MARK) => {
            Ok(Ended::RolledBack)
        }
        Err(e) => Err(e),
    }
}
