"""CodeTable: code objects found by identity, never by their (equal, hashed) contents."""

from __future__ import annotations

import gc

from app.lesson.code_table import CodeTable


def _code(filename: str):
    return compile("x = 1\ny = x * 2\n", filename, "exec")


def test_equal_code_objects_of_two_files_are_two_keys():
    first, second = _code("a.py"), _code("b.py")
    assert first == second and hash(first) == hash(second)  # why a dict keyed by code mixes them up
    table: CodeTable[str] = CodeTable()
    table[first] = "a"
    assert table.get(second) is None and second not in table and first in table
    table[second] = "b"
    assert (table.get(first), table.get(second), len(table)) == ("a", "b", 2)
    assert set(map(id, table)) == {id(first), id(second)}


def test_a_code_object_in_the_table_stays_alive_so_its_id_is_not_reused():
    table: CodeTable[int] = CodeTable()
    table[_code("gone.py")] = 1
    gc.collect()
    later = [_code(f"new{i}.py") for i in range(100)]  # would take the freed id, were it freed
    assert all(table.get(code) is None for code in later)
    assert [code.co_filename for code in table] == ["gone.py"]
    table.clear()
    assert len(table) == 0 and table.get(later[0], 7) == 7
