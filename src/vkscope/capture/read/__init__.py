"""The read side of captures: open, check and present a capture file of any schema version, and
hand out typed records, identities and aggregates (see vkscope/capture/__init__.py)."""
