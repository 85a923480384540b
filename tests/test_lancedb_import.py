"""L2 imports lancedb with the REST namespace client's API deferred (``store/lancedb_import``):
nothing of that API loads for a local table, and a caller who uses it still gets all of it."""

import subprocess
import sys

SCRIPT = r"""
import sys
import memactors.store.lance_store  # noqa: F401 - lancedb through our import
api = [m for m in sys.modules if m.startswith("lance_namespace_urllib3_client.api")]
assert not api, api
import lancedb, pyarrow as pa
tbl = lancedb.connect(sys.argv[1]).create_table("t", pa.table({"a": [1, 2, 3]}))
assert tbl.search().where("a > 1").limit(None).to_arrow().num_rows == 2
import lance_namespace_urllib3_client as client
from lance_namespace_urllib3_client import ApiClient, TableApi  # the real __init__, on first use
assert ApiClient.__module__.startswith("lance_namespace_urllib3_client") and callable(TableApi)
assert client.TableApi is TableApi and "lance_namespace_urllib3_client.api.table_api" in sys.modules
print("ok")
"""


def test_a_local_table_loads_no_rest_api_and_the_api_still_loads_when_used(tmp_path):
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")


def test_an_earlier_import_of_the_client_is_left_alone():
    # Imported by the caller first: the real package stays as it is (nothing deferred).
    script = ("import lance_namespace_urllib3_client as c; import memactors.store.lance_store; "
              "import sys; assert 'lance_namespace_urllib3_client.api.table_api' in sys.modules; "
              "assert '__getattr__' not in vars(c); print('ok')")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
