//! The bounds a CEL expression is held to before the `cel` crate compiles
//! and evaluates it (admission webhooks' matchConditions,
//! `strategy/admission/webhook.rs`): compiling and evaluating recurse once
//! per operator and bracket and a stack overflow aborts the process, so an
//! expression past these bounds is never handed to it, and what is handed to
//! it runs on a thread with a known stack. (The admission policies'
//! validation only parses, `strategy/validate/others/cel.rs`: the parser's
//! own recursion limit and that file's length bound keep it within its
//! stack, measured there.)
//!
//! Invariant: no I/O; `expression_shape` never panics.

/// What a CEL expression may be before the `cel` crate sees it: the `cel` crate's parser recurses once per
/// operator and bracket (a chain of 300 `+` overflows an 8 MiB stack in a
/// debug build; a hundred nested parentheses overflow 2 MiB), so an
/// expression is refused (an evaluation error) past `operators_max`
/// operator characters and open brackets (outside string literals) or
/// `expression_bytes_max` bytes, and evaluated on a thread of its own with
/// `stack_bytes` of stack (`config.rs`: `admission_cel_*`; 256 of each kind
/// measured to fit 64 MiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CelLimits {
    pub expression_bytes_max: usize,
    pub operators_max: usize,
    pub stack_bytes: usize,
}

impl Default for CelLimits {
    fn default() -> Self {
        CelLimits { expression_bytes_max: 4096, operators_max: 256, stack_bytes: 64 * 1024 * 1024 }
    }
}

/// An expression the interpreter can take within [`CelLimits`]: not longer
/// than `expression_bytes_max`, at most `operators_max` operator characters
/// and open brackets outside string literals (each is a level of the
/// parser's recursion, at worst).
pub fn expression_shape(expression: &str, limits: &CelLimits) -> Result<(), String> {
    if expression.len() > limits.expression_bytes_max {
        return Err(format!("the expression is longer than {} bytes", limits.expression_bytes_max));
    }
    let (mut operators, mut quote, mut escaped) = (0usize, None::<char>, false);
    for c in expression.chars() {
        if let Some(q) = quote {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                _ if c == q => quote = None,
                _ => {}
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' | '[' | '{' | '.' | '+' | '-' | '*' | '/' | '%' | '<' | '>' | '=' | '!' | '&' | '|' | '?' | ':' => {
                operators += 1;
                if operators > limits.operators_max {
                    return Err(format!(
                        "the expression has more than {} operators and brackets",
                        limits.operators_max
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}
