//! The one tree-sitter parse of a source file, turned into the engine's [`Outline`]: where
//! definitions and the statement groups between them begin (the sections), where statements
//! begin, and the symbol path of every position.
//!
//! Measurements (the parse is the cost): `benches/NOTES.md`, under `code/`.

use std::cell::RefCell;

use tree_sitter::{Node, Parser, TreeCursor};

use super::languages::{Grammar, Language, ASSIGNED, ATTACHED, BODIED, DEFINITION, VALUE, WRAPPER};
use crate::markdown::{Heading, Outline, BLOCK_LEVEL, HEADING_LEVELS, INNER_LEVEL};

/// A symbol name longer than this is cut (at a char boundary): a name, not a declaration.
const LONGEST_NAME: usize = 200;

thread_local! {
    /// One parser per thread and language, reused from one document to the next.
    static PARSERS: RefCell<Vec<Option<Parser>>> = const { RefCell::new(Vec::new()) };
}

/// The outline of `text` as source code in `language`: empty (cut as plain text) when the
/// parse gives no usable tree, that is when the grammar's error recovery leaves more than
/// half of the text in errors.
#[must_use]
pub fn outline(text: &str, language: Language) -> Outline {
    let mut outline = Outline {
        language: Some(language.name()),
        ..Outline::default()
    };
    let grammar = language.grammar();
    let tree = PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        if parsers.len() <= language.index() {
            parsers.resize_with(language.index() + 1, || None);
        }
        let parser = match &mut parsers[language.index()] {
            Some(parser) => parser,
            empty => {
                let mut parser = Parser::new();
                parser.set_language(&grammar.language).ok()?;
                empty.insert(parser)
            }
        };
        let tree = parser.parse(text, None);
        if tree.is_none() {
            // A parse that stopped part way leaves the parser mid-document.
            parser.reset();
        }
        tree
    });
    let Some(tree) = tree else {
        return outline;
    };
    let root = tree.root_node();
    if !usable(root, text.len()) {
        return outline;
    }
    OutlineWalk {
        grammar,
        bytes: text.as_bytes(),
        outline: &mut outline,
        stack: Vec::new(),
        attached: Vec::new(),
        inside_wrapper: None,
        ended: None,
    }
    .run(&mut root.walk());
    // The grammar's nodes start at chars; a position inside one would be a cut inside a
    // UTF-8 sequence, which the engine must never make, so none is kept, whatever a
    // grammar's error recovery does.
    outline
        .headings
        .retain(|heading| text.is_char_boundary(heading.start));
    outline.headings.sort_by_key(|heading| heading.start);
    outline.headings.dedup_by_key(|heading| heading.start);
    outline.link();
    for level in &mut outline.boundaries {
        level.retain(|&position| text.is_char_boundary(position));
        level.sort_unstable();
        level.dedup();
    }
    outline
}

/// Whether error recovery left a tree worth cutting at: at most half of the text in errors.
fn usable(root: Node<'_>, length: usize) -> bool {
    if root.is_error() {
        return false;
    }
    if !root.has_error() {
        return true;
    }
    let mut cursor = root.walk();
    let in_errors: usize = root
        .children(&mut cursor)
        .filter(Node::is_error)
        .map(|child| child.end_byte() - child.start_byte())
        .sum();
    in_errors * 2 <= length
}

/// What the walk knows of a node whose children it visits.
#[derive(Debug, Clone, Copy)]
struct NodeFrame {
    /// Definitions enclosing the node's children (the node included, when it is one).
    scopes: usize,
    /// The node is a definition (or its wrapper): its named children hold its statements.
    scope: bool,
    /// The node's named children are statements (the document, a definition, its body).
    container: bool,
    /// The level of the section the node opened (a definition), 0 for any other node.
    opened: usize,
}

struct OutlineWalk<'t, 'o> {
    grammar: &'static Grammar,
    bytes: &'t [u8],
    outline: &'o mut Outline,
    stack: Vec<NodeFrame>,
    /// The comments and attributes (`ATTACHED` nodes) that are the last named nodes visited
    /// at each depth of the walk, as (depth, start, end), deepest last: the ones right above
    /// a definition go with it (`leading_start`). Kept here because tree-sitter finds a
    /// node's previous sibling by walking down from the root and along every sibling before
    /// it, a cost that grows with the file's definitions for each one.
    attached: Vec<(usize, usize, usize)>,
    /// The definition inside the wrapper just visited (the same section).
    inside_wrapper: Option<usize>,
    /// The level of the definition that ended last, until the next node: code after a
    /// definition (a statement after a method, the module's code after a function defined
    /// in an `if`) starts a section without a name at that level, which ends it.
    ended: Option<usize>,
}

