"""Documents whose chunks carry fields beyond their paths, shared by the integrations' tests: an
HTML page (source spans, a table header), a Markdown table, form-feed pages and labelled pages,
with the references the tests check them against."""

from __future__ import annotations

import re


def html_page() -> str:
    """A page with a nav, sections, non-ASCII text, character references and a table whose
    first row is a header."""
    sections = "".join(
        f"<h2>Part {n} &amp; more</h2><p>Paragraph {n} of the page, with <em>words</em> in "
        f"it and caf&eacute; 中文 {n}.</p>"
        for n in range(6)
    )
    rows = "".join(f"<tr><td>row {n}</td><td>{n * 7}</td></tr>" for n in range(14))
    return (
        "<!DOCTYPE html><html><head><title>Title</title></head><body><nav>Home</nav><main>"
        f"<h1>Guide</h1>{sections}<table><tr><th>Name</th><th>Size</th></tr>{rows}</table>"
        "</main><footer>Footer</footer></body></html>"
    )


MARKDOWN_TABLE = (
    "# Sizes\n\nIntro line, café.\n\n| Name | Size |\n|---|---|\n"
    + "".join(f"| row {n} | {n * 7} |\n" for n in range(20))
    + "\n## After\n\nThe end.\n"
)
PAGES = "\n\f".join(f"Page {n}. " + "A sentence on this page. " * 6 for n in range(1, 8))
LABELLED = "".join(
    f"<!-- page {n} -->\nPage {n}. " + "A sentence on this page. " * 6 + "\n\n"
    for n in range(12, 19)
)


def check_markdown_table_header(header: object) -> None:
    """A chunk's table header of ``MARKDOWN_TABLE``, as a framework's metadata holds it: a
    plain dict whose char and byte spans in the table give its text."""
    assert type(header) is dict and header["text"] == "| Name | Size |"
    assert MARKDOWN_TABLE[header["start_char"] : header["end_char"]] == header["text"]
    encoded = MARKDOWN_TABLE.encode()
    assert encoded[header["start_byte"] : header["end_byte"]] == header["text"].encode()


def words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9]+", text)


def page_at(text: str, position: int) -> int:
    """The page of the char at ``position``: form feeds end pages, labels start them."""
    labels = [(m.start(), int(m.group(1))) for m in re.finditer(r"<!-- page (\d+) -->", text)]
    if not labels:
        return 1 + text[:position].count("\f")
    before = [page for start, page in labels if start <= position]
    return before[-1] if before else labels[0][1] - 1
