//! mysqlslap's statements: the ones it generates (`--auto-generate-sql`),
//! the ones a user gives (`--create`, `--query`, `--pre-query`,
//! `--post-query`, cut at `--delimiter`), and the schema statements
//! around them, in each target's dialect.
//!
//! Generated values come from glibc's `random()` as mysqlslap draws them:
//! mysqlslap builds its statements before it seeds the generator, so
//! glibc's default seed (1) makes the same values in every run, and so
//! does [`GlibcRandom`]; `--only-print` then prints what mysqlslap prints.

use dbmeter_db::Dialect;

/// glibc's `random()` (its default TYPE_3 additive feedback generator),
/// seeded as `srandom(seed)` seeds it.
pub struct GlibcRandom {
    state: [u32; 34],
    i: usize,
}

impl GlibcRandom {
    pub fn new(seed: u32) -> Self {
        let seed = if seed == 0 { 1 } else { seed };
        let mut r = [0i64; 34];
        r[0] = i64::from(seed);
        for k in 1..31 {
            // 16807 * r[k-1] % 2147483647, as glibc computes it in 32 bits.
            let hi = r[k - 1] / 127_773;
            let lo = r[k - 1] % 127_773;
            let mut word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            r[k] = word;
        }
        for k in 31..34 {
            r[k] = r[k - 31];
        }
        let mut state = [0u32; 34];
        for (s, v) in state.iter_mut().zip(r) {
            *s = v as u32;
        }
        let mut g = GlibcRandom { state, i: 0 };
        // glibc throws the first 310 outputs away.
        for _ in 34..344 {
            g.step();
        }
        g
    }

    fn step(&mut self) -> u32 {
        // r[k] = r[k-31] + r[k-3], kept in a ring of 34.
        let a = self.state[(self.i + 34 - 31) % 34];
        let b = self.state[(self.i + 34 - 3) % 34];
        let v = a.wrapping_add(b);
        self.state[self.i] = v;
        self.i = (self.i + 1) % 34;
        v
    }

    /// The next value, 0 to 2^31-1.
    pub fn random(&mut self) -> u32 {
        self.step() >> 1
    }
}

const ALPHANUMERICS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTWXYZabcdefghijklmnopqrstuvwxyz";
const RAND_STRING_SIZE: usize = 126;

/// What a statement is, where mysqlslap treats kinds apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Run as it is.
    Plain,
    /// The table's CREATE: `--engine` is appended to it.
    CreateTable,
    /// Ends with `WHERE id = `: a random key of the table is appended.
    NeedsKey,
}

/// One statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub sql: String,
    pub kind: Kind,
}

impl Statement {
    fn plain(sql: String) -> Self {
        Statement {
            sql,
            kind: Kind::Plain,
        }
    }
}

/// `--auto-generate-sql-load-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadType {
    Read,
    Write,
    Key,
    Update,
    Mixed,
}

impl LoadType {
    pub fn parse(s: &str) -> Option<LoadType> {
        match s.to_ascii_lowercase().as_str() {
            "read" => Some(LoadType::Read),
            "write" => Some(LoadType::Write),
            "key" => Some(LoadType::Key),
            "update" => Some(LoadType::Update),
            "mixed" => Some(LoadType::Mixed),
            _ => None,
        }
    }
}

/// How the auto-generated table looks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub int_cols: u32,
    /// `--number-int-cols=N,1`: each int column indexed.
    pub int_index: bool,
    pub char_cols: u32,
    pub char_index: bool,
    pub secondary_indexes: u32,
    pub autoincrement: bool,
    pub guid_primary: bool,
}

impl Table {
    fn has_key(&self) -> bool {
        self.autoincrement || self.guid_primary
    }

