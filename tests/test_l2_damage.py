"""A damaged L2 data file is found when the folder opens, on the process host: every file the
newest Lance version reads, the base files and the files holding only patched columns (a
status, a review flag), cut short or removed. The error is typed and says to rebuild; files
only older versions hold are never read and harm nothing."""

import os
import shutil

import lance
import pytest

import memactors

CFG = {"runtime": {"num_owners": 1, "l2_flush_interval_s": 0.1}}
S = "/org/damage/user/u/"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """A closed folder whose newest version has base files and a patch file (superseded versions)."""
    data = tmp_path_factory.mktemp("damage") / "data"
    rt = memactors.connect(data, config=CFG, host="process")
    rt.grant_many([{"actor": "ag", "scope": S, "read": True, "write": True}])
    for i in range(12):
        rt.write(scope=S, text=f"fact {i}", actor="ag", subject=f"s{i % 3}", predicate="p", object=f"v{i}",
                 idempotency_key=f"k-{i}")
        if i % 4 == 3:
            rt.flush()
    rt.flush()
    rt.close()
    return data


def _live(rt) -> int:
    return len(rt.agent("ag", scopes=[S]).list(scope=S))


def _files(data) -> tuple[list[str], list[str]]:
    """(data files the newest version reads, by name; those only older versions hold)."""
    folder = data / "l2" / "memories.lance"
    ds = lance.dataset(str(folder))
    live = sorted({os.path.basename(f.path) for fr in ds.get_fragments() for f in fr.metadata.files})
    every = sorted(os.listdir(folder / "data"))
    return live, [f for f in every if f not in live]


def _copy(seeded, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(seeded, data)
    return data


def test_the_seed_has_patch_files(seeded):
    folder = seeded / "l2" / "memories.lance"
    ds = lance.dataset(str(folder))
    widths = [len(f.fields) for fr in ds.get_fragments() for f in fr.metadata.files]
    assert max(widths) > 2 and min(widths) <= 2, widths  # whole rows and a column patch


@pytest.mark.parametrize("damage", ["truncate", "delete", "grow"])
def test_every_live_file_damaged_is_refused_typed(seeded, tmp_path, damage):
    live, _ = _files(seeded)
    for name in live:
        data = _copy(seeded, tmp_path / name)
        victim = data / "l2" / "memories.lance" / "data" / name
        if damage == "truncate":
            os.truncate(victim, os.path.getsize(victim) // 2)
        elif damage == "delete":
            os.remove(victim)
        else:
            with open(victim, "ab") as f:
                f.write(b"\0" * 16)
        with pytest.raises(memactors.StoreError) as e:
            memactors.connect(data, config=CFG, host="process")
        assert "memactors rebuild" in str(e.value) and name in str(e.value), str(e.value)
        # what the message says: L2 again from the ledger alone, then the folder opens
        from memactors import server
        server.rebuild(data, config=CFG, workers=1)
        rt = memactors.connect(data, config=CFG, host="process")
        try:
            assert _live(rt) == 3  # one live version per subject
        finally:
            rt.close()


def test_an_undamaged_folder_and_old_versions_files_open(seeded, tmp_path):
    data = _copy(seeded, tmp_path)
    _, old = _files(data)
    for name in old:  # kept for the retention, never read by the newest version
        os.remove(data / "l2" / "memories.lance" / "data" / name)
    rt = memactors.connect(data, config=CFG, host="process")
    try:
        assert _live(rt) == 3
    finally:
        rt.close()
