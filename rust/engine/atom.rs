//! The atom: the unit the atom engine cuts a text into before packing chunks.

/// A piece of content that fits the chunk size: `text[start..end]`, already trimmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Atom {
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Size of `text[start..end]`.
    pub(crate) size: usize,
    /// Size of the text between the previous atom's end and this atom's start (additive
    /// sizers only; 0 otherwise and for the first atom).
    pub(crate) lead_gap: usize,
    /// The separator level at which cutting this atom further would start.
    pub(crate) depth: usize,
    /// The separator level of the cut just before this atom (lower is coarser; Markdown
    /// structure levels come first, graphemes and code points last). Meaningless for the
    /// first atom of a range.
    pub(crate) boundary: usize,
    /// Structure: the level of the section whose lead (a heading's line, a definition's
    /// signature with its comments and decorators) the atom is part of, else 0. A chunk
    /// never ends right after a lead while what follows it in its section fits.
    pub(crate) lead: u8,
    /// Code: the atom is only closing delimiters (`}`, `)`, `]`, with `;` and `,`): a chunk
    /// never starts with it while it fits with the atom before.
    pub(crate) closer: bool,
    /// Structure: the level (1 to 6) of the heading whose section this atom starts, else 0.
    pub(crate) heading: u8,
    /// Heading atoms: end byte of the section's last atom in this cut.
    pub(crate) section_end: usize,
    /// Heading atoms: size of the section's atoms, from this atom's start.
    pub(crate) section_size: usize,
}