    /// `CREATE TABLE `t1` (...)` as mysqlslap writes it.
    pub fn create(&self) -> Statement {
        let mut s = String::from("CREATE TABLE `t1` (");
        if self.autoincrement {
            s.push_str("id serial");
            if self.int_cols > 0 || self.char_cols > 0 {
                s.push(',');
            }
        }
        if self.guid_primary {
            // mysqlslap adds the comma whatever follows.
            s.push_str("id varchar(36) primary key,");
        }
        if self.secondary_indexes > 0 {
            for n in 0..self.secondary_indexes {
                if n > 0 {
                    s.push(',');
                }
                s.push_str(&format!("id{n} varchar(36) unique key"));
            }
            if self.int_cols > 0 || self.char_cols > 0 {
                s.push(',');
            }
        }
        for n in 1..=self.int_cols {
            if self.int_index {
                s.push_str(&format!("intcol{n} INT(32), INDEX(intcol{n})"));
            } else {
                s.push_str(&format!("intcol{n} INT(32) "));
            }
            if n < self.int_cols || self.char_cols > 0 {
                s.push(',');
            }
        }
        for n in 1..=self.char_cols {
            if self.char_index {
                s.push_str(&format!("charcol{n} VARCHAR(128), INDEX(charcol{n}) "));
            } else {
                s.push_str(&format!("charcol{n} VARCHAR(128)"));
            }
            if n < self.char_cols {
                s.push(',');
            }
        }
        s.push(')');
        Statement {
            sql: s,
            kind: Kind::CreateTable,
        }
    }

    fn random_string(r: &mut GlibcRandom) -> String {
        (0..RAND_STRING_SIZE)
            .map(|_| ALPHANUMERICS[r.random() as usize % ALPHANUMERICS.len()] as char)
            .collect()
    }

    pub fn insert(&self, r: &mut GlibcRandom) -> Statement {
        let mut s = String::from("INSERT INTO t1 VALUES (");
        let more = self.int_cols > 0 || self.char_cols > 0;
        if self.autoincrement {
            s.push_str("NULL");
            if more {
                s.push(',');
            }
        }
        if self.guid_primary {
            s.push_str("uuid()");
            if more {
                s.push(',');
            }
        }
        if self.secondary_indexes > 0 {
            let ids = vec!["uuid()"; self.secondary_indexes as usize];
            s.push_str(&ids.join(","));
            if more {
                s.push(',');
            }
        }
        for n in 1..=self.int_cols {
            s.push_str(&r.random().to_string());
            if n < self.int_cols || self.char_cols > 0 {
                s.push(',');
            }
        }
        for n in 1..=self.char_cols {
            s.push('\'');
            s.push_str(&Self::random_string(r));
            s.push('\'');
            if n < self.char_cols {
                s.push(',');
            }
        }
        s.push(')');
        Statement::plain(s)
    }

    pub fn update(&self, r: &mut GlibcRandom) -> Statement {
        let mut s = String::from("UPDATE t1 SET ");
        for n in 1..=self.int_cols {
            s.push_str(&format!("intcol{n} = {}", r.random()));
            if n < self.int_cols || self.char_cols > 0 {
                s.push(',');
            }
        }
        for n in 1..=self.char_cols {
            s.push_str(&format!("charcol{n} = '{}'", Self::random_string(r)));
            if n < self.char_cols {
                s.push(',');
            }
        }
        if self.has_key() {
            s.push_str(" WHERE id = ");
            Statement {
                sql: s,
                kind: Kind::NeedsKey,
            }
        } else {
            Statement::plain(s)
        }
    }

    pub fn select(&self, key: bool) -> Statement {
        let mut cols: Vec<String> = (1..=self.int_cols).map(|n| format!("intcol{n}")).collect();
        cols.extend((1..=self.char_cols).map(|n| format!("charcol{n}")));
        let mut s = format!("SELECT {} FROM t1", cols.join(","));
        if key && self.has_key() {
            s.push_str(" WHERE id = ");
            Statement {
                sql: s,
                kind: Kind::NeedsKey,
            }
        } else {
            Statement::plain(s)
        }
    }
}

/// What `--auto-generate-sql` makes: the create list (the table's CREATE
/// and `unique_write` INSERTs) and the query list (`unique_query` + 1
/// statements of the load type), in mysqlslap's order of drawing values.
pub fn generate(
    table: &Table,
    load: LoadType,
    unique_write: u64,
    unique_query: u64,
) -> (Vec<Statement>, Vec<Statement>) {
    let mut r = GlibcRandom::new(1);
    let mut create = vec![table.create()];
    for _ in 0..unique_write {
        create.push(table.insert(&mut r));
    }
    let n = unique_query + 1;
    let queries = match load {
        LoadType::Read => (0..n).map(|_| table.select(false)).collect(),
        LoadType::Key => (0..n).map(|_| table.select(true)).collect(),
        LoadType::Write => (0..n).map(|_| table.insert(&mut r)).collect(),
        LoadType::Update => (0..n).map(|_| table.update(&mut r)).collect(),
        // An INSERT, then a keyed SELECT and an INSERT in turn.
        LoadType::Mixed => (0..n)
            .map(|i| {
                if i % 2 == 1 {
                    table.select(true)
                } else {
                    table.insert(&mut r)
                }
            })
            .collect(),
    };
    (create, queries)
}

