//! Text an engine sent, made safe to show: it is shown, never obeyed. Control characters (escape
//! sequences, BEL, NUL, newlines) and the marks that reorder text on screen (the bidirectional
//! overrides and isolates, U+202E among them) are written as escapes, so that a move's text
//! cannot drive a terminal or disguise itself in a PGN or a report.

/// Whether `c` must not reach a reader as it is.
pub fn hidden_meaning(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with each character of hidden meaning written as its escape (`\u{202e}`, `\n`).
pub fn shown(text: &str) -> String {
    if !text.chars().any(hidden_meaning) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match hidden_meaning(c) {
            true if c.is_control() => out.extend(c.escape_debug()),
            true => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            false => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_and_direction_marks_and_nothing_else() {
        assert_eq!(shown("e2e4"), "e2e4");
        assert_eq!(shown("a\u{1b}[2Jb\u{7}"), "a\\u{1b}[2Jb\\u{7}");
        let bidi = shown("h1\u{202E}4h\u{2066}x\u{200F}");
        assert!(!bidi.chars().any(hidden_meaning), "{bidi}");
        assert!(
            bidi.contains("\\u{202e}") && bidi.contains("\\u{2066}"),
            "{bidi}"
        );
        assert_eq!(shown("Kö"), "Kö");
    }
}