impl OutlineWalk<'_, '_> {
    /// Visits every node in document order with one cursor (no recursion: a grammar's trees
    /// can be as deep as a long chain of `+`).
    fn run(&mut self, cursor: &mut TreeCursor<'_>) {
        self.stack.push(NodeFrame {
            scopes: 0,
            scope: false,
            container: true,
            opened: 0,
        });
        if !cursor.goto_first_child() {
            return;
        }
        loop {
            let node = cursor.node();
            let depth = self.stack.len();
            while self.attached.last().is_some_and(|&(at, ..)| at > depth) {
                self.attached.pop();
            }
            let frame = self.visit(node);
            if node.is_named() {
                if self.grammar.kind(node.kind_id()) & ATTACHED != 0 {
                    self.attached
                        .push((depth, node.start_byte(), node.end_byte()));
                } else {
                    while self.attached.last().is_some_and(|&(at, ..)| at == depth) {
                        self.attached.pop();
                    }
                }
            }
            self.stack.push(frame);
            // A node on one line holds no node that begins a line: unless it is a
            // definition or its body (`interface I { m(): void; }`), its children are not
            // visited (most of a tree's nodes; the walk took a tenth of the parse's time,
            // visiting them all).
            let descend = frame.container || node.start_position().row != node.end_position().row;
            if descend && cursor.goto_first_child() {
                continue;
            }
            loop {
                if let Some(done) = self.stack.pop().filter(|done| done.opened > 0) {
                    self.ended = Some(done.opened);
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() || self.stack.len() <= 1 {
                    return;
                }
            }
        }
    }

    /// Records what `node` begins, and returns the frame its children see.
    fn visit(&mut self, node: Node<'_>) -> NodeFrame {
        let parent = *self.stack.last().expect("the document's frame");
        let mut frame = NodeFrame {
            scopes: parent.scopes,
            scope: false,
            container: false,
            opened: 0,
        };
        if !node.is_named() {
            return frame;
        }
        let definition = self.definition(node);
        if let Some(inner) = self.inside_wrapper {
            if definition.is_some_and(|definition| definition.id() == inner) {
                // The wrapper recorded the section (this is its definition, or a wrapper
                // between them): its children are statements.
                if node.id() == inner {
                    self.inside_wrapper = None;
                }
                frame.scope = true;
                frame.container = true;
                return frame;
            }
        }
        let start = node.start_byte();
        let line = line_start_at_indent(self.bytes, start);
        let ended = self.ended.take();
        if let Some(definition) = definition {
            let level = parent.scopes + 1;
            let name = symbol_name(definition, self.bytes);
            self.section(node, definition, level, name);
            if definition.id() != node.id() {
                self.inside_wrapper = Some(definition.id());
            }
            frame.scopes = level;
            frame.scope = true;
            frame.container = true;
            frame.opened = level;
            return frame;
        }
        if let Some(level) = ended {
            // The first code after a definition: a section without a name, which ends it.
            let position = line.unwrap_or(start);
            self.outline.headings.push(Heading {
                start: position,
                level: u8::try_from(level).unwrap_or(u8::MAX),
                text: String::new(),
                named: false,
                lead_end: position,
            });
            self.boundary(level, position);
        }
        if parent.container {
            if let Some(line) = line {
                self.outline.boundaries[BLOCK_LEVEL].push(line);
            }
            // A definition's body holds its statements; so does the body of the function
            // or class that an assigned definition's value is.
            frame.container = parent.scope;
            frame.scope = parent.scope && self.grammar.kind(node.kind_id()) & VALUE != 0;
        } else if let Some(line) = line {
            self.outline.boundaries[INNER_LEVEL].push(line);
        }
        frame
    }

    /// The definition `node` is: itself, or the one it wraps; `None` when it is none.
    fn definition<'n>(&self, node: Node<'n>) -> Option<Node<'n>> {
        let kind = self.grammar.kind(node.kind_id());
        if kind & DEFINITION != 0 {
            let bodied = kind & BODIED == 0 || node.child_by_field_name("body").is_some();
            let valued = kind & ASSIGNED == 0
                || node
                    .child_by_field_name("value")
                    .is_some_and(|value| self.grammar.kind(value.kind_id()) & VALUE != 0);
            return (bodied && valued).then_some(node);
        }
        if kind & WRAPPER != 0 {
            let mut cursor = node.walk();
            let inner = node
                .named_children(&mut cursor)
                .find_map(|child| self.definition(child));
            return inner;
        }
        None
    }

    /// Records the section of the definition `node` (or of its wrapper `node`) at `level`:
    /// from the first of the comments and attributes right above it, named `name`.
    fn section(&mut self, node: Node<'_>, definition: Node<'_>, level: usize, name: String) {
        let start = self.leading_start(node);
        let lead_end = self.lead_end(definition).filter(|&end| end > start);
        // A statement group recorded at the comments now found to go with the definition is
        // no group: they are the definition's.
        while let Some(last) = self.outline.headings.last() {
            if last.named || usize::from(last.level) < level || last.start < start {
                break;
            }
            let ended = usize::from(last.level);
            self.outline.headings.pop();
            if ended <= HEADING_LEVELS {
                let positions = &mut self.outline.boundaries[ended - 1];
                while positions.last().is_some_and(|&position| position >= start) {
                    positions.pop();
                }
            }
        }
        self.outline.headings.push(Heading {
            start,
            level: u8::try_from(level).unwrap_or(u8::MAX),
            text: name,
            named: true,
            lead_end: lead_end.unwrap_or(start),
        });
        self.boundary(level, start);
    }

    /// Where the lead of `definition` ends: before the line of its body's first named node
    /// (its first statement, member or comment), its trailing whitespace left out; `None`
    /// when it has no body, an empty one, or one whose first node does not begin its line
    /// (`fn f() { x }`: the whole definition is its signature's line).
    fn lead_end(&self, definition: Node<'_>) -> Option<usize> {
        let body = definition.child_by_field_name("body")?;
        let first = body.named_child(0)?;
        let line = line_start_at_indent(self.bytes, first.start_byte())?;
        let lead = &self.bytes[..line];
        Some(
            lead.len()
                - lead
                    .iter()
                    .rev()
                    .take_while(|byte| byte.is_ascii_whitespace())
                    .count(),
        )
    }

    /// A section of `level` begins at `position`: a structure level of its own for the
    /// first `HEADING_LEVELS` depths, a statement start below them.
    fn boundary(&mut self, level: usize, position: usize) {
        let structure = if level <= HEADING_LEVELS {
            level - 1
        } else {
            BLOCK_LEVEL
        };
        self.outline.boundaries[structure].push(position);
    }

    /// Where the section of the definition `node` begins: the start of its line, or of the
    /// first line of the comments and attributes right above it (each beginning its line,
    /// no blank line between).
    fn leading_start(&self, node: Node<'_>) -> usize {
        let mut start = node.start_byte();
        // The node is being visited: its siblings are at the depth of the frames so far.
        let depth = self.stack.len();
        for &(at, previous_start, previous_end) in self.attached.iter().rev() {
            if at != depth {
                break;
            }
            let gap = &self.bytes[previous_end.min(start)..start];
            let newlines = bytecount::count(gap, b'\n');
            let blank = gap.iter().all(u8::is_ascii_whitespace);
            if newlines > 1 || !blank || line_start_at_indent(self.bytes, previous_start).is_none()
            {
                break;
            }
            start = previous_start;
        }
        line_start_at_indent(self.bytes, start).unwrap_or(start)
    }
}