/// The statements mysqlslap's create step runs from the generated list:
/// it stops after `write_number` statements (the CREATE counts), and
/// when the list runs out first it goes on from the first INSERT.
pub fn create_steps(create: &[Statement], write_number: u64) -> Vec<Statement> {
    let mut out = Vec::new();
    if create.is_empty() {
        return out;
    }
    let mut list: &[Statement] = create;
    loop {
        for s in list {
            if out.len() as u64 == write_number {
                return out;
            }
            out.push(s.clone());
        }
        if write_number <= out.len() as u64 || create.len() < 2 {
            return out;
        }
        list = &create[1..];
    }
}

/// Cuts text at `delimiter` as mysqlslap does: at each occurrence of the
/// delimiter's first character, a single whitespace character after it
/// dropped; an empty piece ends the list (mysqlslap stops at the first
/// empty statement).
pub fn split(text: &str, delimiter: &str) -> Vec<String> {
    let Some(d) = delimiter.chars().next() else {
        return vec![text.to_string()];
    };
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(d) {
        out.push(rest[..at].to_string());
        rest = &rest[at + d.len_utf8()..];
        if rest.starts_with(|c: char| c.is_ascii_whitespace()) {
            rest = &rest[1..];
        }
    }
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
    // mysqlslap walks the list until a statement of length 0.
    if let Some(end) = out.iter().position(String::is_empty) {
        out.truncate(end);
    }
    out
}

/// A statement made valid for `dialect`: MariaDB/MySQL's text as it is;
/// for PostgreSQL and SQLite the generated statements' MySQL-only parts
/// rewritten (backquotes, `INT(32)`, `serial`, inline `INDEX(...)`,
/// `unique key`, `uuid()`). The inline indexes become statements of
/// their own, returned after it.
pub fn for_dialect(sql: &str, dialect: Dialect) -> (String, Vec<String>) {
    if dialect == Dialect::Mysql {
        return (sql.to_string(), Vec::new());
    }
    let mut s = sql.replace('`', "\"");
    let mut indexes = Vec::new();
    if s.starts_with("CREATE TABLE \"t1\" (") {
        // ", INDEX(col)" parts become CREATE INDEX statements.
        while let Some(at) = s.find(", INDEX(") {
            let end = s[at..].find(')').map_or(s.len(), |e| at + e + 1);
            let col = s[at + 8..end - 1].to_string();
            indexes.push(format!("CREATE INDEX \"t1_{col}\" ON \"t1\" ({col})"));
            s.replace_range(at..end, "");
        }
        s = s.replace("INT(32)", "INTEGER");
        s = s.replace(" unique key", " UNIQUE");
        if dialect == Dialect::Sqlite {
            s = s.replace("id serial", "id INTEGER PRIMARY KEY AUTOINCREMENT");
        }
    }
    let uuid = match dialect {
        Dialect::Postgres => "gen_random_uuid()::text",
        _ => "lower(hex(randomblob(16)))",
    };
    if s.starts_with("INSERT INTO t1 VALUES (") {
        s = s.replace("uuid()", uuid);
        if dialect == Dialect::Postgres {
            // PostgreSQL's serial takes DEFAULT, not NULL.
            s = s.replacen("VALUES (NULL", "VALUES (DEFAULT", 1);
        }
    }
    (s, indexes)
}

/// The schema statements on `dialect`. On SQLite there is no schema: the
/// tables a run creates are dropped instead (see the benchmark).
pub fn drop_schema(name: &str, dialect: Dialect) -> Option<String> {
    match dialect {
        Dialect::Mysql => Some(format!("DROP SCHEMA IF EXISTS `{name}`")),
        Dialect::Postgres => Some(format!(
            "DROP SCHEMA IF EXISTS \"{}\" CASCADE",
            name.replace('"', "\"\"")
        )),
        Dialect::Sqlite => None,
    }
}

