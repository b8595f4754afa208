//! `code_languages`: the languages the code structure parses, from the core's table.

use pyo3::prelude::*;

use crate::code::LANGUAGES;

/// (name, aliases, file name endings) of every language the core parses, in table order.
#[pyfunction]
pub(crate) fn code_languages() -> Vec<(&'static str, Vec<&'static str>, Vec<&'static str>)> {
    LANGUAGES
        .iter()
        .map(|spec| (spec.name, spec.aliases.to_vec(), spec.extensions.to_vec()))
        .collect()
}
