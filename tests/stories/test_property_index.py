"""Property: any Markdown, any sequence of edits — the index stays consistent and exact."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_crash_and_concurrency import check_consistent

from memo_core import Searcher

_line = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.sampled_from(
        ["# H", "## Sub", "```", "~~~", "---", "===", "    # code", "#tag", "- item", "", "\r"]
    ),
    st.text(alphabet="абвгдеёжз кот cat dog #`-=\t", max_size=30),
)
_doc = st.lists(_line, max_size=30).map("\n".join)
_ops = st.lists(
    st.tuples(st.sampled_from(["write", "delete", "rename"]), st.integers(0, 4), _doc),
    min_size=1,
    max_size=6,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=_ops)
def test_random_markdown_and_edits_keep_the_index_consistent(ops, tiny_embedder) -> None:
    root = Path(tempfile.mkdtemp()) / "notes"
    root.mkdir()
    (root / "base.md").write_text("# Base\n\ncat\n", encoding="utf-8")
    try:
        with Searcher(root, embedder=tiny_embedder) as s:
            for op, i, text in ops:
                p = root / f"n{i}.md"
                if op == "write":
                    p.write_text(text, encoding="utf-8", newline="")
                elif op == "delete":
                    p.unlink(missing_ok=True)
                elif p.exists():
                    p.rename(root / f"n{(i + 1) % 5}.md")
                s.refresh()
                files, chunks = check_consistent(root / ".memo" / "index.db")
                assert files == len(list(root.glob("*.md")))
                for hit in s.search("cat кот", k=20, mode="hybrid"):
                    lines = Path(hit.path).read_text(encoding="utf-8").splitlines()
                    assert 1 <= hit.line <= max(len(lines), 1)
    finally:
        shutil.rmtree(root.parent)
