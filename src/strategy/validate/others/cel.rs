//! CEL expressions of the admission policies: parsed (not type-checked, not
//! evaluated) with the `cel` crate's parser, so that an expression kube's
//! compiler refuses for its syntax is refused here too, with kube's field
//! path, error type (`Invalid`, the expression as the value) and prefix
//! (`compilation failed: `). What follows the prefix is the parser's
//! report (`ERROR: <input>:1:4: Syntax error: ...` and the snippet and caret
//! lines, in cel-go's layout); its ANTLR grammar is cel-go's, so a syntax
//! error often reads as kube's, but the words are not guaranteed to (other
//! errors, the macros' messages, several errors). Type errors (an undeclared
//! name, a wrong argument type) are not found, as nothing is type-checked.
//!
//! The parser is set up to accept what kube's environment accepts: the
//! optional syntax (`?.`, `[?`), backtick-escaped identifiers, any macro
//! arity (an unknown arity is a call).
//!
//! Invariant: no input crashes the server. The generated parser recurses
//! deeply (in a debug build fifty nested parentheses overflow a 2 MiB stack),
//! so each parse runs on a thread of its own with `CEL_PARSE_STACK_BYTES` of
//! stack (reserved, touched only as deep as the parse goes); the parser's
//! recursion limit (96 nested expressions) bounds nesting, and an expression
//! longer than `CEL_PARSE_EXPRESSION_BYTES_MAX` (whose chains of members or
//! operators could outgrow that stack) is not parsed, so not refused. A panic
//! in the parser, or a thread that cannot be started, counts as "parses": it
//! claims no error it cannot show.

use crate::types::validation::FieldError;

/// kube's prefix (`k8s.io/apiserver/pkg/admission/plugin/cel`: `compilation
/// failed: ` before the compiler's issues).
const PREFIX: &str = "compilation failed: ";

/// The parse thread's stack: 40,000 chained members or operators parse in a
/// debug build within it (measured), above what the length bound allows.
/// Virtual memory, committed only as far as a parse reaches.
const CEL_PARSE_STACK_BYTES: usize = 64 << 20;

/// Longer expressions are not parsed (kube's `ValidatingAdmissionPolicy`
/// expressions have no bound of their own but the request's size).
const CEL_PARSE_EXPRESSION_BYTES_MAX: usize = 64 << 10;

/// The parser's report when `expression` does not parse.
pub fn syntax_error(expression: &str) -> Option<String> {
    if expression.len() > CEL_PARSE_EXPRESSION_BYTES_MAX {
        return None;
    }
    let source = expression.to_string();
    let parse = move || {
        cel::parser::Parser::new()
            .enable_optional_syntax(true)
            .enable_ident_escape_syntax(true)
            .parse(&source)
            .err()
            // cel-go indents the snippet and caret lines by one space.
            .map(|errors| errors.to_string().replace("\n| ", "\n | "))
    };
    let thread = std::thread::Builder::new().name("cel-parse".into()).stack_size(CEL_PARSE_STACK_BYTES).spawn(parse);
    thread.ok().and_then(|handle| handle.join().ok()).flatten()
}

/// `field.Invalid(field, expression, "compilation failed: ...")` when the
/// expression does not parse.
pub fn check(expression: &str, field: &str) -> Option<FieldError> {
    syntax_error(expression).map(|report| FieldError::invalid(field, expression, &format!("{PREFIX}{report}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_expressions_parse() {
        for expression in [
            "object.spec.replicas <= 5",
            "has(object.metadata.labels) && 'app' in object.metadata.labels",
            "object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))",
            "object.spec.containers.map(c, c.name).exists_one(n, n == 'main')",
            "object.?spec.?replicas.orValue(1) > 0",
            "[?optional.none(), 1].size() == 1",
            "variables.names.all(i, v, i < 3)",
            "Object{spec: Object.spec{replicas: 3}}",
            "[JSONPatch{op: 'add', path: '/metadata/labels/a', value: 'b'}]",
            "cel.bind(x, object.spec, x.replicas)",
            "request.userInfo.username == 'admin' ? true : false",
            "params.maxReplicas",
            "'%s/%s'.format([object.metadata.namespace, object.metadata.name])",
        ] {
            assert_eq!(syntax_error(expression), None, "{expression}");
        }
    }

    #[test]
    fn syntax_errors_get_kube_prefix_field_and_type() {
        let err = check("object.spec.replicas <", "spec.validations[0].expression").unwrap();
        let text = err.to_string();
        assert!(
            text.starts_with(
                "spec.validations[0].expression: Invalid value: \"object.spec.replicas <\": compilation failed: ERROR: <input>:1:"
            ),
            "{text}"
        );
        // The words cel-go prints for this one (its grammar is the same).
        assert_eq!(
            text,
            "spec.validations[0].expression: Invalid value: \"object.spec.replicas <\": compilation failed: ERROR: <input>:1:23: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | object.spec.replicas <\n | ......................^"
        );
        assert_eq!(err.reason.cause_reason(), "FieldValueInvalid");
        for bad in ["1 +", "a..b", "(", "x.all(1, y)", "'unterminated", "a ? b"] {
            assert!(syntax_error(bad).is_some(), "{bad} parsed");
        }
    }

    #[test]
    fn deep_or_long_input_is_refused_or_passed_never_a_crash() {
        let deep = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
        let report = syntax_error(&deep).expect("over the recursion limit");
        assert!(report.contains("Recursion limit"), "{report}");
        let lists = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
        assert!(syntax_error(&lists).is_some());
        // The densest chains the length bound lets through parse.
        let chain = format!("a{}", ".b".repeat((CEL_PARSE_EXPRESSION_BYTES_MAX - 1) / 2));
        assert_eq!(syntax_error(&chain), None);
        let sum = format!("1{}", "+1".repeat((CEL_PARSE_EXPRESSION_BYTES_MAX - 1) / 2));
        assert_eq!(syntax_error(&sum), None);
        assert_eq!(syntax_error(&format!("{}1", "!".repeat(CEL_PARSE_EXPRESSION_BYTES_MAX - 1))), None);
        // Past the bound nothing is claimed.
        let long = format!("{} +", "1".repeat(CEL_PARSE_EXPRESSION_BYTES_MAX));
        assert_eq!(syntax_error(&long), None);
    }
}
