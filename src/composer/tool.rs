//! The tools an invocation may use, as the host describes them.

use crate::error::{Error, ErrorKind, Result};
use serde_json::{Map, Value};

/// A tool the invocation may use: the descriptor as the host gave it (MCP's `name`,
/// `description`, `inputSchema`, or the neutral `parameters`), kept verbatim.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDescriptor {
    /// The tool name.
    pub name: String,
    /// The descriptor object as given (a bare name becomes `{ "name": … }`).
    pub descriptor: Map<String, Value>,
}

impl serde::Serialize for ToolDescriptor {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.descriptor.serialize(s)
    }
}

impl ToolDescriptor {
    /// A descriptor from its JSON form: a name, or an object with a string `name`.
    pub fn from_value(v: Value, path: &str) -> Result<Self> {
        let bad = || {
            Error::new(
                ErrorKind::InvalidRequest,
                "a tool is a name or an object with a string `name`",
            )
            .at(path)
        };
        match v {
            Value::String(name) if !name.trim().is_empty() => {
                let mut descriptor = Map::new();
                descriptor.insert("name".into(), name.clone().into());
                Ok(ToolDescriptor { name, descriptor })
            }
            Value::Object(o) => {
                let name = o
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|n| !n.trim().is_empty())
                    .ok_or_else(bad)?
                    .to_owned();
                Ok(ToolDescriptor {
                    name,
                    descriptor: o,
                })
            }
            _ => Err(bad()),
        }
    }

    /// The descriptor as JSON.
    pub fn to_value(&self) -> Value {
        Value::Object(self.descriptor.clone())
    }
}
