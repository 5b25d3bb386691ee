//! Script variables. Every name a script can read (`:name` in SQL, in an
//! expression, in `\sleep` or `\shell`) is given a number when the scripts
//! are parsed ([`VarNames`]), so a client looks its variables up by index
//! ([`Variables`]) instead of by name. A variable holds text (from `-D`,
//! `\gset`, `\aset`) or a value (from `\set`, `\setshell`, the automatic
//! ones); text is read as a value the first time an expression needs it.
//!
//! Values stored under a name no script reads (a `\gset` column, say) are
//! checked and dropped: nothing could ever see them.

use super::value::{EvalError, Value, value_from_text};
use std::collections::HashMap;

/// The number of a variable name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VarId(pub(crate) u32);

/// Every variable name the scripts use, numbered.
#[derive(Clone, Debug, Default)]
pub struct VarNames {
    names: Vec<String>,
    ids: HashMap<String, VarId>,
}

impl VarNames {
    /// The number of `name`, given one if it has none yet.
    pub fn intern(&mut self, name: &str) -> VarId {
        if let Some(id) = self.ids.get(name) {
            return *id;
        }
        let id = VarId(self.names.len() as u32);
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }

    pub fn get(&self, name: &str) -> Option<VarId> {
        self.ids.get(name).copied()
    }

    pub fn name(&self, id: VarId) -> &str {
        self.names.get(id.0 as usize).map_or("?", |s| s.as_str())
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Whether `name` may name a variable: ASCII letters, digits and `_` or
/// any non-ASCII character, not starting with a digit (pgbench's rule).
pub fn valid_variable_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    match bytes.next() {
        Some(b) if b >= 0x80 || b.is_ascii_alphabetic() || b == b'_' => {}
        _ => return false,
    }
    bytes.all(is_name_byte)
}

/// A byte that may continue a variable name.
pub(crate) fn is_name_byte(b: u8) -> bool {
    b >= 0x80 || b.is_ascii_alphanumeric() || b == b'_'
}

/// A byte that may start a variable name in SQL text.
pub(crate) fn is_name_start(b: u8) -> bool {
    b >= 0x80 || b.is_ascii_alphabetic() || b == b'_'
}

#[derive(Clone, Debug, Default)]
struct Var {
    /// The value, once known (set as one, or read from the text).
    value: Option<Value>,
    /// The text the variable was set to, when it was set as text.
    text: String,
    has_text: bool,
}

/// One client's variables, by [`VarId`].
#[derive(Clone, Debug)]
pub struct Variables {
    vars: Vec<Var>,
}

impl Variables {
    pub fn new(names: &VarNames) -> Variables {
        Variables {
            vars: vec![Var::default(); names.len()],
        }
    }

    pub fn is_set(&self, id: VarId) -> bool {
        self.vars
            .get(id.0 as usize)
            .is_some_and(|v| v.value.is_some() || v.has_text)
    }

    pub fn set_value(&mut self, id: VarId, value: Value) {
        if let Some(v) = self.vars.get_mut(id.0 as usize) {
            v.value = Some(value);
            v.has_text = false;
        }
    }

    /// Sets the variable to text (reusing its buffer).
    pub fn set_text(&mut self, id: VarId, text: &str) {
        if let Some(v) = self.vars.get_mut(id.0 as usize) {
            v.text.clear();
            v.text.push_str(text);
            v.has_text = true;
            v.value = None;
        }
    }

    /// The variable as a value for an expression: an error if it is not
    /// set or its text is not a value.
    pub fn value(&mut self, id: VarId, names: &VarNames) -> Result<Value, EvalError> {
        let Some(v) = self.vars.get_mut(id.0 as usize) else {
            return Err(EvalError(format!(
                "undefined variable \"{}\"",
                names.name(id)
            )));
        };
        if let Some(value) = v.value {
            return Ok(value);
        }
        if !v.has_text {
            return Err(EvalError(format!(
                "undefined variable \"{}\"",
                names.name(id)
            )));
        }
        let value = value_from_text(names.name(id), &v.text)?;
        v.value = Some(value);
        Ok(value)
    }

    /// Appends the variable's text form (its text, or its value written as
    /// pgbench writes values); false if it is not set.
    pub fn write_text(&self, id: VarId, out: &mut String) -> bool {
        match self.vars.get(id.0 as usize) {
            Some(v) if v.has_text => {
                out.push_str(&v.text);
                true
            }
            Some(Var {
                value: Some(value), ..
            }) => {
                value.write_text(out);
                true
            }
            _ => false,
        }
    }

    /// The text form as a new string (for tests and messages).
    pub fn text(&self, id: VarId) -> Option<String> {
        let mut s = String::new();
        self.write_text(id, &mut s).then_some(s)
    }
}

/// A `-D name=value` definition, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    pub value: String,
}

impl Definition {
    /// Parses `name=value` (pgbench's `-D`): the name must be a valid
    /// variable name and the value must not be empty.
    pub fn parse(s: &str) -> Result<Definition, String> {
        let Some((name, value)) = s.split_once('=') else {
            return Err(format!(
                "invalid variable definition \"{s}\": expected NAME=VALUE"
            ));
        };
        if name.is_empty() || value.is_empty() {
            return Err(format!(
                "invalid variable definition \"{s}\": expected NAME=VALUE, both non-empty"
            ));
        }
        if !valid_variable_name(name) {
            return Err(format!(
                "invalid variable name \"{name}\" in definition \"{s}\": use letters, digits and _, not starting with a digit"
            ));
        }
        Ok(Definition {
            name: name.to_string(),
            value: value.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(valid_variable_name("aid"));
        assert!(valid_variable_name("_x1"));
        assert!(valid_variable_name("café"));
        assert!(!valid_variable_name("1x"));
        assert!(!valid_variable_name("?column?"));
        assert!(!valid_variable_name(""));
    }

    #[test]
    fn text_and_values() {
        let mut names = VarNames::default();
        let a = names.intern("a");
        let b = names.intern("b");
        assert_eq!(names.intern("a"), a);
        let mut v = Variables::new(&names);
        assert!(!v.is_set(a));
        assert_eq!(
            v.value(a, &names),
            Err(EvalError("undefined variable \"a\"".into()))
        );
        v.set_text(a, "12");
        assert_eq!(v.value(a, &names), Ok(Value::Int(12)));
        assert_eq!(v.text(a).as_deref(), Some("12"));
        v.set_value(b, Value::Double(0.5));
        assert_eq!(v.text(b).as_deref(), Some("0.5"));
        v.set_text(b, "x");
        assert!(v.value(b, &names).is_err());
    }

    #[test]
    fn definitions() {
        assert_eq!(
            Definition::parse("scale=5"),
            Ok(Definition {
                name: "scale".into(),
                value: "5".into()
            })
        );
        assert!(Definition::parse("a=b=c").is_ok_and(|d| d.value == "b=c"));
        assert!(Definition::parse("x").is_err());
        assert!(Definition::parse("=1").is_err());
        assert!(Definition::parse("x=").is_err());
        assert!(Definition::parse("1x=2").is_err());
    }
}
