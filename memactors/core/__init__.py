"""Pure core: records, scopes, grants, versions, events, clock, config. No I/O, no Ray."""
