"""Storage: the DuckDB ledger, the LanceDB L2 store, and the data key cipher."""
