//! The MiniJinja syntax check of `prompt_template` and `code_template` content. Rendering
//! belongs to the composer; here a template only has to parse, and a failure names the line.

/// Why a template does not parse: the 1-based line (when known) and MiniJinja's detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line of the error in the template, when MiniJinja knows it.
    pub line: Option<usize>,
    /// What is wrong.
    pub detail: String,
}

/// Parses `source` as a MiniJinja template (the syntax the composer renders: statements,
/// expressions, filters and tests; no `include`/`extends`/`import`, since a skill template
/// stands alone).
pub fn check(source: &str) -> Result<(), SyntaxError> {
    let env = minijinja::Environment::new();
    match env.template_from_str(source) {
        Ok(_) => Ok(()),
        Err(e) => Err(SyntaxError {
            line: e.line(),
            detail: e
                .detail()
                .map(str::to_owned)
                .unwrap_or_else(|| e.kind().to_string()),
        }),
    }
}