pub fn create_schema(name: &str, dialect: Dialect) -> Option<String> {
    match dialect {
        Dialect::Mysql => Some(format!("CREATE SCHEMA `{name}`")),
        Dialect::Postgres => Some(format!("CREATE SCHEMA \"{}\"", name.replace('"', "\"\""))),
        Dialect::Sqlite => None,
    }
}

/// What makes a PostgreSQL session use the schema.
pub fn use_schema_pg(name: &str) -> String {
    format!("SET search_path TO \"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_random_with_its_default_seed() {
        let mut r = GlibcRandom::new(1);
        let got: Vec<u32> = (0..3).map(|_| r.random()).collect();
        assert_eq!(got, vec![1_804_289_383, 846_930_886, 1_681_692_777]);
    }

    fn table() -> Table {
        Table {
            int_cols: 1,
            int_index: false,
            char_cols: 1,
            char_index: false,
            secondary_indexes: 0,
            autoincrement: false,
            guid_primary: false,
        }
    }

    #[test]
    fn generated_statements_are_mysqlslaps() {
        let t = Table {
            autoincrement: true,
            ..table()
        };
        assert_eq!(
            t.create().sql,
            "CREATE TABLE `t1` (id serial,intcol1 INT(32) ,charcol1 VARCHAR(128))"
        );
        let (create, queries) = generate(&t, LoadType::Key, 4, 2);
        assert_eq!(create.len(), 5);
        assert!(
            create[1]
                .sql
                .starts_with("INSERT INTO t1 VALUES (NULL,1804289383,'")
        );
        assert!(
            create[2]
                .sql
                .starts_with("INSERT INTO t1 VALUES (NULL,822890675,'")
        );
        assert_eq!(queries.len(), 3);
        assert_eq!(
            queries[0].sql,
            "SELECT intcol1,charcol1 FROM t1 WHERE id = "
        );
        assert_eq!(queries[0].kind, Kind::NeedsKey);
        let (_, mixed) = generate(&table(), LoadType::Mixed, 0, 3);
        let kinds: Vec<bool> = mixed.iter().map(|s| s.sql.starts_with("INSERT")).collect();
        assert_eq!(kinds, vec![true, false, true, false]);
    }

    #[test]
    fn create_steps_stop_at_the_write_number() {
        let (create, _) = generate(&table(), LoadType::Read, 10, 0);
        assert_eq!(create_steps(&create, 100).len(), 100);
        assert_eq!(create_steps(&create, 4).len(), 4);
        assert_eq!(create_steps(&create, 0).len(), 0);
        let steps = create_steps(&create, 25);
        assert_eq!(
            steps.iter().filter(|s| s.kind == Kind::CreateTable).count(),
            1
        );
        assert_eq!(steps[11].sql, create[1].sql);
    }

    #[test]
    fn split_as_mysqlslap_splits() {
        assert_eq!(split("a;b; c", ";"), vec!["a", "b", "c"]);
        assert_eq!(split("a;b;", ";"), vec!["a", "b"]);
        assert_eq!(split("a;;b", ";"), vec!["a"]);
        assert_eq!(
            split("select 1\nselect 2\n", "\n"),
            vec!["select 1", "select 2"]
        );
    }

    #[test]
    fn dialects() {
        let t = Table {
            autoincrement: true,
            int_index: true,
            secondary_indexes: 1,
            ..table()
        };
        let (pg, idx) = for_dialect(&t.create().sql, Dialect::Postgres);
        assert_eq!(
            pg,
            "CREATE TABLE \"t1\" (id serial,id0 varchar(36) UNIQUE,intcol1 INTEGER,charcol1 VARCHAR(128))"
        );
        assert_eq!(idx, vec!["CREATE INDEX \"t1_intcol1\" ON \"t1\" (intcol1)"]);
        let (lite, _) = for_dialect(&t.create().sql, Dialect::Sqlite);
        assert!(lite.contains("id INTEGER PRIMARY KEY AUTOINCREMENT"));
        let (ins, _) = for_dialect(
            "INSERT INTO t1 VALUES (NULL,uuid(),1,'a')",
            Dialect::Postgres,
        );
        assert_eq!(
            ins,
            "INSERT INTO t1 VALUES (DEFAULT,gen_random_uuid()::text,1,'a')"
        );
    }
}
