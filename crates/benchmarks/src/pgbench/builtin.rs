//! pgbench's three built-in scripts, as pgbench 15 defines them, found by
//! name or by an unambiguous prefix of one (`-b simple` is
//! `simple-update`).

/// A built-in script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Builtin {
    /// What `-b` takes.
    pub name: &'static str,
    /// How results name it ("transaction type").
    pub description: &'static str,
    pub text: &'static str,
}

pub const BUILTINS: [Builtin; 3] = [
    Builtin {
        name: "tpcb-like",
        description: "<builtin: TPC-B (sort of)>",
        text: "\\set aid random(1, 100000 * :scale)\n\
               \\set bid random(1, 1 * :scale)\n\
               \\set tid random(1, 10 * :scale)\n\
               \\set delta random(-5000, 5000)\n\
               BEGIN;\n\
               UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
               SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
               UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n\
               UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n\
               INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
               END;\n",
    },
    Builtin {
        name: "simple-update",
        description: "<builtin: simple update>",
        text: "\\set aid random(1, 100000 * :scale)\n\
               \\set bid random(1, 1 * :scale)\n\
               \\set tid random(1, 10 * :scale)\n\
               \\set delta random(-5000, 5000)\n\
               BEGIN;\n\
               UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
               SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
               INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
               END;\n",
    },
    Builtin {
        name: "select-only",
        description: "<builtin: select only>",
        text: "\\set aid random(1, 100000 * :scale)\n\
               SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
    },
];

/// The built-in script named `name` or by a prefix of exactly one name.
pub fn find_builtin(name: &str) -> Result<&'static Builtin, String> {
    if let Some(b) = BUILTINS.iter().find(|b| b.name == name) {
        return Ok(b);
    }
    let found: Vec<&Builtin> = BUILTINS
        .iter()
        .filter(|b| b.name.starts_with(name))
        .collect();
    let known = BUILTINS.map(|b| b.name).join(", ");
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(format!(
            "no builtin script found for name \"{name}\" (the builtin scripts: {known})"
        )),
        many => Err(format!(
            "ambiguous builtin name: {} builtin scripts found for prefix \"{name}\" ({known})",
            many.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::script::parse_script;
    use super::super::variables::VarNames;
    use super::*;

    #[test]
    fn builtins_parse_into_their_commands() {
        let shapes = [
            ("tpcb-like", "set set set set SQL SQL SQL SQL SQL SQL SQL"),
            ("simple-update", "set set set set SQL SQL SQL SQL SQL"),
            ("select-only", "set SQL"),
        ];
        for (name, shape) in shapes {
            let b = find_builtin(name).unwrap_or_else(|e| panic!("{e}"));
            let s = parse_script(b.description, b.text, 1, &mut VarNames::default())
                .unwrap_or_else(|e| panic!("{e}"));
            let kinds: Vec<&str> = s.commands.iter().map(|c| c.kind.name()).collect();
            assert_eq!(kinds.join(" "), shape, "{name}");
            assert_eq!(
                s.commands[0].first_line,
                "\\set aid random(1, 100000 * :scale)"
            );
            assert_eq!(
                s.commands.last().map(|c| c.first_line.as_str()),
                Some(if name == "select-only" {
                    "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;"
                } else {
                    "END;"
                })
            );
        }
    }

    #[test]
    fn names_and_prefixes() {
        assert_eq!(find_builtin("tpcb-like").map(|b| b.name), Ok("tpcb-like"));
        assert_eq!(find_builtin("t").map(|b| b.name), Ok("tpcb-like"));
        assert_eq!(find_builtin("simple").map(|b| b.name), Ok("simple-update"));
        assert_eq!(find_builtin("se").map(|b| b.name), Ok("select-only"));
        assert!(find_builtin("s").is_err_and(|e| e.contains("ambiguous")));
        assert!(find_builtin("tpcc").is_err_and(|e| e.contains("no builtin script found")));
    }
}
