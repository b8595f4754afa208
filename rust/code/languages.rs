//! The languages the code structure knows: one table entry each. Adding a language is one
//! more entry in [`LANGUAGES`] (and its grammar crate in `Cargo.toml`): its name, the file
//! extensions it is read from, its tree-sitter grammar, and the kinds of node that are
//! definitions (some only when their value is a function or class), that wrap a definition,
//! or that go with the definition below them.

use std::sync::OnceLock;

/// One language: its names, its files and the node kinds of its grammar that matter.
#[derive(Debug)]
pub struct LanguageSpec {
    /// The name chunks record (`metadata["language"]`) and settings give.
    pub name: &'static str,
    /// Other names accepted for it (`"py"`, `"c++"`).
    pub aliases: &'static [&'static str],
    /// File name endings, lower case with the dot, read as this language.
    pub extensions: &'static [&'static str],
    /// The tree-sitter grammar.
    pub grammar: fn() -> tree_sitter::Language,
    /// Node kinds that are definitions: a section of their own, a name on the symbol path.
    pub definitions: &'static [&'static str],
    /// Of the definitions, those that are one only with a `body` (C's `struct s { ... }`,
    /// not `struct s *p`; Rust's `mod m { ... }`, not `mod m;`).
    pub bodied: &'static [&'static str],
    /// Of the definitions, those that are one only when their `value` is one of
    /// [`values`](Self::values) (JavaScript's `const f = () => {}`, not `const n = 1`).
    pub assigned: &'static [&'static str],
    /// The kinds of value that make an [`assigned`](Self::assigned) node a definition: a
    /// function or class written as an expression. Their bodies hold statements, as a
    /// definition's do.
    pub values: &'static [&'static str],
    /// Node kinds that wrap a definition (a decorated one, an exported one, a template, the
    /// declaration of an assigned one): the wrapper is the section, named by the definition
    /// inside it.
    pub wrappers: &'static [&'static str],
    /// Node kinds that go with the definition right below them (comments, attributes) when
    /// each begins its line and no blank line parts them.
    pub attached: &'static [&'static str],
}

/// Every language, by name. The order is the documentation's.
pub static LANGUAGES: &[LanguageSpec] = &[
    LanguageSpec {
        name: "python",
        aliases: &["py"],
        extensions: &[".py", ".pyi", ".pyw"],
        grammar: || tree_sitter_python::LANGUAGE.into(),
        definitions: &["class_definition", "function_definition"],
        bodied: &[],
        assigned: &[],
        values: &[],
        wrappers: &["decorated_definition"],
        attached: &["comment"],
    },
    LanguageSpec {
        name: "rust",
        aliases: &["rs"],
        extensions: &[".rs"],
        grammar: || tree_sitter_rust::LANGUAGE.into(),
        definitions: &[
            "function_item",
            "function_signature_item",
            "impl_item",
            "trait_item",
            "struct_item",
            "enum_item",
            "union_item",
            "mod_item",
            "macro_definition",
        ],
        bodied: &["mod_item"],
        assigned: &[],
        values: &[],
        wrappers: &[],
        attached: &["line_comment", "block_comment", "attribute_item"],
    },
    LanguageSpec {
        name: "javascript",
        aliases: &["js", "jsx"],
        extensions: &[".js", ".mjs", ".cjs", ".jsx"],
        grammar: || tree_sitter_javascript::LANGUAGE.into(),
        definitions: &[
            "function_declaration",
            "generator_function_declaration",
            "class_declaration",
            "method_definition",
            "variable_declarator",
        ],
        bodied: &[],
        assigned: &["variable_declarator"],
        values: FUNCTION_VALUES,
        wrappers: DECLARATION_WRAPPERS,
        attached: &["comment"],
    },
    LanguageSpec {
        name: "typescript",
        aliases: &["ts"],
        extensions: &[".ts", ".mts", ".cts"],
        grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        definitions: TYPESCRIPT_DEFINITIONS,
        bodied: &[],
        assigned: &["variable_declarator"],
        values: FUNCTION_VALUES,
        wrappers: DECLARATION_WRAPPERS,
        attached: &["comment"],
    },
    LanguageSpec {
        name: "tsx",
        aliases: &[],
        extensions: &[".tsx"],
        grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
        definitions: TYPESCRIPT_DEFINITIONS,
        bodied: &[],
        assigned: &["variable_declarator"],
        values: FUNCTION_VALUES,
        wrappers: DECLARATION_WRAPPERS,
        attached: &["comment"],
    },
    LanguageSpec {
        name: "go",
        aliases: &["golang"],
        extensions: &[".go"],
        grammar: || tree_sitter_go::LANGUAGE.into(),
        definitions: &[
            "function_declaration",
            "method_declaration",
            "type_declaration",
        ],
        bodied: &[],
        assigned: &[],
        values: &[],
        wrappers: &[],
        attached: &["comment"],
    },
    LanguageSpec {
        name: "java",
        aliases: &[],
        extensions: &[".java"],
        grammar: || tree_sitter_java::LANGUAGE.into(),
        definitions: &[
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
            "method_declaration",
            "constructor_declaration",
            "compact_constructor_declaration",
        ],
        bodied: &[],
        assigned: &[],
        values: &[],
        wrappers: &[],
        attached: &["line_comment", "block_comment"],
    },
    LanguageSpec {
        name: "c",
        aliases: &[],
        extensions: &[".c", ".h"],
        grammar: || tree_sitter_c::LANGUAGE.into(),
        definitions: &[
            "function_definition",
            "struct_specifier",
            "union_specifier",
            "enum_specifier",
        ],
        bodied: &["struct_specifier", "union_specifier", "enum_specifier"],
        assigned: &[],
        values: &[],
        wrappers: &[],
        attached: &["comment"],
    },
    LanguageSpec {
        name: "cpp",
        aliases: &["c++", "cxx"],
        extensions: &[".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++"],
        grammar: || tree_sitter_cpp::LANGUAGE.into(),
        definitions: &[
            "function_definition",
            "class_specifier",
            "struct_specifier",
            "union_specifier",
            "enum_specifier",
            "namespace_definition",
            "concept_definition",
        ],
        bodied: &[
            "class_specifier",
            "struct_specifier",
            "union_specifier",
            "enum_specifier",
        ],
        assigned: &[],
        values: &[],
        wrappers: &["template_declaration"],
        attached: &["comment"],
    },
];

