//! C++ text written line by line at a nesting depth, each level indented by two spaces: the
//! printer's writer. A leaf of the printer.

/// Lines of C++ under construction, and the depth the next one is written at.
pub(super) struct Code {
    text: String,
    depth: usize,
}

impl Code {
    /// No text yet; lines start at `depth`.
    pub(super) fn at(depth: usize) -> Code {
        Code {
            text: String::new(),
            depth,
        }
    }

    /// The depth the next line is written at: what a printer writing into this one's current
    /// scope is given.
    pub(super) fn depth(&self) -> usize {
        self.depth
    }

    /// `text` at the current depth: each of its lines indented, a newline after the last.
    pub(super) fn line(&mut self, text: impl AsRef<str>) {
        for l in text.as_ref().split('\n') {
            if !l.is_empty() {
                self.text.push_str(&"  ".repeat(self.depth));
            }
            self.text.push_str(l);
            self.text.push('\n');
        }
    }

    /// A line that opens a scope (`for (...) {`): the lines after it are one level deeper.
    pub(super) fn open(&mut self, text: impl AsRef<str>) {
        self.line(text);
        self.depth += 1;
    }

    /// A line that closes the scope the last [`Self::open`] opened (`}`, `} else {`).
    pub(super) fn close(&mut self, text: impl AsRef<str>) {
        self.depth -= 1;
        self.line(text);
    }

    /// A line that closes a scope and opens the next (`} else {`).
    pub(super) fn reopen(&mut self, text: impl AsRef<str>) {
        self.depth -= 1;
        self.open(text);
    }

    /// One level deeper or shallower, for a line that opened or closed several scopes at once.
    pub(super) fn indent(&mut self, levels: isize) {
        self.depth = self
            .depth
            .checked_add_signed(levels)
            .expect("a scope closes once");
    }

    /// One line at `depth`, as text.
    pub(super) fn one(depth: usize, text: impl AsRef<str>) -> String {
        let mut c = Code::at(depth);
        c.line(text);
        c.finish()
    }

    /// Text another printer wrote for the current depth (its lines already indented).
    pub(super) fn push(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// The text written.
    pub(super) fn finish(self) -> String {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_each_line_by_its_depth() {
        let mut c = Code::at(1);
        c.open("if (a) {");
        c.line("x = 1;\ny = 2;");
        c.reopen("} else {");
        c.push("    z = 3;\n");
        c.close("}");
        c.indent(2);
        c.line("w;");
        assert_eq!(
            c.finish(),
            "  if (a) {\n    x = 1;\n    y = 2;\n  } else {\n    z = 3;\n  }\n      w;\n"
        );
    }
}
