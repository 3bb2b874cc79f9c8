"""The names a read keeps are made again, packed: the same values in the same order, and the
arenas their temporaries left go back (process_memory/packed_strings.py)."""

from __future__ import annotations

import subprocess
import sys

from tb_plugin_advisor.process_memory import packed_strings


def _names(count: int) -> list:
    return [f"kernel_{k:07d}" for k in range(count)]


def test_the_same_strings_in_the_same_order_made_anew():
    names = _names(packed_strings.REPACK_FROM)
    first = names[0]
    assert packed_strings.repack(names) is True
    assert names == _names(packed_strings.REPACK_FROM)
    assert names[0] == first and names[0] is not first  # a new string, not the old one kept


def test_short_lists_and_lists_holding_the_separator_are_left_as_they_are():
    short = _names(packed_strings.REPACK_FROM - 1)
    kept = short[0]
    assert packed_strings.repack(short) is False and short[0] is kept
    odd = _names(packed_strings.REPACK_FROM)
    odd[7] = f"two{packed_strings.SEPARATOR}parts"
    before = list(odd)
    assert packed_strings.repack(odd) is False
    assert odd == before and all(a is b for a, b in zip(odd, before))


def test_empty_and_unicode_names_survive():
    names = _names(packed_strings.REPACK_FROM)
    names[0], names[1], names[-1] = "", "ядро_µ_\U0001f600", ""
    expected = list(names)
    assert packed_strings.repack(names) is True
    assert names == expected


# As a reader keeps names: one kept, fifteen temporaries around it, the temporaries then freed; the
# arenas in use are counted before and after the kept names are repacked. In a process of its own:
# beside a test session's other objects, the freed arenas are shared with whatever else lives there.
_KEEP_AMONG_TEMPORARIES = """
import gc, os, sys, tempfile
from tb_plugin_advisor.process_memory import packed_strings

def arenas():
    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()  # (written to the C stderr)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode()
    line = next(x for x in text.splitlines() if "# arenas allocated current" in x)
    return int(line.split("=")[-1].replace(",", ""))

kept, temporaries = [], []
total = 16 * packed_strings.REPACK_FROM
for k in range(total):
    text = f"name_{k:08d}"
    (kept if k % 16 == 0 else temporaries).append(text)
temporaries.clear()
gc.collect()
spread = arenas()
names = list(kept)
kept.clear()
assert packed_strings.repack(names) is True
gc.collect()
assert names == [f"name_{k:08d}" for k in range(0, total, 16)]
print(spread, arenas())
"""


def test_names_kept_among_temporaries_give_their_arenas_back():
    done = subprocess.run([sys.executable, "-c", _KEEP_AMONG_TEMPORARIES], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    spread, packed = map(int, done.stdout.split())
    # 65,536 kept names of 64-byte blocks fill 4 MB of arenas once packed; spread, they pinned the
    # arenas of all a million (64 MB): at least half of those must go back
    assert packed <= spread - 32, (spread, packed)
