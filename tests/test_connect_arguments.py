"""Arguments of connect(), a fork's or backup's folder and rt.observe() that no call could use are
refused typed when given, never by an OS call or a later write (a random-argument probe of the
public API found each of these raising UnicodeEncodeError, ValueError, TypeError or
AttributeError, the last on the first write after an ``observe("x")``)."""

from __future__ import annotations

import pytest

import memactors
from memactors import BadArguments, ConfigError, InvalidRecord, ManualClock

SURROGATE = "\ud800"  # no file name can hold it
ESCAPED = "\udcff"  # a byte that is not UTF-8, escaped: a file name, but not one DuckDB can open


@pytest.mark.parametrize("path", [SURROGATE, f"/tmp/{SURROGATE}/data", f"/tmp/{ESCAPED}/data", "/tmp/x\0y"])
def test_a_data_folder_no_file_name_can_be_is_refused(path):
    with pytest.raises(InvalidRecord):
        memactors.connect(path, host="process")


def test_a_fork_or_backup_folder_no_file_name_can_be_is_refused(tmp_path):
    with memactors.connect(str(tmp_path / "data"), host="process") as rt:
        rt.grant("a", "/org/acme/", read=True, write=True)
        rt.write("/org/acme/user/alice/", "Alice likes green tea", actor="a")
        for bad in (SURROGATE, str(tmp_path / SURROGATE), str(tmp_path / ESCAPED)):
            with pytest.raises(InvalidRecord):
                rt.fork(bad)
            with pytest.raises(InvalidRecord):
                rt.backup(bad)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]  # nothing made
        rt.fork(str(tmp_path / "fork-\u00e9t\u00e9"))  # any other text: taken
        assert (tmp_path / "fork-\u00e9t\u00e9").is_dir()
        assert rt.recall("tea", actor="a", allowed_scopes=["/org/acme/user/alice/"]).hits


@pytest.mark.parametrize("config", ["/tmp/x\0.toml", f"/tmp/{SURROGATE}.toml"])
def test_a_config_path_no_file_name_can_be_is_a_config_error(config):
    with pytest.raises(ConfigError):
        memactors.connect("memory://", config=config)


@pytest.mark.parametrize("kw", [{"clock": "x"}, {"clock": 5}, {"clock": {}}, {"detached": 1.5}, {"detached": "no"},
                                {"address": 5}, {"address": lambda: None}])
def test_connect_refuses_what_is_no_clock_flag_or_address(kw):
    with pytest.raises(ConfigError):
        memactors.connect("memory://", **kw)


def test_connect_takes_a_clock():
    clock = ManualClock()
    with memactors.connect("memory://", clock=clock, detached=False) as rt:
        rt.grant("a", "/org/acme/", read=True, write=True)
        w = rt.write("/org/acme/user/alice/", "Alice likes green tea", actor="a")
        assert w.memory_id


@pytest.mark.parametrize("fn", ["x", 5, None, [print]])
def test_observe_refuses_what_cannot_be_called_and_writes_go_on(fn):
    with memactors.connect("memory://") as rt:
        rt.grant("a", "/org/acme/", read=True, write=True)
        with pytest.raises(BadArguments):
            rt.observe(fn)
        seen = []
        rt.observe(lambda units, results, t0, t1: seen.append(len(units)))
        rt.write_many([{"scope": "/org/acme/user/alice/", "text": "Alice likes green tea", "actor": "a"}])
        assert seen == [1]