/// JavaScript's and TypeScript's functions and classes written as values: `const f = () =>
/// {}` defines `f` as `function f() {}` does.
const FUNCTION_VALUES: &[&str] = &[
    "arrow_function",
    "function_expression",
    "generator_function",
    "class",
];

/// JavaScript's and TypeScript's wrappers: `export`, and the declarations (`const`, `let`,
/// `var`) of assigned definitions.
const DECLARATION_WRAPPERS: &[&str] = &[
    "export_statement",
    "lexical_declaration",
    "variable_declaration",
];

const TYPESCRIPT_DEFINITIONS: &[&str] = &[
    "function_declaration",
    "variable_declarator",
    "generator_function_declaration",
    "function_signature",
    "class_declaration",
    "abstract_class_declaration",
    "method_definition",
    "method_signature",
    "abstract_method_signature",
    "interface_declaration",
    "enum_declaration",
    "internal_module",
    "module",
];

/// A language of [`LANGUAGES`]: a cheap handle, compared by its entry.
#[derive(Debug, Clone, Copy)]
pub struct Language {
    index: usize,
}

impl PartialEq for Language {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}

impl Eq for Language {}

impl Language {
    /// The language called `name` (or one of its aliases), ignoring case.
    #[must_use]
    pub fn named(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        LANGUAGES
            .iter()
            .position(|spec| spec.name == name || spec.aliases.contains(&name.as_str()))
            .map(|index| Self { index })
    }

    /// The language of a file, by the ending of its name (`"src/lib.rs"`: Rust).
    #[must_use]
    pub fn of_path(path: &str) -> Option<Self> {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let dot = name.rfind('.')?;
        let extension = name[dot..].to_ascii_lowercase();
        LANGUAGES
            .iter()
            .position(|spec| spec.extensions.contains(&extension.as_str()))
            .map(|index| Self { index })
    }

    /// Its table entry.
    #[must_use]
    pub fn spec(self) -> &'static LanguageSpec {
        &LANGUAGES[self.index]
    }

    /// Its name.
    #[must_use]
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Its position in [`LANGUAGES`].
    #[must_use]
    pub fn index(self) -> usize {
        self.index
    }

    /// The names of every language, for messages and the documentation.
    #[must_use]
    pub fn names() -> Vec<&'static str> {
        LANGUAGES.iter().map(|spec| spec.name).collect()
    }

    /// Its grammar and the kinds of its nodes, made once per process.
    pub(crate) fn grammar(self) -> &'static Grammar {
        static GRAMMARS: OnceLock<Vec<OnceLock<Grammar>>> = OnceLock::new();
        let grammars = GRAMMARS.get_or_init(|| LANGUAGES.iter().map(|_| OnceLock::new()).collect());
        grammars[self.index].get_or_init(|| Grammar::new(self.spec()))
    }
}

