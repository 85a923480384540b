"""Ray actors: the ledger writer and the scope owners."""
