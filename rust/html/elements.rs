//! What each HTML element is to the readable text: dropped, a block, a line, a heading, a
//! table part, preformatted, or inline (anything not named here, custom elements included).

/// Element names are compared by their first bytes: longer (custom) names are cut, which can
/// only make two long names that share their first bytes match each other's end tags.
const NAME_BYTES: usize = 24;

/// An element's name, lowercase (the tokenizer lowercases names). Compared and hashed as
/// three words, not by `memcmp`: a name is compared with the open elements' at every tag.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Name {
    bytes: [u8; NAME_BYTES],
    words: [u64; NAME_BYTES / 8],
    length: u8,
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.words == other.words && self.length == other.length
    }
}

impl Eq for Name {}

impl std::hash::Hash for Name {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.words.hash(state);
    }
}

impl Name {
    pub(crate) fn new(raw: &[u8]) -> Self {
        let length = raw.len().min(NAME_BYTES);
        let mut bytes = [0; NAME_BYTES];
        bytes[..length].copy_from_slice(&raw[..length]);
        let mut words = [0; NAME_BYTES / 8];
        for (word, chunk) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut eight = [0; 8];
            eight.copy_from_slice(chunk);
            *word = u64::from_le_bytes(eight);
        }
        Self {
            bytes,
            words,
            #[allow(clippy::cast_possible_truncation)]
            length: length as u8,
        }
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.length)]
    }

    pub(crate) fn is(&self, name: &[u8]) -> bool {
        self.as_bytes() == name
    }
}

/// How an element shapes the readable text.
#[allow(clippy::struct_excessive_bools)] // one flag per property HTML gives an element
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Role {
    /// Line breaks around it: 0 (inline), 1 (a line: list items, table rows, `br`) or 2 (a
    /// paragraph: every other block).
    pub(crate) breaks: u8,
    /// 1 to 6 for `h1` to `h6`.
    pub(crate) heading: u8,
    /// Neither it nor anything inside it is text.
    pub(crate) dropped: bool,
    /// Has no end tag and no content.
    pub(crate) void: bool,
    /// Its white space is kept as it is.
    pub(crate) preformatted: bool,
    /// A list (`ul`, `ol`, `menu`, `dl`): its items are blocks of the level it is at.
    pub(crate) list: bool,
    /// A list item, quote or table cell: a block inside it is an inner block.
    pub(crate) container: bool,
    pub(crate) table: bool,
    pub(crate) row: bool,
    pub(crate) cell: bool,
    /// Starting it closes an open `p` (HTML's "close a p element").
    pub(crate) closes_paragraph: bool,
    /// May stand in a `head` (anything else ends an unclosed one).
    pub(crate) in_head: bool,
    /// For an element that the start of another may close (`p`, list items, table parts,
    /// `option`), its place in the renderer's open counts ([`slot`]); 0 for any other.
    pub(crate) slot: u8,
}

/// The elements whose open count the renderer keeps: those that starting another may close,
/// found by their count rather than by searching the open elements (or hashing names).
pub(crate) mod slot {
    pub(crate) const P: u8 = 1;
    pub(crate) const LI: u8 = 2;
    pub(crate) const DT: u8 = 3;
    pub(crate) const DD: u8 = 4;
    pub(crate) const TR: u8 = 5;
    pub(crate) const TD: u8 = 6;
    pub(crate) const TH: u8 = 7;
    pub(crate) const THEAD: u8 = 8;
    pub(crate) const TBODY: u8 = 9;
    pub(crate) const TFOOT: u8 = 10;
    pub(crate) const OPTION: u8 = 11;
    /// One more than the largest.
    pub(crate) const COUNT: usize = 12;
}

const fn block(breaks: u8) -> Role {
    Role {
        breaks,
        heading: 0,
        dropped: false,
        void: false,
        preformatted: false,
        list: false,
        container: false,
        table: false,
        row: false,
        cell: false,
        closes_paragraph: true,
        in_head: false,
        slot: 0,
    }
}

const INLINE: Role = Role {
    closes_paragraph: false,
    ..block(0)
};

const DROPPED: Role = Role {
    dropped: true,
    closes_paragraph: false,
    ..block(0)
};

/// The role of the element `name`.
pub(crate) fn role(name: &[u8]) -> Role {
    match name {
        // Not text: code, styles, inert templates, what shows only without scripts, the
        // document's head, embedded graphics and frames, form controls.
        b"script" | b"style" | b"template" | b"noscript" | b"title" => Role {
            in_head: true,
            ..DROPPED
        },
        b"head" | b"svg" | b"canvas" | b"iframe" | b"object" | b"embed" | b"select"
        | b"textarea" | b"button" | b"datalist" | b"audio" | b"video" | b"map" => DROPPED,
        b"meta" | b"link" | b"base" => Role {
            void: true,
            in_head: true,
            ..INLINE
        },
        b"area" | b"col" | b"img" | b"input" | b"param" | b"source" | b"track" | b"wbr"
        | b"keygen" => Role {
            void: true,
            ..INLINE
        },
        b"br" => Role {
            void: true,
            breaks: 1,
            ..INLINE
        },
        b"hr" => Role {
            void: true,
            ..block(2)
        },
        b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" => Role {
            heading: name[1] - b'0',
            ..block(2)
        },
        b"pre" | b"listing" | b"xmp" | b"plaintext" => Role {
            preformatted: true,
            ..block(2)
        },
        b"ul" | b"ol" | b"menu" | b"dir" | b"dl" => Role {
            list: true,
            ..block(2)
        },
        b"li" | b"dt" | b"dd" => Role {
            container: true,
            slot: match name {
                b"li" => slot::LI,
                b"dt" => slot::DT,
                _ => slot::DD,
            },
            ..block(1)
        },
        b"blockquote" => Role {
            container: true,
            ..block(2)
        },
        b"table" => Role {
            table: true,
            ..block(2)
        },
        b"tr" => Role {
            row: true,
            closes_paragraph: false,
            slot: slot::TR,
            ..block(1)
        },
        b"td" | b"th" => Role {
            cell: true,
            container: true,
            closes_paragraph: false,
            slot: if name == b"td" { slot::TD } else { slot::TH },
            ..INLINE
        },
        b"caption" => Role {
            closes_paragraph: false,
            ..block(1)
        },
        b"thead" | b"tbody" | b"tfoot" | b"colgroup" => Role {
            closes_paragraph: false,
            slot: match name {
                b"thead" => slot::THEAD,
                b"tbody" => slot::TBODY,
                b"tfoot" => slot::TFOOT,
                _ => 0,
            },
            ..INLINE
        },
        b"option" => Role {
            slot: slot::OPTION,
            ..INLINE
        },
        b"p" => Role {
            slot: slot::P,
            ..block(2)
        },
        b"div" | b"address" | b"article" | b"aside" | b"center" | b"details" | b"dialog"
        | b"fieldset" | b"figcaption" | b"figure" | b"footer" | b"form" | b"header" | b"hgroup"
        | b"main" | b"nav" | b"section" | b"summary" | b"legend" | b"search" | b"frameset"
        | b"noframes" => block(2),
        _ => INLINE,
    }
}