/// Hands tree-sitter's allocations to mimalloc, once per process, before the first parser
/// is made: every parser comes from a [`Grammar`], and this runs first in `Grammar::new`.
/// tree-sitter allocates each node of a tree and of its parse stack with `malloc`; glibc's
/// takes a tenth of a parse, and more in a process whose heap is large (an ingestion job's).
/// Measured in `benches/NOTES.md`, under `code/`.
fn use_mimalloc() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: no tree-sitter object exists yet (parsers are made only after a grammar,
        // and grammars only after this), so nothing allocated by the old allocator is ever
        // handed to the new one; the four functions are mimalloc's, which are thread-safe.
        unsafe {
            tree_sitter::set_allocator(
                Some(libmimalloc_sys::mi_malloc),
                Some(zeroed),
                Some(libmimalloc_sys::mi_realloc),
                Some(libmimalloc_sys::mi_free),
            );
        }
    });
}

/// `calloc` for tree-sitter: zeroed memory for `count` items of `size` bytes, or null when
/// the product overflows (as `calloc` must).
unsafe extern "C" fn zeroed(count: usize, size: usize) -> *mut std::ffi::c_void {
    match count.checked_mul(size) {
        // SAFETY: mimalloc's own zeroing allocation, for the checked size.
        Some(bytes) => unsafe { libmimalloc_sys::mi_zalloc(bytes) },
        None => std::ptr::null_mut(),
    }
}

/// What a node kind is, as bits.
pub(crate) const DEFINITION: u8 = 1;
pub(crate) const BODIED: u8 = 2;
pub(crate) const WRAPPER: u8 = 4;
pub(crate) const ATTACHED: u8 = 8;
pub(crate) const ASSIGNED: u8 = 16;
pub(crate) const VALUE: u8 = 32;

/// A language's grammar, with its node kinds looked up once: a byte of bits per kind id.
#[derive(Debug)]
pub(crate) struct Grammar {
    pub(crate) language: tree_sitter::Language,
    kinds: Vec<u8>,
}

impl Grammar {
    fn new(spec: &LanguageSpec) -> Self {
        use_mimalloc();
        let language = (spec.grammar)();
        let mut kinds = vec![0_u8; language.node_kind_count()];
        let mut mark = |names: &[&str], bit: u8| {
            for name in names {
                let id = usize::from(language.id_for_node_kind(name, true));
                // Id 0 is the grammar's "end": the name is not one of its kinds.
                if id != 0 && id < kinds.len() {
                    kinds[id] |= bit;
                }
            }
        };
        mark(spec.definitions, DEFINITION);
        mark(spec.bodied, BODIED);
        mark(spec.wrappers, WRAPPER);
        mark(spec.attached, ATTACHED);
        mark(spec.assigned, ASSIGNED);
        mark(spec.values, VALUE);
        Self { language, kinds }
    }

    /// The bits of the node kind `id`.
    #[inline]
    pub(crate) fn kind(&self, id: u16) -> u8 {
        self.kinds.get(usize::from(id)).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_paths_and_kinds() {
        assert_eq!(Language::named("Py").map(Language::name), Some("python"));
        assert_eq!(Language::named("c++").map(Language::name), Some("cpp"));
        assert!(Language::named("cobol").is_none());
        assert_eq!(
            Language::of_path("a/b/lib.RS").map(Language::name),
            Some("rust")
        );
        assert_eq!(Language::of_path("x.tsx").map(Language::name), Some("tsx"));
        assert_eq!(Language::of_path("Makefile"), None);
        assert_eq!(Language::of_path("dir.d/README"), None);
        // Every kind the table names is one of its grammar's.
        for spec in LANGUAGES {
            let language = (spec.grammar)();
            for name in spec
                .definitions
                .iter()
                .chain(spec.wrappers)
                .chain(spec.attached)
                .chain(spec.assigned)
                .chain(spec.values)
            {
                assert_ne!(
                    language.id_for_node_kind(name, true),
                    0,
                    "{}: {name}",
                    spec.name
                );
            }
        }
    }
}