/// The start of the line holding `offset` when only spaces and tabs come before it there.
/// Reads back over the indent only: a search back to the line's start would read a long line
/// (minified code) up to every node on it, quadratic in the line's length.
fn line_start_at_indent(bytes: &[u8], offset: usize) -> Option<usize> {
    let indent = bytes[..offset]
        .iter()
        .rev()
        .take_while(|&&byte| byte == b' ' || byte == b'\t' || byte == b'\r' || byte == 0x0c)
        .count();
    let line = offset - indent;
    (line == 0 || bytes[line - 1] == b'\n').then_some(line)
}

/// The name of a definition: its `name` field; for C and C++ functions the innermost
/// declarator; for a Rust `impl`, its type; for a Go type declaration, its first type's
/// name; else the kind of node.
fn symbol_name(definition: Node<'_>, bytes: &[u8]) -> String {
    let named = definition
        .child_by_field_name("name")
        .or_else(|| innermost_declarator(definition))
        .or_else(|| definition.child_by_field_name("type"))
        .or_else(|| {
            let mut cursor = definition.walk();
            let spec = definition
                .named_children(&mut cursor)
                .find(|child| child.kind() == "type_spec");
            spec.and_then(|spec| spec.child_by_field_name("name"))
        });
    let Some(named) = named else {
        return definition.kind().to_owned();
    };
    let raw = String::from_utf8_lossy(&bytes[named.start_byte()..named.end_byte()]);
    let mut name = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if name.len() > LONGEST_NAME {
        let mut end = LONGEST_NAME;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
    name
}

/// The innermost `declarator` of a C or C++ definition (`int *f(void)`: `f`).
fn innermost_declarator(definition: Node<'_>) -> Option<Node<'_>> {
    let mut declarator = definition.child_by_field_name("declarator")?;
    while let Some(inner) = declarator.child_by_field_name("declarator") {
        declarator = inner;
    }
    Some(declarator)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Splitter, SplitterConfig, Structure};
    use crate::sizing::Unit;

    fn python(text: &str) -> Outline {
        outline(text, Language::named("python").unwrap())
    }

    fn named(outline: &Outline) -> Vec<(usize, u8, &str)> {
        outline
            .headings
            .iter()
            .filter(|heading| heading.named)
            .map(|heading| (heading.start, heading.level, heading.text.as_str()))
            .collect()
    }

    fn symbols<'o>(outline: &'o Outline, text: &str, needle: &str) -> Vec<&'o str> {
        let start = text.find(needle).unwrap();
        outline
            .path(outline.headings_before(start))
            .into_iter()
            .map(|row| outline.headings[row].text.as_str())
            .collect()
    }

    const SOURCE: &str = "import os\n\n# The parser.\n@dataclass\nclass Parser:\n    \"\"\"Doc.\"\"\"\n\n    def parse(self, text):\n        return text\n\n    limit = 3\n\n    def parse_block(self, block):\n        def inner():\n            pass\n        return block\n\n\nx = Parser()\n";

    #[test]
    fn definitions_are_sections_with_their_comments_and_decorators() {
        let outline = python(SOURCE);
        assert_eq!(outline.language, Some("python"));
        assert_eq!(
            named(&outline),
            [
                (11, 1, "Parser"),
                (SOURCE.find("    def parse(").unwrap(), 2, "parse"),
                (
                    SOURCE.find("    def parse_block").unwrap(),
                    2,
                    "parse_block"
                ),
                (SOURCE.find("        def inner").unwrap(), 3, "inner"),
            ]
        );
        // The comment and the decorator go with the class.
        assert!(outline.boundaries[0].contains(&11));
        assert!(outline.starts_heading(11));
        // Statements between definitions are sections without a name.
        assert_eq!(symbols(&outline, SOURCE, "limit = 3"), ["Parser"]);
        assert_eq!(
            symbols(&outline, SOURCE, "x = Parser()"),
            Vec::<&str>::new()
        );
        assert_eq!(
            symbols(&outline, SOURCE, "pass"),
            ["Parser", "parse_block", "inner"]
        );
        assert_eq!(
            symbols(&outline, SOURCE, "return block"),
            ["Parser", "parse_block"]
        );
        assert_eq!(symbols(&outline, SOURCE, "import os"), Vec::<&str>::new());
    }

    #[test]
    fn the_engine_cuts_at_definitions() {
        let mut config = SplitterConfig::new(80);
        config.structure = Structure::Code(Language::named("python"));
        let splitter = Splitter::new(config, Unit::Char).unwrap();
        let chunks: Vec<&str> = splitter
            .split(SOURCE)
            .unwrap()
            .into_iter()
            .map(|(start, end)| &SOURCE[start..end])
            .collect();
        assert_eq!(
            chunks,
            [
                "import os",
                "# The parser.\n@dataclass\nclass Parser:\n    \"\"\"Doc.\"\"\"",
                "def parse(self, text):\n        return text\n\n    limit = 3",
                // Too big whole (88 chars): cut at its inner definition, and the statements
                // after it (a section without a name) are a chunk of their own.
                "def parse_block(self, block):\n        def inner():\n            pass",
                "return block",
                "x = Parser()",
            ]
        );
    }

    #[test]
    fn every_language_names_its_definitions() {
        let cases: [(&str, &str, &[&str]); 9] = [
            ("rust", "/// A point.\n#[derive(Debug)]\nstruct P { x: i32 }\n\nimpl P {\n    fn norm(&self) -> i32 { self.x }\n}\n", &["P", "P", "norm"]),
            ("javascript", "// Greets.\nexport function hello(name) {\n  return name;\n}\nclass A {\n  run() { return 1; }\n}\n", &["hello", "A", "run"]),
            ("typescript", "interface Shape { area(): number; }\nexport class Box implements Shape {\n  area(): number { return 1; }\n}\n", &["Shape", "area", "Box", "area"]),
            ("tsx", "function App() {\n  return <div />;\n}\n", &["App"]),
            ("go", "package main\n\n// Point is a point.\ntype Point struct{ X int }\n\nfunc (p Point) Norm() int { return p.X }\n\nfunc main() {}\n", &["Point", "Norm", "main"]),
            ("java", "/** A. */\npublic class A {\n  public A() {}\n  void run() {}\n  interface I { void go(); }\n}\n", &["A", "A", "run", "I", "go"]),
            ("c", "/* Adds. */\nstatic int *add(int a, int b) { return 0; }\nstruct s { int x; };\nstruct s *p;\n", &["add", "s"]),
            ("cpp", "namespace n {\ntemplate <typename T>\nclass V {\n  void push(T x) {}\n};\n}\nint V<int>::size() const { return 0; }\n", &["n", "V", "push", "V<int>::size"]),
            ("python", "def f():\n    pass\n", &["f"]),
        ];
        for (name, text, expected) in cases {
            let outline = outline(text, Language::named(name).unwrap());
            let found: Vec<&str> = named(&outline).iter().map(|&(_, _, name)| name).collect();
            assert_eq!(found, expected, "{name}");
        }
        // Comments and attributes right above go with the definition.
        let rust = "/// A point.\n#[derive(Debug)]\nstruct P { x: i32 }\n";
        let outline = outline(rust, Language::named("rust").unwrap());
        assert_eq!(outline.headings[0].start, 0);
    }

    #[test]
    fn code_after_a_definition_ends_it_wherever_the_definition_is() {
        let text = "if nt:\n    def w():\n        pass\nfrom x import y\n\ndef html():\n    for f in fs:\n        def reader():\n            return 1\n        rows.append(reader)\n    return rows\n";
        let outline = python(text);
        assert_eq!(symbols(&outline, text, "from x"), Vec::<&str>::new());
        assert_eq!(symbols(&outline, text, "pass"), ["w"]);
        assert_eq!(symbols(&outline, text, "return 1"), ["html", "reader"]);
        assert_eq!(symbols(&outline, text, "rows.append"), ["html"]);
        assert_eq!(symbols(&outline, text, "return rows"), ["html"]);
    }

    #[test]
    fn wrappers_nest() {
        // A template of a template, a decorated export: one section each, named by the
        // definition inside.
        let cpp = "template <typename T>\ntemplate <typename U>\nvoid A<T>::f(U u) {\n  return;\n}\n\nint g() { return 1; }\n";
        let outline = outline(cpp, Language::named("cpp").unwrap());
        assert_eq!(named(&outline), [(0, 1, "A<T>::f"), (77, 1, "g")]);
        let typescript = "@Component({})\nexport class B {\n  n() {}\n}\nexport const x = 1;\n";
        let outline = outline_of(typescript, "typescript");
        assert_eq!(named(&outline), [(0, 1, "B"), (32, 2, "n")]);
        assert_eq!(
            symbols(&outline, typescript, "export const"),
            Vec::<&str>::new()
        );
    }

    fn outline_of(text: &str, language: &str) -> Outline {
        outline(text, Language::named(language).unwrap())
    }

    #[test]
    fn broken_source_still_has_an_outline_or_none() {
        // Truncated: error recovery keeps the definitions before the break.
        let truncated = "def ok():\n    return 1\n\n\nclass Fine:\n    def method(self):\n        return [1, 2, 3]\n\n\ndef broken(a, b\n";
        let outline = python(truncated);
        let found: Vec<&str> = named(&outline).iter().map(|found| found.2).collect();
        assert_eq!(found[..3], ["ok", "Fine", "method"], "{outline:?}");
        // Not code at all: mostly errors, so no structure.
        let prose = python("}}}} ))) ((( {{{{ ]]] [[[ :::: \n".repeat(20).as_str());
        assert!(prose.headings.is_empty());
        assert!(prose.boundaries.iter().all(Vec::is_empty));
        assert_eq!(prose.language, Some("python"));
        // Empty text.
        assert!(python("").headings.is_empty());
    }

    #[test]
    fn deep_nesting_is_walked_without_recursion() {
        let deep = format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
        let outline = python(&deep);
        assert!(outline.headings.is_empty());
        let mut nested = String::new();
        for depth in 0..40 {
            nested += &"    ".repeat(depth);
            nested += "def f";
            nested += &depth.to_string();
            nested += "():\n";
        }
        nested += &"    ".repeat(40);
        nested += "pass\n";
        let outline = python(&nested);
        assert_eq!(named(&outline).len(), 40);
        assert_eq!(
            symbols(&outline, &nested, "pass").len(),
            40,
            "paths deeper than the structure levels"
        );
    }
}
