"""The hash chain: canonical encoding, verification, tamper detection (pure, no Ray)."""

from memactors.core import events as E


def chain(n=5):
    rows, prev = [], E.GENESIS
    for seq in range(1, n + 1):
        e = E.Event(ts=seq, scope="/org/a/", action=E.WRITE, actor="a", memory_id=f"{seq:032x}", version=1,
                    encrypted=True, snapshot=bytes([seq]) * 8, idem_key=f"k{seq}")
        h = E.chain_hash(prev, seq, e)
        rows.append({"seq": seq, "ts": e.ts, "scope": e.scope, "action": e.action, "memory_id": e.memory_id,
                     "version": 1, "actor": "a", "reason": None, "encrypted": True, "snapshot": e.snapshot,
                     "idem_key": e.idem_key, "format": E.FORMAT_VERSION, "prev_hash": prev, "hash": h})
        prev = h
    return rows


def test_intact_chain_verifies():
    assert E.verify_rows(chain())[0] is None


def test_tampered_content_is_named():
    rows = chain()
    rows[2]["snapshot"] = b"forged!!"
    assert E.verify_rows(rows)[0] == 3


def test_deleted_row_is_named():
    rows = chain()
    del rows[1]
    assert E.verify_rows(rows)[0] == 2


def test_reordered_rows_are_named():
    rows = chain()
    rows[1], rows[2] = rows[2], rows[1]
    assert E.verify_rows(rows)[0] == 2


def test_canonical_bytes_do_not_depend_on_field_order():
    e = E.Event(ts=1, scope="/global/", action=E.GRANT, actor="admin", snapshot=b"{}")
    assert E.canonical(1, e) == E.canonical(1, E.Event(**{k: getattr(e, k) for k in reversed(e.__slots__)}))
